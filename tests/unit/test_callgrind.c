// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The callgrind writer: exact text for small hand-built profiles, and on a
 * random profile full of recursion, what callgrind_annotate would compute
 * from the text against the samples counted directly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/intern.h"
#include "bpfprof/output.h"
#include "bpfprof/profile.h"
#include "unit.h"

static char *callgrind(const struct profile *p, bool per_pid, int *err)
{
	return unit_write(write_callgrind, p, per_pid, err);
}

/* The text from the "summary:" line on: the body, without the header. */
static const char *body(const char *out)
{
	const char *s = strstr(out, "\nsummary: ");

	return s ? s + 1 : out;
}

/* A location with one line: function name in file (NULL: unknown) at line. */
static uint32_t named(struct profile *p, uint32_t mapping, uint64_t address, enum frame_kind kind,
		      const char *name, const char *file, uint32_t line_no)
{
	uint32_t n = profile_string(p, name);
	struct prof_line line = { profile_function(p, n, n, file ? profile_string(p, file) : 0),
				  line_no };

	return profile_location_add(p, mapping, address, kind, &line, 1);
}

static uint32_t user_mapping(struct profile *p)
{
	struct prof_mapping m = { 0x1000, 0x5000, 0x0, 0, 0, 42, false };

	m.file = profile_string(p, "/usr/bin/app");
	return profile_mapping(p, &m);
}

static void sample(struct profile *p, const char *comm, uint32_t pid, uint32_t tid,
		   const uint32_t *frames, uint32_t depth, uint64_t count)
{
	struct prof_sample s = { 0 };

	s.stack = profile_stack(p, frames, depth);
	s.pid = pid;
	s.tid = tid;
	s.comm = comm ? profile_string(p, comm) : 0;
	s.count = count;
	profile_add_sample(p, &s);
}

/* test_model.c's profile, with source files and lines, and lost samples. */
static void build_small(struct profile *p)
{
	struct prof_mapping k = { 0xffffffff81000000, 0xffffffff82000000, 0, 0, 0, 0, false };
	uint32_t um, km, l_main, l_work, l_unnamed, l_sys, l_lost, f[3];

	profile_init(p);
	p->command_line = xstrdup("bpfprof -F 99\n-d 2");
	p->frequency = 99;
	p->duration_ns = 2000000000;
	p->period_ns = 10101010;
	um = user_mapping(p);
	k.file = profile_string(p, "[kernel.kallsyms]");
	km = profile_mapping(p, &k);
	l_main = named(p, um, 0x1100, FRAME_USER, "main", "/src/app.c", 20);
	l_work = named(p, um, 0x1200, FRAME_USER, "work;odd\nname", "/src/app.c", 33);
	l_unnamed = profile_location_add(p, um, 0x1abc, FRAME_USER, NULL, 0);
	l_sys = named(p, km, 0xffffffff81000010, FRAME_KERNEL, "do_syscall_64", NULL, 0);
	l_lost = profile_special_location(p, "[lost: stack map full]");

	/* leaf first: kernel, then user */
	f[0] = l_sys, f[1] = l_work, f[2] = l_main;
	sample(p, "app", 42, 43, f, 3, 5);
	sample(p, "app", 42, 44, f, 3, 2);
	f[0] = l_unnamed, f[1] = l_main;
	sample(p, "app", 7, 7, f, 2, 1);
	sample(p, "app", 7, 7, f, 2, 3);
	sample(p, NULL, 0, 0, &l_lost, 1, 2);
}

