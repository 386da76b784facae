/* The operating-system layer for bare-metal targets (hexagon-32-noos):
 * one thread, and only the C library functions a bare-metal harness
 * written for Halide's objects provides (malloc, free, fopen, fwrite,
 * fclose, abort, ...).
 *
 * - Locks do nothing (there is no other thread); a condition wait would
 *   wait forever for another thread, so it reports an error and aborts.
 * - Starting a thread fails, so parallel loops run on the calling thread.
 * - Thread-local slots are plain globals, never destroyed.
 * - There is no clock: "now" advances by a microsecond per reading, so a
 *   spin with a time limit still ends.
 * - There is no console: text written to stdout or stderr is dropped (a
 *   program overrides halide_print / halide_error to see it).
 * - Files (debug_to_file) go through fopen / fwrite / fclose. */
#include "internal.h"

typedef struct FILE_ FILE;
FILE *fopen(const char *path, const char *mode);
size_t fwrite(const void *data, size_t size, size_t count, FILE *f);
int fclose(FILE *f);
void abort(void);

void ferrohalide_mutex_init(ferrohalide_mutex_t *m) { (void)m; }
void ferrohalide_mutex_destroy(ferrohalide_mutex_t *m) { (void)m; }
void ferrohalide_mutex_lock(ferrohalide_mutex_t *m) { (void)m; }
void ferrohalide_mutex_unlock(ferrohalide_mutex_t *m) { (void)m; }
void ferrohalide_cond_init(ferrohalide_cond_t *c) { (void)c; }
void ferrohalide_cond_destroy(ferrohalide_cond_t *c) { (void)c; }
void ferrohalide_cond_wait(ferrohalide_cond_t *c, ferrohalide_mutex_t *m) {
    (void)c;
    (void)m;
    halide_error(0, "Waiting for another thread on a target without threads (hexagon-32-noos)\n");
    abort();
}
void ferrohalide_cond_signal(ferrohalide_cond_t *c) { (void)c; }
void ferrohalide_cond_broadcast(ferrohalide_cond_t *c) { (void)c; }

int ferrohalide_thread_start(ferrohalide_thread_t *t, void *(*body)(void *), void *arg) {
    (void)t;
    (void)body;
    (void)arg;
    return -1;
}
void ferrohalide_thread_join(ferrohalide_thread_t t) { (void)t; }
void ferrohalide_thread_yield(void) {}

enum { TLS_SLOTS = 16 };
static void *tls_values[TLS_SLOTS];
static int tls_used;

int ferrohalide_tls_create(ferrohalide_tls_key_t *key, void (*destructor)(void *)) {
    (void)destructor;
    if (tls_used >= TLS_SLOTS) {
        return -1;
    }
    *key = (ferrohalide_tls_key_t)tls_used++;
    return 0;
}
void *ferrohalide_tls_get(ferrohalide_tls_key_t key) { return tls_values[key]; }
void ferrohalide_tls_set(ferrohalide_tls_key_t key, void *value) { tls_values[key] = value; }

int ferrohalide_cpu_count(void) { return 1; }

uint64_t ferrohalide_now_ns(void) {
    static uint64_t now;
    now += 1000;
    return now;
}

void ferrohalide_write_fd(int fd, const char *s, size_t n) {
    (void)fd;
    (void)s;
    (void)n;
}

enum { FILES = 8 };
static FILE *files[FILES];

int ferrohalide_file_create(const char *path) {
    for (int i = 0; i < FILES; i++) {
        if (!files[i]) {
            files[i] = fopen(path, "wb");
            return files[i] ? i : -1;
        }
    }
    return -1;
}

int ferrohalide_file_write(int fd, const void *data, size_t n) {
    return fd >= 0 && fd < FILES && files[fd] && fwrite(data, 1, n, files[fd]) == n;
}

void ferrohalide_file_close(int fd) {
    if (fd >= 0 && fd < FILES && files[fd]) {
        fclose(files[fd]);
        files[fd] = 0;
    }
}
