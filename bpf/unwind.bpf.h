// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * --unwind auto: user stacks walked in the program with unwind tables, no
 * stack copied. Userspace turns each file's CFI into rows (unwind_row.h),
 * once per file; the program finds, for each frame, its process's mapping
 * of the pc (read from the kernel's VMAs when a program is exec'd or a
 * process forks, and when a sample finds its code mapped anew: then in the
 * task's own context, on its way back to user mode), that file's row by
 * binary search, and from it the caller's rsp, rbp and return address. A frame with no row
 * (JIT code, a file whose table is not built yet) is left by its frame
 * pointer. The stack is then counted like any other, by a hash of its frames.
 */
#ifndef BPFPROF_UNWIND_BPF_H
#define BPFPROF_UNWIND_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "runtimes.bpf.h"
#include "settings.bpf.h"

#define VM_EXEC 0x4

/* Weak: a kernel without them loads the program all the same, with the walk off. */
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym __weak;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym __weak;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym __weak;
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw,
					      void *map__map, bpf_task_work_callback_t callback,
					      void *aux__prog) __ksym __weak;

/*
 * The files' rows, in chunks (unwind_row.h) userspace creates as it needs
 * room and writes in place (mmap): no table's memory is taken before a
 * file needs it. BPF_F_INNER_MAP: chunks of any length.
 */
struct unwind_rows_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	/* Sizes, not types: clang leaves a type only an inner map names a declaration. */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct unwind_row));
	__uint(max_entries, 1);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, UNWIND_CHUNKS);
	__type(key, __u32);
	__array(values, struct unwind_rows_chunk);
} unwind_rows SEC(".maps");

/* Each file's rows in unwind_rows, by its identity; written by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct unwind_file_key);
	__type(value, struct unwind_file);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} unwind_files SEC(".maps");

/* Files whose table was asked for (table_request), so each is asked for once. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct unwind_file_key);
	__type(value, __u8);
	__uint(max_entries, 16384);
} tables_asked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 10);
} table_requests SEC(".maps");

/* Each process's executable mappings, by tgid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct proc_mappings);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} proc_maps SEC(".maps");

/* Where a process's mappings are read into before they are stored. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct proc_mappings);
	__uint(max_entries, 1);
} proc_maps_scratch SEC(".maps");

/*
 * The state of one walk. In a map, not on the program's stack: the
 * verifier then takes its values as unknown and checks a step once, not
 * once for every depth it could have reached.
 */
struct walk {
	__u64 pc, sp, bp;	/* the frame being left */
	__u64 hash;
	__u32 tgid, gen;
	__u32 n;		/* frames in ips */
	__u32 how;		/* enum walk_end | WALK_BY_* */
	bool pc_exact;		/* pc is where the frame was interrupted, not a return address */
	bool missed;		/* a pc was in none of the process's mappings */
	bool in_syscall;	/* sampled in the kernel: the pc may be just past a syscall */
	bool proc_current;	/* the process's mappings, as found, are of its generation */
	__u32 proc_exec_pages;	/* and cover this many pages of code */
	/* The mapping the last pc was in, and its file's rows (nr 0: none). */
	__u64 map_start, map_end, map_offset;
	__u32 rows_first, rows_nr;
	struct jit_frame jit;	/* a runtime's generated code the sample is in (runtimes.bpf.h) */
	__u64 r13;		/* the leaf's (an interpreter may keep its bytecode pointer there) */
};

/*
 * The words of the user stack a walk read (return addresses, saved rbp): at
 * most WALK_READS addresses kept, and every word hashed, so that a walk
 * from the same registers can be known to be the same by reading them again.
 */
#define WALK_READS 128

struct walked_stack {
	struct walk w;
	__u64 ips[BPFPROF_MAX_DEPTH + 1];	/* one more: indices are masked with 127 */
	__u32 nreads;
	__u64 reads_hash;
	__u64 reads[WALK_READS];
};

/* A walked stack as stored: leaf first, zeros after its last frame. */
struct ustack {
	__u64 ips[BPFPROF_MAX_DEPTH];
};

