/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the BPF program and userspace agree on: the key of a counted sample,
 * the record sent whole through the ring buffer, and the statistics indices.
 * Compiled by both sides, so only __u32/__s32/__u64 and no libc.
 */
#ifndef BPFPROF_SAMPLE_H
#define BPFPROF_SAMPLE_H

#include "bpfprof/interp.h"
#include "bpfprof/unwind_row.h"

#define BPFPROF_COMM_LEN 16
/* The kernel's PERF_MAX_STACK_DEPTH: frames kept per stack. */
#define BPFPROF_MAX_DEPTH 127

/* A stack id in a sample key that names no stack (none, or not collected). */
#define BPFPROF_NO_STACK (-1)

/* The key of the counts maps: one per distinct (thread, stacks, cgroup). */
struct sample_key {
	__u32 tgid;		/* process id */
	__u32 pid;		/* thread id */
	__s32 kstack_id;	/* in the stack map of the same set, or BPFPROF_NO_STACK */
	__s32 ustack_id;
	__u64 cgroup_id;	/* cgroup v2 id: inode of the cgroup directory */
	char comm[BPFPROF_COMM_LEN];
	__u32 gen;		/* the process's generation: see proc_gen */
	__u32 unwind;		/* --unwind auto: how the user stack was walked (unwind_row.h) */
	/* --unwind auto: the user stack, in ustacks of the same set by this hash; 0: none */
	__u64 ustack_hash;
	/* The thread's interpreter frames, in interp_stacks of the same set by this hash; 0: none */
	__u64 interp_hash;
	/* enum thread_state: 0 a CPU sample (counted in samples), else off-CPU time (in ns) */
	__u32 state;
	__u32 reserved;
};

/*
 * What a thread was doing: on the CPU (a sample), or, off it, why it left
 * (--off-cpu, --wall): asleep (interruptible: a sleep, a poll, a lock),
 * uninterruptible (disk, some locks), or preempted while still runnable.
 */
enum thread_state {
	STATE_RUNNING = 0,
	STATE_SLEEPING,
	STATE_UNINTERRUPTIBLE,
	STATE_RUNNABLE,
	STATE_MAX
};

/*
 * Where a CPU sample found its CPU: in a thread's user code, in the kernel
 * for it, in an interrupt's or a softirq's handler, or in the idle task.
 */
enum cpu_state {
	CPU_STATE_USER,
	CPU_STATE_KERNEL,
	CPU_STATE_IRQ,
	CPU_STATE_SOFTIRQ,
	CPU_STATE_IDLE,
	CPU_STATE_MAX
};

/* Why a sample went through the ring buffer instead of the counts map. */
enum fallback_cause {
	CAUSE_STACK_COLLISION,	/* bpf_get_stackid: -EEXIST, bucket holds another stack */
	CAUSE_STACK_FULL,	/* bpf_get_stackid: -ENOMEM, stack map full (or ustacks full) */
	CAUSE_COUNTS_FULL,	/* counts map has no room for a new key */
	CAUSE_MAX
};

/* What a ring buffer record is: its first field. */
enum record_kind {
	RECORD_FALLBACK = 1,	/* struct fallback_record */
	RECORD_DWARF = 2,	/* struct dwarf_record */
	RECORD_OFF_CPU = 3,	/* struct fallback_record: off-CPU time whose stacks' set was drained */
	RECORD_DRAIN_SOON = 4,	/* struct drain_soon: a counts map is filling, drain before the period ends */
};

/* Half a counts map's keys new since its last drain: drain now, not at the period's end. */
#define BPFPROF_COUNTS_KEYS 16384
#define BPFPROF_DRAIN_SOON_KEYS (BPFPROF_COUNTS_KEYS / 2)

struct drain_soon {
	__u32 kind;		/* RECORD_DRAIN_SOON */
	__u32 set;		/* the set filling */
};

/* What every ring buffer record starts with: whose sample it is. */
struct record_head {
	__u32 kind;		/* enum record_kind */
	__u32 tgid;
	__u32 pid;
	__u32 gen;
	__u64 cgroup_id;
	char comm[BPFPROF_COMM_LEN];
	__u32 cpu;
	__s32 kstack_bytes;	/* bytes of kernel stack, or a negative error */
};

/*
 * A sample sent whole, stacks copied, when the maps could not take it. Sent
 * only as long as its stacks are: ips[] holds the kernel stack's
 * kstack_bytes, then the user stack's ustack_bytes (each 0 if negative).
 */
struct fallback_record {
	struct record_head head;	/* kind RECORD_FALLBACK */
	__u32 cause;		/* enum fallback_cause */
	__s32 ustack_bytes;
	__u32 unwind;		/* as in struct sample_key */
	__u32 state;		/* enum thread_state */
	__u64 value;		/* RECORD_OFF_CPU: nanoseconds off the CPU; else 1 sample */
	struct interp_stack interp;	/* the thread's interpreter frames (interp.n 0: none) */
	__u64 ips[2 * BPFPROF_MAX_DEPTH];
};

/* Most of the user stack --stack-size may copy per sample. */
#define BPFPROF_MAX_STACK_COPY (64 * 1024)
#define BPFPROF_STACK_CHUNK 1024

