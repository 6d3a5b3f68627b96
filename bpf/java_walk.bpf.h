/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * HotSpot's frames at a sample (java_frames.h), walked in Java's own
 * program with no agent in the JVM: the native walk stopped at a pc in the
 * code cache (java.bpf.h), and this walk goes on from its registers, a
 * Java frame at a time, back to the native walk when a frame returns to
 * native code (the call stub's caller, JavaCalls::call_helper), and again
 * at the next Java code below (Java called back from C).
 *
 * A frame's code blob is found from the code cache's segment map: a byte
 * per segment, 0 where a block starts, else how many segments to go back.
 * The blob's name says its kind (OpenTelemetry's profiler tells them the
 * same way): the template interpreter keeps a frame pointer, the Method*
 * and the bytecode pointer in slots below it (r13 holds the bytecode
 * pointer in the leaf); an nmethod's and a stub's caller is frame size
 * words up, or the frame pointer's where a frame keeps one.
 */
#ifndef BPFPROF_JAVA_WALK_BPF_H
#define BPFPROF_JAVA_WALK_BPF_H

#include "common.bpf.h"
#include "interp.bpf.h"
#include "java.bpf.h"
#include "maps.bpf.h"
#include "unwind.bpf.h"

/* Java <-> native changes a walk follows (Java, C, Java called back from C, ...). */
#define JAVA_HANDOVERS 6
/* Segment map steps back to a blob's start: 254 segments each (the longest blob seen, 9). */
#define JAVA_SEGMAP_STEPS 16
/* Words above an nmethod's frame where its return address may lie (async-profiler looks at 7). */
#define JAVA_RA_SLOTS 6
/* An interpreter frame's pointer lies this near its sp, or the frame is not one. */
#define JAVA_INTERP_SPAN (256 << 10)

/* The first 4 bytes of a blob's name: its kind, as in OpenTelemetry's profiler. */
#define JAVA_NAME_NMETHOD 0x74656d6e		/* "nmethod" */
#define JAVA_NAME_NATIVE 0x6974616e		/* "native nmethod" */
#define JAVA_NAME_INTERPRETER 0x65746e49	/* "Interpreter" */
#define JAVA_NAME_VTABLE 0x62617476		/* "vtable chunks" */

/* The template interpreter's frame (frame_x86.hpp, JDK 9 on): slots below its rbp. */
#define JAVA_INTERP_SENDER_SP (-1)
#define JAVA_INTERP_METHOD (-3)
#define JAVA_INTERP_BCP (-8)

struct java_walk {
	struct interp_stack stack;
	__u64 hash;
	__u32 end_why;		/* enum interp_walk_end, once the Java frames ended */
	bool cut;		/* the walk ended at a Java frame (no blob, a bad frame) */
	__u8 blob[JAVA_BLOB_READ + 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct java_walk);
	__uint(max_entries, 1);
} java_scratch SEC(".maps");

/*
 * What a pc's code blob says, kept by pc: a frame at a pc seen before
 * costs a lookup and one read (an nmethod's compile id, checked again: its
 * memory may be another's since), not the segment map, the blob's header
 * and its name.
 */
struct java_pc {
	__u32 tgid, gen;
	__u64 pc;
};

struct java_blob {
	__u64 blob, cb;		/* the blob, its code's begin */
	__u64 deopt;		/* an nmethod's deopt handler; 0: none */
	__u32 fs, fc;		/* its frame's size (bytes), and where its frame is complete */
	__u32 name;		/* its name's first 4 bytes: its kind */
	__u32 compile_id;	/* an nmethod's */
	__s32 orig_pc;		/* where a deoptimised frame keeps its pc, from sp */
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct java_pc);
	__type(value, struct java_blob);
	__uint(max_entries, 65536);
} java_blobs SEC(".maps");

static __always_inline __u64 java_read(__u64 addr)
{
	__u64 v;

	return bpf_probe_read_user(&v, sizeof(v), (void *)addr) ? 0 : v;
}

/* A field of the blob's header as read: off masked inside the buffer. */
static __always_inline __u64 blob_u64(const struct java_walk *jw, __u32 off)
{
	return *(const __u64 *)&jw->blob[off & (JAVA_BLOB_READ - 1)];
}

static __always_inline __u32 blob_u32(const struct java_walk *jw, __u32 off)
{
	return *(const __u32 *)&jw->blob[off & (JAVA_BLOB_READ - 1)];
}

/*
 * Where the code cache lies, from the JVM's statics: its bounds, and each
 * heap's memory and segment map. Read at the first sample that finds them
 * set (the JVM made them as it started); 0 until then.
 */