/* The stack being walked, and its frames. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct walked_stack);
	__uint(max_entries, 1);
} walk_scratch SEC(".maps");

/* Walked user stacks by hash, one map per set (see maps.bpf.h); sized by userspace. */
#define USTACK_MAP(name)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__type(key, __u64);					\
		__type(value, struct ustack);				\
		__uint(max_entries, 16384);				\
		__uint(map_flags, BPF_F_NO_PREALLOC);			\
	} name SEC(".maps")

USTACK_MAP(ustacks0);
USTACK_MAP(ustacks1);

/* A file with no table yet: userspace is told at once, once. */
static __always_inline void ask_for_table(const struct exec_mapping *e, __u32 tgid)
{
	struct table_request r = { .file = e->file, .tgid = tgid, .start = e->start, .end = e->end,
				    .offset = e->offset };
	__u8 one = 1;

	if (bpf_map_update_elem(&tables_asked, &e->file, &one, BPF_NOEXIST))
		return;
	bpf_ringbuf_output(&table_requests, &r, sizeof(r), BPF_RB_FORCE_WAKEUP);
}

/*
 * Reads the process's executable mappings from its VMAs into proc_maps.
 * In process context only: where a sample interrupts, the kernel may not
 * take the mmap lock (it refuses every time on some kernels).
 */
static __always_inline void scan_mappings(struct task_struct *task, __u32 tgid, __u32 gen)
{
	struct sample_stats *st;
	/*
	 * Fields read with BPF_CORE_READ, not through the trusted pointers:
	 * the verifier looks up a type by name in the kernel's BTF at each
	 * such access on each path (btf_nested_type_is_trusted), a load time
	 * that showed as 16 % of a 1 s run's CPU.
	 */
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct proc_mappings *m;
	__u32 zero = 0;
	int err;

	m = bpf_map_lookup_elem(&proc_maps_scratch, &zero);
	st = bpf_map_lookup_elem(&stats, &zero);
	if (!m || !mm || !st)
		return;
	m->gen = gen;
	m->nr = 0;
	m->exec_pages = BPF_CORE_READ(mm, exec_vm);
	m->reserved = 0;
	err = bpf_iter_task_vma_new(&it, task, 0);
	while (!err && (vma = bpf_iter_task_vma_next(&it))) {
		struct exec_mapping *e;
		struct file *file;

		if (!(BPF_CORE_READ(vma, vm_flags) & VM_EXEC))
			continue;
		if (m->nr >= UNWIND_MAX_MAPPINGS)
			break;
		e = &m->maps[m->nr & (UNWIND_MAX_MAPPINGS - 1)];
		e->start = BPF_CORE_READ(vma, vm_start);
		e->end = BPF_CORE_READ(vma, vm_end);
		e->offset = BPF_CORE_READ(vma, vm_pgoff) << 12;
		e->file.reserved = 0;
		file = BPF_CORE_READ(vma, vm_file);
		if (file) {
			e->file.ino = BPF_CORE_READ(file, f_inode, i_ino);
			e->file.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
			/* A new program's files: their tables asked for before its first sample. */
			if (!bpf_map_lookup_elem(&unwind_files, &e->file))
				ask_for_table(e, tgid);
			runtime_mapping_seen(tgid, gen, e);
		} else {
			/* The vDSO's table is under (0, 0); other code with no file has none. */
			e->file.ino = 0;
			e->file.dev = e->start == (__u64)BPF_CORE_READ(mm, context.vdso) ? 0 :
				      UNWIND_ANON_DEV;
			e->offset = 0;
		}
		m->nr++;
	}
	bpf_iter_task_vma_destroy(&it);
	if (err) {
		st->v[STAT_PROC_SCAN_BUSY]++;
		return;
	}
	st->v[STAT_PROC_SCANS]++;
	bpf_map_update_elem(&proc_maps, &tgid, m, BPF_ANY);
}

/* A process whose mappings are to be read again on its way back to user mode. */
struct rescan {
	struct bpf_task_work work;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct rescan);
	__uint(max_entries, 16384);
} rescans SEC(".maps");

