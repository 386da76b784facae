/* Threads, locks, condition variables and thread-local slots on POSIX
 * systems (Linux, Android, macOS), through pthreads. The pthread objects
 * live in the opaque storage of internal.h, which is larger than any of
 * these systems' own. */
#include "internal.h"

#if defined(__APPLE__)
typedef unsigned long pthread_key_t;
#else
typedef unsigned int pthread_key_t;
#endif
typedef uintptr_t pthread_t;

int pthread_mutex_init(void *m, const void *attr);
int pthread_mutex_destroy(void *m);
int pthread_mutex_lock(void *m);
int pthread_mutex_unlock(void *m);
int pthread_cond_init(void *c, const void *attr);
int pthread_cond_destroy(void *c);
int pthread_cond_wait(void *c, void *m);
int pthread_cond_signal(void *c);
int pthread_cond_broadcast(void *c);
int pthread_create(pthread_t *t, const void *attr, void *(*body)(void *), void *arg);
int pthread_join(pthread_t t, void **result);
int sched_yield(void);
int pthread_key_create(pthread_key_t *key, void (*destructor)(void *));
void *pthread_getspecific(pthread_key_t key);
int pthread_setspecific(pthread_key_t key, const void *value);

void ferrohalide_mutex_init(ferrohalide_mutex_t *m) { pthread_mutex_init(m, 0); }
void ferrohalide_mutex_destroy(ferrohalide_mutex_t *m) { pthread_mutex_destroy(m); }
void ferrohalide_mutex_lock(ferrohalide_mutex_t *m) { pthread_mutex_lock(m); }
void ferrohalide_mutex_unlock(ferrohalide_mutex_t *m) { pthread_mutex_unlock(m); }
void ferrohalide_cond_init(ferrohalide_cond_t *c) { pthread_cond_init(c, 0); }
void ferrohalide_cond_destroy(ferrohalide_cond_t *c) { pthread_cond_destroy(c); }
void ferrohalide_cond_wait(ferrohalide_cond_t *c, ferrohalide_mutex_t *m) { pthread_cond_wait(c, m); }
void ferrohalide_cond_signal(ferrohalide_cond_t *c) { pthread_cond_signal(c); }
void ferrohalide_cond_broadcast(ferrohalide_cond_t *c) { pthread_cond_broadcast(c); }

int ferrohalide_thread_start(ferrohalide_thread_t *t, void *(*body)(void *), void *arg) {
    pthread_t p = 0;
    int r = pthread_create(&p, 0, body, arg);
    *t = (ferrohalide_thread_t)p;
    return r;
}

void ferrohalide_thread_join(ferrohalide_thread_t t) { pthread_join((pthread_t)t, 0); }

void ferrohalide_thread_yield(void) { sched_yield(); }

int ferrohalide_tls_create(ferrohalide_tls_key_t *key, void (*destructor)(void *)) {
    pthread_key_t k = 0;
    int r = pthread_key_create(&k, destructor);
    *key = (ferrohalide_tls_key_t)k;
    return r;
}

void *ferrohalide_tls_get(ferrohalide_tls_key_t key) { return pthread_getspecific((pthread_key_t)key); }

void ferrohalide_tls_set(ferrohalide_tls_key_t key, void *value) {
    pthread_setspecific((pthread_key_t)key, value);
}