static __always_inline int java_read_code_cache(struct java_process *p)
{
	__u64 heaps, data, heap, lo, hi;
	__u32 len = 0, i, n = 0;

	lo = java_read(p->base + p->l.low_bound);
	hi = java_read(p->base + p->l.high_bound);
	heaps = java_read(p->base + p->l.code_heaps);
	if (!lo || hi <= lo || !heaps ||
	    bpf_probe_read_user(&len, sizeof(len), (void *)(heaps + p->l.array_len)))
		return 0;
	data = java_read(heaps + p->l.array_data);
	for (i = 0; i < JAVA_MAX_HEAPS && i < len && data; i++) {
		struct java_heap *h = &p->heaps[n & (JAVA_MAX_HEAPS - 1)];

		heap = java_read(data + i * 8);
		if (!heap)
			continue;
		h->lo = java_read(heap + p->l.heap_memory + p->l.vs_low_boundary);
		h->hi = java_read(heap + p->l.heap_memory + p->l.vs_high_boundary);
		h->segmap = java_read(heap + p->l.heap_segmap + p->l.vs_low_boundary);
		h->shift = 0;
		bpf_probe_read_user(&h->shift, sizeof(h->shift),
				    (void *)(heap + p->l.heap_log2_segment));
		if (h->lo && h->hi > h->lo && h->segmap && h->shift && h->shift < 16)
			n++;
	}
	if (!n)
		return 0;
	p->nr_heaps = n;
	p->lo = lo;
	p->hi = hi;
	return 1;
}

/*
 * The code blob holding pc, found from its heap's segment map: into *blob,
 * 1; 0 if pc is in no heap's used block. A global function: checked once.
 */
__noinline int java_blob_at(const struct java_process *p, __u64 pc, __u64 *blob)
{
	const struct java_heap *h = NULL;
	__u64 seg;
	__u32 i;
	__u8 tag = 0xff;

	if (!p || !blob)
		return 0;
	for (i = 0; i < JAVA_MAX_HEAPS; i++) {
		if (i < p->nr_heaps && pc >= p->heaps[i].lo && pc < p->heaps[i].hi) {
			h = &p->heaps[i];
			break;
		}
	}
	if (!h)
		return 0;
	seg = (pc - h->lo) >> (h->shift & 31);
	for (i = 0; i < JAVA_SEGMAP_STEPS; i++) {
		if (bpf_probe_read_user(&tag, 1, (void *)(h->segmap + seg)))
			return 0;
		/* 0: a block starts here; 0xff: the segment is free. */
		if (tag == 0 || tag == 0xff || tag > seg)
			break;
		seg -= tag;
	}
	if (tag)
		return 0;
	*blob = h->lo + (seg << (h->shift & 31)) + p->l.heap_block_size;
	return 1;
}

/*
 * The blob at w's pc into *b, kept or read (and then kept): 1; 0 if the pc
 * is in no blob.
 */
static __always_inline int java_blob_of(const struct java_process *p, const struct walk *w,
					struct java_walk *jw, struct java_blob *b)
{
	struct java_pc key = { .tgid = w->tgid, .gen = w->gen, .pc = w->pc };
	struct java_blob *kept = bpf_map_lookup_elem(&java_blobs, &key);
	__u32 id;

	if (kept) {
		*b = *kept;
		if ((b->name != JAVA_NAME_NMETHOD && b->name != JAVA_NAME_NATIVE) ||
		    (!bpf_probe_read_user(&id, sizeof(id), (void *)(b->blob + p->l.nmethod_compile_id)) &&
		     id == b->compile_id))
			return 1;
	}
	if (!java_blob_at(p, w->pc, &b->blob) ||
	    bpf_probe_read_user(jw->blob, JAVA_BLOB_READ, (void *)b->blob))
		return 0;
	b->name = 0;
	bpf_probe_read_user(&b->name, 4, (void *)blob_u64(jw, p->l.blob_name));
	b->fs = (blob_u32(jw, p->l.blob_frame_size) & 0xffff) * 8;
	b->fc = blob_u32(jw, p->l.blob_frame_complete) & 0xffff;
	b->cb = blob_u64(jw, p->l.blob_code_begin);
	if (p->l.code_offsets)
		b->cb = b->blob + (__u32)b->cb;
	b->compile_id = blob_u32(jw, p->l.nmethod_compile_id);
	b->orig_pc = (__s32)blob_u32(jw, p->l.nmethod_orig_pc);
	b->deopt = p->l.nmethod_deopt ? blob_u64(jw, p->l.nmethod_deopt) : 0;
	if (b->deopt && p->l.code_offsets)
		b->deopt = b->blob + (__u32)b->deopt;
	b->reserved = 0;
	bpf_map_update_elem(&java_blobs, &key, b, BPF_ANY);
	return 1;
}