static int rescan_now(struct bpf_map *map, __u32 *tgid, struct rescan *r)
{
	scan_mappings(bpf_get_current_task_btf(), *tgid, process_gen(*tgid));
	return 0;
}

/* From a sample: the task reads its mappings when it next returns to user mode. */
static __always_inline void rescan_later(__u32 tgid)
{
	struct rescan zero = {}, *r;

	bpf_map_update_elem(&rescans, &tgid, &zero, BPF_NOEXIST);
	r = bpf_map_lookup_elem(&rescans, &tgid);
	/* -EBUSY while one is pending: one read serves every sample until then. */
	if (r)
		bpf_task_work_schedule_resume_impl(bpf_get_current_task_btf(), &r->work, &rescans,
						   (bpf_task_work_callback_t)rescan_now, NULL);
}

/*
 * The two binary searches are global functions: the verifier checks each
 * once, for any arguments, instead of once per path that reaches it.
 */

/* Points w at the mapping of pc and its file's rows; 0 if pc is in none. */
__noinline int unwind_find_mapping(struct walk *w, __u64 pc)
{
	struct proc_mappings *m;
	struct unwind_file *f;
	struct exec_mapping *e;
	__u32 lo = 0, hi, i, mid;

	if (!w)
		return 0;
	m = bpf_map_lookup_elem(&proc_maps, &w->tgid);
	/* Noted for the walk's end, which decides whether they are to be read again. */
	w->proc_current = m && m->gen == w->gen;
	w->proc_exec_pages = m ? m->exec_pages : 0;
	if (!m || m->gen != w->gen) {
		w->missed = true;
		return 0;
	}
	/*
	 * The last mapping starting at or below pc. nr is not clamped: the
	 * masks keep reads inside, and bounds the verifier would track make it
	 * check every path of the search apart.
	 */
	hi = m->nr;
	for (i = 0; i < 9 && lo + 1 < hi; i++) {
		mid = (lo + hi) / 2;
		if (m->maps[mid & (UNWIND_MAX_MAPPINGS - 1)].start <= pc)
			lo = mid;
		else
			hi = mid;
	}
	e = &m->maps[lo & (UNWIND_MAX_MAPPINGS - 1)];
	if (!hi || pc < e->start || pc >= e->end) {
		w->missed = true;
		return 0;
	}
	w->map_start = e->start;
	w->map_end = e->end;
	w->map_offset = e->offset;
	f = e->file.dev == UNWIND_ANON_DEV ? NULL : bpf_map_lookup_elem(&unwind_files, &e->file);
	w->rows_first = f ? f->first : 0;
	w->rows_nr = f ? f->nr : 0;
	if (!f && e->file.dev != UNWIND_ANON_DEV)
		ask_for_table(e, w->tgid);
	return 1;
}

/* Into *out the last of nr rows from first (unwind_file's) at or below off; 0 if none. */
__noinline int unwind_find_row(__u32 first, __u32 nr, __u32 off, struct unwind_row *out)
{
	__u32 chunk = first >> UNWIND_CHUNK_SHIFT, i, mid;
	__u32 lo = first & ((1u << UNWIND_CHUNK_SHIFT) - 1), hi = lo + nr;
	struct unwind_row *r;
	void *rows;

	if (!out || !nr || !(rows = bpf_map_lookup_elem(&unwind_rows, &chunk)))
		return 0;
	/* 24 halvings cover 16M rows. */
	for (i = 0; i < 24 && lo + 1 < hi; i++) {
		mid = lo + (hi - lo) / 2;
		r = bpf_map_lookup_elem(rows, &mid);
		if (!r)
			return 0;
		if (r->addr <= off)
			lo = mid;
		else
			hi = mid;
	}
	r = bpf_map_lookup_elem(rows, &lo);
	if (!r || r->addr > off)
		return 0;
	*out = *r;
	return 1;
}

