/* CPU count and clock on Linux and Android. */
#include "internal.h"

long sysconf(int name);
struct timespec {
    long tv_sec;
    long tv_nsec;
};
int clock_gettime(int clock, struct timespec *ts);

/* glibc's and Android's (bionic's) numbers for the same sysconf name. */
#if defined(__ANDROID__)
enum { SC_NPROCESSORS_ONLN = 0x61, CLOCK_MONOTONIC = 1 };
#else
enum { SC_NPROCESSORS_ONLN = 84, CLOCK_MONOTONIC = 1 };
#endif

int ferrohalide_cpu_count(void) {
    long n = sysconf(SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

uint64_t ferrohalide_now_ns(void) {
    struct timespec ts = {0, 0};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
