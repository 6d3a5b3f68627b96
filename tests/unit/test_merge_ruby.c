// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Ruby's merge (ruby_merge_frames) on samples recorded from
 * tests/example/demo.rb under Debian's ruby3.1 (bpfprof -F 999, with and
 * without --no-ruby): each vm_exec_core frame, with its rb_vm_exec and the
 * VM's unnamed call helpers, replaced by the Ruby frames of its entry into
 * the VM, and each C method at its own C function, checked frame by frame
 * against the folded line bpfprof wrote: OpenSSL's SHA-256 under
 * Digest::Instance#digest calling OpenSSL::Digest#update through
 * rb_funcallv; Array#map's block run through rb_yield while the VM
 * collects garbage ("[ruby: gc]" above the newest Ruby frame). Then the
 * walks cut short: at an unreadable frame (an entry left with none of its
 * frames keeps its native frames) and at INTERP_MAX_FRAMES, a native stack cut
 * short (the frames of the entries it did not reach at its root, counted;
 * none reached, and the sample keeps its native frames); an iseq and a
 * method entry not named ("[ruby: iseq not read]", "[ruby: method not
 * read]", the method with no C function at its stretch's leaf end).
 */
#include <stdlib.h>
#include <string.h>

#include "bpfprof/ruby_merge.h"
#include "bpfprof/sampler.h"
#include "runtime_stacks.h"
#include "unit.h"

/* Where the recorded process had its files: each one's offset 0. */
#define LIBRUBY	0x7f4c1a200000ull	/* libruby-3.1.so.3.1.2 */
#define RUBY_BIN	0x5612a3e00000ull	/* /usr/bin/ruby3.1 */
#define DIGEST	0x7f4c18d40000ull	/* ruby/3.1.0/digest.so */
#define OPENSSL	0x7f4c18a80000ull	/* ruby/3.1.0/openssl.so */
#define CRYPTO	0x7f4c18400000ull	/* libcrypto.so.3 */
#define LIBC	0x7f4c1b800000ull

/* vm_exec_core and rb_vm_exec in Debian's libruby-3.1 (test_ruby_file, nm -D). */
static const struct ruby_process vm = {
	.vm_exec_lo = LIBRUBY + 0x24ebd0, .vm_exec_hi = LIBRUBY + 0x253047,
	.vm_entry_lo = LIBRUBY + 0x253060, .vm_entry_hi = LIBRUBY + 0x253bca,
	.known = 1, .version = 0x301,
};

/* The iseqs and method entries of the recorded process. */
#define MAIN_ISEQ	0x7f4c19c6f9e8
#define HANDLE_REQUEST	0x7f4c19c6f5b0
#define CHECKSUM	0x7f4c19c6f790
#define RENDER		0x7f4c19c6fa80
#define RENDER_BLOCK	0x7f4c19c6f8f0
#define DIGEST_BLOCK	0x7f4c19d3e2a8	/* digest.rb's hexdigest, made by define_method */
#define UPDATE_ME	0x7f4c19e8a2d0	/* OpenSSL::Digest#update */
#define DIGEST_ME	0x7f4c19f1b8a8	/* Digest::Instance#digest */
#define MAP_ME		0x7f4c1a0d7c38	/* Array#map */

/* What its namer read of them. */
static const struct iseq {
	uint64_t addr;
	const char *label, *file;
	uint32_t first_lineno, line;
} iseqs[] = {
	{ MAIN_ISEQ, "<main>", "tests/example/demo.rb", 0, 52 },
	{ HANDLE_REQUEST, "handle_request", "tests/example/demo.rb", 30, 32 },
	{ CHECKSUM, "checksum", "tests/example/demo.rb", 18, 19 },
	{ RENDER, "render", "tests/example/demo.rb", 14, 15 },
	{ RENDER_BLOCK, "block in render", "tests/example/demo.rb", 15, 15 },
	{ DIGEST_BLOCK, "block (3 levels) in <class:Digest>", "/usr/lib/ruby/3.1.0/digest.rb", 41,
	  42 },
};

static const struct method {
	uint64_t me;
	const char *name;
	uint64_t func;		/* the C function its definition runs */
} methods[] = {
	{ UPDATE_ME, "OpenSSL::Digest#update", OPENSSL + 0x23b50 },	/* ossl_digest_update */
	{ DIGEST_ME, "Digest::Instance#digest", DIGEST + 0x24f0 },	/* rb_digest_instance_... */
	{ MAP_ME, "Array#map", LIBRUBY + 0x43600 },			/* rb_ary_collect */
};

