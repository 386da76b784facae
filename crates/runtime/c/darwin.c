/* CPU count and clock on macOS and iOS (their sysconf and clock ids differ
 * from Linux's; clock_gettime exists from macOS 10.12 and iOS 10). */
#include "internal.h"

long sysconf(int name);
struct timespec {
    long tv_sec;
    long tv_nsec;
};
int clock_gettime(int clock, struct timespec *ts);

enum { SC_NPROCESSORS_ONLN = 58, CLOCK_MONOTONIC = 6 };

int ferrohalide_cpu_count(void) {
    long n = sysconf(SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

uint64_t ferrohalide_now_ns(void) {
    struct timespec ts = {0, 0};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
