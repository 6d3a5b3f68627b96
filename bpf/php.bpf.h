/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * PHP's frames at a sample, walked in the BPF program beside the native
 * stack, for every PHP process (the CLI, php-fpm's workers), with no change
 * to the program.
 *
 * A PHP engine built without thread safety (NTS: Debian's, and every
 * php-fpm's default) keeps its executor globals in one variable,
 * executor_globals, exported by the binary. Its current_execute_data is
 * the frame running now; each frame (zend_execute_data) holds its function,
 * the opline it is at, and the frame that called it. The walk reads each
 * frame's head, its function's type, file and lines, and a user
 * function's opline's line: three reads a frame.
 *
 * Opcache's JIT code runs in execute_ex's own frame (the hybrid VM's) and
 * has no CFI: php_jit_frame tells the native walk where execute_ex's frame
 * is, so the walk goes on below the JIT code.
 */
#ifndef BPFPROF_PHP_BPF_H
#define BPFPROF_PHP_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "interp.bpf.h"
#include "settings.bpf.h"
#include "bpfprof/php_frames.h"

/* Files that hold a PHP engine, by identity; written by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct unwind_file_key);
	__type(value, struct php_file);
	__uint(max_entries, 64);
} php_files SEC(".maps");

/* PHP processes by tgid: from their mappings as read (scan_mappings), or by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct php_process);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} php_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} php_notices SEC(".maps");

struct php_walk {
	struct interp_stack stack;
	__u64 hash;
	__u64 ex;			/* the next frame */
	struct php_layout l;
	__u32 end_why;			/* enum interp_walk_end, once ended */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct php_walk);
	__uint(max_entries, 1);
} php_scratch SEC(".maps");

/* A process maps code of file at e: if the file holds a PHP engine, the process is PHP's. */
static __always_inline void php_mapping_seen(__u32 tgid, __u32 gen, const struct exec_mapping *e)
{
	struct php_process p = { .gen = gen };
	struct php_file *f;
	__u64 base;

	if (!runtime_on(RUNTIME_PHP) || !(f = bpf_map_lookup_elem(&php_files, &e->file)))
		return;
	base = e->start - e->offset;
	p.eg = base + f->eg_rel;
	p.execute_ex_lo = base + f->execute_ex_lo_rel;
	p.execute_ex_hi = base + f->execute_ex_hi_rel;
	p.jit_vm_pc = f->jit_vm_pc_rel ? base + f->jit_vm_pc_rel : 0;
	p.jit_ra_off = f->jit_ra_off;
	p.known = f->known;
	p.version = f->version;
	p.l = f->l;
	p.call_lo = base + f->call_lo_rel;
	p.call_hi = base + f->call_hi_rel;
	p.text_lo = base + f->text_lo_rel;
	p.text_hi = base + f->text_hi_rel;
	bpf_map_update_elem(&php_procs, &tgid, &p, BPF_ANY);
}

static __always_inline long php_walk_end(struct php_walk *w, __u32 why)
{
	w->end_why = why;
	return 1;
}

static __always_inline void php_record(struct php_walk *w, __u64 code, __u32 instr, __u32 first)
{
	__u32 n = w->stack.n;
	struct interp_frame *fr = &w->stack.frames[n & (INTERP_MAX_FRAMES - 1)];

	fr->code = code;
	fr->instr = instr;
	fr->firstlineno = first;
	w->stack.n = n + 1;
	w->hash = (w->hash ^ code) * 0x9e3779b97f4a7c15ull;
	w->hash = (w->hash ^ ((__u64)first << 32 | instr)) * 0x9e3779b97f4a7c15ull;
	w->hash ^= w->hash >> 29;
}

/* One frame: recorded if it runs a function (PHP's or C's); on to its caller. */
static long php_walk_step(__u32 i, void *unused)
{
	struct php_execute_data ex;
	struct php_walk *w;
	struct php_func_where where;
	__u32 zero = 0, instr = 0, first = 0, line;
	__u8 type;

	w = bpf_map_lookup_elem(&php_scratch, &zero);
	if (!w)
		return 1;
	if (!w->ex)
		return php_walk_end(w, INTERP_WALK_WHOLE);
	if (w->stack.n >= INTERP_MAX_FRAMES)
		return php_walk_end(w, INTERP_WALK_DEPTH);
	if ((w->ex & 7) || bpf_probe_read_user(&ex, sizeof(ex), (void *)w->ex))
		return php_walk_end(w, INTERP_WALK_FAULT);
	/* A frame with no function (a generator's dummy) shows in no backtrace of PHP's either. */
	if (ex.func) {
		if ((ex.func & 7) || bpf_probe_read_user(&type, 1, (void *)ex.func))
			return php_walk_end(w, INTERP_WALK_FAULT);
		if (type == PHP_INTERNAL_FUNCTION) {
			instr = PHP_FRAME_INTERNAL;
		} else if (type == PHP_USER_FUNCTION || type == PHP_EVAL_CODE) {
			if (bpf_probe_read_user(&where, sizeof(where), (void *)(ex.func + w->l.fn_filename)))
				return php_walk_end(w, INTERP_WALK_FAULT);
			first = PHP_FUNC_CHECK(where);
			/* Its line, where its opline is (0 when it cannot be read: the name still holds). */
			if (ex.opline && !(ex.opline & 7) &&
			    !bpf_probe_read_user(&line, 4, (void *)(ex.opline + w->l.op_lineno)))
				instr = line & PHP_FRAME_LINE_MASK;
		} else {
			return php_walk_end(w, INTERP_WALK_FAULT);
		}
		if (ex.this_type_info & PHP_CALL_TOP)
			instr |= INTERP_FRAME_ENTRY;
		php_record(w, ex.func, instr, first);
	}
	/* A frame its own caller: scribbled (the walk's bound ends any longer loop). */
	if (ex.prev == w->ex)
		return php_walk_end(w, INTERP_WALK_FAULT);
	w->ex = ex.prev;
	return 0;
}

/*
 * The sample's PHP frames walked into the scratch's stack and their hash
 * into key->interp_hash; 1 if any, 0 if none (no script running, or not
 * PHP's).
 */
__noinline int php_frames(struct sample_key *key, struct sample_stats *st)
{
	struct php_process *p;
	struct php_walk *w;
	__u32 zero = 0;
	__u64 ex;

	if (!key || !st)
		return 0;
	w = bpf_map_lookup_elem(&php_scratch, &zero);
	if (!w)
		return 0;
	p = bpf_map_lookup_elem(&php_procs, &key->tgid);
	if (!p || p->gen != key->gen)
		return 0;
	st->v[STAT_PHP(SAMPLES)]++;
	if (!p->known) {
		st->v[STAT_PHP(UNKNOWN_VERSION)]++;
		return 0;
	}
	if (bpf_probe_read_user(&ex, sizeof(ex), (void *)(p->eg + p->l.eg_current_execute_data)) ||
	    !ex) {
		st->v[STAT_PHP(NO_FRAME)]++;
		return 0;
	}
	w->ex = ex;
	w->l = p->l;
	/*
	 * The process in the hash: userspace names a process's functions from
	 * the notices of its own stacks, and php-fpm's workers, forked from one
	 * master, run the same functions at the same addresses (opcache's
	 * shared memory, the master's heap): hashed alike, a new worker's
	 * stacks were stored already and never noticed for it.
	 */
	w->hash = 0x84222325cbf29ce4ull ^ ((__u64)key->tgid << 32 | key->gen);
	w->end_why = INTERP_WALK_DEPTH;
	w->stack.n = 0;
	bpf_loop(INTERP_MAX_FRAMES * 2, php_walk_step, NULL, 0);
	w->stack.end = w->end_why;
	w->stack.runtime = RUNTIME_PHP;
	w->stack.state = 0;
	if (!w->stack.n) {
		st->v[STAT_PHP(NO_FRAME)]++;
		return 0;
	}
	st->v[STAT_PHP(END) + (w->end_why < INTERP_WALK_END_MAX ? w->end_why : INTERP_WALK_FAULT)]++;
	key->interp_hash = (w->hash ^ w->end_why) ? w->hash ^ w->end_why : 1;
	return 1;
}

/*
 * Whether the memory at an address is opcache's JIT buffer: shared
 * anonymous memory (opcache's shared memory) that runs, unlike PCRE2's JIT
 * code (private) or any other; its bounds into *ctx.
 */
#define PHP_VM_EXEC	0x4
#define PHP_VM_SHARED	0x8

struct php_vma {
	__u64 lo, hi;
};

static long php_jit_vma(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct php_vma *v = ctx;
	__u64 flags = vma->vm_flags;

	if ((flags & (PHP_VM_EXEC | PHP_VM_SHARED)) == (PHP_VM_EXEC | PHP_VM_SHARED)) {
		v->lo = vma->vm_start;
		v->hi = vma->vm_end;
	}
	return 0;
}

/*
 * Where the walk goes on from code with no CFI in a PHP process, looked
 * for among the stack's words from sp, PHP_LOOK_WORDS at most:
 *   opcache's JIT code runs in execute_ex's frame, whose stack pointer is
 *   sp itself in traces and JIT'd functions, a word or two above in the
 *   stubs they call, 0x100 in trace_exit (docs/research/php.md): the first
 *   word whose return address (ra_off above) is one into the engine's
 *   code, not into execute_ex (words below its frame hold stale ones);
 *   other code the engine calls (PCRE2's JIT, through pcre2_jit_match):
 *   the nearest return address into the engine's code (ra_off 0) that
 *   follows a call (e8 rel32); the frames between are skipped.
 * Per CPU: the walk's stack has no room for it.
 */
#define PHP_LOOK_WORDS 64

struct php_look {
	__u64 sp, ra_off;	/* where to look */
	__u64 lo, hi, vm_lo, vm_hi;	/* the engine's code; execute_ex's */
	bool after_call;	/* the return address must follow a call */
	__u64 at, ra;		/* the word found (at 0: none), and the return address */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct php_look);
	__uint(max_entries, 1);
} php_looks SEC(".maps");

