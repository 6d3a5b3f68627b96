// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The readers bpfprof diff uses (profile_read.c): a profile written as
 * folded and as pprof reads back, from either, to the very folded text
 * bpfprof wrote, frame by frame and kind by kind (the SVG tells kinds
 * apart): an interpreter's functions "name (file:first)" from the pprof
 * Function's file and start line, inlined calls, kernel frames (modules'
 * and BPF programs' too) and JIT frames, frames nothing names in a file,
 * special frames.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/interp_names.h"
#include "bpfprof/output.h"
#include "bpfprof/profile_read.h"
#include "unit.h"

/* A sample of count on stack (leaf first) of thread comm. */
static void add(struct profile *p, const char *comm, const uint32_t *stack, uint32_t depth,
		uint64_t count)
{
	struct prof_sample s = { 0 };

	s.stack = profile_stack(p, stack, depth);
	s.pid = s.tid = 42;
	s.comm = profile_string(p, comm);
	s.count = count;
	profile_add_sample(p, &s);
}

static uint32_t mapping(struct profile *p, const char *file, uint64_t start, uint64_t offset)
{
	struct prof_mapping m = { 0 };

	m.start = start;
	m.limit = start + 0x100000;
	m.offset = offset;
	m.file = profile_string(p, file);
	return profile_mapping(p, &m);
}

/* A native function (its file and line, which folded output does not show). */
static uint32_t native(struct profile *p, const char *name)
{
	return profile_function_at(p, profile_string(p, name), profile_string(p, name),
				   profile_string(p, "/src/app.c"), 7);
}

/* Every kind of frame bpfprof writes, in a few stacks; p initialised. */
static void build(struct profile *p)
{
	uint32_t app = mapping(p, "/usr/bin/app", 0x400000, 0x1000),
		 libx = mapping(p, "/usr/lib/libx.so.1", 0x7f0000000000, 0x2000),
		 anon = mapping(p, "[anon]", 0x7e0000000000, 0),
		 vdso = mapping(p, "[vdso]", 0x7ffff000, 0),
		 kernel = mapping(p, "[kernel.kallsyms]", 0xffffffff81000000, 0),
		 bpf = mapping(p, "[bpf]", 0xffffffffc0000000, 0),
		 module = mapping(p, "[nf_tables]", 0xffffffffc1000000, 0);
	struct prof_line inl[2] = { { native(p, "inlined"), 3 }, { native(p, "main"), 9 } }, l = { 0, 0 };
	uint32_t s[8], py_work, py_c;

	s[7] = profile_location_add(p, app, 0x401000, FRAME_USER, inl, 2);
	s[6] = profile_location_add(p, libx, 0x7f0000000123, FRAME_USER, NULL, 0);
	py_work = interp_function(p, "work", "/home/u/pkg/__init__.py", 12);
	py_c = interp_function(p, "len", NULL, 0);
	s[5] = interp_location(p, 0, interp_function(p, "<module>", "/home/u/main.py", 0), 4);
	s[4] = interp_location(p, 0, py_work, 14);
	s[3] = interp_location(p, 0, py_c, 0);
	l.function = native(p, "_ZN1x4hashEv");
	s[2] = profile_location_add(p, app, 0x401200, FRAME_USER, &l, 1);
	l.function = profile_function(p, profile_string(p, "do_syscall_64"), 0, 0);
	s[1] = profile_location_add(p, kernel, 0xffffffff81000010, FRAME_KERNEL, &l, 1);
	s[0] = profile_location_add(p, kernel, 0xffffffff81000abc, FRAME_KERNEL, NULL, 0);
	add(p, "app", s, 8, 5);
	add(p, "app", s + 4, 4, 3);	/* a runtime's frame the leaf */
	l.function = profile_function(p, profile_string(p, "LazyCompile:*burn /j.js:3"),
				      profile_string(p, "LazyCompile:*burn /j.js:3"), 0);
	s[0] = profile_location_add(p, anon, 0x7e0000000040, FRAME_JIT, &l, 1);
	s[1] = profile_location_add(p, anon, 0x7e0000000fff, FRAME_USER, NULL, 0);
	s[2] = profile_location_add(p, vdso, 0x7ffff123, FRAME_USER, NULL, 0);
	s[3] = profile_location_add(p, 0, 0x1234, FRAME_USER, NULL, 0);
	add(p, "node", s, 4, 2);
	s[0] = profile_special_location(p, "[off-cpu: sleeping]");
	s[1] = s[7];
	add(p, "app", s, 2, 4);
	/* A BPF program and a module under a kernel function, one module frame unnamed. */
	l.function = profile_function(p, profile_string(p, "htab_map_update_elem"), 0, 0);
	s[0] = profile_location_add(p, kernel, 0xffffffff81000200, FRAME_KERNEL, &l, 1);
	l.function = profile_function(p, profile_string(p, "bpf_prog_4af953c9688fadce_on_exec"), 0, 0);
	s[1] = profile_location_add(p, bpf, 0xffffffffc0000040, FRAME_KERNEL, &l, 1);
	s[2] = profile_location_add(p, module, 0xffffffffc1000300, FRAME_KERNEL, NULL, 0);
	l.function = profile_function(p, profile_string(p, "nft_do_chain"), 0, 0);
	s[3] = profile_location_add(p, module, 0xffffffffc1000100, FRAME_KERNEL, &l, 1);
	s[4] = s[7];
	add(p, "app", s, 5, 6);
	s[0] = profile_special_location(p, "[lost: ring buffer full]");
	add(p, "", s, 1, 1);
}

