/* Writing to the standard streams on POSIX systems. */
#include "internal.h"

typedef long ssize_t;
ssize_t write(int fd, const void *buf, size_t n);

void ferrohalide_write_fd(int fd, const char *s, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w <= 0) {
            return; /* nowhere to report a failing stderr */
        }
        s += w;
        n -= (size_t)w;
    }
}

/* Files (debug_to_file). */
int open(const char *path, int flags, ...);
int close(int fd);
#if defined(__APPLE__)
#define FH_O_WRONLY 0x1
#define FH_O_CREAT 0x200
#define FH_O_TRUNC 0x400
#else
#define FH_O_WRONLY 01
#define FH_O_CREAT 0100
#define FH_O_TRUNC 01000
#endif

int ferrohalide_file_create(const char *path) {
    return open(path, FH_O_WRONLY | FH_O_CREAT | FH_O_TRUNC, 0644);
}

int ferrohalide_file_write(int fd, const void *data, size_t n) {
    const char *s = (const char *)data;
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w <= 0) {
            return 0;
        }
        s += w;
        n -= (size_t)w;
    }
    return 1;
}

void ferrohalide_file_close(int fd) {
    close(fd);
}
