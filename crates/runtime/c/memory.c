/* halide_malloc / halide_free: 64-byte aligned heap memory for compiled
 * code's allocations.
 *
 * Each thread keeps the blocks it freed most recently (up to THREAD_SLOTS
 * blocks of at most CACHED_MAX bytes, THREAD_HELD_MAX in all) for its next
 * allocations: a parallel loop whose tasks each allocate the same scratch
 * buffers (store_at inside the parallel loop, one per pyramid level in
 * interpolate) then reuses warm blocks instead of going through the C
 * library's allocator twice per task, and a pipeline run again reuses its
 * small compute_root buffers. Through glibc, those fresh blocks grew the
 * heap's top on every run and were trimmed back at its end: interpolate
 * took ~450 page faults a run, 4% of its time. A block is reused only for
 * a request it holds without wasting more than a factor of four; the
 * bounds keep what idle threads hold small. A thread's blocks are freed
 * when it exits. */
#include "internal.h"

enum { ALIGN = 64, CACHED_MAX = 1 << 20, THREAD_SLOTS = 8, THREAD_HELD_MAX = 4 << 20 };

/* Blocks come from posix_memalign (_aligned_malloc on Windows) with ALIGN
 * bytes in front of the block holding its usable size. (Not malloc plus manual alignment: with the
 * larger requests that needs, glibc's adaptive mmap threshold sends
 * alternating multi-megabyte allocations of a pipeline and its output
 * buffer to fresh mmapped pages on every run, 10x slower for a blur with
 * a compute_root stage.) */
#if defined(_WIN32)
/* Windows' C library has _aligned_malloc instead, freed by _aligned_free. */
void *_aligned_malloc(size_t size, size_t alignment);
void _aligned_free(void *p);
static void *aligned_block(size_t size) { return _aligned_malloc(size, ALIGN); }
static void free_block(void *p) { _aligned_free(p); }
#elif defined(FERROHALIDE_NOOS)
/* Bare metal: only malloc. The block is aligned by hand; the pointer
 * malloc returned is kept just before it. */
