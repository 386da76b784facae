/* The thread pool behind parallel loops (halide_do_par_for), after the
 * shape of Halide's (runtime/thread_pool_common.h).
 *
 * - Worker threads start on the first parallel loop and live until
 *   halide_shutdown_thread_pool. Their count is the number of threads
 *   (halide_set_num_threads, else HL_NUM_THREADS, else the CPU count) less
 *   one: the calling thread always works too.
 * - A parallel loop is a job pushed on a shared queue. Its iterations are
 *   cut into one contiguous range per thread; each thread claims chunks
 *   from the front of its own range (the caller's is the first, worker
 *   k's the (k+1)th), then steals from the back of the others', so the
 *   caller can always finish its own job alone. The same thread gets the
 *   same rows run after run, and they stay in its caches: a 7.8 MB copy
 *   split into 48 strips took 0.10 ms with chunks claimed from one shared
 *   counter (whoever came first), 0.083 ms (memcpy's) with ranges.
 * - Nested parallel loops push nested jobs the same way, at the front of
 *   the queue, so helpers finish inner loops (which their owners wait for)
 *   before starting new outer work. A thread only ever waits for
 *   iterations another thread is running, and every owner can run all of
 *   its unclaimed iterations itself: no deadlock however deep the nesting.
 * - The first non-zero code a task returns wins; once a task has failed,
 *   the iterations not started yet are skipped.
 * - Idle workers, and a caller waiting for its last iterations, spin for a
 *   few tens of microseconds before sleeping: waking a sleeping thread
 *   takes about as long as a whole small pipeline, and pipelines often run
 *   back to back.
 * - A job is reference-counted (its owner plus each worker inside it), so
 *   a worker that finished the last iteration can still look at the job
 *   after its owner has returned.
 * - Semaphores (async producers, lower/async_producers.rs) are counters a
 *   task waits on. Most forks are two-iteration parallel loops, producer
 *   first: the loop's owner claims from the front of the first range
 *   before anything else, so a waiting consumer's producer is always
 *   running, done, or about to run on the owner (which waits for nothing
 *   before it). But the producer of a folded Func
 *   also waits, for the rows its consumer has finished with, so its fork
 *   (ferrohalide_do_fork) runs the producer (iteration 0) on a helper
 *   thread and the consumer (iteration 1) on the calling thread. Helper
 *   threads are not the pool's workers (a blocked producer must not hold a
 *   worker, nor wait for a worker to be free): they are started on demand
 *   and, after a producer, spin briefly and then sleep until the next
 *   fork. A waiter also stops (and returns the failure's code) when a task
 *   of its job or an enclosing one failed: a failed producer never
 *   releases, nor a failed consumer. Each thread knows the job it works in
 *   (a thread-local slot), each job the one its owner worked in. */
#include "internal.h"

enum {
    MAX_THREADS = 256,
    /* Producers of forks running at once. */
    MAX_FORK_HELPERS = 256,
    FORK = 1,
    SERIAL_FORK = 2,
    SPIN_NS = 50000,
    /* Largest number of iterations claimed at once. */
    MAX_CHUNK = 64,
    /* Most ranges a loop is cut into (threads beyond share them). */
    MAX_RANGES = 16,
};

/* Iterations [front, back) of a job, counted from its min, packed in one
 * word (front in the low half) so that the range's thread claiming from
 * the front and a thief claiming from the back agree with one CAS. On a
 * cache line of its own: a thread claims from its range without
 * disturbing the others'. */
struct range {
    _Alignas(64) atomic_u64 bounds;
};

static uint64_t range_bounds(int64_t front, int64_t back) {
    return (uint64_t)front | ((uint64_t)back << 32);
}

struct job {
    /* Hot counters on their own cache lines, so claiming work does not
     * invalidate the line the completion counter lives on. */
    struct range ranges[MAX_RANGES];
    int nranges;
    _Alignas(64) atomic_i64 remaining; /* iterations not finished */
    _Alignas(64) halide_task_t task;
    void *user_context;
    uint8_t *closure;
    int min;
    int32_t result;
    int32_t refs;
    /* The owner of a parallel loop waits on `done` (its last iterations
     * ran elsewhere, beyond its spin): only then does the thread finishing
     * them take the pool's lock to wake it. */
    int32_t owner_sleeps;
    ferrohalide_cond_t done;
    /* The queue's links; under the pool's lock. */
    struct job *prev, *after;
    int queued;
    /* The job whose task created this one (null at the top). */
    struct job *parent;
    /* 0: a parallel loop; FORK: a fork; SERIAL_FORK: a fork whose sides
     * run one after the other on one thread (no helper thread could be
     * had), so they must not wait for each other. */
    int fork;
};

