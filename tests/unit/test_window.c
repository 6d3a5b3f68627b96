// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* Windows of a growing profile: what was added between open and close, copied whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/output.h"
#include "bpfprof/profile.h"
#include "bpfprof/window.h"
#include "unit.h"

/* Adds count to the sample of unit_build_profile's stack 0 or 1 in pid/tid, a thread "comm" in state. */
static void add_as(struct profile *p, uint32_t stack, uint32_t pid, uint32_t tid, uint64_t count,
		   uint64_t cgroup, const char *comm, uint8_t state)
{
	struct prof_sample s = { 0 };

	s.stack = stack;
	s.pid = pid;
	s.tid = tid;
	s.comm = profile_string(p, comm);
	s.cgroup_id = cgroup;
	s.count = count;
	s.state = state;
	profile_add_sample(p, &s);
}

/* The same, a running thread called "app". */
static void add(struct profile *p, uint32_t stack, uint32_t pid, uint32_t tid, uint64_t count,
		uint64_t cgroup)
{
	add_as(p, stack, pid, tid, count, cgroup, "app", 0);
}

static char *folded(const struct profile *p)
{
	return unit_write(write_folded, p, true, NULL);
}

static bool pid_42_gone(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid == 42;
}

void test_window(void)
{
	struct profile session;
	struct fold_rule rule = { pid_42_gone, NULL, false, false };
	struct window w, only7, cg, comm, cpu, off;
	char *got;

	unit_build_profile(&session);
	window_open(&w, &session, 0, 1000, NULL);
	window_open(&only7, &session, 0, 1000, &(struct window_filter){ .tgid = 7 });
	window_flush(&w);
	CHECK(w.profile.nr_samples == 0, "window: nothing before anything is added");

	add(&session, 0, 42, 43, 3, 0);
	add(&session, 1, 9, 9, 4, 0);	/* a sample new since the window opened */
	add(&session, 1, 7, 7, 2, 0);
	window_flush(&w);
	add(&session, 1, 7, 7, 1, 0);	/* after a flush: only what came since */
	window_close(&w, 5);
	window_close(&only7, 5);
	got = folded(&w.profile);
	expect_text(got,
		    "app-42;main;work:odd?name;do_syscall_64_[k] 3\n"
		    "app-7;main;[app+0xabc] 3\n"
		    "app-9;main;[app+0xabc] 4\n",
		    "window: the samples added, with their stacks and names, nothing else");
	free(got);
	CHECK(profile_total(&w.profile) == 10 && profile_total(&session) == 21,
	      "window: 10 of the session's 21 (%llu)", (unsigned long long)profile_total(&w.profile));
	CHECK(profile_total(&only7.profile) == 3 && only7.profile.nr_samples == 1,
	      "window: pid 7's only (%llu)", (unsigned long long)profile_total(&only7.profile));
	CHECK(w.profile.start_wall_ns == 1000 && w.profile.duration_ns == 5 &&
	      w.profile.frequency == session.frequency, "window: its start and length, the session's rate");
	window_release(&w);
	window_release(&only7);

	/* Across a fold of the session: flushed before, rebased after, nothing counted twice. */
	window_open(&w, &session, 0, 0, NULL);
	add(&session, 0, 42, 43, 5, 0);
	/* Not flushed by hand: the window is told of the fold, before and after. */
	profile_fold(&session, &rule);
	add(&session, 0, 7, 7, 6, 0);	/* stack 0 may be another id now: any stack will do */
	window_close(&w, 5);
	CHECK(profile_total(&w.profile) == 11 && profile_total(&session) == 32,
	      "window: across a fold, 5 + 6 (%llu)", (unsigned long long)profile_total(&w.profile));
	window_release(&w);

	/* cgroup=: the cgroup and those below it, by path. */
	profile_set_cgroup_path(&session, 100, "/a/b");
	profile_set_cgroup_path(&session, 101, "/a/b/c");
	profile_set_cgroup_path(&session, 102, "/a/bc");
	window_open(&cg, &session, 0, 0, &(struct window_filter){ .cgroup = "/a/b" });
	add(&session, 0, 1, 1, 1, 100);
	add(&session, 0, 1, 1, 2, 101);
	add(&session, 0, 1, 1, 4, 102);
	add(&session, 0, 1, 1, 8, 0);
	window_close(&cg, 5);
	CHECK(profile_total(&cg.profile) == 3, "window: cgroup /a/b holds /a/b and /a/b/c, not /a/bc (%llu)",
	      (unsigned long long)profile_total(&cg.profile));
	CHECK(profile_cgroup(&cg.profile, 101) != 0, "window: the cgroups' paths come along");
	window_release(&cg);

	/* comm=: one thread name; mode=: a --wall profile's CPU samples, or its time off the CPU. */
	window_open(&comm, &session, 0, 0, &(struct window_filter){ .comm = "db" });
	window_open(&cpu, &session, 0, 0, &(struct window_filter){ .mode = WINDOW_CPU });
	window_open(&off, &session, 0, 0, &(struct window_filter){ .mode = WINDOW_OFF_CPU, .comm = "db" });
	add_as(&session, 0, 5, 5, 1, 0, "db", 0);
	add_as(&session, 0, 5, 6, 2, 0, "db", 1);	/* sleeping */
	add_as(&session, 1, 5, 7, 4, 0, "db", 3);	/* runnable */
	add_as(&session, 0, 8, 8, 8, 0, "dbx", 2);	/* another name, uninterruptible */
	add_as(&session, 1, 9, 9, 16, 0, "web", 0);
	window_close(&comm, 5);
	window_close(&cpu, 5);
	window_close(&off, 5);
	CHECK(profile_total(&comm.profile) == 7, "window: comm db, not dbx or web (%llu)",
	      (unsigned long long)profile_total(&comm.profile));
	CHECK(profile_total(&cpu.profile) == 17, "window: mode cpu, the running samples (%llu)",
	      (unsigned long long)profile_total(&cpu.profile));
	CHECK(profile_total(&off.profile) == 6, "window: mode off-cpu and comm db, both (%llu)",
	      (unsigned long long)profile_total(&off.profile));
	window_release(&comm);
	window_release(&cpu);
	window_release(&off);
	profile_release(&session);
}
