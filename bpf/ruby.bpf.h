/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * CRuby's frames at a sample, walked in the BPF program beside the native
 * stack, for every Ruby thread, with no change to the program.
 *
 * Each Ruby thread runs on an execution context (rb_execution_context_t),
 * kept in the thread-local ruby_current_ec of libruby: through the
 * thread's TLS vector (fsbase -> its DTV -> libruby's block), the module
 * id and offset read from the GOT pair the dynamic linker filled for it;
 * of a ruby built static, in the executable's own TLS block, at a fixed
 * offset from the thread pointer (fsbase).
 * The context holds the thread's VM stack, whose control frames grow down
 * from its end; the newest is ec->cfp. Each frame says what it runs in its
 * environment's flags (ep[0]): a Ruby method or block (an instruction
 * sequence and pc), a C method (its method entry at ep[-2]), or one of
 * the VM's own; FINISH marks the first frame of each entry into the VM
 * (vm_exec), which userspace matches with each native vm_exec_core frame.
 * Two reads a frame: the frame, and its environment's three words.
 */
#ifndef BPFPROF_RUBY_BPF_H
#define BPFPROF_RUBY_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "interp.bpf.h"
#include "settings.bpf.h"
#include "bpfprof/ruby_frames.h"

/* Files that hold a Ruby VM, by identity; written by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct unwind_file_key);
	__type(value, struct ruby_file);
	__uint(max_entries, 64);
} ruby_files SEC(".maps");

/* Ruby processes by tgid: from their mappings as read (scan_mappings), or by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct ruby_process);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} ruby_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} ruby_notices SEC(".maps");

struct rb_walk {
	struct interp_stack stack;
	__u64 hash;
	__u64 cfp, end;		/* the next frame; where the outermost ends */
	__u32 cfp_size;
	__u32 end_why;		/* enum interp_walk_end, once ended */
	__u32 recorded;		/* frames recorded since the last entry into the VM */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rb_walk);
	__uint(max_entries, 1);
} rb_scratch SEC(".maps");

/* A process maps code of file at e: if the file holds a Ruby VM, the process is Ruby's. */
static __always_inline void ruby_mapping_seen(__u32 tgid, __u32 gen, const struct exec_mapping *e)
{
	struct ruby_process p = { .gen = gen };
	struct ruby_file *f;

	if (!runtime_on(RUNTIME_RUBY) || !(f = bpf_map_lookup_elem(&ruby_files, &e->file)))
		return;
	p.vm_exec_lo = e->start - e->offset + f->vm_exec_lo_rel;
	p.vm_exec_hi = e->start - e->offset + f->vm_exec_hi_rel;
	p.vm_entry_lo = e->start - e->offset + f->vm_entry_lo_rel;
	p.vm_entry_hi = e->start - e->offset + f->vm_entry_hi_rel;
	p.ec_tls = f->ec_tls_rel ? e->start - e->offset + f->ec_tls_rel : 0;
	p.ec_tp_off = f->ec_tp_off;
	p.known = f->known;
	p.l = f->l;
	p.symbols = e->start - e->offset + f->symbols_rel;
	p.last_op_id = f->last_op_id;
	p.version = f->version;
	p.gc = f->gc;
	if (f->gc.vm_ptr)
		p.gc.vm_ptr = e->start - e->offset + f->gc.vm_ptr;
	bpf_map_update_elem(&ruby_procs, &tgid, &p, BPF_ANY);
}

static __always_inline __u64 rb_read(__u64 addr)
{
	__u64 v;

	return bpf_probe_read_user(&v, sizeof(v), (void *)addr) ? 0 : v;
}

/*
 * The sampled thread's execution context: ruby_current_ec through its TLS
 * vector, as __tls_get_addr finds it (dtv[module].val + offset); in a ruby
 * built static, at its fixed offset from the thread pointer, as the
 * executable's own code reads it (%fs:OFFSET). 0 if the thread has none
 * (not a Ruby thread, or before the VM made one).
 */
