/* The memoization cache of Func.memoize(): realizations of memoized Funcs,
 * kept across pipeline runs, keyed by the bytes the pipeline computes from
 * the Func, its realized region and the parameters it depends on. The
 * pipeline copies a cached realization into its own allocation on a hit
 * (halide_memoization_cache_copy_in) and a computed one into the cache on a
 * miss (halide_memoization_cache_copy_out). The least recently used entries
 * are dropped beyond the size limit (halide_memoization_cache_set_size, as
 * Halide's; halide_memoization_cache_cleanup empties it;
 * halide_memoization_cache_evict drops the entries stored under an eviction
 * key). */
#include "internal.h"

struct memo_entry {
    struct memo_entry *next;     /* in the hash bucket */
    uint64_t hash;
    uint64_t last_use;
    int32_t key_size;
    int64_t nbytes;
    uint8_t *key;
    uint8_t *data;
    int has_eviction_key;
    uint64_t eviction_key;
};

#define MEMO_BUCKETS 256

static struct memo_entry *memo_table[MEMO_BUCKETS];
static struct halide_mutex memo_lock;
static int64_t memo_total;
static int64_t memo_limit = (int64_t)1 << 20; /* Halide's default: 1 MB */
static uint64_t memo_clock;

static uint64_t memo_hash(const uint8_t *key, int32_t size) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (int32_t i = 0; i < size; i++) {
        h = (h ^ key[i]) * 1099511628211ull;
    }
    return h;
}

static int memo_same(const struct memo_entry *e, uint64_t h, const uint8_t *key, int32_t size, int64_t nbytes) {
    if (e->hash != h || e->key_size != size || e->nbytes != nbytes) {
        return 0;
    }
    for (int32_t i = 0; i < size; i++) {
        if (e->key[i] != key[i]) {
            return 0;
        }
    }
    return 1;
}

static void memo_free(struct memo_entry *e) {
    memo_total -= e->nbytes;
    free(e->key);
    free(e->data);
    free(e);
}

/* Drop least recently used entries until the cache holds at most `limit`
 * bytes. Called with the lock held. */
static void memo_trim(int64_t limit) {
    while (memo_total > limit) {
        struct memo_entry **oldest = 0;
        for (int b = 0; b < MEMO_BUCKETS; b++) {
            for (struct memo_entry **p = &memo_table[b]; *p; p = &(*p)->next) {
                if (!oldest || (*p)->last_use < (*oldest)->last_use) {
                    oldest = p;
                }
            }
        }
        if (!oldest) {
            return;
        }
        struct memo_entry *e = *oldest;
        *oldest = e->next;
        memo_free(e);
    }
}

WEAK int halide_memoization_cache_copy_in(void *user_context, const uint8_t *key, int32_t key_size, uint8_t *dst,
                                          int64_t nbytes) {
    (void)user_context;
    uint64_t h = memo_hash(key, key_size);
    int found = 0;
    halide_mutex_lock(&memo_lock);
    for (struct memo_entry *e = memo_table[h % MEMO_BUCKETS]; e; e = e->next) {
        if (memo_same(e, h, key, key_size, nbytes)) {
            __builtin_memcpy(dst, e->data, (size_t)nbytes);
            e->last_use = ++memo_clock;
            found = 1;
            break;
        }
    }
    halide_mutex_unlock(&memo_lock);
    return found ? 0 : 1;
}

WEAK void halide_memoization_cache_copy_out(void *user_context, const uint8_t *key, int32_t key_size,
                                            const uint8_t *src, int64_t nbytes, int32_t has_eviction_key,
                                            uint64_t eviction_key) {
    (void)user_context;
    if (nbytes > memo_limit) {
        return; /* larger than the whole cache: not kept */
    }
    uint64_t h = memo_hash(key, key_size);
    struct memo_entry *e = (struct memo_entry *)malloc(sizeof(struct memo_entry));
    uint8_t *k = (uint8_t *)malloc((size_t)key_size);
    uint8_t *d = (uint8_t *)malloc((size_t)(nbytes > 0 ? nbytes : 1));
    if (!e || !k || !d) {
        free(e);
        free(k);
        free(d);
        return; /* out of memory: simply not cached */
    }
    __builtin_memcpy(k, key, (size_t)key_size);
    __builtin_memcpy(d, src, (size_t)nbytes);
    e->hash = h;
    e->key_size = key_size;
    e->nbytes = nbytes;
    e->key = k;
    e->data = d;
    e->has_eviction_key = has_eviction_key != 0;
    e->eviction_key = eviction_key;
    halide_mutex_lock(&memo_lock);
    /* Another thread may have stored the same key meanwhile: replace it. */
    for (struct memo_entry **p = &memo_table[h % MEMO_BUCKETS]; *p; p = &(*p)->next) {
        if (memo_same(*p, h, key, key_size, nbytes)) {
            struct memo_entry *old = *p;
            *p = old->next;
            memo_free(old);
            break;
        }
    }
    e->last_use = ++memo_clock;
    e->next = memo_table[h % MEMO_BUCKETS];
    memo_table[h % MEMO_BUCKETS] = e;
    memo_total += nbytes;
    memo_trim(memo_limit);
    halide_mutex_unlock(&memo_lock);
}

/* Drop every entry stored under `eviction_key` (Func.memoize with an
 * EvictionKey). */
WEAK void halide_memoization_cache_evict(void *user_context, uint64_t eviction_key) {
    (void)user_context;
    halide_mutex_lock(&memo_lock);
    for (int b = 0; b < MEMO_BUCKETS; b++) {
        struct memo_entry **p = &memo_table[b];
        while (*p) {
            struct memo_entry *e = *p;
            if (e->has_eviction_key && e->eviction_key == eviction_key) {
                *p = e->next;
                memo_free(e);
            } else {
                p = &e->next;
            }
        }
    }
    halide_mutex_unlock(&memo_lock);
}

WEAK void halide_memoization_cache_set_size(int64_t size) {
    halide_mutex_lock(&memo_lock);
    memo_limit = size > 0 ? size : (int64_t)1 << 20;
    memo_trim(memo_limit);
    halide_mutex_unlock(&memo_lock);
}

WEAK void halide_memoization_cache_cleanup(void) {
    halide_mutex_lock(&memo_lock);
    memo_trim(-1);
    halide_mutex_unlock(&memo_lock);
}