static void test_small(void)
{
	struct profile p;
	char *out;
	int err;

	build_small(&p);
	out = callgrind(&p, false, &err);
	CHECK(err == 0, "callgrind: written (%d)", err);
	expect_text(out,
		    "# callgrind format\n"
		    "version: 1\n"
		    "creator: bpfprof " BPFPROF_VERSION "\n"
		    "cmd: bpfprof -F 99?-d 2\n"
		    "desc: Trigger: CPU clock at 99 Hz per CPU for 2.000 s, "
		    "a sample is 10101010 ns of CPU time\n"
		    "positions: line\n"
		    "events: Samples\n"
		    "summary: 13\n"
		    "\n"
		    "fl=(1) /src/app.c\n"
		    "fn=(1) main\n"
		    "20 0\n"
		    "cfl=(1)\n"
		    "cfn=(2) work;odd?name\n"
		    "calls=7 0\n"
		    "20 7\n"
		    "cfl=(2) ???\n"
		    "cfn=(3) [app+0xabc]\n"
		    "calls=4 0\n"
		    "20 4\n"
		    "\n"
		    "fn=(2)\n"
		    "cfl=(2)\n"
		    "cfn=(4) do_syscall_64_[k]\n"
		    "calls=7 0\n"
		    "33 7\n"
		    "\n"
		    "fl=(2)\n"
		    "fn=(3)\n"
		    "0 4\n"
		    "\n"
		    "fn=(5) [lost: stack map full]\n"
		    "0 2\n"
		    "\n"
		    "fn=(6) app\n"
		    "cfl=(1)\n"
		    "cfn=(1)\n"
		    "calls=11 0\n"
		    "0 11\n"
		    "\n"
		    "fn=(4)\n"
		    "0 7\n"
		    "\n"
		    "totals: 13\n",
		    "callgrind: header, files and names compressed, self at the leaf, calls at the "
		    "caller's line, lost samples with no thread root, kernel marked");
	free(out);

	out = callgrind(&p, true, NULL);
	expect_text(body(out),
		    "summary: 13\n"
		    "\n"
		    "fl=(1) /src/app.c\n"
		    "fn=(1) main\n"
		    "20 0\n"
		    "cfl=(1)\n"
		    "cfn=(2) work;odd?name\n"
		    "calls=7 0\n"
		    "20 7\n"
		    "cfl=(2) ???\n"
		    "cfn=(3) [app+0xabc]\n"
		    "calls=4 0\n"
		    "20 4\n"
		    "\n"
		    "fn=(2)\n"
		    "cfl=(2)\n"
		    "cfn=(4) do_syscall_64_[k]\n"
		    "calls=7 0\n"
		    "33 7\n"
		    "\n"
		    "fl=(2)\n"
		    "fn=(3)\n"
		    "0 4\n"
		    "\n"
		    "fn=(5) [lost: stack map full]\n"
		    "0 2\n"
		    "\n"
		    "fn=(6) app-42\n"
		    "cfl=(1)\n"
		    "cfn=(1)\n"
		    "calls=7 0\n"
		    "0 7\n"
		    "\n"
		    "fn=(7) app-7\n"
		    "cfl=(1)\n"
		    "cfn=(1)\n"
		    "calls=4 0\n"
		    "0 4\n"
		    "\n"
		    "fn=(4)\n"
		    "0 7\n"
		    "\n"
		    "totals: 13\n",
		    "callgrind: --per-pid roots comm-PID, lost samples still rootless");
	free(out);
	profile_release(&p);

	profile_init(&p);
	out = callgrind(&p, false, &err);
	expect_text(body(out), "summary: 0\n\ntotals: 0\n", "callgrind: an empty profile");
	CHECK(err == 0 && strstr(out, "events: Samples\n") && !strstr(out, "cmd:"),
	      "callgrind: an empty profile has a header, no cmd: when none is known");
	free(out);
	profile_release(&p);
}

/*
 * r;main;f;f;f 3 times and r;main;f;g;f;g twice: f is in 5 samples, not
 * 5 + 3 + 2; g in 2. The inner calls keep their calls= but cost 0.
 */