/* Into *r the row for pc; false: none. */
static __always_inline bool row_at(struct walk *w, __u64 pc, struct unwind_row *r)
{
	if ((pc < w->map_start || pc >= w->map_end) && !unwind_find_mapping(w, pc))
		return false;
	return w->rows_nr &&
	       unwind_find_row(w->rows_first, w->rows_nr, pc - w->map_start + w->map_offset, r) &&
	       (r->rules & ROW_CFA_MASK) != ROW_CFA_NONE;
}

/* Into *r the row for w's pc; 0: none (frame pointers then). Global, as the searches. */
__noinline int unwind_row_for(struct walk *w, struct unwind_row *r)
{
	if (!w || !r)
		return 0;
	/* A return address may be just past a call that ends its function. */
	if (row_at(w, w->pc_exact ? w->pc : w->pc - 1, r))
		return 1;
	/* So may a pc sampled in a system call (rt_sigreturn's, ending __restore_rt). */
	return w->n == 1 && w->in_syscall && row_at(w, w->pc - 1, r);
}

static __always_inline bool read_word(__u64 addr, __u64 *v)
{
	return bpf_probe_read_user(v, sizeof(*v), (void *)addr) == 0;
}

/* A word of the user stack for the walk, its address and value noted (see walked_stack). */
static __always_inline bool walk_read(struct walked_stack *out, __u64 addr, __u64 *v)
{
	__u32 i = out->nreads;

	if (!read_word(addr, v))
		return false;
	if (i < WALK_READS)
		out->reads[i & (WALK_READS - 1)] = addr;
	out->nreads = i + 1;
	out->reads_hash = (out->reads_hash ^ *v) * 0x9e3779b97f4a7c15ull;
	out->reads_hash ^= out->reads_hash >> 29;
	return true;
}

/* Ends the walk: how; returns 1, bpf_loop's "stop". */
static __always_inline long walk_end(struct walk *w, __u32 how)
{
	w->how |= how;
	return 1;
}

