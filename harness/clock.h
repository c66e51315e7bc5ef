/* SPDX-License-Identifier: GPL-2.0 */
/* clock.h — the two clocks the harness and the agent read: CLOCK_MONOTONIC
 * for deadlines and waits, CLOCK_REALTIME for timings the host and a UML
 * guest compare (UML's realtime clock is the host's). */
#ifndef BPFUML_CLOCK_H
#define BPFUML_CLOCK_H

#include <time.h>

static inline long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline long long mono_ms(void)
{
	return mono_ns() / 1000000;
}

static inline long long wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif
