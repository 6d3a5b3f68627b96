/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the BPF program's PHP frame walk (bpf/php.bpf.h) and userspace
 * (src/runtime/php*.c) agree on: which files hold a PHP engine (the php
 * CLI, php-fpm), where its executor globals are, the layout of its frames
 * by version, and how a sample's PHP frames are recorded. Compiled by
 * both sides.
 *
 * A sample's PHP frames travel as every runtime's do (struct interp_stack,
 * interp.h), with stack.runtime RUNTIME_PHP, in these terms:
 *   frame.code        the frame's function (zend_function *): a user
 *                     function's op_array, or an internal function's
 *                     (PHP_FRAME_INTERNAL in instr);
 *   frame.instr       the line its opline is at (a user function's), |
 *                     PHP_FRAME_INTERNAL for an internal function, |
 *                     INTERP_FRAME_ENTRY on the first frame of a call into
 *                     the engine from C (ZEND_CALL_TOP: the script's main
 *                     code, a callback zend_call_function runs);
 *   frame.firstlineno a user function's file (its zend_string's address)
 *                     and first and last lines, folded (PHP_FUNC_CHECK):
 *                     tells a function freed and its address reused, as
 *                     each php-fpm request's main code takes the last
 *                     one's (opcache copies it there), whose {main} began
 *                     at line 1 as well.
 *   stack.state       0.
 */
#ifndef BPFPROF_PHP_FRAMES_H
#define BPFPROF_PHP_FRAMES_H

#include "bpfprof/interp.h"
#include "bpfprof/unwind_row.h"

/* PHP's id among the runtimes (interp.h), and its counters in their stats block. */
#define RUNTIME_PHP 4
enum php_stat {
	PHP_STAT_SAMPLES,	/* samples of PHP processes */
	PHP_STAT_UNKNOWN_VERSION,	/* a PHP whose layout bpfprof cannot read */
	PHP_STAT_NO_FRAME,	/* no frame executing (before or after the script, or not PHP's thread) */
	PHP_STAT_END,		/* walks that found frames, by their end */
	PHP_STAT_MAX = PHP_STAT_END + INTERP_WALK_END_MAX
};
#define STAT_PHP(what) RUNTIME_STAT(RUNTIME_PHP, PHP_STAT_##what)
_Static_assert(PHP_STAT_MAX <= RUNTIME_STATS, "its counters fit its block");

/* What differs by version (x86-64, NTS): a row of php_file.c's table. */
struct php_layout {
	__u16 eg_current_execute_data;	/* zend_executor_globals.current_execute_data */
	__u16 fn_filename;		/* zend_function.op_array.filename: struct php_func_where there */
	__u16 op_lineno;		/* zend_op.lineno */
	__u16 reserved;
};

/*
 * What every PHP 8 keeps alike: a zend_execute_data begins with its opline,
 * call, return value and function, then This (a zval: its type info, whose
 * high 16 bits are the call's flags, at +40) and the previous frame (+48);
 * a zend_function begins with its type, then fn_flags, function_name,
 * scope.
 */
struct php_execute_data {
	__u64 opline, call, return_value, func;
	__u64 this_value;
	__u32 this_type_info, this_u2;
	__u64 prev;
};
#define PHP_CALL_TOP		(1u << 17)	/* this_type_info: a call from C into the engine */
#define PHP_USER_FUNCTION	2
#define PHP_INTERNAL_FUNCTION	1
#define PHP_EVAL_CODE		4

/* What op_array holds from its filename on, in every PHP 8: its file, first and last lines. */
struct php_func_where {
	__u64 filename;
	__u32 line_start, line_end;
};

/* interp_frame.firstlineno of a user function's frame, from its php_func_where w. */
#define PHP_FUNC_CHECK(w)                                                                          \
	((__u32)(w).filename ^ (__u32)((w).filename >> 32) ^ (w).line_start ^ (w).line_end << 16 ^ \
	 (w).line_end >> 16)

/* In interp_frame.instr of a PHP frame. */
#define PHP_FRAME_INTERNAL	0x40000000u	/* code: an internal (C) function */
#define PHP_FRAME_LINE_MASK	0x3fffffffu

/* A file holding a PHP engine (php, php-fpm, php-cgi): addresses less the code's (vaddr - offset). */
struct php_file {
	__u64 eg_rel;			/* executor_globals */
	__u64 execute_ex_lo_rel;	/* execute_ex: the VM's native frame of each entry */
	__u64 execute_ex_hi_rel;
	/*
	 * Where the native walk goes on from opcache's JIT code, which runs
	 * in execute_ex's frame (the hybrid VM's): at pc jit_vm_pc_rel, one
	 * of execute_ex's body. Its stack pointer there is the JIT code's, or
	 * a few words above it in the JIT's stubs: where its return address,
	 * jit_ra_off above it (its body's CFA less 8), is one into the
	 * engine's code. jit_ra_off 0: its body keeps a frame pointer (8.4),
	 * and the stack pointer does not matter. jit_vm_pc_rel 0: not known.
	 */
	__u64 jit_vm_pc_rel;
	__u32 jit_ra_off;
	__u32 known;			/* 0: a PHP bpfprof cannot read (native frames only) */
	__u16 version;			/* major << 8 | minor */
	__u16 reserved;
	struct php_layout l;
	/* For the merge: zend_call_function, where C calls into PHP (a callback). */
	__u64 call_lo_rel, call_hi_rel;
	__u64 text_lo_rel, text_hi_rel;	/* the file's code */
};

/* A PHP process: where its engine's globals and VM code are. */
struct php_process {
	__u64 eg;
	__u64 execute_ex_lo, execute_ex_hi;
	__u64 jit_vm_pc;
	__u32 jit_ra_off;
	__u32 gen;			/* the process's generation it holds for */
	__u32 known;
	__u16 version;
	__u16 reserved;
	struct php_layout l;
	__u64 call_lo, call_hi;
	__u64 text_lo, text_hi;
	/* Opcache's JIT buffer, or the part of it last met (the program's: php_jit_frame). */
	__u64 jit_lo, jit_hi;
};

#endif
