// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * CPython's frames, read at the sample: the interpreter's frame chain
 * changes a moment later, so it is walked here and named in userspace
 * (src/runtime/python.c). A process is Python when one of its executable
 * mappings is of a file userspace found to hold an interpreter
 * (python_files, with that version's layout); its _PyRuntime is then at a
 * fixed distance from that mapping. The sampled thread's thread state is
 * the one of the main interpreter's whose thread_id is the thread's
 * pthread_self() (its fs base on x86-64): found by walking the list once,
 * then kept. Its frames, newest first, give each code object and
 * instruction; where one C-level eval call began is marked, so userspace
 * can put the frames in place of that call's _PyEval_EvalFrameDefault.
 * The Python stack is counted like a walked native stack, by a hash of its
 * frames; a stack new to the drain is also sent at once, so that its code
 * objects are named while the process lives.
 */
#ifndef BPFPROF_PYTHON_BPF_H
#define BPFPROF_PYTHON_BPF_H

#include "common.bpf.h"
#include "interp.bpf.h"
#include "bpfprof/python_frames.h"
#include "settings.bpf.h"

/* Files that hold an interpreter, by identity; written by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct unwind_file_key);
	__type(value, struct python_file);
	__uint(max_entries, 1024);
} python_files SEC(".maps");

/* Python processes by tgid: from their mappings as read (scan_mappings), or by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct python_process);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} python_procs SEC(".maps");

/* Each thread's thread state, once found: checked at every use. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 16384);
} python_threads SEC(".maps");

/* The walk's state and frames, per CPU (as walk_scratch, and for the same reason). */
struct py_walk {
	struct py_offsets off;
	__u64 frame;		/* the next frame to read */
	__u64 hash;
	__u32 read_size;	/* bytes of a frame read: its last member's end */
	__u32 end;		/* enum interp_walk_end, once ended */
	__u8 buf[136];		/* the frame's first read_size bytes (at most 128), and slack */
	struct interp_stack stack;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct py_walk);
	__uint(max_entries, 1);
} py_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} python_notices SEC(".maps");

/* A process maps code of file at e: if the file is an interpreter's, the process is Python. */
static __always_inline void python_mapping_seen(__u32 tgid, __u32 gen, const struct exec_mapping *e)
{
	struct python_process p = { .gen = gen };
	struct python_file *f;

	if (!runtime_on(RUNTIME_PYTHON) || !(f = bpf_map_lookup_elem(&python_files, &e->file)))
		return;
	p.runtime = e->start - e->offset + f->runtime_rel;
	p.code_type = e->start - e->offset + f->code_type_rel;
	p.off = f->off;
	/* Not the program's: userspace's merge finds the eval calls by them. */
	for (int i = 0; i < PY_EVAL_RANGES; i++)
		if (f->eval_rel.lo[i]) {
			p.eval.lo[i] = e->start - e->offset + f->eval_rel.lo[i];
			p.eval.hi[i] = e->start - e->offset + f->eval_rel.hi[i];
		}
	bpf_map_update_elem(&python_procs, &tgid, &p, BPF_ANY);
}

static __always_inline __u64 read_u64(__u64 addr)
{
	__u64 v;

	return bpf_probe_read_user(&v, sizeof(v), (void *)addr) ? 0 : v;
}

/* A member's value in the frame read into w->buf (offsets masked for the verifier). */
static __always_inline __u64 buf_u64(struct py_walk *w, __u16 off)
{
	return *(__u64 *)&w->buf[off & 0x7f];
}

static __always_inline __u32 buf_u32(struct py_walk *w, __u16 off)
{
	return *(__u32 *)&w->buf[off & 0x7f];
}

/* A walk of the interpreter's list of thread states, for the one of a thread. */
struct thread_search {
	__u64 ts;		/* the thread state looked at */
	__u64 self;		/* the thread's pthread_self() */
	__u16 thread_id, next;	/* offsets in a thread state */
	bool found;
};

static long thread_search_step(__u32 i, struct thread_search *s)
{
	if (!s->ts)
		return 1;
	if (read_u64(s->ts + s->thread_id) == s->self) {
		s->found = true;
		return 1;
	}
	s->ts = read_u64(s->ts + s->next);
	return 0;
}

/* The thread's thread state: the cached one if it still is the thread's, else found in the list. */
static __always_inline __u64 thread_state(const struct python_process *p, __u32 pid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_search s = { .self = BPF_CORE_READ(task, thread.fsbase),
				   .thread_id = p->off.tstate_thread_id,
				   .next = p->off.tstate_next };
	__u64 *cached;

	cached = bpf_map_lookup_elem(&python_threads, &pid);
	if (cached && *cached && read_u64(*cached + s.thread_id) == s.self)
		return *cached;
	s.ts = read_u64(read_u64(p->runtime + p->off.runtime_interpreters_head) +
			p->off.interp_threads_head);
	bpf_loop(1024, thread_search_step, &s, 0);
	if (!s.found)
		return 0;
	bpf_map_update_elem(&python_threads, &pid, &s.ts, BPF_ANY);
	return s.ts;
}

static __always_inline long py_walk_end(struct py_walk *w, __u32 end)
{
	w->end = end;
	return 1;
}

