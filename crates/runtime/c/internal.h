/* What the runtime's C files share: linkage macros, the few C library
 * functions they call (declared here: the runtime is compiled freestanding,
 * for targets whose system headers this machine does not have), and the
 * operating-system layer each target provides (posix_*.c, linux.c, ...). */
#ifndef FERROHALIDE_RUNTIME_INTERNAL_H
#define FERROHALIDE_RUNTIME_INTERNAL_H

#include "HalideRuntime.h"

/* A function a program may replace by defining its own. */
#define WEAK __attribute__((weak, visibility("default")))
/* A helper shared between the runtime's files. Weak so that several
 * objects each carrying the runtime link together; hidden so that a
 * shared library does not export it. */
#define INTERNAL __attribute__((weak, visibility("hidden")))

/* ---- the C library ---- */
void *malloc(size_t size);
void free(void *ptr);
char *getenv(const char *name);
int snprintf(char *dst, size_t size, const char *format, ...);

/* ---- atomics (sequentially consistent unless said otherwise) ---- */
#define ATOMIC_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
/* 64-bit words updated atomically: 8-byte aligned on every target (32-bit
 * Darwin ARM aligns plain int64_t to 4, where 64-bit atomics would not be
 * single instructions). */
typedef int64_t __attribute__((aligned(8))) atomic_i64;
typedef uint64_t __attribute__((aligned(8))) atomic_u64;
#define ATOMIC_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ATOMIC_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define ATOMIC_SUB(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_ACQ_REL)
/* Compare-and-swap: true (and *p = desired) if *p was *expected, else
 * *expected gets the current value. */
#define ATOMIC_CAS(p, expected, desired) \
    __atomic_compare_exchange_n((p), (expected), (desired), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)

/* Tell the CPU this thread is busy-waiting. */
static inline void ferrohalide_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ volatile("yield");
#endif
}

/* ---- text ---- */
INTERNAL size_t ferrohalide_strlen(const char *s);
/* The environment variable `name` as a whole number (surrounding spaces
 * allowed), at most `max`; -1 when it is unset or not a number. */
INTERNAL int ferrohalide_env_count(const char *name, int max);

/* ---- the operating system (one implementation per target) ---- */
/* Number of CPUs online (at least 1). */
INTERNAL int ferrohalide_cpu_count(void);
/* A monotonic clock, in nanoseconds. */
INTERNAL uint64_t ferrohalide_now_ns(void);
/* Write all of [s, s + n) to stdout (fd 1) or stderr (fd 2). */
INTERNAL void ferrohalide_write_fd(int fd, const char *s, size_t n);
/* A file created (or truncated) for writing: its descriptor, or -1. */
INTERNAL int ferrohalide_file_create(const char *path);
/* Write all of [data, data + n): 1 on success, 0 on failure. */
INTERNAL int ferrohalide_file_write(int fd, const void *data, size_t n);
INTERNAL void ferrohalide_file_close(int fd);

/* ---- threads (one implementation per target) ----
 * Storage is opaque and large enough for every target's native objects. */
typedef struct {
    _Alignas(16) uint64_t opaque[8];
} ferrohalide_mutex_t;
typedef struct {
    _Alignas(16) uint64_t opaque[8];
} ferrohalide_cond_t;
typedef uintptr_t ferrohalide_thread_t;
typedef uintptr_t ferrohalide_tls_key_t;

INTERNAL void ferrohalide_mutex_init(ferrohalide_mutex_t *m);
INTERNAL void ferrohalide_mutex_destroy(ferrohalide_mutex_t *m);
INTERNAL void ferrohalide_mutex_lock(ferrohalide_mutex_t *m);
INTERNAL void ferrohalide_mutex_unlock(ferrohalide_mutex_t *m);
INTERNAL void ferrohalide_cond_init(ferrohalide_cond_t *c);
INTERNAL void ferrohalide_cond_destroy(ferrohalide_cond_t *c);
INTERNAL void ferrohalide_cond_wait(ferrohalide_cond_t *c, ferrohalide_mutex_t *m);
INTERNAL void ferrohalide_cond_signal(ferrohalide_cond_t *c);
INTERNAL void ferrohalide_cond_broadcast(ferrohalide_cond_t *c);
/* 0 on success. */
INTERNAL int ferrohalide_thread_start(ferrohalide_thread_t *t, void *(*body)(void *), void *arg);
INTERNAL void ferrohalide_thread_join(ferrohalide_thread_t t);
INTERNAL void ferrohalide_thread_yield(void);
/* Thread-local slots; the destructor runs on a thread's non-null value
 * when the thread exits. 0 on success. */
INTERNAL int ferrohalide_tls_create(ferrohalide_tls_key_t *key, void (*destructor)(void *));
INTERNAL void *ferrohalide_tls_get(ferrohalide_tls_key_t key);
INTERNAL void ferrohalide_tls_set(ferrohalide_tls_key_t key, void *value);

/* ---- one-time initialization ---- */
/* Runs init() exactly once across threads, the first time it is called
 * with this state word (0 initially); callers wait until it has run. */
INTERNAL void ferrohalide_call_once(int32_t *state, void (*init)(void));

/* ---- memory ---- */
/* `size` bytes aligned to 64, from the C library; null on failure. */
INTERNAL void *ferrohalide_aligned_alloc(size_t size);
INTERNAL void ferrohalide_aligned_free(void *p);

#endif