static void test_recursion(void)
{
	struct profile p;
	uint32_t um, l_main, l_f1, l_f2, l_f3, l_g1, l_g2, f[5];
	char *out;

	profile_init(&p);
	um = user_mapping(&p);
	l_main = named(&p, um, 0x1100, FRAME_USER, "main", NULL, 0);
	/* Different addresses in one function: the same callgrind function. */
	l_f1 = named(&p, um, 0x1200, FRAME_USER, "f", NULL, 0);
	l_f2 = named(&p, um, 0x1210, FRAME_USER, "f", NULL, 0);
	l_f3 = named(&p, um, 0x1220, FRAME_USER, "f", NULL, 0);
	l_g1 = named(&p, um, 0x1300, FRAME_USER, "g", NULL, 0);
	l_g2 = named(&p, um, 0x1310, FRAME_USER, "g", NULL, 0);
	f[0] = l_f3, f[1] = l_f2, f[2] = l_f1, f[3] = l_main;
	sample(&p, "r", 1, 1, f, 4, 3);
	f[0] = l_g2, f[1] = l_f2, f[2] = l_g1, f[3] = l_f1, f[4] = l_main;
	sample(&p, "r", 1, 1, f, 5, 2);

	out = callgrind(&p, false, NULL);
	expect_text(body(out),
		    "summary: 5\n"
		    "\n"
		    "fl=(1) ???\n"
		    "fn=(1) f\n"
		    "0 3\n"
		    "cfl=(1)\n"
		    "cfn=(1)\n"
		    "calls=3 0\n"
		    "0 0\n"
		    "cfl=(1)\n"
		    "cfn=(2) g\n"
		    "calls=2 0\n"
		    "0 2\n"
		    "\n"
		    "fn=(2)\n"
		    "0 2\n"
		    "cfl=(1)\n"
		    "cfn=(1)\n"
		    "calls=2 0\n"
		    "0 0\n"
		    "\n"
		    "fn=(3) main\n"
		    "cfl=(1)\n"
		    "cfn=(1)\n"
		    "calls=5 0\n"
		    "0 5\n"
		    "\n"
		    "fn=(4) r\n"
		    "cfl=(1)\n"
		    "cfn=(3)\n"
		    "calls=5 0\n"
		    "0 5\n"
		    "\n"
		    "totals: 5\n",
		    "callgrind: recursion counts a sample once per call site and once per function");
	free(out);
	profile_release(&p);
}

/*
 * What callgrind_annotate computes from a callgrind text: per "file:fn",
 * self cost, and inclusive cost (--inclusive=yes: the sum of its incoming
 * calls' costs, or self plus outgoing calls for a function never called).
 */
struct reader {
	struct strtab fns;		/* "file:fn" */
	uint64_t self[256], in[256], out[256];
	bool called[256];
	uint64_t summary, totals;
	bool bad;
};

static const char *expand(char (*names)[128], const char *v)
{
	unsigned id;
	int n = 0;

	if (sscanf(v, "(%u)%n", &id, &n) != 1 || id >= 64)
		return v;
	v += n;
	if (*v == ' ')
		snprintf(names[id], sizeof(names[id]), "%s", v + 1);
	return names[id];
}

static void read_callgrind(struct reader *r, char *text)
{
	char files[64][128] = { { 0 } }, fns[64][128] = { { 0 } }, name[300];
	char file[128] = "", cfile[128] = "";
	uint32_t cur = 0, callee = 0;
	bool pending = false;
	char *line, *save;

	memset(r, 0, sizeof(*r));
	strtab_init(&r->fns);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long pos, cost;

		if (!strncmp(line, "fl=", 3)) {
			snprintf(file, sizeof(file), "%s", expand(files, line + 3));
		} else if (!strncmp(line, "fn=", 3)) {
			snprintf(name, sizeof(name), "%s:%s", file, expand(fns, line + 3));
			cur = strtab_intern(&r->fns, name);
		} else if (!strncmp(line, "cfl=", 4)) {
			snprintf(cfile, sizeof(cfile), "%s", expand(files, line + 4));
		} else if (!strncmp(line, "cfn=", 4)) {
			snprintf(name, sizeof(name), "%s:%s", cfile, expand(fns, line + 4));
			callee = strtab_intern(&r->fns, name);
		} else if (!strncmp(line, "calls=", 6)) {
			pending = true;
		} else if (sscanf(line, "summary: %llu", &cost) == 1) {
			r->summary = cost;
		} else if (sscanf(line, "totals: %llu", &cost) == 1) {
			r->totals = cost;
		} else if (sscanf(line, "%llu %llu", &pos, &cost) == 2) {
			if (cur >= 256 || callee >= 256) {
				r->bad = true;
			} else if (pending) {
				r->in[callee] += cost;
				r->out[cur] += cost;
				r->called[callee] = true;
				pending = false;
			} else {
				r->self[cur] += cost;
			}
		}
	}
}

static uint64_t read_inclusive(const struct reader *r, uint32_t id)
{
	return r->called[id] ? r->in[id] : r->self[id] + r->out[id];
}

static uint32_t next_random(uint32_t *state)
{
	*state = *state * 1103515245 + 12345;
	return *state >> 16;
}

/*
 * Random stacks over a few functions, so that recursion of every shape
 * occurs; kernel frames, an inline chain and an unnamed frame among them.
 * reverse: the same profile built in the opposite order (other ids).
 */
static void build_random(struct profile *p, bool reverse)
{
	static const char *const user[] = { "a", "b", "c", "d", "main" };
	static const uint32_t pick[] = { 0, 1, 2, 3, 5, 5, 6 };
	struct prof_mapping k = { 0xffffffff81000000, 0xffffffff82000000, 0, 0, 0, 0, false };
	struct {
		uint32_t frames[12], depth;
		uint64_t count;
	} s[300];
	struct prof_line chain[2];
	uint32_t um, km, locs[8], state = 12345, i, j, d, x;

	profile_init(p);
	um = user_mapping(p);
	k.file = profile_string(p, "[kernel.kallsyms]");
	km = profile_mapping(p, &k);
	for (x = 0; x < 8; x++) {
		i = reverse ? 7 - x : x;
		if (i < 5) {
			locs[i] = named(p, um, 0x1100 + 0x100 * i, FRAME_USER, user[i], NULL, 0);
		} else if (i == 5) {
			/* "inl" inlined into "b" (innermost first): b, then inl. */
			chain[0].function = profile_function(p, profile_string(p, "inl"), 0, 0);
			chain[0].line = 7;
			chain[1].function = profile_function(p, profile_string(p, "b"), 0, 0);
			chain[1].line = 9;
			locs[5] = profile_location_add(p, um, 0x1900, FRAME_USER, chain, 2);
		} else if (i == 6) {
			locs[6] = profile_location_add(p, um, 0x1abc, FRAME_USER, NULL, 0);
		} else {
			locs[7] = named(p, km, 0xffffffff81000010, FRAME_KERNEL, "a", NULL, 0);
		}
	}
	/* Kernel frames (leaf first), then user frames, main at the root. */
	for (i = 0; i < 300; i++) {
		s[i].depth = 0;
		if (next_random(&state) % 4 == 0)
			s[i].frames[s[i].depth++] = locs[7];
		d = 1 + next_random(&state) % 8;
		for (j = 0; j < d; j++)
			s[i].frames[s[i].depth++] = locs[pick[next_random(&state) % 7]];
		s[i].frames[s[i].depth++] = locs[4];
		s[i].count = 1 + next_random(&state) % 5;
	}
	for (x = 0; x < 300; x++) {
		i = reverse ? 299 - x : x;
		sample(p, i % 3 ? "t1" : "t2", 1, 1 + i % 3, s[i].frames, s[i].depth, s[i].count);
	}
	x = profile_special_location(p, "[lost: counts map full]");
	sample(p, NULL, 0, 0, &x, 1, 4);
}

