// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The sampling program: runs on every CPU-clock overflow, filters, records
 * the kernel and user stack ids and counts the sample. Knows nothing of
 * symbols.
 *
 * Two map sets (stacks0/counts0, stacks1/counts1): the program writes into
 * the set named by active_set; userspace flips active_set, waits for an RCU
 * grace period (no program still uses the old set) and then reads and clears
 * the old set at leisure. When a map cannot take a sample, the sample goes
 * whole through the ring buffer; only if that is full too is it lost, and
 * then it is counted by cause.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "bpfprof/sample.h"

#define EFAULT 14
#define EEXIST 17
#define ENOMEM 12

/* Settings, fixed before load. */
const volatile bool filter_tgids = false;	/* -p */
const volatile bool filter_pids = false;	/* -t */
const volatile bool filter_cgroup = false;	/* --cgroup */
const volatile bool include_idle = false;	/* -I */
const volatile bool kernel_stacks = true;	/* not -U */
const volatile bool user_stacks = true;		/* not -K */
const volatile bool dwarf_unwind = false;	/* --unwind dwarf */
const volatile bool cfi_unwind = false;		/* --unwind auto: walk user stacks here */
const volatile __u32 stack_copy_bytes = 16384;	/* --stack-size, a multiple of 1 KiB */

/*
 * The map set the program writes to is active_set & 1; userspace adds one
 * at each drain, so the whole number also says which drain it is.
 */
__u32 active_set = 0;

#define STACK_MAP(name)							\
	struct {							\
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);			\
		__uint(key_size, sizeof(__u32));			\
		__uint(value_size, BPFPROF_MAX_DEPTH * sizeof(__u64));	\
		__uint(max_entries, 16384);				\
	} name SEC(".maps")

#define COUNTS_MAP(name)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__type(key, struct sample_key);				\
		__type(value, __u64);					\
		__uint(max_entries, 16384);				\
	} name SEC(".maps")

STACK_MAP(stacks0);
STACK_MAP(stacks1);
COUNTS_MAP(counts0);
COUNTS_MAP(counts1);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct sample_stats);
	__uint(max_entries, 1);
} stats SEC(".maps");

/* -p and -t: the ids to keep (value unused). Sized by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1);
} tgid_filter SEC(".maps"), pid_filter SEC(".maps");

/* --cgroup: the cgroup v2 directory whose tasks (and descendants') we keep. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} cgroup_filter SEC(".maps");

/*
 * Each process's generation: how many times, since the run started, its pid
 * became a new process (fork) or a new program (exec). Userspace counts the
 * same events in the perf side-band records, so (tgid, gen) names the one
 * image of mappings a sample's addresses belong to, across exec and pid
 * reuse. LRU: a forgotten process reads as generation 0, the oldest image.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 65536);
} proc_gen SEC(".maps");

#include "python.bpf.h"
#include "unwind.bpf.h"

/* Samples the maps could not take, sent whole. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} fallback SEC(".maps");

static __always_inline bool wanted(__u32 tgid, __u32 pid)
{
	bool by_id = filter_tgids || filter_pids;
	bool keep = !by_id;

	if (filter_tgids && bpf_map_lookup_elem(&tgid_filter, &tgid))
		keep = true;
	if (filter_pids && bpf_map_lookup_elem(&pid_filter, &pid))
		keep = true;
	if (keep && filter_cgroup)
		keep = bpf_current_task_under_cgroup(&cgroup_filter, 0) == 1;
	return keep;
}

static __always_inline bool in_user_mode(struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	/*
	 * The verifier allows only 8-byte loads from the regs in this context,
	 * and cs is a 16-bit member of a union in recent kernels: read the word.
	 * pt_regs' layout is user ABI on x86-64, so the offset is stable.
	 */
	__u64 cs = *(volatile __u64 *)((void *)&ctx->regs + __builtin_offsetof(struct pt_regs, cs));

	return (cs & 3) == 3;
#else
#error "bpfprof: user-mode test not written for this architecture"
#endif
}

/*
 * Where this CPU's preempt count is, from its run queue: both are per-CPU
 * variables, so their distance is that of their offsets in the kernel's
 * per-CPU section (from its BTF; 0: unknown). A ksym would need their
 * addresses, which kallsyms lists only with CONFIG_KALLSYMS_ALL.
 */
const volatile __s64 preempt_count_from_rq = 0;

static __always_inline bool preempt_count_now(int *count)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct rq *rq;

	if (!preempt_count_from_rq || !bpf_core_field_exists(t->se.cfs_rq))
		return false;
	rq = BPF_CORE_READ(t, se.cfs_rq, rq);
	return rq && BPF_CORE_READ(rq, cpu) == bpf_get_smp_processor_id() &&
	       !bpf_probe_read_kernel(count, sizeof(*count), (void *)rq + preempt_count_from_rq);
}

