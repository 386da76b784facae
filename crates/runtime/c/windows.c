/* The operating-system layer on Windows (x86-64): Win32 threads, slim
 * reader/writer locks and condition variables, fiber-local storage (whose
 * callback runs at thread exit, like a pthread key's destructor), the
 * performance counter, and the C library's low-level file functions. The
 * declarations are written out here because the runtime is compiled
 * without system headers; on x86-64 Windows there is one calling
 * convention, so WINAPI needs no annotation. */
#include "internal.h"

typedef void *HANDLE;
typedef unsigned long DWORD; /* 32 bits: Windows is LLP64 */
typedef int BOOL;
typedef struct {
    void *ptr;
} SRWLOCK_, CONDITION_VARIABLE_;

void InitializeSRWLock(SRWLOCK_ *lock);
void AcquireSRWLockExclusive(SRWLOCK_ *lock);
void ReleaseSRWLockExclusive(SRWLOCK_ *lock);
void InitializeConditionVariable(CONDITION_VARIABLE_ *cv);
BOOL SleepConditionVariableSRW(CONDITION_VARIABLE_ *cv, SRWLOCK_ *lock, DWORD ms, unsigned long flags);
void WakeConditionVariable(CONDITION_VARIABLE_ *cv);
void WakeAllConditionVariable(CONDITION_VARIABLE_ *cv);
HANDLE CreateThread(void *attrs, size_t stack, DWORD (*start)(void *), void *arg, DWORD flags, DWORD *id);
DWORD WaitForSingleObject(HANDLE h, DWORD ms);
BOOL CloseHandle(HANDLE h);
BOOL SwitchToThread(void);
DWORD FlsAlloc(void (*callback)(void *));
void *FlsGetValue(DWORD index);
BOOL FlsSetValue(DWORD index, void *value);
BOOL QueryPerformanceCounter(int64_t *count);
BOOL QueryPerformanceFrequency(int64_t *freq);
DWORD GetActiveProcessorCount(unsigned short group);
int _open(const char *path, int flags, ...);
int _write(int fd, const void *buf, unsigned int n);
int _close(int fd);

#define INFINITE_ ((DWORD)0xffffffffu)
#define FLS_OUT_OF_INDEXES_ ((DWORD)0xffffffffu)
enum {
    ALL_PROCESSOR_GROUPS_ = 0xffff,
    O_WRONLY_ = 0x1,
    O_CREAT_ = 0x100,
    O_TRUNC_ = 0x200,
    O_BINARY_ = 0x8000,
    S_IREAD_ = 0x100,
    S_IWRITE_ = 0x80,
};

_Static_assert(sizeof(SRWLOCK_) <= sizeof(ferrohalide_mutex_t), "lock storage");
_Static_assert(sizeof(CONDITION_VARIABLE_) <= sizeof(ferrohalide_cond_t), "condition storage");

void ferrohalide_mutex_init(ferrohalide_mutex_t *m) { InitializeSRWLock((SRWLOCK_ *)m); }
void ferrohalide_mutex_destroy(ferrohalide_mutex_t *m) { (void)m; }
void ferrohalide_mutex_lock(ferrohalide_mutex_t *m) { AcquireSRWLockExclusive((SRWLOCK_ *)m); }
void ferrohalide_mutex_unlock(ferrohalide_mutex_t *m) { ReleaseSRWLockExclusive((SRWLOCK_ *)m); }
void ferrohalide_cond_init(ferrohalide_cond_t *c) { InitializeConditionVariable((CONDITION_VARIABLE_ *)c); }
void ferrohalide_cond_destroy(ferrohalide_cond_t *c) { (void)c; }
void ferrohalide_cond_wait(ferrohalide_cond_t *c, ferrohalide_mutex_t *m) {
    SleepConditionVariableSRW((CONDITION_VARIABLE_ *)c, (SRWLOCK_ *)m, INFINITE_, 0);
}
void ferrohalide_cond_signal(ferrohalide_cond_t *c) { WakeConditionVariable((CONDITION_VARIABLE_ *)c); }
void ferrohalide_cond_broadcast(ferrohalide_cond_t *c) { WakeAllConditionVariable((CONDITION_VARIABLE_ *)c); }

/* A Win32 thread function returns a DWORD; the runtime's bodies return a
 * pointer, so each thread starts in a trampoline holding the body. */
typedef struct {
    void *(*body)(void *);
    void *arg;
} thread_start;

static DWORD run_thread(void *p) {
    thread_start s = *(thread_start *)p;
    free(p);
    s.body(s.arg);
    return 0;
}

int ferrohalide_thread_start(ferrohalide_thread_t *t, void *(*body)(void *), void *arg) {
    thread_start *s = (thread_start *)malloc(sizeof(thread_start));
    if (!s) {
        return -1;
    }
    s->body = body;
    s->arg = arg;
    HANDLE h = CreateThread(0, 0, run_thread, s, 0, 0);
    if (!h) {
        free(s);
        return -1;
    }
    *t = (ferrohalide_thread_t)h;
    return 0;
}

void ferrohalide_thread_join(ferrohalide_thread_t t) {
    WaitForSingleObject((HANDLE)t, INFINITE_);
    CloseHandle((HANDLE)t);
}

void ferrohalide_thread_yield(void) { SwitchToThread(); }

int ferrohalide_tls_create(ferrohalide_tls_key_t *key, void (*destructor)(void *)) {
    DWORD k = FlsAlloc(destructor);
    if (k == FLS_OUT_OF_INDEXES_) {
        return -1;
    }
    *key = (ferrohalide_tls_key_t)k;
    return 0;
}

void *ferrohalide_tls_get(ferrohalide_tls_key_t key) { return FlsGetValue((DWORD)key); }

void ferrohalide_tls_set(ferrohalide_tls_key_t key, void *value) { FlsSetValue((DWORD)key, value); }

int ferrohalide_cpu_count(void) {
    DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS_);
    return n < 1 ? 1 : (int)n;
}

uint64_t ferrohalide_now_ns(void) {
    int64_t count = 0, freq = 1;
    QueryPerformanceCounter(&count);
    QueryPerformanceFrequency(&freq);
    /* Whole seconds and the remainder apart, so count * 1e9 cannot overflow. */
    return (uint64_t)(count / freq) * 1000000000u + (uint64_t)(count % freq) * 1000000000u / (uint64_t)freq;
}

void ferrohalide_write_fd(int fd, const char *s, size_t n) {
    (void)ferrohalide_file_write(fd, s, n); /* nowhere to report a failing stderr */
}

int ferrohalide_file_create(const char *path) {
    return _open(path, O_WRONLY_ | O_CREAT_ | O_TRUNC_ | O_BINARY_, S_IREAD_ | S_IWRITE_);
}

int ferrohalide_file_write(int fd, const void *data, size_t n) {
    const char *s = (const char *)data;
    while (n > 0) {
        unsigned chunk = n > 0x40000000u ? 0x40000000u : (unsigned)n;
        int w = _write(fd, s, chunk);
        if (w <= 0) {
            return 0;
        }
        s += w;
        n -= (size_t)w;
    }
    return 1;
}

void ferrohalide_file_close(int fd) { _close(fd); }
