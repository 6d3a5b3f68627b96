/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The BPF side's table of runtimes: the interpreters whose frames are read
 * at a sample, side by side (python.bpf.h, luajit.bpf.h, ruby.bpf.h,
 * java.bpf.h, php.bpf.h). A
 * runtime is a header beside them, with a line in each function below:
 * its processes found from the mappings the walk reads, what it needs
 * before the native walk (where generated code puts the VM's frame), code
 * of its own the native walk finds no table row for (stepped over, or
 * handed to the runtime's program to walk on from), and its walk of a
 * sample's frames: a program of its own (runtime_walks.bpf.h), loaded when
 * a process of the runtime is first seen. A sample is of one process, so
 * of one runtime at most: its frames go in the key's interp_hash through
 * interp.bpf.h, whichever runtime walked them. Nothing else in bpf/ names
 * a runtime.
 */
#ifndef BPFPROF_RUNTIMES_BPF_H
#define BPFPROF_RUNTIMES_BPF_H

#include "common.bpf.h"
#include "java.bpf.h"
#include "luajit.bpf.h"
#include "php.bpf.h"
#include "python.bpf.h"
#include "ruby.bpf.h"
#include "settings.bpf.h"

/* A process maps code of the file at e (unwind.bpf.h's scan): is it an interpreter's? */
static __always_inline void runtime_mapping_seen(__u32 tgid, __u32 gen, const struct exec_mapping *e)
{
	python_mapping_seen(tgid, gen, e);
	luajit_mapping_seen(tgid, gen, e);
	ruby_mapping_seen(tgid, gen, e);
	java_mapping_seen(tgid, gen, e);
	php_mapping_seen(tgid, gen, e);
}

/* Before the native walk from regs: code of a runtime's the walk is to step over (jit). */
static __always_inline void runtime_before_walk(struct sample_key *key, const struct user_regs *regs,
						struct jit_frame *jit, struct sample_stats *st)
{
	jit->hi = 0;
	jit->vm_sp = 0;
	jit->below = 0;
	jit->vm_leaf = VM_LEAF_NONE;
	if (runtime_on(RUNTIME_LUAJIT))
		lua_before_walk(key, regs, jit, st);
}

/*
 * The native walk at pc and sp found no table row: code a runtime
 * made (a LuaJIT trace, YJIT's code, PHP's JIT code)? If so, the caller's cfa, return
 * address and rbp as the runtime knows them, *exact whether ra is a pc
 * itself rather than a return address.
 */
static __always_inline bool runtime_code_frame(struct jit_frame *jit, __u32 tgid, __u32 gen,
					       __u64 pc, __u64 sp, __u64 *cfa, __u64 *ra, __u64 *bp,
					       bool *exact)
{
	struct php_jit_step php = { .pc = pc, .sp = sp };
	struct rb_regs regs;

	if (jit->vm_sp > sp) {
		/* A trace's code: on at the VM's C frame, recorded as the VM's (luajit.bpf.h). */
		*cfa = jit->vm_sp;
		*ra = jit->vm_pc;
		jit->vm_sp = 0;
		jit->below = BELOW_VM_AT;
		*exact = false;
		return true;
	}
	if (ruby_resume(tgid, gen, sp, &regs)) {
		/* YJIT's code: on at the rb_vm_exec that ran it, as its tag says (ruby.bpf.h). */
		*cfa = regs.sp;
		*ra = regs.pc + 1;
		*bp = regs.bp;
		*exact = true;
		return true;
	}
	if (php_jit_frame(tgid, gen, &php)) {
		/* Opcache's JIT code, on in execute_ex's frame; PCRE2's, at its caller (php.bpf.h). */
		*cfa = php.sp_vm;
		*ra = php.exact ? php.pc_vm + 1 : php.pc_vm;
		*exact = php.exact;
		return true;
	}
	return false;
}

/*
 * The native walk at pc found no table row, nor a frame runtime_code_frame
 * knows: code whose runtime's program walks on from here (a JVM's code
 * cache: java_walk.bpf.h)? The walk stops for it, WALK_HANDED.
 */
static __always_inline bool runtime_code_walked(__u32 tgid, __u32 gen, __u64 pc)
{
	return java_code_at(tgid, gen, pc);
}

/*
 * Each runtime's walk of a sample's frames: NAME_sample(key, set, st),
 * storing them with interp_store and returning the fallback's cause or -1.
 * Each is its own pair of programs (runtime_walks.bpf.h), tried in the
 * order of their ids.
 */
#define RUNTIME_WALKS(X)		\
	X(python, RUNTIME_PYTHON)	\
	X(luajit, RUNTIME_LUAJIT)	\
	X(ruby, RUNTIME_RUBY)		\
	X(java, RUNTIME_JAVA)		\
	X(php, RUNTIME_PHP)

#endif

/*
 * The walks that go on with the native walk past their code need its steps
 * (unwind.bpf.h, which includes this header first): runtime_walks.bpf.h
 * includes this header again once unwind.bpf.h is in, BPFPROF_RUNTIME_WALKS_LATE
 * defined, for them.
 */
#if defined(BPFPROF_RUNTIME_WALKS_LATE) && !defined(BPFPROF_RUNTIMES_LATE_BPF_H)
#define BPFPROF_RUNTIMES_LATE_BPF_H
#include "java_walk.bpf.h"
#endif