static long php_look_step(__u32 i, void *unused)
{
	struct php_look *l;
	__u32 zero = 0;
	__u64 ra;
	__u8 op;

	if (!(l = bpf_map_lookup_elem(&php_looks, &zero)))
		return 1;
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(l->sp + i * 8 + l->ra_off)))
		return 1;
	if (ra < l->lo + 5 || ra >= l->hi || (ra >= l->vm_lo && ra < l->vm_hi))
		return 0;
	if (l->after_call && (bpf_probe_read_user(&op, 1, (void *)(ra - 5)) || op != 0xe8))
		return 0;
	l->at = l->sp + i * 8;
	l->ra = ra;
	return 1;
}

/*
 * The native walk at pc and sp found no table row in a PHP process: in
 * opcache's JIT code, on at a pc of execute_ex's body (s->exact); in other
 * code with no CFI, on at the engine's code that called it. The caller's
 * stack pointer and pc (or return address) into s: 1; 0 if neither. The
 * JIT buffer's bounds are kept once its memory has been looked up. A
 * global function: the verifier checks it once.
 */
struct php_jit_step {
	__u64 pc, sp;		/* the walk's, in the code */
	__u64 sp_vm, pc_vm;	/* the caller's: execute_ex's frame, or the engine's code that called */
	bool exact;		/* pc_vm is a pc itself, not a return address */
};