/* A thread that runs the producers of forks, one at a time. */
struct fork_helper {
    ferrohalide_thread_t thread;
    ferrohalide_cond_t wake;
    /* The fork whose producer to run; null while idle. Under the pool's
     * lock. */
    struct job *job;
};

static struct {
    ferrohalide_mutex_t lock;
    ferrohalide_cond_t wake_workers;
    struct job *head; /* the front of the queue */
    atomic_u64 pushed;  /* bumped on every push, for spinning workers */
    int threads;      /* threads a loop may use; 0 until first asked */
    int started;      /* workers running */
    int shutting_down;
    ferrohalide_thread_t workers[MAX_THREADS];
    /* Broadcast when a semaphore is released or a task fails. */
    ferrohalide_cond_t semaphores;
    /* The job each thread works in. */
    ferrohalide_tls_key_t current_job;
    /* Fork helpers started (each idle or running a producer). */
    int helpers_started;
    struct fork_helper helpers[MAX_FORK_HELPERS];
} pool;

static int32_t pool_once;

static void init_pool(void) {
    ferrohalide_mutex_init(&pool.lock);
    ferrohalide_cond_init(&pool.wake_workers);
    ferrohalide_cond_init(&pool.semaphores);
    ferrohalide_tls_create(&pool.current_job, 0);
}

static int default_threads(void) {
    int n = ferrohalide_env_count("HL_NUM_THREADS", MAX_THREADS);
    if (n < 1) {
        n = ferrohalide_cpu_count();
    }
    return n < MAX_THREADS ? n : MAX_THREADS;
}

/* Take the pool's lock (initializing the pool the first time). */
static void lock_pool(void) {
    ferrohalide_call_once(&pool_once, init_pool);
    ferrohalide_mutex_lock(&pool.lock);
}

/* Threads a loop may use: set, or the default once first asked. */
static int thread_count(void) {
    int n = __atomic_load_n(&pool.threads, __ATOMIC_ACQUIRE);
    if (n == 0) {
        lock_pool();
        if (pool.threads == 0) {
            __atomic_store_n(&pool.threads, default_threads(), __ATOMIC_RELEASE);
        }
        n = pool.threads;
        ferrohalide_mutex_unlock(&pool.lock);
    }
    return n;
}

static void unlock_pool(void) { ferrohalide_mutex_unlock(&pool.lock); }

/* Threads that share a loop now: the caller and the workers running. */
static int active_threads(void) {
    int started = __atomic_load_n(&pool.started, __ATOMIC_RELAXED);
    int threads = __atomic_load_n(&pool.threads, __ATOMIC_RELAXED);
    return 1 + (started < threads - 1 ? started : threads - 1);
}

/* Spin until *word differs from `seen` or the spin time is up; returns
 * whether it changed. */
static int spin_while_equal(const atomic_u64 *word, uint64_t seen) {
    uint64_t start = ferrohalide_now_ns();
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (ATOMIC_LOAD(word) != seen) {
                return 1;
            }
            ferrohalide_cpu_relax();
        }
        if (ferrohalide_now_ns() - start > SPIN_NS) {
            return ATOMIC_LOAD(word) != seen;
        }
    }
}

/* Spin until *word <= 0 or the spin time is up. */
static void spin_until_done(const atomic_i64 *word) {
    uint64_t start = ferrohalide_now_ns();
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (ATOMIC_LOAD(word) <= 0) {
                return;
            }
            ferrohalide_cpu_relax();
        }
        if (ferrohalide_now_ns() - start > SPIN_NS) {
            return;
        }
    }
}

static void release_job(struct job *j) {
    if (ATOMIC_SUB(&j->refs, 1) == 1) {
        ferrohalide_cond_destroy(&j->done);
        ferrohalide_aligned_free(j);
    }
}

static int range_empty(uint64_t b) { return (uint32_t)b >= (uint32_t)(b >> 32); }

static int job_exhausted(struct job *j) {
    for (int r = 0; r < j->nranges; r++) {
        if (!range_empty(ATOMIC_LOAD(&j->ranges[r].bounds))) {
            return 0;
        }
    }
    return 1;
}

