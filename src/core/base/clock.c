/* clock.c: the monotonic clock (see clock.h). */
#include "config.h"

#include <time.h>

#include "attnscope/base/clock.h"

double
clock_seconds(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