/*
 * The CPU's state under the sample. The sample itself runs in an interrupt
 * (the cpu-clock's hrtimer: one hardirq level; a hardware event's NMI: none),
 * so a second hardirq level is an interrupted handler, and the softirq
 * count's low bit a softirq being served (higher bits: bottom halves only
 * disabled, which is the thread's kernel time).
 */
static __always_inline __u32 cpu_state(bool user_mode, __u32 pid)
{
	int count, hardirqs;

	if (user_mode)
		return CPU_STATE_USER;
	if (preempt_count_now(&count)) {
		hardirqs = (count >> 16) & 0xf;
		if (hardirqs > ((count & 0xf00000) ? 0 : 1))
			return CPU_STATE_IRQ;
		if (count & 0x100)
			return CPU_STATE_SOFTIRQ;
	}
	return pid ? CPU_STATE_KERNEL : CPU_STATE_IDLE;
}

/*
 * Record one stack into the active set's stack map. Returns the id, or
 * BPFPROF_NO_STACK when there is none; sets *cause on a failure that needs
 * the fallback.
 */
static __always_inline __s32 stack_id(struct bpf_perf_event_data *ctx, __u32 set, bool user,
				      struct sample_stats *st, int *cause)
{
	__u64 flags = user ? BPF_F_USER_STACK : 0;
	long id;

	if (set)
		id = bpf_get_stackid(ctx, &stacks1, flags);
	else
		id = bpf_get_stackid(ctx, &stacks0, flags);
	if (id >= 0)
		return id;
	if (id == -EEXIST) {
		st->v[user ? STAT_USTACK_COLLISION : STAT_KSTACK_COLLISION]++;
		st->v[STAT_COLLISION_SET0 + set]++;
		*cause = CAUSE_STACK_COLLISION;
	} else if (id == -ENOMEM) {
		st->v[user ? STAT_USTACK_FULL : STAT_KSTACK_FULL]++;
		*cause = CAUSE_STACK_FULL;
	} else {
		st->v[user ? STAT_USTACK_NONE : STAT_KSTACK_NONE]++;
	}
	return BPFPROF_NO_STACK;
}

/* Where a fallback record is put together before it is sent at its length. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct fallback_record);
	__uint(max_entries, 1);
} fallback_scratch SEC(".maps");

/* Whose sample a ring buffer record is. */
static __always_inline void fill_head(struct record_head *h, __u32 kind, const struct sample_key *key)
{
	h->kind = kind;
	h->tgid = key->tgid;
	h->pid = key->pid;
	h->gen = key->gen;
	h->cgroup_id = key->cgroup_id;
	__builtin_memcpy(h->comm, key->comm, sizeof(h->comm));
	h->cpu = bpf_get_smp_processor_id();
}

/* A stack's bytes as a count of frames, within 0..BPFPROF_MAX_DEPTH. */
static __always_inline __u32 frames_in(long bytes)
{
	__u32 n = bytes > 0 ? (__u32)bytes / sizeof(__u64) : 0;

	return n < BPFPROF_MAX_DEPTH ? n : BPFPROF_MAX_DEPTH;
}

/*
 * Copy both stacks into a ring buffer record; count the sample lost if
 * full. The record goes out as long as its stacks: a quarter of the full
 * size for a typical sample, so the ring buffer holds four times as many.
 */