/* Claim a chunk of range `r` of `j`: from its front for the range's own
 * thread, from its back for a thief. Half of what is left (at most
 * MAX_CHUNK): tiny tasks don't pay for a contended atomic each, and what
 * a thief leaves is as much as it took. Sets [*first, *first + chunk);
 * returns the chunk, 0 if the range is empty. */
static int64_t claim(struct job *j, int r, int own, int64_t *first) {
    atomic_u64 *word = &j->ranges[r].bounds;
    uint64_t b = ATOMIC_LOAD(word);
    for (;;) {
        if (range_empty(b)) {
            return 0;
        }
        int64_t front = (uint32_t)b, back = (uint32_t)(b >> 32);
        int64_t chunk = (back - front) / 2;
        chunk = chunk < 1 ? 1 : chunk > MAX_CHUNK ? MAX_CHUNK : chunk;
        uint64_t claimed = own ? range_bounds(front + chunk, back) : range_bounds(front, back - chunk);
        if (ATOMIC_CAS(word, &b, claimed)) {
            *first = own ? front : back - chunk;
            return chunk;
        }
    }
}

/* Claim and run iterations of `j` until none are left, starting with
 * range `slot` (modulo the job's ranges). What a thread ran is
 * taken off the job's count of unfinished iterations once, when it leaves
 * the job: the job is done only when every iteration is claimed and its
 * last claimer has left, and the count's cache line bounced between the
 * threads on every chunk (64 one-row tasks on two threads: 3.3 us a loop
 * from C, most of it that atomic). */
static void work_on_here(struct job *j, int slot);

static void work_on(struct job *j, int slot) {
    void *outer = ferrohalide_tls_get(pool.current_job);
    ferrohalide_tls_set(pool.current_job, j);
    work_on_here(j, slot);
    ferrohalide_tls_set(pool.current_job, outer);
}

/* Record that task `r` of `j` failed: the first failure wins, and every
 * task waiting on a semaphore looks again. */
static void job_failed(struct job *j, int32_t r) {
    int32_t zero = 0;
    ATOMIC_CAS(&j->result, &zero, r);
    ferrohalide_mutex_lock(&pool.lock);
    ferrohalide_cond_broadcast(&pool.semaphores);
    ferrohalide_mutex_unlock(&pool.lock);
}

static void work_on_here(struct job *j, int slot) {
    int64_t ran = 0;
    int own = slot % j->nranges, r = own;
    for (;;) {
        int64_t k = 0;
        int64_t chunk = claim(j, r, r == own, &k);
        if (chunk == 0) {
            r = (r + 1) % j->nranges;
            if (r != own) {
                continue;
            }
            /* Sequentially consistent with the owner's "sleeping" then
             * "remaining" (halide_default_do_par_for): either the owner
             * sees no iteration left, or this sees it asleep. */
            if (ran > 0 && __atomic_fetch_sub(&j->remaining, ran, __ATOMIC_SEQ_CST) == ran &&
                __atomic_load_n(&j->owner_sleeps, __ATOMIC_SEQ_CST)) {
                ferrohalide_mutex_lock(&pool.lock);
                ferrohalide_cond_broadcast(&j->done);
                ferrohalide_mutex_unlock(&pool.lock);
            }
            return;
        }
        for (int64_t i = k; i < k + chunk; i++) {
            if (__atomic_load_n(&j->result, __ATOMIC_RELAXED) != 0) {
                break;
            }
            int r = j->task(j->user_context, (int)((uint32_t)j->min + (uint32_t)i), j->closure);
            if (r != 0) {
                job_failed(j, r);
            }
        }
        ran += chunk;
    }
}

/* Queue operations; the pool's lock is held. */
static void push_front(struct job *j) {
    j->prev = 0;
    j->after = pool.head;
    if (pool.head) {
        pool.head->prev = j;
    }
    pool.head = j;
    j->queued = 1;
}

static void unlink_job(struct job *j) {
    if (!j->queued) {
        return;
    }
    if (j->prev) {
        j->prev->after = j->after;
    } else {
        pool.head = j->after;
    }
    if (j->after) {
        j->after->prev = j->prev;
    }
    j->queued = 0;
}

/* The job a worker should help with, with a reference taken; null if there
 * is none. Jobs with nothing left to claim leave the front of the queue. */
static struct job *take_job(void) {
    while (pool.head && job_exhausted(pool.head)) {
        unlink_job(pool.head);
    }
    struct job *j = pool.head;
    if (j) {
        ATOMIC_ADD(&j->refs, 1);
    }
    return j;
}