/* merge_names.locate: as frame_location, from iseqs[] and methods[]; others were not read. */
static uint32_t locate(void *ctx, struct profile *p, const struct interp_frame *frames, uint32_t g,
		       uint32_t n)
{
	const struct interp_frame *f = &frames[g];
	size_t i;

	(void)ctx;
	(void)n;
	if (f->instr & RB_FRAME_CFUNC) {
		for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
			if (methods[i].me == f->code)
				return rs_runtime(p, FRAME_INTERP + RUNTIME_RUBY, methods[i].name, NULL, 0, 0);
		return profile_special_location(p, "[ruby: method not read]");
	}
	for (i = 0; i < sizeof(iseqs) / sizeof(iseqs[0]); i++)
		if (iseqs[i].addr == f->code)
			return rs_runtime(p, FRAME_INTERP + RUNTIME_RUBY, iseqs[i].label, iseqs[i].file,
					  iseqs[i].first_lineno, iseqs[i].line);
	return profile_special_location(p, "[ruby: iseq not read]");
}

/* merge_names.cfunc: from methods[]. */
static uint64_t cfunc(void *ctx, uint64_t me)
{
	size_t i;

	(void)ctx;
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (methods[i].me == me)
			return methods[i].func;
	return 0;
}

static const struct merge_names names = { .locate = locate, .cfunc = cfunc };

#define ENTRY INTERP_FRAME_ENTRY
#define CFUNC(me) { me, RB_FRAME_CFUNC, 0 }
#define ISEQ(iseq, pc_bits) { iseq, (pc_bits), 0 }

/* The Ruby stacks the BPF program sent, newest first. */
static const struct interp_stack digest_stack = {
	.n = 6, .end = INTERP_WALK_WHOLE, .runtime = RUNTIME_RUBY, .state = RB_VM_RUBY,
	.frames = { CFUNC(UPDATE_ME), CFUNC(DIGEST_ME), ISEQ(DIGEST_BLOCK, ENTRY | 0x13a4b2c),
		    ISEQ(CHECKSUM, 0x138d7e6), ISEQ(HANDLE_REQUEST, 0x138d5fa),
		    ISEQ(MAIN_ISEQ, ENTRY | 0x138cb90) },
};

static const struct interp_stack gc_stack = {
	.n = 5, .end = INTERP_WALK_WHOLE, .runtime = RUNTIME_RUBY, .state = RB_VM_GC,
	.frames = { ISEQ(RENDER_BLOCK, ENTRY | 0x138d9c4), CFUNC(MAP_ME), ISEQ(RENDER, 0x138d8a2),
		    ISEQ(HANDLE_REQUEST, 0x138d5e8), ISEQ(MAIN_ISEQ, ENTRY | 0x138cb90) },
};

static struct raw_interp raw_of(const struct interp_stack *st)
{
	return (struct raw_interp){ st->frames, st->n, st->end, st->runtime, st->state };
}

struct maps {
	uint32_t ruby, libruby, digest, openssl, crypto, libc;
};

static struct maps mappings(struct profile *p)
{
	return (struct maps){
		rs_mapping(p, "/usr/bin/ruby3.1", RUBY_BIN + 0x1000, 0x1000, 0x1000),
		rs_mapping(p, "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2", LIBRUBY + 0x33000,
			   0x33000, 0x25a000),
		rs_mapping(p, "/usr/lib/x86_64-linux-gnu/ruby/3.1.0/digest.so", DIGEST + 0x2000,
			   0x2000, 0x2000),
		rs_mapping(p, "/usr/lib/x86_64-linux-gnu/ruby/3.1.0/openssl.so", OPENSSL + 0x19000,
			   0x19000, 0x40000),
		rs_mapping(p, "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", CRYPTO + 0xce000, 0xce000,
			   0x27d000),
		rs_mapping(p, "/usr/lib/x86_64-linux-gnu/libc.so.6", LIBC + 0x28000, 0x28000,
			   0x155000),
	};
}

/* A libruby frame it has no symbol for, at file offset off. */
#define VM(off) rs_native(p, m->libruby, LIBRUBY + (off), NULL)

