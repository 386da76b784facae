/* Small locks: halide_mutex (one word, 0 = unlocked), arrays of them for
 * compiled code's atomic Tuple updates, and one-time initialization.
 * Critical sections under these locks are a few loads and stores, so a
 * waiting thread spins briefly before yielding its time slice. */
#include "internal.h"

enum { SPINS_BEFORE_YIELD = 64 };

static void lock_word(uintptr_t *word) {
    int spins = 0;
    for (;;) {
        uintptr_t expected = 0;
        if (ATOMIC_CAS(word, &expected, 1)) {
            return;
        }
        while (__atomic_load_n(word, __ATOMIC_RELAXED) != 0) {
            if (spins < SPINS_BEFORE_YIELD) {
                spins++;
                ferrohalide_cpu_relax();
            } else {
                ferrohalide_thread_yield();
            }
        }
    }
}

static void unlock_word(uintptr_t *word) { ATOMIC_STORE(word, 0); }

WEAK void halide_mutex_lock(struct halide_mutex *mutex) { lock_word(&mutex->_private[0]); }

WEAK void halide_mutex_unlock(struct halide_mutex *mutex) { unlock_word(&mutex->_private[0]); }

struct halide_mutex_array {
    struct halide_mutex *array;
};

WEAK struct halide_mutex_array *halide_mutex_array_create(uint64_t sz) {
    struct halide_mutex_array *a =
        (struct halide_mutex_array *)halide_malloc(0, sizeof(struct halide_mutex_array));
    if (!a) {
        return 0;
    }
    if (sz > SIZE_MAX / sizeof(struct halide_mutex)) {
        halide_free(0, a);
        return 0;
    }
    a->array = (struct halide_mutex *)halide_malloc(0, (size_t)sz * sizeof(struct halide_mutex));
    if (!a->array) {
        halide_free(0, a);
        return 0;
    }
    for (uint64_t i = 0; i < sz; i++) {
        a->array[i]._private[0] = 0;
    }
    return a;
}

WEAK void halide_mutex_array_destroy(void *user_context, void *array) {
    struct halide_mutex_array *a = (struct halide_mutex_array *)array;
    if (a) {
        halide_free(user_context, a->array);
        halide_free(user_context, a);
    }
}

WEAK int halide_mutex_array_lock(struct halide_mutex_array *array, int entry) {
    halide_mutex_lock(&array->array[entry]);
    return 0;
}

WEAK int halide_mutex_array_unlock(struct halide_mutex_array *array, int entry) {
    halide_mutex_unlock(&array->array[entry]);
    return 0;
}

void ferrohalide_call_once(int32_t *state, void (*init)(void)) {
    enum { NOT_STARTED = 0, RUNNING = 1, DONE = 2 };
    if (ATOMIC_LOAD(state) == DONE) {
        return;
    }
    int32_t expected = NOT_STARTED;
    if (ATOMIC_CAS(state, &expected, RUNNING)) {
        init();
        ATOMIC_STORE(state, DONE);
        return;
    }
    while (ATOMIC_LOAD(state) != DONE) {
        ferrohalide_thread_yield();
    }
}
