// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* The interning tables, the profile model and the folded writer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/intern.h"
#include "bpfprof/output.h"
#include "bpfprof/profile.h"
#include "unit.h"

void test_intern(void)
{
	struct strtab st;
	uint32_t a, b, i, ids[5000];
	bool stable = true;
	char buf[32];

	strtab_init(&st);
	CHECK(strtab_intern(&st, "") == 0 && !strcmp(strtab_get(&st, 0), ""), "strtab: id 0 is \"\"");
	a = strtab_intern(&st, "alpha");
	b = strtab_intern(&st, "beta");
	CHECK(a != b && strtab_intern(&st, "alpha") == a, "strtab: equal strings, equal ids");
	CHECK(strtab_intern_n(&st, "alphabet", 5) == a, "strtab: by length");
	for (i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "s%u", i);
		ids[i] = strtab_intern(&st, buf);
	}
	for (i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "s%u", i);
		stable &= strtab_intern(&st, buf) == ids[i] && !strcmp(strtab_get(&st, ids[i]), buf);
	}
	CHECK(stable && st.nr == 5003, "strtab: ids stay stable as the table grows (%u)", st.nr);
	strtab_release(&st);
}

/*
 * A small profile by hand, shared by the writers' tests: two processes
 * (app 42 with two threads, 7 samples; app 7, 4 samples), kernel and user
 * frames, one unnamed frame, a name with ';' and '\n' in it.
 */
void unit_build_profile(struct profile *p)
{
	struct prof_mapping m = { 0x1000, 0x5000, 0x0, 0, 0, 42, false };
	struct prof_mapping k = { 0xffffffff81000000, 0xffffffff82000000, 0, 0, 0, 0, false };
	struct prof_line line = { 0, 0 };
	uint32_t um, km, l_main, l_work, l_unnamed, l_sys, frames[4];
	struct prof_sample s = { 0 };

	profile_init(p);
	m.file = profile_string(p, "/usr/bin/app");
	k.file = profile_string(p, "[kernel.kallsyms]");
	um = profile_mapping(p, &m);
	km = profile_mapping(p, &k);
	line.function = profile_function(p, profile_string(p, "main"), profile_string(p, "main"), 0);
	l_main = profile_location_add(p, um, 0x1100, FRAME_USER, &line, 1);
	line.function = profile_function(p, profile_string(p, "work;odd\nname"),
					 profile_string(p, "work"), 0);
	l_work = profile_location_add(p, um, 0x1200, FRAME_USER, &line, 1);
	l_unnamed = profile_location_add(p, um, 0x1abc, FRAME_USER, NULL, 0);
	line.function = profile_function(p, profile_string(p, "do_syscall_64"), 0, 0);
	l_sys = profile_location_add(p, km, 0xffffffff81000010, FRAME_KERNEL, &line, 1);

	/* leaf first: kernel, then user */
	frames[0] = l_sys;
	frames[1] = l_work;
	frames[2] = l_main;
	s.stack = profile_stack(p, frames, 3);
	s.pid = 42;
	s.tid = 43;
	s.comm = profile_string(p, "app");
	s.count = 5;
	profile_add_sample(p, &s);
	s.tid = 44;		/* another thread, same stack: merges in folded output */
	s.count = 2;
	profile_add_sample(p, &s);
	frames[0] = l_unnamed;
	frames[1] = l_main;
	s.stack = profile_stack(p, frames, 2);
	s.pid = 7;
	s.tid = 7;
	s.count = 1;
	profile_add_sample(p, &s);
	s.count = 3;
	profile_add_sample(p, &s);
}