static __always_inline void java_record(struct java_walk *jw, __u64 code, __u32 instr, __u32 check)
{
	__u32 n = jw->stack.n;
	struct interp_frame *fr = &jw->stack.frames[n & (INTERP_MAX_FRAMES - 1)];

	fr->code = code;
	fr->instr = instr;
	fr->firstlineno = check;
	jw->stack.n = n + 1;
	jw->hash = (jw->hash ^ code) * 0x9e3779b97f4a7c15ull;
	jw->hash = (jw->hash ^ instr) * 0x9e3779b97f4a7c15ull;
	jw->hash ^= jw->hash >> 29;
}

/* The Java frames end here, the walk with them: how, and why. */
static __always_inline long java_cut(struct java_walk *jw, struct walk *w, __u32 walk_how,
				     int stat)
{
	struct sample_stats *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&stats, &zero);
	if (st && stat >= 0)
		st->v[stat]++;
	jw->cut = true;
	jw->end_why = walk_how == WALK_DEPTH ? INTERP_WALK_DEPTH : INTERP_WALK_FAULT;
	w->how |= walk_how;
	return 1;
}

/*
 * An interpreted frame at w: its Method* and bytecode index recorded;
 * *kind, *code, *pos and *check for the record, and the caller's
 * registers; false if the frame pointer is not one.
 */
static __always_inline bool java_interpreted(const struct java_process *p, struct walk *w,
					     bool leaf, __u64 *code, __u32 *pos, __u32 *check,
					     __u64 *pc, __u64 *sp, __u64 *bp)
{
	__u64 slots[12], method, bcp, cm, start;

	/* Slots fp-80 .. fp+8: bcp at -8 words, Method* at -3, sender sp at -1, rbp, return address. */
	if (w->bp < w->sp || w->bp - w->sp > JAVA_INTERP_SPAN ||
	    bpf_probe_read_user(slots, sizeof(slots), (void *)(w->bp - 80)))
		return false;
	method = slots[10 + JAVA_INTERP_METHOD];
	bcp = leaf ? w->r13 : slots[10 + JAVA_INTERP_BCP];
	cm = method ? java_read(method + p->l.method_const_method) : 0;
	start = cm + p->l.const_method_size;
	*code = method;
	*pos = cm && bcp >= start && bcp - start < JAVA_BCI_NONE ? bcp - start : JAVA_BCI_NONE;
	*check = cm >> 3;
	*sp = slots[10 + JAVA_INTERP_SENDER_SP];
	*bp = slots[10];
	*pc = slots[11];
	return method != 0;
}

/* A ret at pc, or the pop rbp / poll before one: the leaf's frame is gone but for its return address. */
static __always_inline int java_epilogue(__u64 pc)
{
	__u8 code[14];
	__u32 i;

	if (bpf_probe_read_user(code, sizeof(code), (void *)(pc - 1)))
		return 0;
	if (code[1] == 0xc3)
		return 1;			/* ret */
	for (i = 2; i < sizeof(code); i++)
		if (code[i] == 0xc3)
			break;
	if (i == sizeof(code))
		return 0;
	if (code[1] == 0x5d)
		return 2;			/* pop rbp; ...; ret: rbp and the return address */
	if (code[1] == 0x41 && code[2] == 0x85 && code[3] == 0x02 && code[4] == 0xc3)
		return 1;			/* the safepoint poll's test before ret */
	if (code[1] == 0x0f && code[2] == 0x85 && code[7] == 0xc3)
		return 1;			/* a native wrapper's exception check before ret */
	if (code[0] == 0x5d || code[0] == 0xc9)
		return 1;			/* just after leave or pop rbp */
	return 0;
}