__noinline int php_jit_frame(__u32 tgid, __u32 gen, struct php_jit_step *s)
{
	struct php_vma v = {};
	struct php_process *p;
	struct php_look *l;
	__u32 zero = 0;
	bool jit;
	__u64 pc;

	if (!s || !runtime_on(RUNTIME_PHP) || !(l = bpf_map_lookup_elem(&php_looks, &zero)) ||
	    !(p = bpf_map_lookup_elem(&php_procs, &tgid)) || p->gen != gen || !p->known)
		return 0;
	pc = s->pc;
	if ((pc < p->jit_lo || pc >= p->jit_hi) &&
	    !bpf_find_vma(bpf_get_current_task_btf(), pc, php_jit_vma, &v, 0) && v.hi) {
		p->jit_lo = v.lo;
		p->jit_hi = v.hi;
	}
	jit = pc >= p->jit_lo && pc < p->jit_hi && p->jit_vm_pc;
	l->sp = s->sp;
	l->ra_off = jit ? p->jit_ra_off : 0;
	l->lo = p->text_lo;
	l->hi = p->text_hi;
	l->vm_lo = jit ? p->execute_ex_lo : 0;
	l->vm_hi = jit ? p->execute_ex_hi : 0;
	l->after_call = !jit;
	l->at = 0;
	/* 8.4's execute_ex keeps a frame pointer (ra_off 0): its stack pointer does not matter. */
	if (!jit || l->ra_off)
		bpf_loop(PHP_LOOK_WORDS, php_look_step, NULL, 0);
	if (jit) {
		s->sp_vm = l->at ? l->at : s->sp;
		s->pc_vm = p->jit_vm_pc;
		s->exact = true;
		return 1;
	}
	if (!l->at)
		return 0;
	s->sp_vm = l->at + 8;
	s->pc_vm = l->ra;
	s->exact = false;
	return 1;
}

/* The sample's PHP frames walked and stored; the fallback's cause, or -1. */
__noinline int php_sample(struct sample_key *key, __u32 set, struct sample_stats *st)
{
	struct php_walk *w;
	__u32 zero = 0;
	int cause = -1;

	if (!key || !st || !php_frames(key, st) || !(w = bpf_map_lookup_elem(&php_scratch, &zero)))
		return -1;
	interp_store(set & 1, key, st, &cause, &php_notices, &w->stack);
	return cause;
}

#endif