void test_profile(void)
{
	struct profile p;
	uint32_t frames[2] = { 1, 2 }, s1, s2, loc;
	struct strbuf sb;

	unit_build_profile(&p);
	CHECK(p.nr_samples == 3 && profile_total(&p) == 11, "profile: samples merge by stack and labels");
	s1 = profile_stack(&p, frames, 2);
	s2 = profile_stack(&p, frames, 2);
	CHECK(s1 == s2, "profile: stacks are interned");
	CHECK(profile_location_find(&p, 1, 0x1200) == 1, "profile: locations found by (mapping, address)");
	CHECK(profile_location_find(&p, 1, 0x1201) == ITAB_NONE, "profile: another address, no location");
	CHECK(p.mappings[1].has_functions, "profile: a mapping with a named location has functions");

	strbuf_init(&sb);
	profile_frame_name(&p, 2, 0, &sb);
	CHECK(!strcmp(sb.buf, "[app+0xabc]"), "profile: an unnamed frame is [module+0xoffset] (%s)", sb.buf);
	loc = profile_special_location(&p, "[lost: stack map full]");
	CHECK(loc == profile_special_location(&p, "[lost: stack map full]"), "profile: special frames interned");
	strbuf_reset(&sb);
	profile_frame_name(&p, loc, 0, &sb);
	CHECK(!strcmp(sb.buf, "[lost: stack map full]"), "profile: special frame name");
	strbuf_release(&sb);
	profile_release(&p);
}

static char *folded(const struct profile *p, bool per_pid)
{
	return unit_write(write_folded, p, per_pid, NULL);
}

static bool pid_over_100(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid >= 100 && pid < 300;
}

/* What a fold told its listener: a copy of the renumbering (the fold frees its own). */
struct told {
	uint32_t *mappings, *locations;
	uint32_t nr_mappings, nr_locations;
	int before, after;
};

static void told_before(void *ctx)
{
	((struct told *)ctx)->before++;
}

static void told_after(void *ctx, const struct profile_renumbering *r)
{
	struct told *t = ctx;

	t->after++;
	free(t->mappings);
	free(t->locations);
	t->mappings = xmalloc(t->nr_mappings * sizeof(*t->mappings) + 1);
	t->locations = xmalloc(t->nr_locations * sizeof(*t->locations) + 1);
	memcpy(t->mappings, r->mappings, t->nr_mappings * sizeof(*t->mappings));
	memcpy(t->locations, r->locations, t->nr_locations * sizeof(*t->locations));
}

/* Folds p as the collector does (exited: pids 100-299), the renumbering copied into *r. */
static void fold_told(struct profile *p, bool keep_pids, struct profile_renumbering *r)
{
	struct fold_rule rule = { pid_over_100, NULL, keep_pids, false };
	struct told t = { .nr_mappings = p->nr_mappings, .nr_locations = p->nr_locations };
	struct fold_listener l = { .before = told_before, .after = told_after, .ctx = &t };

	profile_on_fold(p, &l);
	profile_fold(p, &rule);
	profile_off_fold(p, &l);
	r->mappings = t.mappings;
	r->locations = t.locations;
}

static void renumbering_free(struct profile_renumbering *r)
{
	free(r->mappings);
	free(r->locations);
}

/*
 * Churn by hand: sh 100 and sh 200 (exited) mapped /bin/sh at different
 * addresses, sh 300 still runs; 100 also had JIT code; a lost sample.
 */
static void build_churn(struct profile *p, uint32_t *l100_work, uint32_t *l200_work)
{
	struct prof_mapping m = { 0x1000, 0x2000, 0, 0, 0, 100, false };
	struct prof_mapping anon = { 0x7000, 0x8000, 0, 0, 0, 100, false };
	struct prof_line main_line = { 0, 0 }, work_line = { 0, 3 }, jit_line = { 0, 0 };
	struct prof_sample s = { 0 };
	uint32_t f[2], m100, m200, m300, ma;

	profile_init(p);
	m.file = profile_string(p, "/bin/sh");
	m.build_id = profile_string(p, "aa11");
	anon.file = profile_string(p, "[anon]");
	main_line.function = profile_function(p, profile_string(p, "main"), 0, 0);
	work_line.function = profile_function(p, profile_string(p, "work"), 0, 0);
	jit_line.function = profile_function(p, profile_string(p, "LazyCompile:js"), 0, 0);
	m100 = profile_mapping(p, &m);
	m.start = 0x5000, m.limit = 0x6000, m.pid = 200;
	m200 = profile_mapping(p, &m);
	m.start = 0x9000, m.limit = 0xa000, m.pid = 300;
	m300 = profile_mapping(p, &m);
	ma = profile_mapping(p, &anon);
	s.comm = profile_string(p, "sh");

	f[0] = *l100_work = profile_location_add(p, m100, 0x1200, FRAME_USER, &work_line, 1);
	f[1] = profile_location_add(p, m100, 0x1100, FRAME_USER, &main_line, 1);
	s.stack = profile_stack(p, f, 2), s.pid = s.tid = 100, s.count = 2;
	profile_add_sample(p, &s);
	f[0] = *l200_work = profile_location_add(p, m200, 0x5200, FRAME_USER, &work_line, 1);
	f[1] = profile_location_add(p, m200, 0x5100, FRAME_USER, &main_line, 1);
	s.stack = profile_stack(p, f, 2), s.pid = s.tid = 200, s.count = 3;
	profile_add_sample(p, &s);
	f[0] = profile_location_add(p, m300, 0x9200, FRAME_USER, &work_line, 1);
	f[1] = profile_location_add(p, m300, 0x9100, FRAME_USER, &main_line, 1);
	s.stack = profile_stack(p, f, 2), s.pid = s.tid = 300, s.count = 4;
	profile_add_sample(p, &s);
	f[0] = profile_location_add(p, ma, 0x7010, FRAME_JIT, &jit_line, 1);
	s.stack = profile_stack(p, f, 1), s.pid = s.tid = 100, s.count = 1;
	profile_add_sample(p, &s);
	f[0] = profile_special_location(p, "[lost: stack map full]");
	memset(&s, 0, sizeof(s));
	s.stack = profile_stack(p, f, 1), s.count = 7;
	profile_add_sample(p, &s);
}

void test_fold(void)
{
	struct profile_renumbering r;
	uint32_t l100, l200, i, exited = UINT32_MAX, live = UINT32_MAX, n300 = 0;
	struct profile p;
	char *before, *after;

	build_churn(&p, &l100, &l200);
	before = folded(&p, false);
	fold_told(&p, false, &r);
	after = folded(&p, false);
	expect_text(after, before, "fold: the folded output does not change");
	CHECK(profile_total(&p) == 17, "fold: every sample kept (%llu)",
	      (unsigned long long)profile_total(&p));
	CHECK(r.locations[l100] == r.locations[l200] && r.locations[l100] != ITAB_NONE,
	      "fold: exited processes' locations of one file at different addresses are one");
	for (i = 0; i < p.nr_samples; i++) {
		if (p.samples[i].pid == PROF_PID_EXITED && p.samples[i].count == 5)
			exited = i;
		if (p.samples[i].pid == 300)
			live = i;
	}
	CHECK(p.nr_samples == 4 && exited != UINT32_MAX && p.samples[exited].tid == PROF_PID_EXITED,
	      "fold: exited processes' samples merge, without pid or tid (%u samples)", p.nr_samples);
	CHECK(live != UINT32_MAX && p.samples[live].count == 4, "fold: a live process keeps its pid");
	for (i = 1; i < p.nr_mappings; i++)
		n300 += p.mappings[i].pid == 300;
	CHECK(p.nr_mappings == 4 && n300 == 1 &&
	      p.mappings[p.locations[r.locations[l100]].mapping].pid == 0 &&
	      p.mappings[p.locations[r.locations[l100]].mapping].start == 0x1000,
	      "fold: one mapping for the file, at the first one's addresses; the live and anonymous "
	      "ones stay (%u mappings)", p.nr_mappings);
	CHECK(p.locations[r.locations[l200]].address == 0x1200,
	      "fold: an address moves with its mapping");
	free(after);
	after = unit_write(write_pprof, &p, false, NULL);
	CHECK(after != NULL, "fold: the folded profile writes as pprof");
	free(after);
	renumbering_free(&r);
	/* Folding again changes nothing. */
	fold_told(&p, false, &r);
	after = folded(&p, false);
	CHECK(p.nr_samples == 4 && p.nr_mappings == 4 && p.nr_locations == 6,
	      "fold: folding twice is folding once (%u locations)", p.nr_locations);
	CHECK(p.exited_pids == 2 && p.exited_tids == 2,
	      "fold: the folded processes and threads are counted once (%llu, %llu)",
	      (unsigned long long)p.exited_pids, (unsigned long long)p.exited_tids);
	expect_text(after, before, "fold: the output after folding twice");
	free(after);
	renumbering_free(&r);
	profile_release(&p);
	free(before);

	/* --per-pid: exited processes share locations and stacks, and keep their pids. */
	build_churn(&p, &l100, &l200);
	before = folded(&p, true);
	fold_told(&p, true, &r);
	after = folded(&p, true);
	expect_text(after, before, "fold: the --per-pid output does not change");
	CHECK(p.nr_samples == 5 && r.locations[l100] == r.locations[l200],
	      "fold: with pids kept, samples stay apart and locations are shared");
	free(before);
	free(after);
	renumbering_free(&r);
	profile_release(&p);
}