static __always_inline __u64 current_ec(const struct ruby_process *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 tp = BPF_CORE_READ(task, thread.fsbase), got[2], dtv, block;

	if (p->ec_tp_off)
		return tp ? rb_read(tp + p->ec_tp_off) : 0;
	if (bpf_probe_read_user(got, sizeof(got), (void *)p->ec_tls) || !got[0] || got[0] > 4096 ||
	    got[1] > 4096)
		return 0;
	dtv = rb_read(tp + 8);
	if (!dtv)
		return 0;
	block = rb_read(dtv + got[0] * 16);
	/* ~0: the block not allocated yet (TLS_DTV_UNALLOCATED). */
	if (!block || block == ~0ull)
		return 0;
	return rb_read(block + got[1]);
}

static __always_inline void rb_record(struct rb_walk *w, __u64 code, __u32 instr)
{
	__u32 n = w->stack.n;
	struct interp_frame *fr = &w->stack.frames[n & (INTERP_MAX_FRAMES - 1)];

	fr->code = code;
	fr->instr = instr;
	fr->firstlineno = 0;
	w->stack.n = n + 1;
	w->recorded++;
	w->hash = (w->hash ^ code) * 0x9e3779b97f4a7c15ull;
	w->hash = (w->hash ^ instr) * 0x9e3779b97f4a7c15ull;
	w->hash ^= w->hash >> 29;
}

static __always_inline long rb_walk_end(struct rb_walk *w, __u32 why)
{
	w->end_why = why;
	return 1;
}

/* Whether the process's VM collects garbage now (its objspace read once, then kept). */
static __always_inline bool in_gc(struct ruby_process *p)
{
	__u8 flags;

	if (!p->gc.vm_ptr)
		return false;
	if (!p->objspace) {
		__u64 vm = rb_read(p->gc.vm_ptr);

		p->objspace = vm ? rb_read(vm + p->gc.objspace_off) : 0;
		if (!p->objspace)
			return false;
	}
	if (bpf_probe_read_user(&flags, 1, (void *)(p->objspace + p->gc.flags_off)))
		return false;
	return (flags >> (p->gc.bit & 7)) & 1;
}

/* One control frame: recorded if Ruby's or a C method's; FINISH closes an entry into the VM. */
static long rb_walk_step(__u32 i, void *unused)
{
	struct rb_cfp_head frame;
	__u64 env[3], flags, magic;
	struct rb_walk *w;
	__u32 zero = 0, n;

	w = bpf_map_lookup_elem(&rb_scratch, &zero);
	if (!w)
		return 1;
	/* The outermost frame, at the stack's end, is the VM's dummy one. */
	if (w->cfp + w->cfp_size >= w->end)
		return rb_walk_end(w, INTERP_WALK_WHOLE);
	if (w->stack.n >= INTERP_MAX_FRAMES)
		return rb_walk_end(w, INTERP_WALK_DEPTH);
	if (bpf_probe_read_user(&frame, sizeof(frame), (void *)w->cfp))
		return rb_walk_end(w, INTERP_WALK_FAULT);
	if (!frame.ep || (frame.ep & 7) ||
	    bpf_probe_read_user(env, sizeof(env), (void *)(frame.ep - 16)))
		return rb_walk_end(w, INTERP_WALK_FAULT);
	flags = env[2];
	magic = flags & RB_FRAME_MAGIC_MASK;
	if (magic == RB_FRAME_MAGIC_CFUNC) {
		/* A C method: its method entry, in a C frame's own (local) environment. */
		if (env[0])
			rb_record(w, env[0], RB_FRAME_CFUNC);
	} else if (magic != RB_FRAME_MAGIC_IFUNC && magic != RB_FRAME_MAGIC_DUMMY) {
		/* A frame with no pc yet shows in no backtrace of Ruby's either. */
		if (frame.pc && frame.iseq)
			rb_record(w, frame.iseq, (__u32)(frame.pc >> 3) & RB_FRAME_PC_MASK);
	}
	if ((flags & RB_FRAME_FLAG_FINISH) && w->recorded) {
		n = w->stack.n;
		w->stack.frames[(n - 1) & (INTERP_MAX_FRAMES - 1)].instr |= INTERP_FRAME_ENTRY;
		w->recorded = 0;
	}
	w->cfp += w->cfp_size;
	return 0;
}

/*
 * The sample's Ruby frames walked into the scratch's stack and their hash
 * into key->interp_hash; 1 if any, 0 if none (not a Ruby thread, or none yet).
 */