static void *worker_main(void *arg) {
    int index = (int)(intptr_t)arg;
    lock_pool();
    for (;;) {
        if (pool.shutting_down) {
            break;
        }
        /* A worker beyond the current thread count sleeps. */
        if (index >= pool.threads - 1) {
            ferrohalide_cond_wait(&pool.wake_workers, &pool.lock);
            continue;
        }
        struct job *j = take_job();
        if (j) {
            unlock_pool();
            work_on(j, index + 1);
            release_job(j);
            ferrohalide_mutex_lock(&pool.lock);
            continue;
        }
        /* Idle: spin briefly for new work, then sleep. */
        uint64_t seen = ATOMIC_LOAD(&pool.pushed);
        unlock_pool();
        int woke = spin_while_equal(&pool.pushed, seen);
        ferrohalide_mutex_lock(&pool.lock);
        if (!woke && !pool.head && !pool.shutting_down) {
            ferrohalide_cond_wait(&pool.wake_workers, &pool.lock);
        }
    }
    unlock_pool();
    return 0;
}

/* Start workers up to the thread count; the pool's lock is held. */
static void start_workers(void) {
    while (pool.started < pool.threads - 1) {
        int index = pool.started;
        if (ferrohalide_thread_start(&pool.workers[index], worker_main, (void *)(intptr_t)index) != 0) {
            break; /* run with the workers there are */
        }
        __atomic_store_n(&pool.started, index + 1, __ATOMIC_RELAXED);
    }
}

static int run_serially(void *user_context, halide_task_t task, int min, int size,
                        uint8_t *closure) {
    for (int k = 0; k < size; k++) {
        int r = task(user_context, (int)((uint32_t)min + (uint32_t)k), closure);
        if (r != 0) {
            return r;
        }
    }
    return 0;
}

/* The code of a failed task of the job this thread works in or of an
 * enclosing one; 0 if none failed. */
static int32_t failure_around(void) {
    for (struct job *j = (struct job *)ferrohalide_tls_get(pool.current_job); j; j = j->parent) {
        int32_t r = ATOMIC_LOAD(&j->result);
        if (r != 0) {
            return r;
        }
    }
    return 0;
}

/* Is the innermost fork this thread works in run serially? */
static int in_serial_fork(void) {
    for (struct job *j = (struct job *)ferrohalide_tls_get(pool.current_job); j; j = j->parent) {
        if (j->fork) {
            return j->fork == SERIAL_FORK;
        }
    }
    return 0;
}

/* A semaphore is its count (the code generator's storage for it is 8-byte
 * aligned). */
typedef atomic_i64 semaphore_count;

WEAK void ferrohalide_semaphore_init(void *semaphore, int32_t count) {
    ATOMIC_STORE((semaphore_count *)semaphore, (int64_t)count);
}

WEAK int32_t ferrohalide_semaphore_release(void *semaphore, int32_t count) {
    ATOMIC_ADD((semaphore_count *)semaphore, (int64_t)count);
    lock_pool();
    ferrohalide_cond_broadcast(&pool.semaphores);
    unlock_pool();
    return 0;
}

/* Wait until `count` can be taken from the semaphore, and take it: 0, or
 * the code of a failed task around (the producer may never release). */
WEAK int32_t ferrohalide_semaphore_acquire(void *semaphore, int32_t count) {
    semaphore_count *s = (semaphore_count *)semaphore;
    ferrohalide_call_once(&pool_once, init_pool);
    for (;;) {
        int64_t c = ATOMIC_LOAD(s);
        if (c >= count) {
            if (ATOMIC_CAS(s, &c, c - count)) {
                return 0;
            }
            continue;
        }
        int32_t failed = failure_around();
        if (failed != 0) {
            return failed;
        }
        if (in_serial_fork()) {
            /* The other side of the fork cannot run until this one ends. */
            halide_error(0, "Error: an async producer could not get a thread of its own, and its consumer must run alongside it\n");
            return -1;
        }
        lock_pool();
        if (ATOMIC_LOAD(s) < count && failure_around() == 0) {
            ferrohalide_cond_wait(&pool.semaphores, &pool.lock);
        }
        unlock_pool();
    }
}

/* Run iteration `i` of `j` on this thread, as a task of `j`. */
static void run_fork_side(struct job *j, int i) {
    void *outer = ferrohalide_tls_get(pool.current_job);
    ferrohalide_tls_set(pool.current_job, j);
    if (ATOMIC_LOAD(&j->result) == 0) {
        int r = j->task(j->user_context, i, j->closure);
        if (r != 0) {
            job_failed(j, r);
        }
    }
    ferrohalide_tls_set(pool.current_job, outer);
}