/* One frame up: from the walk's registers to its caller's, its return address recorded. */
static long walk_step(__u32 i, void *unused)
{
	struct unwind_row row, *r = &row;
	__u64 cfa, ra, bp, sp;
	struct walked_stack *out;
	struct walk *w;
	__u32 zero = 0;
	__u8 rule;

	out = bpf_map_lookup_elem(&walk_scratch, &zero);
	if (!out)
		return 1;
	w = &out->w;
	bp = w->bp;
	sp = w->sp;
	if (w->n >= BPFPROF_MAX_DEPTH)
		return walk_end(w, WALK_DEPTH);
	if (w->jit.below == BELOW_VM_AT)
		return 1;
	if (w->pc >= w->jit.lo && w->pc < w->jit.hi) {
		/* A subroutine a runtime's VM called (runtimes.bpf.h): back in the VM's frame. */
		w->jit.hi = 0;
		if (!walk_read(out, sp, &ra))
			return walk_end(w, WALK_FAULT);
		w->pc = ra;
		w->sp = sp + 8;
		w->pc_exact = false;
		return 0;
	}
	if (w->jit.vm_leaf == VM_LEAF_EDGE) {
		/* The leaf, recorded, is the VM's entry or exit (runtimes.bpf.h): its caller next. */
		w->jit.vm_leaf = VM_LEAF_NONE;
		w->jit.vm_sp = 0;
		cfa = w->jit.edge_ra_at + 8;
		if (!walk_read(out, w->jit.edge_ra_at, &ra) ||
		    (w->jit.edge_rbp_at && !walk_read(out, w->jit.edge_rbp_at, &bp)))
			return walk_end(w, WALK_FAULT);
		w->pc_exact = false;
		w->how |= WALK_BY_CFI;
		goto record;
	}
	if (w->jit.vm_leaf == VM_LEAF_OFF_FRAME && w->jit.vm_sp > sp) {
		/* The leaf, recorded, is the VM's off its C frame (runtimes.bpf.h): on from there. */
		w->jit.vm_leaf = VM_LEAF_NONE;
		w->pc = w->jit.vm_pc;
		w->sp = w->jit.vm_sp;
		w->jit.vm_sp = 0;
		w->jit.below = BELOW_VM_AT;
		return 0;
	}
	rule = unwind_row_for(w, r) ? r->rules & ROW_CFA_MASK : ROW_CFA_NONE;
	if (rule == ROW_CFA_NONE &&
	    runtime_code_frame(&w->jit, w->tgid, w->gen, w->pc, sp, &cfa, &ra, &bp, &w->pc_exact)) {
		/* A runtime's generated code (runtimes.bpf.h): on where its runtime says. */
		w->how |= WALK_BY_CFI;
		goto record;
	}
	/* Code its runtime's program walks (runtimes.bpf.h): the walk stops here for it. */
	if (rule == ROW_CFA_NONE && runtime_code_walked(w->tgid, w->gen, w->pc))
		return walk_end(w, WALK_HANDED);
	switch (rule) {
	case ROW_CFA_END:
		return walk_end(w, WALK_OUTERMOST | WALK_BY_CFI);
	case ROW_CFA_SIGNAL:
		/* The interrupted frame: all three registers from the ucontext. */
		if (!walk_read(out, sp + SIGFRAME_RIP, &ra) || !walk_read(out, sp + SIGFRAME_RBP, &bp) ||
		    !walk_read(out, sp + SIGFRAME_RSP, &cfa))
			return walk_end(w, WALK_FAULT);
		/*
		 * Frames after the leaf are named one byte back, inside their call:
		 * the trampoline's address and the interrupted pc are no return
		 * addresses, so they are recorded one byte on.
		 */
		if (w->n > 1)
			out->ips[(w->n - 1) & BPFPROF_MAX_DEPTH] += 1;
		ra += 1;
		w->how |= WALK_BY_CFI;
		w->pc_exact = true;
		goto record;
	case ROW_CFA_RSP:
	case ROW_CFA_PLT:
		cfa = sp + (__s64)r->cfa_off * 8;
		if (rule == ROW_CFA_PLT && (w->pc & 15) >= (__u64)r->rbp_off)
			cfa += 8;
		break;
	case ROW_CFA_RBP:
		cfa = bp + (__s64)r->cfa_off * 8;
		break;
	case ROW_CFA_DEREF_RBP:
		if (!walk_read(out, bp + (__s64)r->cfa_off * 8, &cfa))
			return walk_end(w, WALK_FAULT);
		break;
	default:
		/* Frame pointers: rbp points at the saved rbp, the return address above it. */
		w->how |= WALK_BY_FP;
		if (!bp)
			return walk_end(w, WALK_FP_END);
		if (bp < sp)
			return walk_end(w, WALK_BAD);
		if (!walk_read(out, bp, &bp))
			return walk_end(w, WALK_FAULT);
		cfa = w->bp + 16;
		goto return_address;
	}
	w->how |= WALK_BY_CFI;
	switch (r->rules & ROW_RBP_MASK) {
	case ROW_RBP_AT_CFA:
		if (!walk_read(out, cfa + (__s64)r->rbp_off * 8, &bp))
			return walk_end(w, WALK_FAULT);
		break;
	case ROW_RBP_AT_RBP:
		if (!walk_read(out, w->bp, &bp))
			return walk_end(w, WALK_FAULT);
		break;
	}
return_address:
	if (!walk_read(out, cfa - 8, &ra))
		return walk_end(w, WALK_FAULT);
	w->pc_exact = false;
	/* Callers' frames lie above their callees': anything else is a wrong turn. */
	if (cfa <= sp)
		return walk_end(w, WALK_BAD);
record:
	if (!ra)
		return walk_end(w, WALK_FP_END);
	out->ips[w->n & BPFPROF_MAX_DEPTH] = ra;
	w->n++;
	w->hash = (w->hash ^ ra) * 0x9e3779b97f4a7c15ull;
	w->hash ^= w->hash >> 29;
	w->pc = w->pc_exact ? ra - 1 : ra;
	w->sp = cfa;
	w->bp = bp;
	return 0;
}