__noinline int rb_sample(struct sample_key *key, struct sample_stats *st)
{
	struct ruby_process *p;
	struct rb_walk *w;
	struct rb_ec_head head;
	__u32 state;
	__u64 ec;
	__u32 zero = 0;

	if (!key || !st)
		return 0;
	w = bpf_map_lookup_elem(&rb_scratch, &zero);
	if (!w)
		return 0;
	p = bpf_map_lookup_elem(&ruby_procs, &key->tgid);
	if (!p || p->gen != key->gen)
		return 0;
	st->v[STAT_RB(SAMPLES)]++;
	if (!p->known) {
		st->v[STAT_RB(UNKNOWN_VERSION)]++;
		return 0;
	}
	ec = current_ec(p);
	if (!ec || bpf_probe_read_user(&head, sizeof(head), (void *)ec)) {
		st->v[STAT_RB(NO_EC)]++;
		return 0;
	}
	w->cfp_size = p->l.cfp_size;
	w->cfp = head.cfp;
	w->end = head.vm_stack + head.vm_stack_size * 8;
	/* Frames lie in the VM stack: anything else is not a context of this layout. */
	if (w->cfp_size < sizeof(struct rb_cfp_head) || head.vm_stack_size > (1u << 28) ||
	    w->cfp < head.vm_stack || w->cfp >= w->end) {
		st->v[STAT_RB(NO_EC)]++;
		return 0;
	}
	/* In GC or not: the same frames make another stack. */
	state = in_gc(p) ? RB_VM_GC : RB_VM_RUBY;
	if (state == RB_VM_GC)
		st->v[STAT_RB(GC)]++;
	w->hash = 0x84222325cbf29ce4ull ^ state;
	w->end_why = INTERP_WALK_DEPTH;
	w->recorded = 0;
	w->stack.n = 0;
	bpf_loop(INTERP_MAX_FRAMES * 2, rb_walk_step, NULL, 0);
	w->stack.end = w->end_why;
	w->stack.runtime = RUNTIME_RUBY;
	w->stack.state = state;
	if (!w->stack.n) {
		st->v[STAT_RB(NO_FRAME)]++;
		return 0;
	}
	st->v[STAT_RB(END) + (w->end_why < INTERP_WALK_END_MAX ? w->end_why : INTERP_WALK_FAULT)]++;
	key->interp_hash = (w->hash ^ w->end_why) ? w->hash ^ w->end_why : 1;
	return 1;
}

/*
 * The native walk in code with no CFI in a Ruby process, at stack pointer
 * sp: YJIT's code (ruby --yjit), which rb_vm_exec called. Its caller's
 * registers are in the innermost tag above sp (rb_vm_exec pushes one
 * before it runs Ruby, and __builtin_setjmp left the frame pointer, an
 * address in the function and its stack pointer there): into *regs, 1;
 * 0 if none. A global function: the verifier checks it once.
 */
#define RB_TAGS_MAX 16

struct rb_regs {
	__u64 pc, sp, bp;
};

__noinline int ruby_resume(__u32 tgid, __u32 gen, __u64 sp, struct rb_regs *regs)
{
	struct ruby_process *p;
	__u64 tag, buf[3];
	__u32 i;

	if (!regs || !runtime_on(RUNTIME_RUBY) || !(p = bpf_map_lookup_elem(&ruby_procs, &tgid)) ||
	    p->gen != gen || !p->known || !p->l.ec_tag)
		return 0;
	tag = current_ec(p);
	tag = tag ? rb_read(tag + p->l.ec_tag) : 0;
	for (i = 0; i < RB_TAGS_MAX && tag; i++) {
		if (bpf_probe_read_user(buf, sizeof(buf), (void *)(tag + p->l.tag_buf)))
			return 0;
		if (buf[2] > sp && buf[0] > buf[2]) {
			regs->pc = buf[1];
			regs->sp = buf[2];
			regs->bp = buf[0];
			return 1;
		}
		tag = rb_read(tag + p->l.tag_prev);
	}
	return 0;
}

/* The sample's Ruby frames walked and stored; the fallback's cause, or -1. */
__noinline int ruby_sample(struct sample_key *key, __u32 set, struct sample_stats *st)
{
	struct rb_walk *w;
	__u32 zero = 0;
	int cause = -1;

	if (!key || !st || !rb_sample(key, st) || !(w = bpf_map_lookup_elem(&rb_scratch, &zero)))
		return -1;
	interp_store(set & 1, key, st, &cause, &ruby_notices, &w->stack);
	return cause;
}

#endif