/* One frame: its code object and instruction recorded, then on to the one that called it. */
static long py_walk_step(__u32 i, void *unused)
{
	__u32 zero = 0, n, read_size, instr, line;
	struct interp_frame *f;
	struct py_walk *w;
	__u64 code;
	__u8 entry;

	w = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!w)
		return 1;
	if (!w->frame)
		return py_walk_end(w, INTERP_WALK_WHOLE);
	read_size = w->read_size;
	if (read_size > 128)
		return py_walk_end(w, INTERP_WALK_FAULT);
	if (bpf_probe_read_user(w->buf, read_size, (void *)w->frame))
		return py_walk_end(w, INTERP_WALK_FAULT);
	w->frame = buf_u64(w, w->off.frame_previous);
	code = buf_u64(w, w->off.frame_code);
	entry = w->off.frame_entry == PY_NO_MEMBER ? 1 : w->buf[w->off.frame_entry & 0x7f];
	n = w->stack.n;
	if (w->off.frames == PY_FRAMES_314) {
		/* f_executable is a _PyStackRef: its tag bits off, the code object's address. */
		code &= ~PY_STACKREF_TAGS;
		/* Never given (CSTACK, 3.14's 4): holds no code object either. */
		if (entry == PY_FRAME_OWNED_BY_CSTACK_314)
			return 0;
	}
	if ((w->off.frames == PY_FRAMES_312 && entry == PY_FRAME_OWNED_BY_CSTACK) ||
	    (w->off.frames == PY_FRAMES_314 && entry == PY_FRAME_OWNED_BY_INTERPRETER_314)) {
		/* The frame an eval call starts with: the frame recorded before it was that call's first. */
		if (n)
			w->stack.frames[(n - 1) & (INTERP_MAX_FRAMES - 1)].instr |= INTERP_FRAME_ENTRY;
		return 0;
	}
	if (n >= INTERP_MAX_FRAMES)
		return py_walk_end(w, INTERP_WALK_DEPTH);
	if (!code || bpf_probe_read_user(&line, sizeof(line), (void *)(code + w->off.code_firstlineno)))
		return py_walk_end(w, INTERP_WALK_FAULT);
	instr = w->off.frames == PY_FRAMES_310 || w->off.frames == PY_FRAMES_38
			? buf_u32(w, w->off.frame_instr)
			: (__u32)(buf_u64(w, w->off.frame_instr) - code);
	instr &= ~INTERP_FRAME_ENTRY;
	/* 3.8-3.10: every frame is an eval call of its own; 3.11: is_entry says. */
	if (w->off.frames != PY_FRAMES_312 && w->off.frames != PY_FRAMES_314 && entry)
		instr |= INTERP_FRAME_ENTRY;
	f = &w->stack.frames[n & (INTERP_MAX_FRAMES - 1)];
	f->code = code;
	f->instr = instr;
	f->firstlineno = line;
	w->stack.n = n + 1;
	w->hash = (w->hash ^ code) * 0x9e3779b97f4a7c15ull;
	w->hash = (w->hash ^ ((__u64)instr << 32 | line)) * 0x9e3779b97f4a7c15ull;
	w->hash ^= w->hash >> 29;
	return 0;
}

/*
 * The sampled thread's Python frames into py_scratch, their hash into
 * key->interp_hash; nothing for a thread of a process that is not Python, or
 * runs no Python code.
 */
static __always_inline void walk_python(struct sample_key *key, struct sample_stats *st)
{
	struct python_process *p;
	struct py_walk *w;
	__u32 zero = 0, last;
	__u64 ts, frame;

	if (!runtime_on(RUNTIME_PYTHON) || !(p = bpf_map_lookup_elem(&python_procs, &key->tgid)) ||
	    p->gen != key->gen)
		return;
	st->v[STAT_PY(SAMPLES)]++;
	if (p->off.frames == PY_FRAMES_NONE) {
		st->v[STAT_PY(UNSUPPORTED)]++;
		return;
	}
	if (!(ts = thread_state(p, key->pid))) {
		st->v[STAT_PY(NO_THREAD)]++;
		return;
	}
	frame = read_u64(ts + p->off.tstate_frame);
	if (frame && p->off.cframe_current_frame != PY_NO_MEMBER)
		frame = read_u64(frame + p->off.cframe_current_frame);
	if (!frame || !(w = bpf_map_lookup_elem(&py_scratch, &zero))) {
		st->v[STAT_PY(NO_FRAME)]++;
		return;
	}
	w->off = p->off;
	last = w->off.frame_code;
	if (w->off.frame_previous > last)
		last = w->off.frame_previous;
	if (w->off.frame_instr > last)
		last = w->off.frame_instr;
	if (w->off.frame_entry != PY_NO_MEMBER && w->off.frame_entry > last)
		last = w->off.frame_entry;
	w->read_size = last + 8;
	w->frame = frame;
	w->end = INTERP_WALK_DEPTH;
	w->hash = 0x84222325cbf29ce4ull;
	w->stack.n = 0;
	bpf_loop(INTERP_MAX_FRAMES * 2, py_walk_step, NULL, 0);
	w->stack.end = w->end;
	w->stack.runtime = RUNTIME_PYTHON;
	w->stack.state = 0;
	if (!w->stack.n) {
		st->v[STAT_PY(NO_FRAME)]++;
		return;
	}
	st->v[STAT_PY(END) + (w->end < INTERP_WALK_END_MAX ? w->end : INTERP_WALK_FAULT)]++;
	key->interp_hash = (w->hash ^ w->end) ? w->hash ^ w->end : 1;
}

/*
 * The sample's Python frames walked and stored; the fallback's cause, or
 * -1. A global function, so the verifier checks it once, not once for
 * every path of on_sample that reaches it (which cost 60 ms at each load).
 */
__noinline int python_sample(struct sample_key *key, __u32 set, struct sample_stats *st)
{
	struct py_walk *w;
	__u32 zero = 0;
	int cause = -1;

	if (!key || !st)
		return -1;
	walk_python(key, st);
	w = bpf_map_lookup_elem(&py_scratch, &zero);
	if (w)
		interp_store(set & 1, key, st, &cause, &python_notices, &w->stack);
	return cause;
}

#endif