/* From the outermost entry's vm_exec_core (at exec) to _start, leaf first, into f. */
static uint32_t root_frames(struct profile *p, const struct maps *m, uint32_t exec, uint32_t *f)
{
	uint32_t n = 0;

	f[n++] = VM(exec);			/* vm_exec_core */
	f[n++] = rs_native(p, m->libruby, LIBRUBY + 0x2531d5, "rb_vm_exec", NULL);
	f[n++] = VM(0xb800f);			/* rb_ec_exec_node */
	f[n++] = rs_native(p, m->libruby, LIBRUBY + 0xbb9f1, "ruby_run_node", NULL);
	f[n++] = rs_native(p, m->ruby, RUBY_BIN + 0x110a, NULL);	/* main */
	f[n++] = rs_native(p, m->libc, LIBC + 0x27249, "__libc_start_call_main", NULL);
	f[n++] = rs_native(p, m->libc, LIBC + 0x27304, "__libc_start_main", NULL);
	f[n++] = rs_native(p, m->ruby, RUBY_BIN + 0x1161, "_start", NULL);
	return n;
}

#define ROOT "ruby3.1;_start;__libc_start_main;__libc_start_call_main;[ruby3.1+0x110a];" \
	"ruby_run_node;[libruby-3.1.so.3.1.2+0xb800f]"

/* checksum's Digest::SHA256.hexdigest: OpenSSL's SHA-256 under two C methods, leaf first. */
static uint32_t digest_frames(struct profile *p, uint32_t *f)
{
	struct maps ms = mappings(p), *m = &ms;
	uint32_t n = 0;

	f[n++] = rs_native(p, m->crypto, CRYPTO + 0x29c554, NULL);
	f[n++] = rs_native(p, m->crypto, CRYPTO + 0x29bfd3, "SHA256_Update", NULL);
	f[n++] = rs_native(p, m->openssl, OPENSSL + 0x23b9e, "ossl_digest_update", NULL);
	f[n++] = VM(0x257e92);			/* vm_call0_body */
	f[n++] = rs_native(p, m->libruby, LIBRUBY + 0x25b0a4, "rb_funcallv", NULL);
	f[n++] = rs_native(p, m->digest, DIGEST + 0x2599, NULL);
	f[n++] = VM(0x24952f);			/* vm_call_cfunc_with_frame */
	f[n++] = VM(0x24be2a);			/* vm_sendish */
	f[n++] = VM(0x24ec3d);			/* vm_exec_core */
	f[n++] = rs_native(p, m->libruby, LIBRUBY + 0x2531d5, "rb_vm_exec", NULL);
	f[n++] = VM(0x254761);			/* invoke_bmethod */
	f[n++] = VM(0x24be2a);			/* vm_sendish */
	return n + root_frames(p, m, 0x24ec3d, f + n);
}

#define DIGEST_LEAF "Digest::Instance#digest;[digest.so+0x2599];rb_funcallv;" \
	"[libruby-3.1.so.3.1.2+0x257e92];OpenSSL::Digest#update;ossl_digest_update;" \
	"SHA256_Update;[libcrypto.so.3+0x29c554]"
#define DIGEST_RUBY "<main> (demo.rb:0);handle_request (demo.rb:30);checksum (demo.rb:18);" \
	"block (3 levels) in <class:Digest> (digest.rb:41)"

/* render's records.map { ... } making a string, the GC freeing, leaf first. */
static uint32_t gc_frames(struct profile *p, uint32_t *f)
{
	struct maps ms = mappings(p), *m = &ms;
	static const uint32_t gc[] = { 0xd7119, 0xd74f8, 0xd7ec6, 0xd5ef7, 0xd99fc, 0xda2bd };
	uint32_t n = 0, i;

	f[n++] = rs_native(p, m->libc, LIBC + 0x9a3f1, "malloc_usable_size", "musable", NULL);
	f[n++] = rs_native(p, m->libruby, LIBRUBY + 0xd6688, "ruby_sized_xfree", NULL);
	for (i = 0; i < sizeof(gc) / sizeof(gc[0]); i++)
		f[n++] = VM(gc[i]);
	f[n++] = rs_native(p, m->libruby, LIBRUBY + 0xda3f0, "rb_ec_wb_protected_newobj_of", NULL);
	f[n++] = rs_native(p, m->libruby, LIBRUBY + 0x1f2130, "rb_ec_str_resurrect", NULL);
	f[n++] = VM(0x24f696);			/* vm_exec_core */
	f[n++] = rs_native(p, m->libruby, LIBRUBY + 0x2531d5, "rb_vm_exec", NULL);
	f[n++] = rs_native(p, m->libruby, LIBRUBY + 0x257801, "rb_yield", NULL);
	f[n++] = VM(0x4368b);			/* rb_ary_collect */
	f[n++] = VM(0x24952f);
	f[n++] = VM(0x24be2a);
	return n + root_frames(p, m, 0x24ec9a, f + n);
}