/* In the kernel, a task's user registers are where it entered. */
static __always_inline bool entry_regs(struct task_struct *task, struct user_regs *regs)
{
	struct pt_regs *task_regs = (struct pt_regs *)bpf_task_pt_regs(task);

	return !bpf_probe_read_kernel(&regs->ip, 8, &task_regs->ip) &&
	       !bpf_probe_read_kernel(&regs->sp, 8, &task_regs->sp) &&
	       !bpf_probe_read_kernel(&regs->bp, 8, &task_regs->bp) &&
	       !bpf_probe_read_kernel(&regs->r14, 8, &task_regs->r14) &&
	       !bpf_probe_read_kernel(&regs->r13, 8, &task_regs->r13) &&
	       !bpf_probe_read_kernel(&regs->rbx, 8, &task_regs->bx) &&
	       !bpf_probe_read_kernel(&regs->rdx, 8, &task_regs->dx);
}

/*
 * Below a runtime's generated code, the walk goes on at its VM's C frame
 * (runtime_code_frame: BELOW_VM_AT) to the C that called the VM: the
 * same frames sample after sample while the thread
 * stays in that call. The walk from there is kept per thread
 * (below_vm_walks), with the stack words it read; a later walk from the
 * same VM frame whose words all read the same (one read of the stack they
 * lie in) would find the same frames, so it takes them and ends as that
 * one did. Whether the process's mappings need reading again is left to
 * the frames walked above (the VM's mappings change as it makes and
 * frees its machine code).
 */
#define BELOW_VM_FRAMES 64
#define BELOW_VM_READS 64
#define BELOW_VM_SPAN 4096	/* bytes of stack from the VM's frame up the kept words lie in */

struct below_vm_walk {
	__u32 tgid, gen;
	__u64 sp, pc;		/* the VM's frame walked from */
	__u64 words_hash;	/* of the words read, in order */
	__u32 n;		/* frames below; 0: nothing kept */
	__u32 how;		/* how the walk ended */
	__u32 nreads, span;
	__u16 offsets[BELOW_VM_READS];	/* of the words read, from sp */
	__u64 ips[BELOW_VM_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct below_vm_walk);
} below_vm_walks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64[BELOW_VM_SPAN / 8]);
	__uint(max_entries, 1);
} below_vm_span SEC(".maps");

