/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A window of the session's profile: the samples added to it from the
 * window's start to its end, in a profile of the window's own (what a
 * request for the next N seconds is answered with, a push's interval, a
 * rotated file). Counts in the session's profile only grow, between folds:
 * a window keeps each sample's count as it was at its start (or its last
 * flush) and copies the difference. A fold renumbers the session's
 * samples, so every window is flushed before one and rebased after: each
 * window listens to the session's folds from its open to its release.
 */
#ifndef BPFPROF_WINDOW_H
#define BPFPROF_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/profile.h"

/* Which of a --wall profile's samples a window keeps. */
enum window_mode {
	WINDOW_ANY = 0,		/* all of them */
	WINDOW_CPU,		/* CPU samples (a thread running) */
	WINDOW_OFF_CPU,		/* time off the CPU (sleeping, blocked, runnable) */
};

/* What a window keeps of the session's samples; all zero: every one. */
struct window_filter {
	uint32_t tgid;			/* only this process's samples; 0: every one */
	const char *cgroup;		/* only samples in this cgroup or below it; NULL: all */
	const char *comm;		/* only threads of this name; NULL: all */
	enum window_mode mode;
};

struct window {
	struct profile profile;		/* the window's own */
	struct profile_copy copy;	/* session ids -> the window's */
	struct profile *session;
	struct fold_listener fold;	/* on the session: flush before a fold, rebase after */
	uint64_t *base;			/* the session's sample counts at the last flush */
	uint32_t nr_base;
	struct window_filter filter;	/* its strings the window's own */
	uint64_t start_ns;		/* CLOCK_MONOTONIC, as now_ns() */
};

/*
 * Opens w on session: the samples it holds from now on are those taken
 * since start_ns (now_ns() clock; start_wall_ns the wall clock then), the
 * moment the session's last drain flipped the maps; those filter keeps
 * (NULL: every one; its strings are copied).
 */
void window_open(struct window *w, struct profile *session, uint64_t start_ns,
		 uint64_t start_wall_ns, const struct window_filter *filter);
/* Copies into w what the session's profile gained since the last flush. */
void window_flush(struct window *w);
/* Flushes and ends w at end_ns (the flip of the drain just done): its profile says how long it lasted. */
void window_close(struct window *w, uint64_t end_ns);
void window_release(struct window *w);

/*
 * Windows that follow one another (--rotate's files, --push's intervals):
 * each ends at a multiple of its length on the wall clock (the first
 * begins when sampling does, the last ends at the stop), and the next
 * opens at the drain that closes it, so they join with no gap and no
 * overlap.
 */
struct window_series {
	struct window window;		/* the current one */
	uint64_t every_ns;
	uint64_t due_ns;		/* now_ns() when it ends */
};
/* The first window, from start_ns (start_wall_ns: the wall clock then). */
void series_start(struct window_series *s, struct profile *session, double every_s,
		  uint64_t start_ns, uint64_t start_wall_ns);
/* Closes the current window at flip_ns (a drain's flip, just done): s->window.profile is its profile. */
void series_close(struct window_series *s, uint64_t flip_ns);
/* The closed window let go; unless last, the next one opened at flip_ns. */
void series_next(struct window_series *s, uint64_t flip_ns, uint64_t flip_wall_ns, bool last);
/* The current window let go, if one is open. */
void series_release(struct window_series *s);

#endif