static __always_inline void send_whole(struct bpf_perf_event_data *ctx, const struct sample_key *key,
				       bool user_mode, struct sample_stats *st, int cause,
				       __u32 walked)
{
	struct walked_stack *w;
	struct py_walk *pw;
	__u32 zero = 0, nu;
	__u64 nk;
	struct fallback_record *r;
	__u64 size;

	r = bpf_map_lookup_elem(&fallback_scratch, &zero);
	if (!r)
		return;
	fill_head(&r->head, RECORD_FALLBACK, key);
	r->cause = cause;
	r->head.kstack_bytes = kernel_stacks && !user_mode
		? bpf_get_stack(ctx, r->ips, BPFPROF_MAX_DEPTH * sizeof(__u64), 0) : -EFAULT;
	nk = frames_in(r->head.kstack_bytes);
	/* The bound again, where the verifier sees it (the compiler moves C checks). */
	_Static_assert(BPFPROF_MAX_DEPTH == 0x7f, "the mask below is BPFPROF_MAX_DEPTH");
	asm volatile("%[n] &= 0x7f" : [n] "+r"(nk));
	r->unwind = key->unwind;
	r->state = key->state;
	r->value = 1;
	pw = key->py_hash ? bpf_map_lookup_elem(&py_scratch, &zero) : NULL;
	if (!pw || bpf_probe_read_kernel(&r->py, sizeof(r->py), &pw->stack))
		r->py.n = 0;
	if (cfi_unwind) {
		/* The stack walked here, not the frame pointers' one. */
		nu = walked;
		asm volatile("%[n] &= 0x7f" : [n] "+r"(nu));
		w = bpf_map_lookup_elem(&walk_scratch, &zero);
		r->ustack_bytes = key->ustack_hash && w && nu &&
				  !bpf_probe_read_kernel(&r->ips[nk], nu * sizeof(__u64), w->ips)
			? nu * sizeof(__u64) : -EFAULT;
	} else {
		r->ustack_bytes = user_stacks
			? bpf_get_stack(ctx, &r->ips[nk], BPFPROF_MAX_DEPTH * sizeof(__u64),
					BPF_F_USER_STACK)
			: -EFAULT;
	}
	nu = frames_in(r->ustack_bytes);
	size = __builtin_offsetof(struct fallback_record, ips) + (nk + nu) * sizeof(__u64);
	if (size > sizeof(*r))
		size = sizeof(*r);
	if (bpf_ringbuf_output(&fallback, r, size, 0)) {
		st->v[STAT_LOST_COLLISION + cause]++;
		return;
	}
	st->v[STAT_FALLBACK]++;
}

/* --unwind auto: a walked stack (ips) into the active set's ustacks, unless there already. */
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

/*
 * Add value to key's count in the set (a sample: 1; off-CPU time: its
 * nanoseconds); false if the map is full.
 */
static __always_inline bool count(__u32 set, const struct sample_key *key, __u64 value)
{
	void *counts = set ? (void *)&counts1 : (void *)&counts0;
	__u64 *v = bpf_map_lookup_elem(counts, key);

	if (v) {
		__sync_fetch_and_add(v, value);
		return true;
	}
	/* Another CPU may insert the same key between lookup and update. */
	if (bpf_map_update_elem(counts, key, &value, BPF_NOEXIST) == 0)
		return true;
	v = bpf_map_lookup_elem(counts, key);
	if (v) {
		__sync_fetch_and_add(v, value);
		return true;
	}
	return false;
}

/*
 * --unwind dwarf: the user registers at the sample and the stack above sp,
 * copied a chunk at a time until the end of what is mapped, for userspace
 * to unwind. The registers are the task's user state (bpf_task_pt_regs),
 * also when the sample hit in the kernel.
 */
static __always_inline void send_for_unwinding(struct bpf_perf_event_data *ctx,
					       const struct sample_key *key, struct sample_stats *st,
					       bool user_mode)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct dwarf_record *r;
	struct pt_regs *regs;
	__u32 i, n = 0;

	r = bpf_ringbuf_reserve(&fallback, sizeof(*r) - BPFPROF_MAX_STACK_COPY + stack_copy_bytes, 0);
	if (!r) {
		st->v[STAT_LOST_DWARF]++;
		return;
	}
	fill_head(&r->head, RECORD_DWARF, key);
	/* Interrupted in user mode, the kernel has no stack to give: don't ask. */
	r->head.kstack_bytes = !kernel_stacks ? -EFAULT :
			  user_mode ? 0 : bpf_get_stack(ctx, r->kstack, sizeof(r->kstack), 0);
	r->ip = r->sp = r->bp = 0;
	if (user_stacks && task->mm) {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		r->ip = regs->ip;
		r->sp = regs->sp;
		r->bp = regs->bp;
		for (i = 0; i < BPFPROF_MAX_STACK_COPY / BPFPROF_STACK_CHUNK; i++) {
			__u64 addr = r->sp + i * BPFPROF_STACK_CHUNK;
			__u32 tail;

			if ((i + 1) * BPFPROF_STACK_CHUNK > stack_copy_bytes)
				break;
			if (!bpf_probe_read_user(r->stack + i * BPFPROF_STACK_CHUNK, BPFPROF_STACK_CHUNK,
						 (void *)addr)) {
				n += BPFPROF_STACK_CHUNK;
				continue;
			}
			/*
			 * The stack's mapping ends inside this chunk: the bytes up to
			 * its last page's end hold the outermost frames (_start's).
			 */
			tail = -addr & 4095;
			if (tail && tail < BPFPROF_STACK_CHUNK &&
			    !bpf_probe_read_user(r->stack + i * BPFPROF_STACK_CHUNK, tail, (void *)addr))
				n += tail;
			break;
		}
	}
	r->stack_bytes = n;
	r->reserved = 0;
	/*
	 * Every sample comes this way: waking the reader for each would cost a
	 * context switch per sample. It reads the ring every 20 ms anyway;
	 * wake it early once a 64th of the ring is waiting (1 MiB by default,
	 * some 60 samples), so a burst cannot fill the ring between its reads.
	 */
	bpf_ringbuf_submit(r, bpf_ringbuf_query(&fallback, BPF_RB_AVAIL_DATA) >=
			      bpf_ringbuf_query(&fallback, BPF_RB_RING_SIZE) / 64 ?
			      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	st->v[STAT_DWARF_SENT]++;
}