/* Merges st into frames[0..n); the folded line, *vms and *unmatched as they say. */
static char *merged(struct profile *p, const struct interp_stack *st, const uint32_t *frames,
		    uint32_t n, uint32_t *vms, uint32_t *unmatched)
{
	uint32_t out[2 * BPFPROF_MAX_DEPTH + INTERP_MAX_FRAMES], m;
	struct raw_interp rr = raw_of(st);

	m = ruby_merge_frames(p, &vm, &rr, &names, frames, n, out, sizeof(out) / sizeof(out[0]),
			      vms, unmatched);
	return rs_folded(p, "ruby3.1", out, m);
}

static void typical(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], n, vms, unmatched;
	struct profile p;
	char *got;

	profile_init(&p);
	n = digest_frames(&p, frames);
	got = merged(&p, &digest_stack, frames, n, &vms, &unmatched);
	expect_text(got, ROOT ";" DIGEST_RUBY ";" DIGEST_LEAF,
		    "ruby: two VM entries replaced, each C method at its own C function");
	CHECK(vms == 2 && unmatched == 0, "ruby: two VM entries met (%u), every frame placed (%u)",
	      vms, unmatched);
	free(got);
	profile_release(&p);

	profile_init(&p);
	n = gc_frames(&p, frames);
	got = merged(&p, &gc_stack, frames, n, &vms, &unmatched);
	expect_text(got, ROOT ";<main> (demo.rb:0);handle_request (demo.rb:30);render (demo.rb:14);"
		    "Array#map;[libruby-3.1.so.3.1.2+0x4368b];rb_yield;"
		    "block in render (demo.rb:15);"
		    "[ruby: gc];rb_ec_str_resurrect;rb_ec_wb_protected_newobj_of;"
		    "[libruby-3.1.so.3.1.2+0xda2bd];[libruby-3.1.so.3.1.2+0xd99fc];"
		    "[libruby-3.1.so.3.1.2+0xd5ef7];[libruby-3.1.so.3.1.2+0xd7ec6];"
		    "[libruby-3.1.so.3.1.2+0xd74f8];[libruby-3.1.so.3.1.2+0xd7119];"
		    "ruby_sized_xfree;malloc_usable_size;musable_[i]",
		    "ruby: a block rb_yield runs for Array#map, [ruby: gc] above it");
	free(got);
	profile_release(&p);
}

/*
 * The sample caught rb_yield entering the VM for render's block: the
 * block's frame pushed, rb_vm_exec the leaf, its vm_exec_core not called
 * yet (optcarrot's fiber, 0.45 % of its samples, put the older entry's
 * frames at the root and the block's in its place). The leaf rb_vm_exec
 * stands for the block's entry.
 */
static void entering(void)
{
	struct interp_stack st = gc_stack;
	uint32_t frames[BPFPROF_MAX_DEPTH], n = 0, vms, unmatched;
	struct profile p;
	struct maps ms;
	char *got;

	profile_init(&p);
	ms = mappings(&p);
	st.state = RB_VM_RUBY;
	frames[n++] = rs_native(&p, ms.libruby, LIBRUBY + 0x253080, "rb_vm_exec", NULL);
	frames[n++] = rs_native(&p, ms.libruby, LIBRUBY + 0x257801, "rb_yield", NULL);
	frames[n++] = rs_native(&p, ms.libruby, LIBRUBY + 0x4368b, NULL);	/* rb_ary_collect */
	frames[n++] = rs_native(&p, ms.libruby, LIBRUBY + 0x24952f, NULL);
	frames[n++] = rs_native(&p, ms.libruby, LIBRUBY + 0x24be2a, NULL);
	n += root_frames(&p, &ms, 0x24ec9a, frames + n);
	got = merged(&p, &st, frames, n, &vms, &unmatched);
	expect_text(got, ROOT ";<main> (demo.rb:0);handle_request (demo.rb:30);render (demo.rb:14);"
		    "Array#map;[libruby-3.1.so.3.1.2+0x4368b];rb_yield;block in render (demo.rb:15)",
		    "ruby: rb_vm_exec entering the VM stands for the block it enters");
	CHECK(vms == 2 && unmatched == 0, "ruby: entering, two entries met (%u), none unmatched (%u)",
	      vms, unmatched);
	free(got);
	profile_release(&p);
}

