/*
 * clock.h: seconds on the monotonic clock, for what attnscope measures and
 * shows (a written token's cost, the forward a cache saves).  Shown, never
 * decided on: nothing computes differently by how long it took.
 */
#ifndef ATTNSCOPE_CLOCK_H
#define ATTNSCOPE_CLOCK_H

/* Seconds since some fixed point (CLOCK_MONOTONIC): differences only. */
double clock_seconds(void);

#endif