/* One Java frame at w, recorded, and w moved to its caller's registers; 1: stop. */
static long java_step(__u32 i, void *unused)
{
	__u64 cb, pc, sp, bp, code, words[JAVA_RA_SLOTS], fs;
	__u32 zero = 0, kind = JAVA_STUB, pos = 0, check = 0, fc, k;
	struct java_blob b;
	struct java_process *p;
	struct walked_stack *out;
	struct java_walk *jw;
	struct walk *w;
	bool leaf;
	int how = 0;

	out = bpf_map_lookup_elem(&walk_scratch, &zero);
	jw = bpf_map_lookup_elem(&java_scratch, &zero);
	if (!out || !jw)
		return 1;
	w = &out->w;
	p = bpf_map_lookup_elem(&java_procs, &w->tgid);
	if (!p)
		return java_cut(jw, w, WALK_FAULT, STAT_JAVA(NO_BLOB));
	/* Back in native code: the native walk goes on from here. */
	if (w->pc < p->lo || w->pc >= p->hi)
		return 1;
	if (w->n >= BPFPROF_MAX_DEPTH || jw->stack.n >= INTERP_MAX_FRAMES)
		return java_cut(jw, w, WALK_DEPTH, -1);
	if (!java_blob_of(p, w, jw, &b))
		return java_cut(jw, w, WALK_FAULT, STAT_JAVA(NO_BLOB));
	fs = b.fs;
	fc = b.fc;
	cb = b.cb;
	leaf = w->n == 1 && w->pc_exact;
	code = b.blob;
	pc = w->pc;
	sp = w->sp;
	bp = w->bp;
	switch (b.name) {
	case JAVA_NAME_INTERPRETER:
		kind = JAVA_INTERPRETED;
		if (!java_interpreted(p, w, leaf, &code, &pos, &check, &pc, &sp, &bp))
			return java_cut(jw, w, WALK_BAD, STAT_JAVA(BAD_FRAME));
		goto record;
	case JAVA_NAME_NMETHOD:
	case JAVA_NAME_NATIVE:
		kind = JAVA_COMPILED;
		check = b.compile_id;
		/* A frame deoptimised under its callee returns to the handler: its pc was kept. */
		if (b.deopt && pc == b.deopt) {
			__u64 orig = java_read(sp + b.orig_pc);

			if (orig >= cb && orig < b.blob + (1u << 24))
				pc = orig;
		}
		pos = pc >= cb ? (pc - cb) & JAVA_FRAME_POS_MASK : 0;
		if (pc < cb + fc) {
			/* In its prologue: rbp pushed in its last bytes, else only the return address. */
			how = pc + 4 >= cb + fc ? 2 : 1;
		} else if (leaf) {
			how = java_epilogue(pc);
		}
		if (!how && bp >= sp && bp < sp + fs + 48)
			how = 3;	/* rbp is in the frame: a frame pointer (-XX:+PreserveFramePointer, or a native wrapper) */
		break;
	case JAVA_NAME_VTABLE:
		how = 1;
		break;
	default:
		how = fs ? 0 : 3;
		break;
	}
	switch (how) {
	case 1:		/* the return address at sp */
		pc = java_read(sp);
		sp += 8;
		break;
	case 2:		/* rbp, then the return address */
		bp = java_read(sp);
		pc = java_read(sp + 8);
		sp += 16;
		break;
	case 3:		/* a frame pointer */
		if (bp < w->sp)
			return java_cut(jw, w, WALK_BAD, STAT_JAVA(BAD_FRAME));
		pc = java_read(bp + 8);
		/*
		 * A compiled method's caller is Java code or the call stub, in the
		 * code cache: a return address elsewhere says rbp was no frame
		 * pointer (C1 and C2 may keep anything there), so the frame size.
		 */
		if (kind != JAVA_COMPILED || (pc >= p->lo && pc < p->hi)) {
			sp = bp + 16;
			bp = java_read(bp);
			break;
		}
		bp = w->bp;
		/* fall through */
	default:	/* frame size words up, rbp and the return address below there */
		sp += fs;
		if (kind == JAVA_COMPILED) {
			/* Code may have pushed words beyond its frame size: the return address is the first into the code cache. */
			if (bpf_probe_read_user(words, sizeof(words), (void *)(sp - 8)))
				return java_cut(jw, w, WALK_FAULT, STAT_JAVA(BAD_FRAME));
			for (k = 0; k < JAVA_RA_SLOTS; k++) {
				if (words[k] >= p->lo && words[k] < p->hi)
					break;
				sp += 8;
			}
			if (k == JAVA_RA_SLOTS)
				return java_cut(jw, w, WALK_BAD, STAT_JAVA(BAD_FRAME));
		}
		pc = java_read(sp - 8);
		if (fs >= 16)
			bp = java_read(sp - 16);
		break;
	}
record:
	if (!pc || sp <= w->sp)
		return java_cut(jw, w, WALK_BAD, STAT_JAVA(BAD_FRAME));
	java_record(jw, code, JAVA_FRAME_KIND(kind) | JAVA_FRAME_AT(w->n - 1) | pos, check);
	/* Its caller's return address, as the native walk records one. */
	out->ips[w->n & BPFPROF_MAX_DEPTH] = pc;
	w->n++;
	w->hash = (w->hash ^ pc) * 0x9e3779b97f4a7c15ull;
	w->hash ^= w->hash >> 29;
	w->pc = pc;
	w->sp = sp;
	w->bp = bp;
	w->pc_exact = false;
	return 0;
}

