// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Windows that follow one another (--rotate, --push): each is due at the
 * next multiple of its length on the wall clock, the next opens where the
 * last closed, and one that ran long is followed by one due at the next
 * multiple after its start, not before it nor a whole length late.
 */
#include <stdlib.h>
#include <string.h>

#include "bpfprof/profile.h"
#include "bpfprof/window.h"
#include "unit.h"

#define S 1000000000ULL

static void add(struct profile *p, const char *frame, uint64_t count)
{
	struct prof_sample s = { 0 };
	uint32_t loc = profile_special_location(p, frame);

	s.stack = profile_stack(p, &loc, 1);
	s.comm = profile_string(p, "app");
	s.pid = s.tid = 7;
	s.count = count;
	profile_add_sample(p, &s);
}

void test_series(void)
{
	struct window_series s;
	struct profile session;
	/* The monotonic clock at 5 s when the wall clock is at 1000.3 s. */
	uint64_t mono = 5 * S, wall = 1000 * S + 300000000;

	profile_init(&session);
	add(&session, "[before]", 100);	/* counted before the series began: in no window */

	series_start(&s, &session, 1.0, mono, wall);
	CHECK(s.due_ns == mono + 700000000, "first window: due at the wall clock's next second (%.3f s after its start)",
	      (double)(s.due_ns - mono) / S);
	add(&session, "[first]", 3);
	series_close(&s, s.due_ns);
	CHECK(profile_total(&s.window.profile) == 3 && s.window.profile.duration_ns == 700000000,
	      "first window: its 3 samples, 0.7 s long");

	/* The drain came on time: exactly on the second, the next is a whole length away. */
	mono += 700000000;
	wall = 1001 * S;
	series_next(&s, mono, wall, false);
	CHECK(s.window.start_ns == mono && s.window.profile.start_wall_ns == wall,
	      "second window: opens where the first closed (no gap)");
	CHECK(s.due_ns == mono + S, "second window: on the second, due a whole second later (%.3f s)",
	      (double)(s.due_ns - mono) / S);
	add(&session, "[second]", 5);

	/* It ran long: closed 2.3 s in, at 1003.3 s. The next is due at 1004, not 1003 (past) nor 1005. */
	mono += 2300000000;
	wall += 2300000000;
	series_close(&s, mono);
	CHECK(profile_total(&s.window.profile) == 5 && s.window.profile.duration_ns == 2300000000,
	      "a window that ran long: its 5 samples, all its 2.3 s");
	series_next(&s, mono, wall, false);
	CHECK(s.due_ns == mono + 700000000,
	      "after a window longer than the length: due at the next second, 0.7 s on (%.3f s)",
	      (double)(s.due_ns - mono) / S);
	add(&session, "[third]", 11);
	series_close(&s, s.due_ns);
	CHECK(profile_total(&s.window.profile) == 11, "third window: only its own 11 samples");
	series_next(&s, s.due_ns, 1004 * S, true);
	CHECK(!s.window.session, "the last window let go, none opened");
	series_release(&s);

	/* A length that is not whole seconds: multiples of 0.25 s. */
	series_start(&s, &session, 0.25, 2 * S, 10 * S + 100000000);
	CHECK(s.due_ns == 2 * S + 150000000, "--rotate 0.25 at 10.1 s: due at 10.25 s (%.3f s on)",
	      (double)(s.due_ns - 2 * S) / S);
	series_release(&s);
	profile_release(&session);
}
