/* The engine's clock: seconds on a monotonic clock, for the phase times the
 * pipelines report. One home, so that the collections code and the
 * clustering code do not depend on each other for it. */
#ifndef SHINGLE_CLOCK_H
#define SHINGLE_CLOCK_H

/* Seconds since an arbitrary fixed point; only differences mean anything. */
double sh_now(void);

#endif
