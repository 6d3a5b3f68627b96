// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The collector on a real profile and symbolizer: kernel stacks and lost
 * samples need no process; user stacks are this very process's, named
 * from the test binary. A fold keeps what was counted.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/collect.h"
#include "bpfprof/output.h"
#include "bpfprof/window.h"
#include "unit.h"

/* A function of this binary, for a user stack of this process to name (more than a byte long). */
__attribute__((noinline)) int collect_test_marker(int n)
{
	static volatile int sink;
	int i;

	for (i = 0; i < n; i++)
		sink += i;
	return sink;
}

static char *folded(const struct profile *p)
{
	return unit_write(write_folded, p, false, NULL);
}

static void setup(struct symbolizer *s, struct profile *p, struct collector *c)
{
	symbolizer_init(s);
	profile_init(p);
	p->kind = PROFILE_CPU;
	p->frequency = 99;
	p->period_ns = 1000000000ULL / 99;
	collector_init(c, p, s);
}

static void teardown(struct symbolizer *s, struct profile *p, struct collector *c)
{
	collector_release(c);
	profile_release(p);
	symbolizer_release(s);
}

static struct raw_sample sample_of_self(void)
{
	struct raw_sample rs = { 0 };

	rs.tgid = rs.pid = getpid();
	strcpy(rs.comm, "unit");
	rs.state = STATE_RUNNING;
	return rs;
}

/* Kernel stacks with addresses never seen, until the profile holds bytes; returns their samples. */
static uint64_t grow(struct collector *c, size_t bytes, uint64_t *next_ip)
{
	struct raw_sample rs = sample_of_self();
	uint64_t ips[2], added = 0;

	while (profile_bytes(c->profile) < bytes) {
		ips[0] = (*next_ip)++ * 16;
		ips[1] = 0xffffffff81000000ULL;
		rs.kstack = (struct raw_stack){ .ips = ips, .n = 2 };	/* no cache key */
		rs.count = 1;
		collector_add(c, &rs);
		added++;
	}
	return added;
}

void test_collect(void)
{
	uint64_t kips[2] = { 0xffffffff81000100ULL, 0xffffffff81000200ULL };
	uint64_t uips[2] = { (uint64_t)(uintptr_t)collect_test_marker + 1,
			     (uint64_t)(uintptr_t)collect_test_marker + 1 };
	uint64_t next_ip = 0xffffffff82000000ULL / 16, total, added;
	struct raw_sample rs = sample_of_self();
	struct symbolizer s;
	struct collector c;
	struct profile p;
	struct window w;
	char *text;

	setup(&s, &p, &c);
	rs.kstack = (struct raw_stack){ .ips = kips, .n = 2, .cache_key = 7 };
	rs.count = 3;
	collector_add(&c, &rs);
	rs.count = 4;
	collector_add(&c, &rs);	/* the same stack, from the collector's cache */
	rs.kstack.n = 0;
	rs.ustack = (struct raw_stack){ .ips = uips, .n = 2, .cache_key = 9 };
	rs.count = 5;
	collector_add(&c, &rs);
	rs.count = 2;
	collector_add(&c, &rs);
	collector_add_lost(&c, "[lost: unit test]", 6);
	collector_add_lost(&c, "[lost: nothing]", 0);
	text = folded(&p);
	CHECK(profile_total(&p) == 20 && p.nr_samples == 3, "collect: 20 samples in 3 (total %llu in %u)",
	      (unsigned long long)profile_total(&p), p.nr_samples);
	CHECK(strstr(text, "unit;collect_test_marker;collect_test_marker 7\n"),
	      "collect: this process's user stack named from the test binary, its 5 + 2 samples");
	CHECK(strstr(text, "_[k] 7\n") && !strstr(text, "\n[lost: unit test];"),
	      "collect: the kernel stack's 3 + 4 samples, under the process's name");
	CHECK(strstr(text, "\n[lost: unit test] 6\n") || !strncmp(text, "[lost: unit test] 6\n", 20),
	      "collect: lost samples under their [lost: ...] frame, none for a count of 0");
	if (unit_failed)
		printf("#   folded:\n%s", text);
	free(text);

	/* Folding what exited processes left: as many as it waits for, and 1 MiB grown. */
	added = grow(&c, 3u << 20, &next_ip);
	total = profile_total(&p);
	c.exited = 1u << 20;
	collector_after_drain(&c, now_ns());
	CHECK(c.exited == 0 && c.fold_bytes, "collect: a fold once many processes exited (%llu stacks added)",
	      (unsigned long long)added);
	CHECK(profile_total(&p) == total, "collect: the fold keeps every sample (%llu of %llu)",
	      (unsigned long long)profile_total(&p), (unsigned long long)total);
	text = folded(&p);
	CHECK(strstr(text, "unit;collect_test_marker;collect_test_marker 7\n"),
	      "collect: after the fold, this live process's stack still named, its count kept");
	free(text);
	teardown(&s, &p, &c);

	/* trim_only: the profile lets its counts go as it grows; a window of it keeps them. */
	setup(&s, &p, &c);
	c.trim_only = true;
	/* Nothing wired by hand: the window hears of the fold from the profile. */
	window_open(&w, &p, now_ns(), 0, NULL);
	rs.count = 5;
	collector_add(&c, &rs);
	added = grow(&c, 3u << 20, &next_ip);
	total = profile_total(&p);
	collector_after_drain(&c, now_ns());
	CHECK(profile_total(&p) == 0 && profile_bytes(&p) < (1u << 20),
	      "trim_only: the grown profile trimmed, its counts let go (%zu KiB left)", profile_bytes(&p) >> 10);
	collector_add(&c, &rs);
	window_close(&w, now_ns());
	CHECK(profile_total(&w.profile) == total + 5 && total == added + 5,
	      "trim_only: the window holds every sample, before and after the trim (%llu of %llu)",
	      (unsigned long long)profile_total(&w.profile), (unsigned long long)total + 5);
	text = folded(&w.profile);
	CHECK(strstr(text, "unit;collect_test_marker;collect_test_marker 10\n"),
	      "trim_only: the window's user stack named, 5 before the trim and 5 after");
	free(text);
	window_release(&w);
	teardown(&s, &p, &c);
}