/* The hash of the words at k's offsets, in the stack span read at k->sp; 0 if unreadable. */
static __always_inline __u64 below_vm_words(const struct below_vm_walk *k)
{
	__u32 zero = 0, i, span = k->span;
	__u64 *words = bpf_map_lookup_elem(&below_vm_span, &zero), h = 0xcbf29ce484222325ull;

	span &= BELOW_VM_SPAN * 2 - 1;
	if (!words || !span || span > BELOW_VM_SPAN || bpf_probe_read_user(words, span, (void *)k->sp))
		return 0;
	for (i = 0; i < BELOW_VM_READS && i < k->nreads; i++) {
		h = (h ^ words[(k->offsets[i] / 8) & (BELOW_VM_SPAN / 8 - 1)]) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return h;
}

/* below_vm_keep's pass over the words read: where each lies from the VM frame's sp. */
struct below_vm_offsets {
	struct below_vm_walk *k;
	const struct walked_stack *out;
	__u32 r0;
	__u32 top;	/* out: the span the words lie in, from sp */
	bool outside;	/* out: a word lies outside BELOW_VM_SPAN */
};

/* One word's offset into k (a bpf_loop callback: checked once, not per word). */
static long below_vm_offset(__u32 i, struct below_vm_offsets *c)
{
	__u64 a = c->out->reads[(c->r0 + i) & (WALK_READS - 1)], sp = c->k->sp;

	if (a < sp || a - sp > BELOW_VM_SPAN - 8 || (a & 7)) {
		c->outside = true;
		return 1;
	}
	c->k->offsets[i & (BELOW_VM_READS - 1)] = a - sp;
	if (a - sp + 8 > c->top)
		c->top = a - sp + 8;
	return 0;
}

/* The walk from the VM's frame, to be taken again: kept in k if its frames and words fit. */
static __always_inline void below_vm_keep(struct below_vm_walk *k, struct walked_stack *out,
					  __u32 n0, __u32 r0)
{
	struct below_vm_offsets c = { .k = k, .out = out, .r0 = r0 };
	struct walk *w = &out->w;
	__u32 n = w->n - n0, nreads = out->nreads - r0;
	__u64 bytes = n * sizeof(__u64);

	k->n = 0;
	if ((w->how & WALK_END_MASK) != WALK_OUTERMOST || !n || n > BELOW_VM_FRAMES ||
	    nreads > BELOW_VM_READS || out->nreads > WALK_READS)
		return;
	bpf_loop(nreads, below_vm_offset, &c, 0);
	/* The bound again, where the verifier sees it (the compiler moves C checks). */
	barrier_var(bytes);
	if (c.outside || !bytes || bytes > sizeof(k->ips))
		return;
	/* The frames walked lie at n0..w->n, below BPFPROF_MAX_DEPTH: no wrap to mask. */
	if (bpf_probe_read_kernel(k->ips, bytes, &out->ips[n0 & BPFPROF_MAX_DEPTH]))
		return;
	k->nreads = nreads;
	k->span = c.top;
	k->words_hash = below_vm_words(k);
	if (k->words_hash)
		k->n = n;
}

/*
 * The walk (walk_scratch) stopped at the VM's frame (pc, sp): its frames
 * below as kept, else walked and kept. Global, as the searches: its loops
 * would be checked again for each path through the walk above.
 */
__noinline int walk_below_vm(void)
{
	struct walked_stack *out;
	struct below_vm_walk *k;
	__u32 zero = 0, n0, r0, i;
	struct walk *w;

	out = bpf_map_lookup_elem(&walk_scratch, &zero);
	if (!out)
		return 0;
	w = &out->w;
	n0 = w->n;
	r0 = out->nreads;
	w->jit.below = BELOW_VM_WALKING;
	k = bpf_task_storage_get(&below_vm_walks, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (k && k->n && k->tgid == w->tgid && k->gen == w->gen && k->sp == w->sp &&
	    k->pc == w->pc && n0 + k->n <= BPFPROF_MAX_DEPTH && below_vm_words(k) == k->words_hash) {
		for (i = 0; i < BELOW_VM_FRAMES && i < k->n; i++) {
			__u64 ra = k->ips[i];

			out->ips[(n0 + i) & BPFPROF_MAX_DEPTH] = ra;
			w->hash = (w->hash ^ ra) * 0x9e3779b97f4a7c15ull;
			w->hash ^= w->hash >> 29;
		}
		w->n = n0 + k->n;
		w->how |= k->how;
		return 0;
	}
	if (k) {
		k->tgid = w->tgid;
		k->gen = w->gen;
		k->sp = w->sp;
		k->pc = w->pc;
	}
	bpf_loop(BPFPROF_MAX_DEPTH, walk_step, NULL, 0);
	if (k) {
		k->how = w->how;
		below_vm_keep(k, out, n0, r0);
	}
	return 0;
}

/* Walks the user stack from regs into out: out->w.n frames, out->w.how how. */
static __always_inline void walk_from(struct walked_stack *out, const struct user_regs *regs)
{
	struct walk *w = &out->w;

	w->pc = regs->ip;
	w->sp = regs->sp;
	w->bp = regs->bp;
	w->r13 = regs->r13;
	w->pc_exact = true;
	w->missed = false;
	w->proc_current = false;
	w->map_start = w->map_end = 0;
	w->how = 0;
	out->nreads = 0;
	out->reads_hash = 0xcbf29ce484222325ull;
	out->ips[0] = w->pc;
	w->n = 1;
	w->hash = (0xcbf29ce484222325ull ^ w->pc) * 0x9e3779b97f4a7c15ull;
	bpf_loop(BPFPROF_MAX_DEPTH, walk_step, NULL, 0);
	if (w->jit.below == BELOW_VM_AT)
		walk_below_vm();
	if (!(w->how & (WALK_END_MASK | WALK_HANDED)))
		w->how |= WALK_DEPTH;
	if (w->n < BPFPROF_MAX_DEPTH)
		out->ips[w->n & BPFPROF_MAX_DEPTH] = 0;
}

/* How a user stack's walk went, counted (a walk handed to a runtime: once it ends). */
static __always_inline void walk_counted(struct sample_stats *st, __u32 how)
{
	st->v[STAT_WALK_END + ((how & WALK_END_MASK) < WALK_END_MAX ? how & WALK_END_MASK : 0)]++;
	if (!(how & WALK_BY_FP))
		st->v[STAT_WALKED_CFI]++;
	else if (!(how & WALK_BY_CFI))
		st->v[STAT_WALKED_FP]++;
	else
		st->v[STAT_WALKED_MIXED]++;
}

/*
 * The sampled task's user stack, walked: its frames in walk_scratch, how
 * the walk went in key->unwind; false if it has no user stack.
 */
static __always_inline bool walk_user_stack(struct bpf_perf_event_data *ctx, bool user_mode,
					    struct sample_key *key, struct sample_stats *st,
					    __u32 *frames)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct walked_stack *out;
	struct user_regs regs;
	__u32 zero = 0, how;
	struct walk *w;

	out = bpf_map_lookup_elem(&walk_scratch, &zero);
	if (!BPF_CORE_READ(task, mm) || !out)
		return false;
	if (user_mode) {
		regs.ip = ctx->regs.ip;
		regs.sp = ctx->regs.sp;
		regs.bp = ctx->regs.bp;
		regs.r14 = ctx->regs.r14;
		regs.r13 = ctx->regs.r13;
		regs.rbx = ctx->regs.bx;
		regs.rdx = ctx->regs.dx;
	} else if (!entry_regs(task, &regs)) {
		return false;
	}
	w = &out->w;
	runtime_before_walk(key, &regs, &w->jit, st);
	w->tgid = key->tgid;
	w->gen = key->gen;
	w->in_syscall = !user_mode;
	walk_from(out, &regs);
	/*
	 * Code mapped since its mappings were read (ld.so maps the libraries
	 * after exec), or none read yet: read them soon, even if this walk did
	 * not need them.
	 */
	if (!w->proc_current || w->proc_exec_pages != BPF_CORE_READ(task, mm, exec_vm))
		rescan_later(key->tgid);
	how = w->how;
	key->unwind = how;
	key->ustack_hash = w->hash ? w->hash : 1;
	*frames = w->n;
	if (!(how & WALK_HANDED))
		walk_counted(st, how);
	return true;
}

/* A walked stack (ips) into the set's ustacks, unless there already. */
static __always_inline void store_ustack(__u32 set, const struct sample_key *key, const __u64 *ips,
					 struct sample_stats *st, int *cause)
{
	void *ustacks = set ? (void *)&ustacks1 : (void *)&ustacks0;
	long err;

	if (bpf_map_lookup_elem(ustacks, &key->ustack_hash))
		return;
	err = bpf_map_update_elem(ustacks, &key->ustack_hash, ips, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		st->v[STAT_USTACK_FULL]++;
		*cause = CAUSE_STACK_FULL;
	}
}

/* ... the stack just walked, in walk_scratch. */
static __always_inline void store_walked(__u32 set, const struct sample_key *key,
					 struct sample_stats *st, int *cause)
{
	__u32 zero = 0;
	struct walked_stack *w = bpf_map_lookup_elem(&walk_scratch, &zero);

	if (w)
		store_ustack(set, key, w->ips, st, cause);
}

/* A new program's first mappings: the binary, its interpreter, the vDSO. */
static __always_inline void mappings_at_exec(struct task_struct *p)
{
	if (settings.cfi_unwind)
		scan_mappings(p, p->tgid, process_gen(p->tgid));
}

/* A new process has its parent's mappings: read them as its own. */
static __always_inline void mappings_at_fork(struct task_struct *child)
{
	if (settings.cfi_unwind)
		scan_mappings(child, child->tgid, process_gen(child->tgid));
}

#endif