/*
 * With --unwind dwarf: a sample's user registers and the top of its user
 * stack, for userspace to unwind with the binaries' CFI; its kernel stack
 * copied. Reserved at the size --stack-size asks: stack[] holds
 * stack_bytes of it, from sp up.
 */
struct dwarf_record {
	struct record_head head;	/* kind RECORD_DWARF; kstack_bytes filled in kstack */
	__u64 kstack[BPFPROF_MAX_DEPTH];
	__u64 ip, sp, bp;	/* user registers; ip 0: no user context (kernel thread) */
	__u32 stack_bytes;	/* bytes of stack copied */
	__u32 reserved;
	__u8 stack[BPFPROF_MAX_STACK_COPY];
};

/*
 * Per-CPU counters. Every sample the program sees ends in exactly one of:
 * IDLE_SKIPPED, FILTERED, COUNTED_SET0/1, FALLBACK, DWARF_SENT, LOST_*; the others
 * describe samples (mode, stack failures) without deciding their fate.
 */
enum stat_index {
	STAT_SAMPLES,		/* program runs: samples taken */
	STAT_IDLE,		/* samples of the idle task (pid 0) */
	STAT_IDLE_SKIPPED,	/* idle samples not recorded (no -I) */
	STAT_FILTERED,		/* rejected by -p/-t/--cgroup */
	STAT_USER_MODE,		/* recorded samples taken in user mode */
	STAT_KERNEL_MODE,	/* recorded samples taken in kernel mode */
	STAT_KSTACK_NONE,	/* -EFAULT: no kernel stack (user-mode sample) */
	STAT_USTACK_NONE,	/* -EFAULT: no user stack (kernel thread) */
	STAT_KSTACK_COLLISION,	/* -EEXIST on the kernel stack */
	STAT_USTACK_COLLISION,	/* -EEXIST on the user stack */
	STAT_KSTACK_FULL,	/* -ENOMEM on the kernel stack */
	STAT_USTACK_FULL,	/* -ENOMEM on the user stack */
	STAT_COUNTS_FULL,	/* counts map full */
	STAT_COUNTED_SET0,	/* samples added to counts0 */
	STAT_COUNTED_SET1,	/* samples added to counts1 */
	STAT_FALLBACK,		/* samples sent whole through the ring buffer */
	STAT_LOST_COLLISION,	/* ring buffer full after a stack collision */
	STAT_LOST_STACK_FULL,	/* ring buffer full after a full stack map */
	STAT_LOST_COUNTS_FULL,	/* ring buffer full after a full counts map */
	STAT_DWARF_SENT,	/* --unwind dwarf: samples sent with their stack */
	STAT_LOST_DWARF,	/* --unwind dwarf: ring buffer full */
	STAT_COLLISION_SET0,	/* stack collisions (-EEXIST) in stacks0 */
	STAT_COLLISION_SET1,	/* stack collisions (-EEXIST) in stacks1 */
	/* --unwind auto: user stacks walked in the program, by how each ended (enum walk_end) */
	STAT_WALK_END,
	STAT_WALKED_CFI = STAT_WALK_END + WALK_END_MAX,	/* every frame found by table rows */
	STAT_WALKED_FP,		/* every frame by frame pointers (no table yet, JIT code) */
	STAT_WALKED_MIXED,	/* some frames each way */
	STAT_PROC_SCANS,	/* a process's executable mappings read from its VMAs */
	STAT_PROC_SCAN_BUSY,	/* not read: its mappings' lock was taken (read at the next sample) */
	/* Interpreter frames (interp.bpf.h), whichever runtime walked them */
	STAT_INTERP_STACKS_FULL,	/* an interp_stacks map had no room: the sample went whole */
	STAT_INTERP_NOTICES_LOST,	/* a new stack not sent at once: its runtime's ring was full */
	/* Each runtime's own counters, a block each (interp.h's RUNTIME_STAT) */
	STAT_RUNTIME,
	/* --off-cpu, --wall (offcpu.bpf.h): threads leaving the CPU and coming back */
	/* a followed thread left the CPU: its stacks recorded */
	STAT_OFF_SWITCHES = STAT_RUNTIME + RUNTIME_KINDS * RUNTIME_STATS,
	STAT_OFF_NO_ROOM,	/* ... but no task storage could be had for it: not followed */
	STAT_OFF_SHORT,		/* back within --min-block: not counted */
	STAT_OFF_COUNTED_SET0,	/* blocks counted in counts0 */
	STAT_OFF_COUNTED_SET1,
	STAT_OFF_NS_SET0,	/* their nanoseconds */
	STAT_OFF_NS_SET1,
	STAT_OFF_SENT,		/* blocks sent whole through the ring buffer (their set was drained) */
	STAT_OFF_SENT_NS,
	STAT_OFF_LOST,		/* ... the ring buffer was full: lost */
	STAT_OFF_LOST_NS,
	STAT_OFF_WALKED_AGAIN,	/* left from where it left last time: the user stack walked then taken */
	/* Samples by enum cpu_state: recorded ones, and idle ones when nothing is filtered */
	STAT_CPU_STATE,
	STAT_MAX = STAT_CPU_STATE + CPU_STATE_MAX
};

struct sample_stats {
	__u64 v[STAT_MAX];
};

#endif