static void cut(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], n, vms, unmatched, i;
	struct interp_stack st = digest_stack;
	struct strbuf want;
	struct profile p;
	char *got;

	/* checksum's frame unreadable: the outer entry keeps its native frames. */
	profile_init(&p);
	n = digest_frames(&p, frames);
	st.n = 3;
	st.end = INTERP_WALK_FAULT;
	got = merged(&p, &st, frames, n, &vms, &unmatched);
	expect_text(got, ROOT ";rb_vm_exec;[libruby-3.1.so.3.1.2+0x24ec3d];"
		    "[libruby-3.1.so.3.1.2+0x24be2a];[libruby-3.1.so.3.1.2+0x254761];"
		    "block (3 levels) in <class:Digest> (digest.rb:41);" DIGEST_LEAF,
		    "ruby: a walk cut at an unreadable frame: the unread entry's native frames "
		    "kept");
	CHECK(vms == 1 && unmatched == 0, "ruby: cut walk, one entry met (%u), none unmatched (%u)",
	      vms, unmatched);
	free(got);

	/* checksum recursing past INTERP_MAX_FRAMES: the newest 64, the outer entry has 61 of them. */
	for (i = 3; i < INTERP_MAX_FRAMES; i++)
		st.frames[i] = (struct interp_frame)ISEQ(CHECKSUM, 0x138d7e6);
	st.n = INTERP_MAX_FRAMES;
	st.end = INTERP_WALK_DEPTH;
	got = merged(&p, &st, frames, n, &vms, &unmatched);
	strbuf_init(&want);
	strbuf_addstr(&want, ROOT);
	for (i = 3; i < INTERP_MAX_FRAMES; i++)
		strbuf_addstr(&want, ";checksum (demo.rb:18)");
	strbuf_addstr(&want, ";block (3 levels) in <class:Digest> (digest.rb:41);" DIGEST_LEAF);
	expect_text(got, want.buf, "ruby: cut at 64 frames: the outer entry has the rest");
	strbuf_release(&want);
	free(got);

	/* The native walk stopped in invoke_bmethod: the outer entry's frames at the root. */
	got = merged(&p, &digest_stack, frames, 11, &vms, &unmatched);
	expect_text(got, "ruby3.1;<main> (demo.rb:0);handle_request (demo.rb:30);"
		    "checksum (demo.rb:18);[libruby-3.1.so.3.1.2+0x254761];"
		    "block (3 levels) in <class:Digest> (digest.rb:41);" DIGEST_LEAF,
		    "ruby: a native stack cut short: the unreached entry's frames at its root");
	CHECK(vms == 1 && unmatched == 3, "ruby: one entry met (%u), three frames unmatched (%u)",
	      vms, unmatched);
	free(got);

	/* Stopped in rb_funcallv, short of any VM frame: the Ruby frames not taken. */
	got = merged(&p, &digest_stack, frames, 5, &vms, &unmatched);
	CHECK(vms == 0, "ruby: a native stack with no VM frame: none met (%u), native kept", vms);
	free(got);
	profile_release(&p);
}

static void freed(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], n, vms, unmatched;
	struct interp_stack st = digest_stack;
	struct profile p;
	char *got;

	/* checksum's iseq freed (or moved by the GC) before it was named. */
	profile_init(&p);
	n = digest_frames(&p, frames);
	st.frames[3].code = 0x7f4c19c70128;
	got = merged(&p, &st, frames, n, &vms, &unmatched);
	expect_text(got, ROOT ";<main> (demo.rb:0);handle_request (demo.rb:30);"
		    "[ruby: iseq not read];block (3 levels) in <class:Digest> (digest.rb:41);"
		    DIGEST_LEAF,
		    "ruby: an iseq not named is [ruby: iseq not read], in its place");
	free(got);

	/*
	 * OpenSSL::Digest#update's method entry not read: no name, no C
	 * function to stand at; the newest C method stands at its stretch's
	 * leaf end, the older one at its own function still.
	 */
	st = digest_stack;
	st.frames[0].code = 0x7f4c19e8b010;
	got = merged(&p, &st, frames, n, &vms, &unmatched);
	expect_text(got, ROOT ";" DIGEST_RUBY ";Digest::Instance#digest;[digest.so+0x2599];"
		    "rb_funcallv;[libruby-3.1.so.3.1.2+0x257e92];ossl_digest_update;SHA256_Update;"
		    "[libcrypto.so.3+0x29c554];[ruby: method not read]",
		    "ruby: a method entry not named: [ruby: method not read] at the leaf end");
	free(got);
	profile_release(&p);
}

void test_merge_ruby(void)
{
	typical();
	entering();
	cut();
	freed();
}
