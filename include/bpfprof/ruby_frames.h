/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the BPF program's CRuby frame walk (bpf/ruby.bpf.h) and userspace
 * (src/runtime/ruby*.c) agree on: which files hold a Ruby VM (libruby),
 * where its threads' execution contexts are, the layout of its control
 * frames by version, and how a sample's Ruby frames are recorded.
 * Compiled by both sides.
 *
 * A sample's Ruby frames travel as every runtime's do (struct interp_stack,
 * interp.h), with stack.runtime RUNTIME_RUBY, in these terms:
 *   frame.code        a Ruby frame's instruction sequence (rb_iseq_t *), or
 *                     a C method's method entry (RB_FRAME_CFUNC in instr);
 *   frame.instr       bits 3..31 of the frame's pc (an iseq frame's: the
 *                     rest is the iseq's own), | INTERP_FRAME_ENTRY on the frame
 *                     one entry into the VM (vm_exec) began with, as Ruby's
 *                     FINISH flag says; | RB_FRAME_CFUNC for a C method.
 *   frame.firstlineno 0.
 *   stack.state       enum rb_vm_state.
 */
#ifndef BPFPROF_RUBY_FRAMES_H
#define BPFPROF_RUBY_FRAMES_H

#include "bpfprof/interp.h"
#include "bpfprof/unwind_row.h"

/* Ruby's id among the runtimes (interp.h), and its counters in their stats block. */
#define RUNTIME_RUBY 2
enum rb_stat {
	RB_STAT_SAMPLES,	/* recorded samples of Ruby processes */
	RB_STAT_UNKNOWN_VERSION,	/* a Ruby whose layout bpfprof cannot read */
	RB_STAT_NO_EC,		/* no execution context (not a Ruby thread, or not yet) */
	RB_STAT_NO_FRAME,	/* walked, no frame found */
	RB_STAT_GC,		/* walks while the VM collected garbage */
	RB_STAT_END,		/* walks that found frames, by their end */
	RB_STAT_MAX = RB_STAT_END + INTERP_WALK_END_MAX
};
#define STAT_RB(what) RUNTIME_STAT(RUNTIME_RUBY, RB_STAT_##what)
_Static_assert(RB_STAT_MAX <= RUNTIME_STATS, "its counters fit its block");

/*
 * What the walk reads, where every version from 3.0 to 3.3 keeps it
 * (x86-64, vm_core.h): an execution context starts with its VM stack, the
 * stack's size in VALUEs and the newest control frame; a control frame
 * with its pc, sp, iseq, self and ep.
 */
struct rb_ec_head {
	__u64 vm_stack, vm_stack_size, cfp;
};

struct rb_cfp_head {
	__u64 pc, sp, iseq, self, ep;
};

/* What differs by version: a row of ruby_file.c's table. */
struct ruby_layout {
	__u32 cfp_size;			/* sizeof(rb_control_frame_t) */
	/*
	 * The innermost rb_vm_tag (the execution context's tag): where each
	 * rb_vm_exec, and each rb_protect, left its registers for a longjmp
	 * (__builtin_setjmp's buffer: frame pointer, resume address, stack
	 * pointer), and the tag before it. 0: not read.
	 */
	__u8 ec_tag, tag_buf, tag_prev;
	__u8 reserved;
};

/*
 * Whether the VM collects garbage, as rb_during_gc reads it: the VM
 * (*ruby_current_vm_ptr), its objspace at objspace_off, a flags byte at
 * flags_off, bit bit of it. vm_ptr 0: not known (the code was of another
 * shape).
 */
struct ruby_gc {
	__u64 vm_ptr;			/* ruby_current_vm_ptr: rel in a ruby_file, an address in a ruby_process */
	__u16 objspace_off;
	__u8 flags_off, bit;
	__u32 reserved;
};

/* A file holding a Ruby VM (libruby.so, or a ruby executable built static). */
struct ruby_file {
	/* Addresses less the code's (vaddr - offset). */
	__u64 vm_exec_lo_rel;		/* vm_exec_core: the VM's native frame of each entry */
	__u64 vm_exec_hi_rel;
	__u64 ec_tls_rel;		/* the GOT pair ld.so fills for ruby_current_ec: module id, offset */
	__u32 known;			/* 0: a Ruby bpfprof cannot read (native frames only) */
	__u16 version;			/* major << 8 | minor */
	__u16 reserved;
	struct ruby_layout l;
	/* For userspace's names: the symbol table's (ruby_global_symbols) last_id, and tLAST_OP_ID. */
	__u64 symbols_rel;
	__u32 last_op_id;
	__u32 reserved2;
	struct ruby_gc gc;
	__u64 vm_entry_lo_rel;		/* rb_vm_exec: the native frame below each vm_exec_core's */
	__u64 vm_entry_hi_rel;
	/*
	 * A ruby executable built static (--disable-shared): ruby_current_ec
	 * is in the executable's own TLS block, at this (negative) offset
	 * from the thread pointer (fsbase), and ec_tls_rel is 0. 0: through
	 * the GOT pair (libruby).
	 */
	__s64 ec_tp_off;
};

/* A Ruby process: where its VM's code and its threads' execution contexts are. */
struct ruby_process {
	__u64 vm_exec_lo, vm_exec_hi;
	__u64 ec_tls;
	__u32 gen;			/* the process's generation it holds for */
	__u32 known;
	struct ruby_layout l;
	__u64 symbols;			/* for userspace's names: ruby_file's, in the process */
	__u32 last_op_id;
	__u16 version;			/* ruby_file's */
	__u16 reserved;
	struct ruby_gc gc;
	__u64 objspace;			/* the program's, once read (it never moves) */
	__u64 vm_entry_lo, vm_entry_hi;
	__s64 ec_tp_off;		/* ruby_file's; ec_tls 0 then */
};

/* The frame's kind: its environment's flags (ep[0]) & RB_FRAME_MAGIC_MASK. */
#define RB_FRAME_MAGIC_MASK	0x7fff0001u
#define RB_FRAME_MAGIC_CFUNC	0x55550001u
#define RB_FRAME_MAGIC_IFUNC	0x66660001u
#define RB_FRAME_MAGIC_DUMMY	0x79990001u
#define RB_FRAME_FLAG_FINISH	0x20u		/* the first frame of an entry into the VM */

/* In interp_frame.instr of a Ruby frame. */
#define RB_FRAME_CFUNC		0x40000000u	/* code: a C method's method entry */
#define RB_FRAME_PC_MASK	0x1fffffffu	/* pc >> 3, its low 29 bits */

/* What the VM was doing at the sample: interp_stack.state of a Ruby stack. */
enum rb_vm_state {
	RB_VM_RUBY = 0,			/* running Ruby code (or C it called) */
	RB_VM_GC,			/* collecting garbage (on the thread whose allocation started it) */
	RB_VM_STATE_MAX
};

#endif
