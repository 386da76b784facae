/* CPU count and clock on POSIX systems: Linux, Android, macOS and iOS,
 * which name the same sysconf value and clock with different numbers
 * (clock_gettime exists from macOS 10.12 and iOS 10). */
#include "internal.h"

long sysconf(int name);
struct timespec {
    long tv_sec;
    long tv_nsec;
};
int clock_gettime(int clock, struct timespec *ts);

#if defined(__APPLE__)
enum { SC_NPROCESSORS_ONLN = 58, CLOCK_MONOTONIC = 6 };
#elif defined(__ANDROID__)
enum { SC_NPROCESSORS_ONLN = 0x61, CLOCK_MONOTONIC = 1 };
#else /* glibc */
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