/* Mark one side of fork `j` done; the pool's lock is held. */
static void fork_side_done(struct job *j) {
    if (ATOMIC_SUB(&j->remaining, 1) == 1) {
        ferrohalide_cond_broadcast(&j->done);
    }
}

/* Spin until helper `h` is given a fork or the spin time is up. */
static void spin_for_fork(struct fork_helper *h) {
    uint64_t start = ferrohalide_now_ns();
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (__atomic_load_n(&h->job, __ATOMIC_ACQUIRE)) {
                return;
            }
            ferrohalide_cpu_relax();
        }
        if (ferrohalide_now_ns() - start > SPIN_NS) {
            return;
        }
    }
}

static void *fork_helper_main(void *arg) {
    struct fork_helper *h = (struct fork_helper *)arg;
    lock_pool();
    for (;;) {
        if (!h->job && !pool.shutting_down) {
            /* Forks often come back to back (one per row). */
            unlock_pool();
            spin_for_fork(h);
            lock_pool();
        }
        while (!h->job && !pool.shutting_down) {
            ferrohalide_cond_wait(&h->wake, &pool.lock);
        }
        struct job *j = h->job;
        if (!j) {
            break;
        }
        unlock_pool();
        run_fork_side(j, 0);
        lock_pool();
        h->job = 0;
        /* After this the owner may return and free `j`. */
        fork_side_done(j);
    }
    unlock_pool();
    return 0;
}

/* Give the producer of `j` to an idle helper, starting one if none is
 * idle; the pool's lock is held. Returns 0 if no helper could be had. */
static int hand_to_helper(struct job *j) {
    for (int i = 0; i < pool.helpers_started; i++) {
        struct fork_helper *h = &pool.helpers[i];
        if (!h->job) {
            __atomic_store_n(&h->job, j, __ATOMIC_RELEASE);
            ferrohalide_cond_signal(&h->wake);
            return 1;
        }
    }
    if (pool.helpers_started == MAX_FORK_HELPERS || pool.shutting_down) {
        return 0;
    }
    struct fork_helper *h = &pool.helpers[pool.helpers_started];
    ferrohalide_cond_init(&h->wake);
    h->job = j;
    if (ferrohalide_thread_start(&h->thread, fork_helper_main, h) != 0) {
        h->job = 0;
        ferrohalide_cond_destroy(&h->wake);
        return 0;
    }
    pool.helpers_started++;
    return 1;
}

/* Run `task` for 0 (the producer, on a helper thread) and 1 (the consumer,
 * here) at the same time; the first failure's code, or 0. Without a
 * helper the two run here one after the other, and a side that would wait
 * for the other fails instead of hanging. */
WEAK int ferrohalide_do_fork(void *user_context, halide_task_t task, uint8_t *closure) {
    struct job j;
    j.ranges[0].bounds = range_bounds(2, 2);
    j.nranges = 1;
    j.remaining = 2;
    j.task = task;
    j.user_context = user_context;
    j.closure = closure;
    j.min = 0;
    j.result = 0;
    j.refs = 1;
    j.owner_sleeps = 0;
    j.queued = 0;
    j.fork = FORK;
    ferrohalide_cond_init(&j.done);
    lock_pool();
    j.parent = (struct job *)ferrohalide_tls_get(pool.current_job);
    int helped = hand_to_helper(&j);
    unlock_pool();
    if (!helped) {
        j.fork = SERIAL_FORK;
        run_fork_side(&j, 0);
        ferrohalide_mutex_lock(&pool.lock);
        fork_side_done(&j);
        ferrohalide_mutex_unlock(&pool.lock);
    }
    run_fork_side(&j, 1);
    ferrohalide_mutex_lock(&pool.lock);
    fork_side_done(&j);
    while (ATOMIC_LOAD(&j.remaining) > 0) {
        ferrohalide_cond_wait(&j.done, &pool.lock);
    }
    ferrohalide_mutex_unlock(&pool.lock);
    ferrohalide_cond_destroy(&j.done);
    return ATOMIC_LOAD(&j.result);
}