/*
 * A process whose file's layout was not known when it was seen: known
 * now (userspace read it since)? If not, userspace is asked for it (an
 * empty notice), at this process's first sample and every 64th after.
 */
static __always_inline bool java_layout_known(struct java_process *p, const struct sample_key *key,
					      struct sample_stats *st)
{
	struct interp_notice *notice;
	struct java_file *f;

	f = bpf_map_lookup_elem(&java_files, &p->file);
	if (f && f->l.known) {
		p->l = f->l;
		p->version = f->version;
		p->known = 1;
		return true;
	}
	st->v[STAT_JAVA(UNKNOWN_VERSION)]++;
	if (p->asked++ & 63)
		return false;
	notice = bpf_ringbuf_reserve(&java_notices, sizeof(*notice), 0);
	if (!notice)
		return false;
	notice->tgid = key->tgid;
	notice->gen = key->gen;
	notice->stack.n = 0;
	notice->stack.runtime = RUNTIME_JAVA;
	bpf_ringbuf_submit(notice, 0);
	return false;
}

/*
 * The sample's walk, stopped at Java code (WALK_HANDED), taken on through
 * its Java frames and the native ones below, into walk_scratch; the Java
 * frames stored. The fallback's cause, or -1. Called for each sample of a
 * process with the runtime's program loaded (runtime_walks.bpf.h).
 */
__noinline int java_sample(struct sample_key *key, __u32 set, struct sample_stats *st)
{
	struct walked_stack *out;
	struct java_process *p;
	struct java_walk *jw;
	__u32 zero = 0, i, end;
	int cause = -1;

	if (!key || !st)
		return -1;
	p = bpf_map_lookup_elem(&java_procs, &key->tgid);
	out = bpf_map_lookup_elem(&walk_scratch, &zero);
	jw = bpf_map_lookup_elem(&java_scratch, &zero);
	if (!p || p->gen != key->gen || !out || !jw)
		return -1;
	if (!p->known && !java_layout_known(p, key, st))
		return -1;
	/* The code cache found, for the native walk to stop at from now on. */
	if (!p->nr_heaps && !java_read_code_cache(p)) {
		st->v[STAT_JAVA(NOT_READY)]++;
		return -1;
	}
	if (!(out->w.how & WALK_HANDED) || out->w.tgid != key->tgid)
		return -1;
	st->v[STAT_JAVA(SAMPLES)]++;
	jw->stack.n = 0;
	jw->hash = 0x84222325cbf29ce4ull;
	jw->cut = false;
	jw->end_why = INTERP_WALK_WHOLE;
	for (i = 0; i < JAVA_HANDOVERS; i++) {
		out->w.how &= ~WALK_HANDED;
		bpf_loop(INTERP_MAX_FRAMES, java_step, NULL, 0);
		if (jw->cut)
			break;
		bpf_loop(BPFPROF_MAX_DEPTH, walk_step, NULL, 0);
		if (!(out->w.how & WALK_HANDED))
			break;
	}
	if (out->w.how & WALK_HANDED) {
		out->w.how &= ~WALK_HANDED;
		out->w.how |= WALK_DEPTH;
	}
	if (!(out->w.how & WALK_END_MASK))
		out->w.how |= WALK_DEPTH;
	if (!jw->stack.n)
		return -1;
	end = out->w.how & WALK_END_MASK;
	if (!jw->cut)
		jw->end_why = end == WALK_OUTERMOST || end == WALK_FP_END ? INTERP_WALK_WHOLE :
			      end == WALK_DEPTH ? INTERP_WALK_DEPTH : INTERP_WALK_FAULT;
	end = jw->end_why < INTERP_WALK_END_MAX ? jw->end_why : INTERP_WALK_FAULT;
	/* The bound again, where the verifier sees it (the compiler moves C checks). */
	asm volatile("%[e] &= 3" : [e] "+r"(end));
	jw->stack.end = end;
	jw->stack.runtime = RUNTIME_JAVA;
	jw->stack.state = 0;
	st->v[STAT_JAVA(FRAMES)] += jw->stack.n;
	st->v[STAT_JAVA(END) + end]++;
	key->interp_hash = (jw->hash ^ end) ? jw->hash ^ end : 1;
	interp_store(set & 1, key, st, &cause, &java_notices, &jw->stack);
	return cause;
}

#endif