/* Checked against the samples counted straight from the stacks. */
static void test_random(void)
{
	uint64_t want_self[256] = { 0 }, want_incl[256] = { 0 }, total = 0;
	bool self_ok = true, incl_ok = true, names_ok = true;
	struct profile p;
	struct strtab fns;
	struct strbuf sb;
	struct reader r;
	char *out, *again;
	uint32_t i;
	int err;

	build_random(&p, false);
	/* "file:fn" names as the writer gives them: all files unknown here. */
	strtab_init(&fns);
	strbuf_init(&sb);
	for (i = 0; i < p.nr_samples; i++) {
		const struct prof_sample *s = &p.samples[i];
		uint32_t ids[32], n = 0, x, y, depth;
		const uint32_t *frames = profile_stack_frames(&p, s->stack, &depth);

		if (s->comm) {
			strbuf_reset(&sb);
			strbuf_addf(&sb, "???:%s", profile_str(&p, s->comm));
			ids[n++] = strtab_intern(&fns, sb.buf);
		}
		for (x = depth; x-- > 0;) {
			const struct prof_location *loc = &p.locations[frames[x]];

			for (y = loc->nlines ? loc->nlines : 1; y-- > 0;) {
				strbuf_reset(&sb);
				strbuf_addstr(&sb, "???:");
				profile_frame_name(&p, frames[x], y, &sb);
				if (loc->kind == FRAME_KERNEL)
					strbuf_addstr(&sb, "_[k]");
				ids[n++] = strtab_intern(&fns, sb.buf);
			}
		}
		want_self[ids[n - 1]] += s->count;
		for (x = 0; x < n; x++) {
			for (y = 0; y < x && ids[y] != ids[x]; y++)
				;
			if (y == x)
				want_incl[ids[x]] += s->count;
		}
		total += s->count;
	}

	out = callgrind(&p, false, &err);
	again = xstrdup(out);
	read_callgrind(&r, again);
	free(again);
	CHECK(err == 0 && !r.bad, "callgrind random: written and read back (%d)", err);
	CHECK(r.summary == total && r.totals == total,
	      "callgrind random: summary %llu, totals %llu, want %llu", (unsigned long long)r.summary,
	      (unsigned long long)r.totals, (unsigned long long)total);
	/* Every function of the text is one of the stacks', and the reverse. */
	for (i = 1; i < r.fns.nr; i++)
		names_ok &= strtab_intern(&fns, strtab_get(&r.fns, i)) < 256;
	names_ok &= r.fns.nr == fns.nr;
	CHECK(names_ok, "callgrind random: the same %u functions as the stacks (%u)", fns.nr - 1,
	      r.fns.nr - 1);
	for (i = 1; names_ok && i < fns.nr; i++) {
		uint32_t id = strtab_intern(&r.fns, strtab_get(&fns, i));

		if (r.self[id] != want_self[i]) {
			self_ok = false;
			printf("#   %s: self %llu, want %llu\n", strtab_get(&fns, i),
			       (unsigned long long)r.self[id], (unsigned long long)want_self[i]);
		}
		if (read_inclusive(&r, id) != want_incl[i]) {
			incl_ok = false;
			printf("#   %s: inclusive %llu, want %llu\n", strtab_get(&fns, i),
			       (unsigned long long)read_inclusive(&r, id),
			       (unsigned long long)want_incl[i]);
		}
	}
	CHECK(names_ok && self_ok, "callgrind random: self cost = samples with the function as leaf");
	CHECK(names_ok && incl_ok,
	      "callgrind random: inclusive, as callgrind_annotate sums it = samples with the function");
	strbuf_release(&sb);
	strtab_release(&fns);
	strtab_release(&r.fns);
	profile_release(&p);

	build_random(&p, true);
	again = callgrind(&p, false, NULL);
	CHECK(!strcmp(out, again), "callgrind: the same samples added in another order, the same text");
	free(again);
	free(out);
	profile_release(&p);
}

