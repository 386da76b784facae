/* <time.h> for the bare-metal Hexagon harness (defined in harness.c). */
#ifndef FH_HARNESS_TIME_H
#define FH_HARNESS_TIME_H
struct timespec {
    long tv_sec;
    long tv_nsec;
};
#define CLOCK_MONOTONIC 1
int clock_gettime(int clock, struct timespec *ts);
#endif
