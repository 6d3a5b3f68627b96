/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * One row of a file's unwind table, as the BPF program reads it: from addr
 * (a file offset) up to the next row's addr, how to find the caller's frame
 * on x86-64. Built in userspace from the file's CFI (src/symbols/cfi_rows.c),
 * sorted by addr, identical neighbours merged. Compiled by both sides.
 *
 * Every rule that is not the caller's stack pointer (the CFA) and rbp has a
 * fixed answer on x86-64: the return address is at CFA - 8 and the caller's
 * rsp is the CFA. A row whose CFI says otherwise is ROW_CFA_NONE.
 */
#ifndef BPFPROF_UNWIND_ROW_H
#define BPFPROF_UNWIND_ROW_H

#ifndef __bpf__
#include <linux/types.h>	/* the BPF side has them from vmlinux.h */
#endif

/* How the CFA (the caller's rsp) is found: rules & ROW_CFA_MASK. */
enum row_cfa {
	ROW_CFA_NONE = 0,	/* no usable CFI here: frame pointers */
	ROW_CFA_RSP = 1,	/* CFA = rsp + 8 * cfa_off */
	ROW_CFA_RBP = 2,	/* CFA = rbp + 8 * cfa_off */
	/* A PLT stub's expression: CFA = rsp + 8 * cfa_off, plus 8 when
	 * (pc & 15) >= rbp_off (the stub has pushed once more by then). */
	ROW_CFA_PLT = 3,
	/* Stack realigned by gcc (main, some vector code): CFA = *(rbp + 8 * cfa_off). */
	ROW_CFA_DEREF_RBP = 4,
	/* A signal trampoline (__restore_rt): the interrupted registers are in
	 * the ucontext at rsp (the kernel's rt_sigframe, minus its return address). */
	ROW_CFA_SIGNAL = 5,
	ROW_CFA_END = 6,	/* the return address is undefined: the outermost frame */
};
#define ROW_CFA_MASK 0x0f

/* Where the caller's rbp is: rules & ROW_RBP_MASK. */
#define ROW_RBP_SAME 0x00	/* unchanged (the callee did not save it, or restored it) */
#define ROW_RBP_AT_CFA 0x10	/* saved at CFA + 8 * rbp_off */
#define ROW_RBP_AT_RBP 0x20	/* saved at rbp (the realigned frames: expression breg6 0) */
#define ROW_RBP_MASK 0x30

/* The ucontext at a signal trampoline's rsp: where the interrupted registers are. */
#define SIGFRAME_RBP 120
#define SIGFRAME_RSP 160
#define SIGFRAME_RIP 168

/*
 * An offset the rules do not read is 0 (both in ROW_CFA_NONE, _END and
 * _SIGNAL rows; rbp_off with ROW_RBP_SAME, but for ROW_CFA_PLT, and with
 * ROW_RBP_AT_RBP, which comes with ROW_CFA_DEREF_RBP only), so that rows
 * alike merge.
 */
struct unwind_row {
	__u32 addr;		/* file offset */
	__s16 cfa_off;		/* in 8-byte units */
	__s8 rbp_off;		/* in 8-byte units; ROW_CFA_PLT: the threshold */
	__u8 rules;		/* enum row_cfa | ROW_RBP_* */
};

/*
 * The tables in the BPF program's maps: the files' rows in chunks, arrays
 * userspace adds to unwind_rows (an array of them) as the rows need room,
 * each file's rows all in one chunk; each file's slice by the file's
 * identity as the kernel knows it (unwind_files). A chunk is made
 * UNWIND_CHUNK_ROWS long (2 MiB), or as long as a file bigger than that.
 */
#define UNWIND_CHUNKS 64
#define UNWIND_CHUNK_ROWS (256u << 10)
#define UNWIND_CHUNK_SHIFT 24	/* unwind_file.first: chunk << 24 | row in it */
struct unwind_file_key {
	__u64 ino;		/* the inode; 0 with dev 0: the vDSO */
	__u32 dev;		/* the kernel's dev_t of its filesystem (MAJOR << 20 | MINOR) */
	__u32 reserved;		/* zero */
};

struct unwind_file {
	__u32 first;		/* its chunk << UNWIND_CHUNK_SHIFT | its first row there */
	__u32 nr;		/* how many rows */
};

/*
 * A process's executable mappings, read by the BPF program from the
 * kernel's VMAs when it execs or forks, and when a sample finds code mapped
 * since; for the processes running at start by userspace from /proc. So a process is unwound with
 * tables from its first sample on.
 */
#define UNWIND_MAX_MAPPINGS 256	/* a power of two: the binary search masks with it */
#define UNWIND_ANON_DEV 0xffffffffu	/* executable memory with no file: JIT code */

struct exec_mapping {
	__u64 start, end;	/* [start, end) */
	__u64 offset;		/* the file offset of start */
	struct unwind_file_key file;
};

struct proc_mappings {
	__u32 gen;		/* the process's generation when read */
	__u32 nr;
	__u32 exec_pages;	/* the mm's pages of code when read: changed, they are read again */
	__u32 reserved;
	struct exec_mapping maps[UNWIND_MAX_MAPPINGS];
};

/*
 * A file the walk met with no table yet (a program new to the run): sent
 * once per file, at once, so its table is built within milliseconds rather
 * than at the next side-band read.
 */
struct table_request {
	struct unwind_file_key file;
	__u32 tgid;		/* a process that maps it, */
	__u32 reserved;
	__u64 start, end;	/* there */
	__u64 offset;		/* the file offset of start */
};

/* How a user stack's walk in the BPF program ended: sample_key.unwind & WALK_END_MASK. */
enum walk_end {
	WALK_NONE = 0,		/* no walk: --unwind fp, or no user stack */
	WALK_OUTERMOST,		/* the CFI's outermost frame (_start, a thread's start): whole */
	WALK_FP_END,		/* frame pointers or a return address ended at 0: whole as they tell */
	WALK_DEPTH,		/* cut at BPFPROF_MAX_DEPTH frames */
	WALK_FAULT,		/* a read of the stack failed */
	WALK_BAD,		/* the next frame is not above this one: a wrong rule or a bad rbp */
	WALK_END_MAX
};
#define WALK_END_MASK 0xff
#define WALK_BY_CFI 0x100	/* some frame was found with a table row */
#define WALK_BY_FP 0x200	/* some frame was found with frame pointers */
/* The walk stopped at code its runtime's program walks on from (runtime_walks.bpf.h). */
#define WALK_HANDED 0x400

#endif