/* main;b;inl where inl is inlined into b: two functions, the call at b's line. */
static void test_inline(void)
{
	struct prof_line chain[2];
	struct profile p;
	uint32_t um, f[2];
	char *out;

	profile_init(&p);
	um = user_mapping(&p);
	chain[0].function = profile_function(&p, profile_string(&p, "inl"), 0,
					     profile_string(&p, "/src/inl.h"));
	chain[0].line = 7;
	chain[1].function = profile_function(&p, profile_string(&p, "b"), 0,
					     profile_string(&p, "/src/b.c"));
	chain[1].line = 9;
	f[0] = profile_location_add(&p, um, 0x1900, FRAME_USER, chain, 2);
	f[1] = named(&p, um, 0x1100, FRAME_USER, "main", NULL, 0);
	sample(&p, "t", 1, 1, f, 2, 1);
	out = callgrind(&p, false, NULL);
	expect_text(body(out),
		    "summary: 1\n"
		    "\n"
		    "fl=(1) /src/b.c\n"
		    "fn=(1) b\n"
		    "9 0\n"
		    "cfl=(2) /src/inl.h\n"
		    "cfn=(2) inl\n"
		    "calls=1 0\n"
		    "9 1\n"
		    "\n"
		    "fl=(2)\n"
		    "fn=(2)\n"
		    "7 1\n"
		    "\n"
		    "fl=(3) ???\n"
		    "fn=(3) main\n"
		    "cfl=(1)\n"
		    "cfn=(1)\n"
		    "calls=1 0\n"
		    "0 1\n"
		    "\n"
		    "fn=(4) t\n"
		    "cfl=(3)\n"
		    "cfn=(3)\n"
		    "calls=1 0\n"
		    "0 1\n"
		    "\n"
		    "totals: 1\n",
		    "callgrind: an inline chain is caller then callee, each in its own file");
	free(out);
	profile_release(&p);
}

/*
 * main in /src/main.c at no known line calls run (/src/job.py, first line
 * 12, no line either) which calls leaf at /src/leaf.c:30. A file with only
 * line-0 costs, or only calls (job.py), would make callgrind_annotate read
 * an empty line list: job.py gets a self cost of 0 at its call's line.
 */
static void test_no_line(void)
{
	struct prof_line run = { 0, 0 };
	struct profile p;
	uint32_t um, f[3];
	char *out;

	profile_init(&p);
	um = user_mapping(&p);
	f[0] = named(&p, um, 0x1200, FRAME_USER, "leaf", "/src/leaf.c", 30);
	run.function = profile_function_at(&p, profile_string(&p, "run"), 0,
					   profile_string(&p, "/src/job.py"), 12);
	f[1] = profile_location_add(&p, um, 0x1300, FRAME_INTERP, &run, 1);
	f[2] = named(&p, um, 0x1100, FRAME_USER, "main", "/src/main.c", 0);
	sample(&p, "t", 1, 1, f, 3, 2);
	sample(&p, "t", 1, 1, f + 2, 1, 1);
	out = callgrind(&p, false, NULL);
	expect_text(body(out),
		    "summary: 3\n"
		    "\n"
		    "fl=(1) /src/job.py\n"
		    "fn=(1) run (job.py:12)\n"
		    "12 0\n"
		    "cfl=(2) /src/leaf.c\n"
		    "cfn=(2) leaf\n"
		    "calls=2 0\n"
		    "12 2\n"
		    "\n"
		    "fl=(2)\n"
		    "fn=(2)\n"
		    "30 2\n"
		    "\n"
		    "fl=(3) ???\n"
		    "fn=(3) main\n"
		    "0 1\n"
		    "cfl=(1)\n"
		    "cfn=(1)\n"
		    "calls=2 0\n"
		    "0 2\n"
		    "\n"
		    "fn=(4) t\n"
		    "cfl=(3)\n"
		    "cfn=(3)\n"
		    "calls=3 0\n"
		    "0 3\n"
		    "\n"
		    "totals: 3\n",
		    "callgrind: no line: a Python frame at its first line, a file of calls only given a 0 at one, a file of no line as ???");
	free(out);
	profile_release(&p);
}

static void test_stream_error(void)
{
	struct profile p;
	FILE *f = fopen("/dev/full", "w");
	int err;

	if (!CHECK(f, "callgrind: /dev/full opens"))
		return;
	build_small(&p);
	err = write_callgrind(f, &p, &(struct write_options){ 0 });
	CHECK(err == -ENOSPC, "callgrind: a full device is an error (%d)", err);
	fclose(f);
	profile_release(&p);
}

void test_callgrind(void)
{
	test_small();
	test_recursion();
	test_inline();
	test_no_line();
	test_random();
	test_stream_error();
}
