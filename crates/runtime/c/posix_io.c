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