/*
 * exec counts its generation at sched_process_exec, a few steps after the
 * new program's registers are set: a sample in between, still in execve
 * with the user sp at the new stack's top, is the new program's.
 */
static __always_inline bool new_program_in_exec(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;

	if (!bpf_core_field_exists(task->in_execve) ||
	    !BPF_CORE_READ_BITFIELD_PROBED(task, in_execve) || !task->mm)
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	return regs->sp == task->mm->start_stack;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u32 zero = 0, set;
	__u64 id = bpf_get_current_pid_tgid();
	struct sample_stats *st;
	struct sample_key key;
	__u32 *gen, walked = 0;
	int cause = -1, py_cause;
	bool user_mode;

	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return 0;
	st->v[STAT_SAMPLES]++;

	__builtin_memset(&key, 0, sizeof(key));
	key.tgid = id >> 32;
	key.pid = (__u32)id;
	user_mode = in_user_mode(ctx);
	if (key.pid == 0) {
		st->v[STAT_IDLE]++;
		if (!include_idle) {
			st->v[STAT_IDLE_SKIPPED]++;
			/* In the states' shares only where the idle task is wanted (no -p, -t). */
			if (wanted(key.tgid, key.pid))
				st->v[STAT_CPU_STATE + cpu_state(false, 0)]++;
			return 0;
		}
	}
	if (!wanted(key.tgid, key.pid)) {
		st->v[STAT_FILTERED]++;
		return 0;
	}
	st->v[user_mode ? STAT_USER_MODE : STAT_KERNEL_MODE]++;
	st->v[STAT_CPU_STATE + cpu_state(user_mode, key.pid)]++;

	key.cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	gen = bpf_map_lookup_elem(&proc_gen, &key.tgid);
	key.gen = gen ? *gen : 0;
	if (!user_mode && new_program_in_exec())
		key.gen++;

	if (dwarf_unwind) {
		send_for_unwinding(ctx, &key, st, user_mode);
		return 0;
	}
	set = active_set & 1;
	/* Interrupted in user mode, the kernel has no stack to give: don't ask. */
	key.kstack_id = kernel_stacks && !user_mode ? stack_id(ctx, set, false, st, &cause)
						    : BPFPROF_NO_STACK;
	if (!user_stacks) {
		key.ustack_id = BPFPROF_NO_STACK;
	} else if (!cfi_unwind) {
		key.ustack_id = stack_id(ctx, set, true, st, &cause);
	} else {
		key.ustack_id = BPFPROF_NO_STACK;
		if (walk_user_stack(ctx, user_mode, &key, st, &walked))
			store_walked(set, &key, st, &cause);
		else
			st->v[STAT_USTACK_NONE]++;
		if (python_frames) {
			py_cause = python_sample(&key, set, st);
			/*
			 * The verifier knows nothing of what a global function
			 * returns: bounded where it sees it (-1, none, is 3 then).
			 */
			_Static_assert(CAUSE_MAX == 3, "the mask below is CAUSE_MAX");
			asm volatile("%[c] &= 3" : [c] "+r"(py_cause));
			if (py_cause < CAUSE_MAX)
				cause = py_cause;
		}
	}
	if (cause < 0 && !count(set, &key, 1)) {
		st->v[STAT_COUNTS_FULL]++;
		cause = CAUSE_COUNTS_FULL;
	}
	if (cause >= 0) {
		send_whole(ctx, &key, user_mode, st, cause, walked);
		return 0;
	}
	st->v[STAT_COUNTED_SET0 + set]++;
	return 0;
}

static __always_inline void next_generation(__u32 tgid)
{
	__u32 one = 1, *gen = bpf_map_lookup_elem(&proc_gen, &tgid);

	if (gen)
		__sync_fetch_and_add(gen, 1);
	else
		bpf_map_update_elem(&proc_gen, &tgid, &one, BPF_ANY);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	next_generation(BPF_CORE_READ(p, tgid));
	mappings_at_exec(p);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	/* A new thread joins its process; only a new process starts a generation. */
	if (BPF_CORE_READ(child, pid) == BPF_CORE_READ(child, tgid)) {
		next_generation(BPF_CORE_READ(child, tgid));
		mappings_at_fork(child);
	}
	return 0;
}

#include "offcpu.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