void test_folded(void)
{
	struct profile p;
	char *out;

	unit_build_profile(&p);
	out = folded(&p, false);
	expect_text(out, "app;main;[app+0xabc] 4\n"
			 "app;main;work:odd?name;do_syscall_64_[k] 7\n",
		    "folded: merged, sorted, root first, kernel marked, separators replaced");
	free(out);
	out = folded(&p, true);
	expect_text(out, "app-42;main;work:odd?name;do_syscall_64_[k] 7\n"
			 "app-7;main;[app+0xabc] 4\n",
		    "folded: --per-pid roots");
	free(out);
	profile_release(&p);

	profile_init(&p);
	out = folded(&p, false);
	CHECK(!strcmp(out, ""), "folded: an empty profile writes nothing");
	free(out);
	profile_release(&p);
}

/* The order listeners hear of a fold in, by their numbers. */
struct heard {
	char log[32];
	int n;
};
struct numbered {
	struct heard *h;
	char id;
	struct fold_listener l;
};

static void numbered_before(void *ctx)
{
	struct numbered *x = ctx;

	x->h->log[x->h->n++] = x->id;
}

static void numbered_after(void *ctx, const struct profile_renumbering *r)
{
	struct numbered *x = ctx;

	(void)r;
	x->h->log[x->h->n++] = x->id - 'a' + 'A';
}

/* Whoever registered hears of every fold, before and after, in order; whoever left, no more. */
void test_fold_listeners(void)
{
	struct fold_rule rule = { pid_over_100, NULL, false, false };
	struct numbered x[4];
	struct heard h = { 0 };
	struct profile p;
	uint32_t l100, l200, i;

	build_churn(&p, &l100, &l200);
	for (i = 0; i < 4; i++) {
		x[i] = (struct numbered){ &h, 'a' + i,
					  { numbered_before, numbered_after, &x[i], NULL } };
		profile_on_fold(&p, &x[i].l);
	}
	profile_off_fold(&p, &x[2].l);
	profile_fold(&p, &rule);
	expect_text(h.log, "abdABD", "fold listeners: each before, then each after, as registered");
	CHECK(p.fold_listeners == &x[0].l, "fold listeners: kept across the fold's rebuild");
	memset(&h, 0, sizeof(h));
	profile_off_fold(&p, &x[0].l);
	profile_off_fold(&p, &x[3].l);
	rule.trim = true;
	profile_fold(&p, &rule);
	expect_text(h.log, "bB", "fold listeners: those that left are not told");
	CHECK(p.nr_samples == 0 && profile_total(&p) == 0,
	      "fold: a trim lets every count go after the listeners are told (%u samples)",
	      p.nr_samples);
	profile_release(&p);
}