static void *aligned_block(size_t size) {
    uint8_t *raw = (uint8_t *)malloc(size + ALIGN + sizeof(void *));
    if (!raw) {
        return 0;
    }
    uintptr_t at = ((uintptr_t)(raw + sizeof(void *)) + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
    ((void **)at)[-1] = raw;
    return (void *)at;
}
static void free_block(void *p) { free(((void **)p)[-1]); }
#else
int posix_memalign(void **result, size_t alignment, size_t size);
static void *aligned_block(size_t size) {
    void *base = 0;
    return posix_memalign(&base, ALIGN, size) == 0 ? base : 0;
}
static void free_block(void *p) { free(p); }
#endif

void *ferrohalide_aligned_alloc(size_t size) {
    if (size > (SIZE_MAX >> 1)) {
        return 0;
    }
    void *base = aligned_block(size + ALIGN);
    if (!base) {
        return 0;
    }
    *(size_t *)base = size;
    return (uint8_t *)base + ALIGN;
}

void ferrohalide_aligned_free(void *p) {
    if (p) {
        free_block((uint8_t *)p - ALIGN);
    }
}

static size_t capacity_of(void *p) { return *(size_t *)((uint8_t *)p - ALIGN); }
static int32_t cache_once;
static ferrohalide_tls_key_t cache_key;
static int cache_ok;

/* A thread's freed blocks, oldest first. */
struct thread_cache {
    void *blocks[THREAD_SLOTS];
    int count;
    size_t held;
};

static void free_cached(void *p) {
    struct thread_cache *c = (struct thread_cache *)p;
    for (int i = 0; i < c->count; i++) {
        ferrohalide_aligned_free(c->blocks[i]);
    }
    free(c);
}

static void init_cache(void) { cache_ok = ferrohalide_tls_create(&cache_key, free_cached) == 0; }

/* This thread's cache (created on first use), or null without one. */
static struct thread_cache *thread_cache(void) {
    ferrohalide_call_once(&cache_once, init_cache);
    if (!cache_ok) {
        return 0;
    }
    struct thread_cache *c = (struct thread_cache *)ferrohalide_tls_get(cache_key);
    if (!c) {
        c = (struct thread_cache *)malloc(sizeof *c);
        if (c) {
            c->count = 0;
            c->held = 0;
            ferrohalide_tls_set(cache_key, c);
        }
    }
    return c;
}

/* Take block `at` out of the cache, keeping the others in order. */
static void *remove_cached(struct thread_cache *c, int at) {
    void *p = c->blocks[at];
    c->held -= capacity_of(p);
    for (int i = at + 1; i < c->count; i++) {
        c->blocks[i - 1] = c->blocks[i];
    }
    c->count--;
    return p;
}

/* The smallest cached block that suits `size`, taken out, or null. */
static void *take_cached(struct thread_cache *c, size_t size) {
    int at = -1;
    for (int i = 0; i < c->count; i++) {
        size_t cap = capacity_of(c->blocks[i]);
        if (cap >= size && cap / 4 <= size && (at < 0 || cap < capacity_of(c->blocks[at]))) {
            at = i;
        }
    }
    if (at < 0) {
        return 0;
    }
    return remove_cached(c, at);
}

/* Keep a freed block (of at most CACHED_MAX bytes) for reuse, freeing the
 * oldest kept ones to make room. */
static void keep_cached(struct thread_cache *c, void *p) {
    size_t cap = capacity_of(p);
    while (c->count > 0 && (c->count == THREAD_SLOTS || c->held + cap > THREAD_HELD_MAX)) {
        ferrohalide_aligned_free(remove_cached(c, 0));
    }
    c->blocks[c->count++] = p;
    c->held += cap;
}

/* Large blocks (over CACHED_MAX) that pipelines freed, kept for the next
 * request they fit: a pipeline run again allocates the same large buffers
 * (image pyramids, compute_root stages), and a fresh block is a page fault
 * per 4 KB it touches (glibc maps blocks over its mmap threshold anew each
 * time: local_laplacian's 50 MB pyramid level alone is 12k faults a run).
 * At most BIG_SLOTS blocks and FERROHALIDE_KEEP_FREED_MB (default 128 MB,
 * enough for local_laplacian's 94 MB a run; 0 keeps none) are held, the
 * oldest freed first; a block serves a request that uses at least half of
 * it. */
enum { BIG_SLOTS = 16, BIG_HELD_DEFAULT_MB = 128 };
static struct halide_mutex big_lock;
static int64_t big_held_max = -1; /* bytes; read from the environment once */
static void *big_blocks[BIG_SLOTS];
static uint64_t big_stamp[BIG_SLOTS];
static uint64_t big_clock;
static size_t big_held;

static void *take_big(size_t size) {
    int at = -1;
    halide_mutex_lock(&big_lock);
    for (int i = 0; i < BIG_SLOTS; i++) {
        void *p = big_blocks[i];
        if (p && capacity_of(p) >= size && capacity_of(p) / 2 <= size &&
            (at < 0 || capacity_of(p) < capacity_of(big_blocks[at]))) {
            at = i;
        }
    }
    void *p = 0;
    if (at >= 0) {
        p = big_blocks[at];
        big_blocks[at] = 0;
        big_held -= capacity_of(p);
    }
    halide_mutex_unlock(&big_lock);
    return p;
}

/* Hold `p` (its capacity over CACHED_MAX), freeing the oldest held blocks
 * to make room. */
static void keep_big(void *p) {
    size_t c = capacity_of(p);
    void *evicted[BIG_SLOTS];
    int n = 0, free_slot = -1;
    halide_mutex_lock(&big_lock);
    if (big_held_max < 0) {
        int mb = ferrohalide_env_count("FERROHALIDE_KEEP_FREED_MB", 1 << 20);
        big_held_max = (int64_t)(mb < 0 ? BIG_HELD_DEFAULT_MB : mb) << 20;
    }
    if (c > (uint64_t)big_held_max) {
        halide_mutex_unlock(&big_lock);
        ferrohalide_aligned_free(p);
        return;
    }
    for (;;) {
        int oldest = -1;
        free_slot = -1;
        for (int i = 0; i < BIG_SLOTS; i++) {
            if (!big_blocks[i]) {
                free_slot = i;
            } else if (oldest < 0 || big_stamp[i] < big_stamp[oldest]) {
                oldest = i;
            }
        }
        if (free_slot >= 0 && big_held + c <= (uint64_t)big_held_max) {
            break;
        }
        evicted[n++] = big_blocks[oldest];
        big_held -= capacity_of(big_blocks[oldest]);
        big_blocks[oldest] = 0;
    }
    big_blocks[free_slot] = p;
    big_stamp[free_slot] = ++big_clock;
    big_held += c;
    halide_mutex_unlock(&big_lock);
    for (int i = 0; i < n; i++) {
        ferrohalide_aligned_free(evicted[i]);
    }
}

static void *default_malloc(void *user_context, size_t size) {
    (void)user_context;
    if (size > CACHED_MAX) {
        void *p = take_big(size);
        if (p) {
            return p;
        }
        return ferrohalide_aligned_alloc(size);
    }
    struct thread_cache *c = thread_cache();
    if (c) {
        void *p = take_cached(c, size);
        if (p) {
            return p;
        }
    }
    return ferrohalide_aligned_alloc(size);
}

static void default_free(void *user_context, void *ptr) {
    (void)user_context;
    if (!ptr) {
        return;
    }
    struct thread_cache *c;
    if (capacity_of(ptr) > CACHED_MAX) {
        keep_big(ptr);
    } else if ((c = thread_cache())) {
        keep_cached(c, ptr);
    } else {
        ferrohalide_aligned_free(ptr);
    }
}

static halide_malloc_t custom_malloc = default_malloc;
static halide_free_t custom_free = default_free;

WEAK void *halide_malloc(void *user_context, size_t size) {
    return __atomic_load_n(&custom_malloc, __ATOMIC_ACQUIRE)(user_context, size);
}

WEAK void halide_free(void *user_context, void *ptr) {
    __atomic_load_n(&custom_free, __ATOMIC_ACQUIRE)(user_context, ptr);
}

WEAK halide_malloc_t halide_set_custom_malloc(halide_malloc_t user_malloc) {
    return __atomic_exchange_n(&custom_malloc, user_malloc ? user_malloc : default_malloc,
                               __ATOMIC_ACQ_REL);
}

WEAK halide_free_t halide_set_custom_free(halide_free_t user_free) {
    return __atomic_exchange_n(&custom_free, user_free ? user_free : default_free, __ATOMIC_ACQ_REL);
}