WEAK int halide_default_do_par_for(void *user_context, halide_task_t task, int min, int size,
                                   uint8_t *closure) {
    if (size <= 0) {
        return 0;
    }
    if (size == 1 || thread_count() <= 1) {
        return run_serially(user_context, task, min, size, closure);
    }
    struct job *j = (struct job *)ferrohalide_aligned_alloc(sizeof(struct job));
    if (!j) {
        return run_serially(user_context, task, min, size, closure);
    }
    j->remaining = size;
    j->task = task;
    j->user_context = user_context;
    j->closure = closure;
    j->min = min;
    j->result = 0;
    j->refs = 1;
    j->owner_sleeps = 0;
    j->fork = 0;
    ferrohalide_cond_init(&j->done);
    lock_pool();
    j->parent = (struct job *)ferrohalide_tls_get(pool.current_job);
    start_workers();
    /* One range per thread that can take part now (the caller's first). */
    int64_t n = active_threads();
    n = n < MAX_RANGES ? n : MAX_RANGES;
    n = n < size ? n : size;
    for (int64_t r = 0; r < n; r++) {
        j->ranges[r].bounds = range_bounds(size * r / n, size * (r + 1) / n);
    }
    j->nranges = (int)n;
    push_front(j);
    ATOMIC_ADD(&pool.pushed, 1);
    unlock_pool();
    if (size > 2) {
        ferrohalide_cond_broadcast(&pool.wake_workers);
    } else {
        ferrohalide_cond_signal(&pool.wake_workers);
    }
    work_on(j, 0);
    ferrohalide_mutex_lock(&pool.lock);
    unlink_job(j);
    ferrohalide_mutex_unlock(&pool.lock);
    spin_until_done(&j->remaining);
    if (__atomic_load_n(&j->remaining, __ATOMIC_SEQ_CST) > 0) {
        ferrohalide_mutex_lock(&pool.lock);
        __atomic_store_n(&j->owner_sleeps, 1, __ATOMIC_SEQ_CST);
        while (__atomic_load_n(&j->remaining, __ATOMIC_SEQ_CST) > 0) {
            ferrohalide_cond_wait(&j->done, &pool.lock);
        }
        ferrohalide_mutex_unlock(&pool.lock);
    }
    int result = ATOMIC_LOAD(&j->result);
    release_job(j);
    return result;
}

static halide_do_par_for_t custom_do_par_for = halide_default_do_par_for;

WEAK int halide_do_par_for(void *user_context, halide_task_t task, int min, int size,
                           uint8_t *closure) {
    return __atomic_load_n(&custom_do_par_for, __ATOMIC_ACQUIRE)(user_context, task, min, size,
                                                                 closure);
}

WEAK halide_do_par_for_t halide_set_custom_do_par_for(halide_do_par_for_t do_par_for) {
    return __atomic_exchange_n(&custom_do_par_for,
                               do_par_for ? do_par_for : halide_default_do_par_for,
                               __ATOMIC_ACQ_REL);
}

WEAK int halide_get_num_threads(void) { return thread_count(); }

WEAK int halide_set_num_threads(int n) {
    int old = thread_count();
    lock_pool();
    if (n >= 0) {
        n = n == 0 ? default_threads() : n;
        __atomic_store_n(&pool.threads, n < MAX_THREADS ? n : MAX_THREADS, __ATOMIC_RELAXED);
    }
    unlock_pool();
    /* Workers beyond the new count go to sleep; more start on the next loop. */
    ferrohalide_cond_broadcast(&pool.wake_workers);
    if (n < 0) {
        halide_error(0, "halide_set_num_threads: the number of threads must be >= 0");
    }
    return old;
}

WEAK void halide_shutdown_thread_pool(void) {
    lock_pool();
    pool.shutting_down = 1;
    int started = pool.started;
    unlock_pool();
    ferrohalide_cond_broadcast(&pool.wake_workers);
    for (int i = 0; i < started; i++) {
        ferrohalide_thread_join(pool.workers[i]);
    }
    lock_pool();
    int helpers = pool.helpers_started;
    for (int i = 0; i < helpers; i++) {
        ferrohalide_cond_signal(&pool.helpers[i].wake);
    }
    unlock_pool();
    for (int i = 0; i < helpers; i++) {
        ferrohalide_thread_join(pool.helpers[i].thread);
        ferrohalide_cond_destroy(&pool.helpers[i].wake);
    }
    lock_pool();
    pool.helpers_started = 0;
    __atomic_store_n(&pool.started, 0, __ATOMIC_RELAXED);
    pool.shutting_down = 0;
    unlock_pool();
}
