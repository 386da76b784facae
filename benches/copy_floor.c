/* The bandwidth floor of the bench's copy case: memcpy of the same image
 * (2560x1536 uint16, 7.8 MB in and 7.8 MB out), split in row strips over
 * every core this process may use, with one persistent thread per extra
 * core woken by a spinning generation counter (cheaper than any thread
 * pool's hand-off, so nothing a pipeline could do is faster). Timed like
 * the bench's cases: 50 ms of untimed warm-up, then the median of at least
 * RUNS runs and 0.25 s. Prints the median in seconds.
 *
 * Usage: copy_floor RUNS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { W = 2560, H = 1536, BYTES = W * H * 2, MAX_THREADS = 64 };

static unsigned char *src, *dst;
static int nthreads;
static atomic_int generation, done;

static void copy_strip(int t) {
    size_t rows = (H + nthreads - 1) / nthreads;
    size_t first = rows * t, last = first + rows > H ? H : first + rows;
    if (first < last)
        memcpy(dst + first * W * 2, src + first * W * 2, (last - first) * W * 2);
}

static void *worker(void *arg) {
    int t = (int)(size_t)arg, seen = 0;
    for (;;) {
        int g;
        while ((g = atomic_load_explicit(&generation, memory_order_acquire)) == seen)
            ;
        if (g < 0)
            return NULL;
        seen = g;
        copy_strip(t);
        atomic_fetch_add_explicit(&done, 1, memory_order_release);
    }
}

static void run_once(void) {
    atomic_store(&done, 0);
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
    copy_strip(0);
    while (atomic_load_explicit(&done, memory_order_acquire) != nthreads - 1)
        ;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 15;
    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    nthreads = CPU_COUNT(&set);
    if (nthreads < 1)
        nthreads = 1;
    if (nthreads > MAX_THREADS)
        nthreads = MAX_THREADS;
    src = aligned_alloc(64, BYTES);
    dst = aligned_alloc(64, BYTES);
    if (!src || !dst)
        return 1;
    for (size_t i = 0; i < BYTES; i++)
        src[i] = (unsigned char)(i * 7);
    memset(dst, 0, BYTES);
    pthread_t threads[MAX_THREADS];
    for (int t = 1; t < nthreads; t++)
        pthread_create(&threads[t], NULL, worker, (void *)(size_t)t);
    for (double t0 = now(); now() - t0 < 0.05;)
        run_once();
    size_t cap = 1 << 20, n = 0;
    double *times = malloc(cap * sizeof *times), start = now();
    while ((n < (size_t)runs || now() - start < 0.25) && n < cap) {
        double t = now();
        run_once();
        times[n++] = now() - t;
    }
    atomic_store(&generation, -1);
    for (int t = 1; t < nthreads; t++)
        pthread_join(threads[t], NULL);
    if (memcmp(src, dst, BYTES) != 0)
        return 2;
    qsort(times, n, sizeof *times, cmp);
    printf("%.9f\n", times[n / 2]);
    return 0;
}