static char *pprof_of(const struct profile *p, size_t *len)
{
	struct write_options wo = { 0 };
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	write_pprof(f, p, &wo);
	fclose(f);
	return buf;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Each sample's frames' kinds, root first (what the SVG tells apart), a
 * line per sample, sorted. A lost sample (no thread's) is left out: read
 * from folded, it is a thread of its frame's name with no frames.
 */
static char *kinds(const struct profile *p)
{
	char **lines = xcalloc(p->nr_samples + 1, sizeof(*lines));
	uint32_t i, j, n = 0, depth;
	struct strbuf sb;

	for (i = 0; i < p->nr_samples; i++) {
		const uint32_t *frames = profile_stack_frames(p, p->samples[i].stack, &depth);

		if (!depth || !*profile_str(p, p->samples[i].comm))
			continue;
		strbuf_init(&sb);
		strbuf_addstr(&sb, profile_str(p, p->samples[i].comm));
		for (j = depth; j-- > 0;)
			strbuf_addf(&sb, ";%u", p->locations[frames[j]].kind);
		lines[n++] = sb.buf;
	}
	qsort(lines, n, sizeof(*lines), str_cmp);
	strbuf_init(&sb);
	for (i = 0; i < n; i++) {
		strbuf_addf(&sb, "%s\n", lines[i]);
		free(lines[i]);
	}
	free(lines);
	return sb.buf;
}

void test_profile_read(void)
{
	struct profile p, from_folded, from_pprof;
	char why[READ_WHY], *folded, *pb, *again, *k1, *k2;
	size_t pb_len;

	profile_init(&p);
	build(&p);
	folded = unit_write(write_folded, &p, false, NULL);
	expect_text(folded,
		    "[lost: ring buffer full] 1\n"
		    "app;main;inlined_[i];[libx.so.1+0x2123];<module> (main.py:0);work (pkg/__init__.py:12) 3\n"
		    "app;main;inlined_[i];[libx.so.1+0x2123];<module> (main.py:0);work (pkg/__init__.py:12);"
		    "len;_ZN1x4hashEv;do_syscall_64_[k];[kernel.kallsyms+0xabc]_[k] 5\n"
		    "app;main;inlined_[i];[off-cpu: sleeping] 4\n"
		    "app;main;inlined_[i];nft_do_chain_[k];[nf_tables+0x300]_[k];"
		    "bpf_prog_4af953c9688fadce_on_exec_[k];htab_map_update_elem_[k] 6\n"
		    "node;[unknown];[vdso+0x123];[anon+0xfff];LazyCompile:*burn /j.js:3_[j] 2\n",
		    "profile_read: the profile, as bpfprof writes it folded");
	pb = pprof_of(&p, &pb_len);

	profile_init(&from_pprof);
	CHECK(profile_read(&from_pprof, pb, pb_len, why) == 0, "profile_read: reads its pprof");
	again = unit_write(write_folded, &from_pprof, false, NULL);
	expect_text(again, folded, "profile_read: read from pprof, every frame named as folded names it");
	free(again);

	profile_init(&from_folded);
	CHECK(profile_read(&from_folded, folded, strlen(folded), why) == 0, "profile_read: reads its folded text");
	again = unit_write(write_folded, &from_folded, false, NULL);
	expect_text(again, folded, "profile_read: read from folded, the same text");
	free(again);

	k1 = kinds(&from_folded);
	k2 = kinds(&from_pprof);
	expect_text(k2, k1, "profile_read: each frame of the same kind from either (user, kernel, JIT, made up)");

	free(k1);
	free(k2);
	free(folded);
	free(pb);
	profile_release(&from_folded);
	profile_release(&from_pprof);

	/* --off-cpu: folded counts microseconds, pprof's off_cpu nanoseconds; read back as microseconds. */
	p.kind = PROFILE_OFF_CPU;
	folded = unit_write(write_folded, &p, false, NULL);
	pb = pprof_of(&p, &pb_len);
	profile_init(&from_pprof);
	CHECK(profile_read(&from_pprof, pb, pb_len, why) == 0, "profile_read: reads an --off-cpu pprof");
	again = unit_write(write_folded, &from_pprof, false, NULL);
	expect_text(again, folded, "profile_read: an --off-cpu pprof's nanoseconds read as the folded microseconds");
	free(again);
	free(folded);
	free(pb);
	profile_release(&from_pprof);
	profile_release(&p);
}
