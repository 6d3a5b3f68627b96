// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * CRuby's frames in userspace: which files hold a Ruby VM (told to the BPF
 * program, which walks the frames: bpf/ruby.bpf.h), the instruction
 * sequences and method entries of every Ruby stack named while their
 * process lives, and each sample's Ruby frames put in place of the VM's
 * native frame (vm_exec_core) that ran them.
 *
 * A Ruby frame is LABEL (FILE:FIRSTLINE) as Ruby's own backtrace labels it
 * ("alpha", "block in spin", "<main>"), FILE the script's path; pprof and
 * callgrind carry the line of the frame's pc, from the iseq's line table.
 * A C method is its owner's name and its own (Integer#times, Kernel.sleep
 * for a singleton's), above the native frames it runs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfprof/interp_names.h"
#include "bpfprof/ruby_file.h"
#include "bpfprof/runtime.h"
#include "bpfprof/ruby_merge.h"
#include "bpfprof/runtime_shared.h"
#include "bpfprof/util.h"

/* What names read alike in every version with a row; what differs is in pp->n (ruby_file.c). */
#define IMEMO_TYPE(flags)	(((flags) >> 12) & 7)
#define T_MASK			0x1f
#define T_STRING		0x05
#define T_ARRAY			0x07
#define T_IMEMO			0x1a
#define IMEMO_ISEQ		7
#define IMEMO_MENT		6
#define BODY_BYTES		0x98	/* what is read of an iseq's body: every offset below it */
#define BODY_ISEQ_SIZE		0x04
#define BODY_ISEQ_ENCODED	0x08
#define ME_DEF			0x10
#define ME_OWNER		0x20
#define DEF_ORIGINAL_ID		0x20
#define DEF_TYPE(word)		((word) & 0xf)	/* rb_method_type_t, the definition's first bits */
#define DEF_TYPE_CFUNC		1
#define DEF_CFUNC_FUNC		0x08	/* body.cfunc.func: the C function a C method runs */
#define EXT_IV_TBL		0x08	/* rb_classext_t's, when its class keeps its name as an ivar */
#define ST_ENTRIES_START	0x20	/* st_table: entries_start, entries_bound, entries */
#define ST_ENTRY_SIZE		24	/* st_table_entry: hash, key, record */
#define ST_ENTRIES_READ		64	/* a class's instance variables: a few */
#define FL_SINGLETON		(1u << 12)
#define ID_STATIC_LOCAL(serial)	((uint64_t)(serial) << 4 | 1)	/* a static local-scope ID */
#define STR_NOEMBED		0x2000
#define ARY_EMBED		0x2000
#define NAME_MAX_BYTES		256
#define PATH_MAX_BYTES		4096
#define ID_ENTRY_UNIT		512

/* An instruction sequence of a process, as read (or not) when a stack first showed it. */
struct rb_iseq {
	uint64_t addr;
	bool ok;
	char *label, *file;
	uint32_t first_lineno;
	uint64_t encoded;		/* its instructions: a frame's pc lies in them */
	uint32_t size;			/* in VALUEs */
	uint64_t insns_info, succ_table;
	uint32_t insns_size;
};

/* A frame's line: (iseq, pc bits) -> line, read once. */
struct rb_line {
	uint64_t iseq;
	uint32_t pc_bits, line;
};

/* A C method's entry, as read. */
struct rb_method {
	uint64_t me;
	char *name;		/* NULL: not readable */
	uint64_t func;		/* the C function it runs; 0: not known */
};

struct rb_proc {
	struct runtime_proc base;	/* first: runtime_procs holds it */
	bool known;
	struct ruby_process bpf;
	const struct ruby_names *n;	/* its version's row; set when known */
	struct rb_iseq *iseqs;
	uint32_t nr_iseqs, iseqs_alloc;
	struct itab iseq_index;
	struct rb_line *lines;
	uint32_t nr_lines, lines_alloc;
	struct itab line_index;
	struct rb_method *methods;
	uint32_t nr_methods, methods_alloc;
	struct itab method_index;
	/* The IDs a class's name is kept under (__classpath__, __attached__), once looked for. */
	bool class_ids_sought;
	uint64_t id_classpath, id_attached;
};

struct ruby_stats {
	uint32_t files, unknown_files;	/* files holding a Ruby VM; of them, of a version not read */
	uint64_t iseqs, iseq_errors;	/* instruction sequences named; not readable (freed, moved, gone) */
	uint64_t methods, method_errors;	/* C methods named; not readable */
	uint64_t merged;		/* samples whose Ruby frames were merged with native ones */
	uint64_t unmatched;		/* frames of VM entries not on the native stack: put at its root */
	uint64_t no_vm_frame;		/* samples whose native stack showed no VM: Ruby frames left out */
};

struct ruby {
	struct runtime_base b;	/* first; its files struct ruby_file, its processes struct rb_proc */
	struct ruby_stats stats;
};

/* Processes ------------------------------------------------------------------ */

static void release_proc(struct runtime_proc *p)
{
	struct rb_proc *pp = (struct rb_proc *)p;
	uint32_t i;

	for (i = 0; i < pp->nr_iseqs; i++) {
		free(pp->iseqs[i].label);
		free(pp->iseqs[i].file);
	}
	for (i = 0; i < pp->nr_methods; i++)
		free(pp->methods[i].name);
	free(pp->iseqs);
	free(pp->lines);
	free(pp->methods);
	itab_release(&pp->iseq_index);
	itab_release(&pp->line_index);
	itab_release(&pp->method_index);
}

static struct rb_proc *find_proc(const struct ruby *rb, uint32_t tgid)
{
	return (struct rb_proc *)runtime_procs_find(&rb->b.procs, tgid);
}

static struct rb_proc *get_proc(struct ruby *rb, uint32_t tgid, uint32_t gen)
{
	bool made;
	struct rb_proc *pp = (struct rb_proc *)runtime_procs_get(&rb->b.procs, tgid, gen, &made);

	if (made) {
		pp->known = !bpf_map_lookup_elem(rb->b.procs_fd, &tgid, &pp->bpf) && pp->bpf.known &&
			    (pp->n = ruby_names_of(pp->bpf.version));
	}
	return pp;
}

/* Reading Ruby's objects ------------------------------------------------------ */

static int read_u64(struct rb_proc *pp, uint64_t addr, uint64_t *v)
{
	return runtime_proc_read(pp, addr, v, sizeof(*v));
}

/* A String's bytes (at most max), NUL-terminated and malloc'd: 0 or -errno. */
static int read_string(struct rb_proc *pp, uint64_t str, size_t max, char **out)
{
	uint64_t head[4], len, ptr;
	char *s;
	int err;

	*out = NULL;
	if (!str || (str & 7))
		return -EINVAL;
	if ((err = runtime_proc_read(pp, str, head, sizeof(head))))
		return err;
	if ((head[0] & T_MASK) != T_STRING)
		return -EINVAL;
	if (head[0] & STR_NOEMBED) {
		len = head[2];
		ptr = head[3];
	} else {
		len = pp->n->str_len_at ? head[(pp->n->str_len_at / 8) & 3] : (head[0] >> 14) & 0x1f;
		ptr = str + pp->n->str_embed_at;
	}
	if (len > max)
		len = max;
	s = xmalloc(len + 1);
	if (len && (err = runtime_proc_read(pp, ptr, s, len))) {
		free(s);
		return err;
	}
	s[len] = '\0';
	*out = s;
	return 0;
}

/* An iseq's path: its pathobj, a String or an Array [path, realpath] (realpath taken when one). */
static int read_path(struct rb_proc *pp, uint64_t pathobj, char **out)
{
	uint64_t head[5], items[2];
	int err;

	if (!pathobj || (pathobj & 7))
		return -EINVAL;
	if ((err = runtime_proc_read(pp, pathobj, head, sizeof(head))))
		return err;
	if ((head[0] & T_MASK) == T_STRING)
		return read_string(pp, pathobj, PATH_MAX_BYTES, out);
	if ((head[0] & T_MASK) != T_ARRAY)
		return -EINVAL;
	if (head[0] & ARY_EMBED) {
		if (((head[0] >> 15) & pp->n->ary_embed_len_mask) < 2)
			return -EINVAL;
		items[0] = head[2];
		items[1] = head[3];
	} else if (head[2] < 2 || (err = runtime_proc_read(pp, head[4], items, sizeof(items)))) {
		return err ? err : -EINVAL;
	}
	if (!read_string(pp, items[1], PATH_MAX_BYTES, out))
		return 0;
	return read_string(pp, items[0], PATH_MAX_BYTES, out);
}

static bool iseq_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct rb_proc *)owner)->iseqs[idx].addr == *(const uint64_t *)key;
}

static struct rb_iseq *find_iseq(const struct rb_proc *pp, uint64_t addr)
{
	uint32_t idx = itab_find(&pp->iseq_index, hash_u64(addr), iseq_eq, pp, &addr);

	return idx == ITAB_NONE ? NULL : &pp->iseqs[idx];
}

/* Reads an instruction sequence: its label, file, first line and line table's place. */
static int read_iseq(struct rb_proc *pp, struct rb_iseq *q)
{
	const struct ruby_names *n = pp->n;
	uint64_t head[3], first, label, pathobj;
	uint8_t body[BODY_BYTES];
	int err;

	if (!q->addr || (q->addr & 7))
		return -EINVAL;
	if ((err = runtime_proc_read(pp, q->addr, head, sizeof(head))))
		return err;
	/* An imemo of the iseq kind: else freed and reused, or moved by the GC. */
	if ((head[0] & T_MASK) != T_IMEMO || IMEMO_TYPE(head[0]) != IMEMO_ISEQ)
		return -ESTALE;
	if ((err = runtime_proc_read(pp, head[2], body, sizeof(body))))
		return err;
	memcpy(&q->size, body + BODY_ISEQ_SIZE, 4);
	memcpy(&q->encoded, body + BODY_ISEQ_ENCODED, 8);
	memcpy(&first, body + n->body_first_lineno, 8);
	memcpy(&q->insns_info, body + n->body_insns_info, 8);
	memcpy(&q->insns_size, body + n->body_insns_size, 4);
	memcpy(&q->succ_table, body + n->body_succ_table, 8);
	if (n->first_lineno_fixnum)
		q->first_lineno = (first & 1) ? (uint32_t)(first >> 1) : 0;
	else
		q->first_lineno = (uint32_t)first > 0x7fffffff ? 0 : (uint32_t)first;
	memcpy(&label, body + n->body_label, 8);
	memcpy(&pathobj, body + n->body_pathobj, 8);
	if ((err = read_string(pp, label, NAME_MAX_BYTES, &q->label)))
		return err;
	if ((err = read_path(pp, pathobj, &q->file))) {
		free(q->label);
		q->label = NULL;
		return err;
	}
	return 0;
}

static struct rb_iseq *name_iseq(struct ruby *rb, struct rb_proc *pp, uint64_t addr)
{
	struct rb_iseq *q = find_iseq(pp, addr);

	if (q)
		return q;
	ALLOC_GROW(pp->iseqs, pp->nr_iseqs + 1, pp->iseqs_alloc);
	q = &pp->iseqs[pp->nr_iseqs];
	memset(q, 0, sizeof(*q));
	q->addr = addr;
	q->ok = pp->known && !read_iseq(pp, q);
	if (q->ok)
		rb->stats.iseqs++;
	else
		rb->stats.iseq_errors++;
	itab_insert(&pp->iseq_index, hash_u64(addr), pp->nr_iseqs++);
	return q;
}

/* The pc a frame's bits say, inside the iseq's instructions; 0 if not inside. */
static uint64_t frame_pc(const struct rb_iseq *q, uint32_t bits)
{
	uint64_t pc = (q->encoded & ~0xffffffffull) | ((uint64_t)(bits & RB_FRAME_PC_MASK) << 3);

	if (pc < q->encoded)
		pc += 1ull << 32;
	return pc >= q->encoded && pc <= q->encoded + (uint64_t)q->size * 8 ? pc : 0;
}

/*
 * The entry of the iseq's line table for instruction position pos, as
 * Ruby's succinct index finds it (iseq.c, succ_index_lookup): the rank of
 * pos among the positions where an entry starts.
 */
static int line_index(struct rb_proc *pp, const struct rb_iseq *q, uint32_t pos, uint32_t *idx)
{
	uint64_t imm[6], block[10];
	uint32_t rank, bi, s;
	int err;

	if (q->insns_size == 1) {
		*idx = 0;
		return 0;
	}
	if (pos < 54) {
		if ((err = runtime_proc_read(pp, q->succ_table, imm, sizeof(imm))))
			return err;
		rank = (imm[pos / 9] >> (7 * (pos % 9))) & 0x7f;
	} else {
		bi = (pos - 54) % 512;
		s = bi / 64;
		if ((err = runtime_proc_read(pp, q->succ_table + 48 + (uint64_t)((pos - 54) / 512) * 80,
					     block, sizeof(block))))
			return err;
		rank = (uint32_t)block[0] + (s ? (block[1] >> (9 * (s - 1))) & 0x1ff : 0) +
		       __builtin_popcountll(block[2 + s] << (63 - bi % 64));
	}
	if (!rank || rank > q->insns_size)
		return -EINVAL;
	*idx = rank - 1;
	return 0;
}

static bool line_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct rb_line *l = &((const struct rb_proc *)owner)->lines[idx], *k = key;

	return l->iseq == k->iseq && l->pc_bits == k->pc_bits;
}

static const struct rb_line *find_line(const struct rb_proc *pp, uint64_t iseq, uint32_t bits)
{
	struct rb_line k = { iseq, bits, 0 };
	uint32_t idx = itab_find(&pp->line_index, hash_mix(iseq, bits), line_eq, pp, &k);

	return idx == ITAB_NONE ? NULL : &pp->lines[idx];
}

/* The line of the frame at pc bits of iseq q (its first line when not known), read once. */
static void name_line(struct rb_proc *pp, const struct rb_iseq *q, uint32_t bits)
{
	struct rb_line *l;
	uint64_t pc;
	uint32_t pos, idx;
	int32_t line;

	if (find_line(pp, q->addr, bits))
		return;
	ALLOC_GROW(pp->lines, pp->nr_lines + 1, pp->lines_alloc);
	l = &pp->lines[pp->nr_lines];
	l->iseq = q->addr;
	l->pc_bits = bits;
	l->line = q->first_lineno;
	pc = frame_pc(q, bits);
	if (pc && q->insns_size && q->insns_info) {
		/* The pc is the next instruction's: the one running is before it. */
		pos = (pc - q->encoded) / 8;
		if (pos)
			pos--;
		if (!line_index(pp, q, pos, &idx) &&
		    !runtime_proc_read(pp, q->insns_info + (uint64_t)idx * pp->n->insn_info_size, &line, 4) &&
		    line > 0)
			l->line = line;
	}
	itab_insert(&pp->line_index, hash_mix(q->addr, bits), pp->nr_lines++);
}

static bool method_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct rb_proc *)owner)->methods[idx].me == *(const uint64_t *)key;
}

static const struct rb_method *find_method(const struct rb_proc *pp, uint64_t me)
{
	uint32_t idx = itab_find(&pp->method_index, hash_u64(me), method_eq, pp, &me);

	return idx == ITAB_NONE ? NULL : &pp->methods[idx];
}

/* An ID's name, from the symbol table: ids[serial / 512][serial % 512 * 2], a String. */
static int id_name(struct rb_proc *pp, uint64_t id, char **out)
{
	uint64_t table[3], serial, chunk, head[5], items, str;
	int err;

	serial = id > pp->bpf.last_op_id ? id >> 4 : id;
	if ((err = runtime_proc_read(pp, pp->bpf.symbols, table, sizeof(table))))
		return err;
	if (!serial || serial > (uint32_t)table[0])
		return -EINVAL;
	/* ids: an Array of Arrays of ID_ENTRY_UNIT (string, symbol) pairs. */
	if ((err = runtime_proc_read(pp, table[2], head, sizeof(head))))
		return err;
	if ((head[0] & T_MASK) != T_ARRAY)
		return -EINVAL;
	if (head[0] & ARY_EMBED) {
		if (serial / ID_ENTRY_UNIT >= ((head[0] >> 15) & pp->n->ary_embed_len_mask) ||
		    (err = read_u64(pp, table[2] + 16 + serial / ID_ENTRY_UNIT * 8, &chunk)))
			return err ? err : -EINVAL;
	} else {
		if (serial / ID_ENTRY_UNIT >= head[2] ||
		    (err = read_u64(pp, head[4] + serial / ID_ENTRY_UNIT * 8, &chunk)))
			return err ? err : -EINVAL;
	}
	if ((err = runtime_proc_read(pp, chunk, head, sizeof(head))))
		return err;
	if ((head[0] & T_MASK) != T_ARRAY || (head[0] & ARY_EMBED))
		return -EINVAL;
	items = head[4];
	if ((err = read_u64(pp, items + (serial % ID_ENTRY_UNIT) * 2 * 8, &str)))
		return err;
	return read_string(pp, str, NAME_MAX_BYTES, out);
}

/*
 * The IDs of __classpath__ and __attached__, the instance variables a
 * class's name and a singleton class's object are kept in: dynamic IDs,
 * looked for once a process among the symbol table's strings (both short
 * enough to be embedded: one read each).
 */
static void find_class_ids(struct rb_proc *pp)
{
	uint64_t table[3], head[5], *chunk = NULL, str[4];
	uint32_t last, c, i;

	pp->class_ids_sought = true;
	if (runtime_proc_read(pp, pp->bpf.symbols, table, sizeof(table)) ||
	    runtime_proc_read(pp, table[2], head, sizeof(head)) || (head[0] & T_MASK) != T_ARRAY ||
	    (head[0] & ARY_EMBED))
		return;
	last = (uint32_t)table[0];
	chunk = xmalloc(ID_ENTRY_UNIT * 2 * sizeof(*chunk));
	for (c = 0; c <= last / ID_ENTRY_UNIT && c < head[2]; c++) {
		uint64_t ptr, chead[5];

		if (read_u64(pp, head[4] + c * 8, &ptr) ||
		    runtime_proc_read(pp, ptr, chead, sizeof(chead)) || (chead[0] & T_MASK) != T_ARRAY ||
		    (chead[0] & ARY_EMBED) || chead[2] > ID_ENTRY_UNIT * 2 ||
		    runtime_proc_read(pp, chead[4], chunk, chead[2] * sizeof(*chunk)))
			continue;
		for (i = 0; i < chead[2] / 2; i++) {
			uint32_t serial = c * ID_ENTRY_UNIT + i, len;

			if (!serial || serial > last || !chunk[2 * i] || (chunk[2 * i] & 7) ||
			    runtime_proc_read(pp, chunk[2 * i], str, sizeof(str)) ||
			    (str[0] & T_MASK) != T_STRING || (str[0] & STR_NOEMBED))
				continue;
			len = (str[0] >> 14) & 0x1f;
			if (len == 13 && !memcmp(&str[2], "__classpath__", 13))
				pp->id_classpath = ID_STATIC_LOCAL(serial);
			else if (len == 12 && !memcmp(&str[2], "__attached__", 12))
				pp->id_attached = ID_STATIC_LOCAL(serial);
		}
		if (pp->id_classpath && pp->id_attached)
			break;
	}
	free(chunk);
}

/* The instance variable id of class klass (its ivar table, read whole): 0 if none. */
static uint64_t class_ivar(struct rb_proc *pp, uint64_t klass, uint64_t id)
{
	uint64_t ext, tbl, st[7], entries[ST_ENTRIES_READ * 3];
	uint64_t i, n;

	if (!id || read_u64(pp, klass + pp->n->class_ext, &ext) || read_u64(pp, ext + EXT_IV_TBL, &tbl) ||
	    !tbl || runtime_proc_read(pp, tbl, st, sizeof(st)))
		return 0;
	/* entries_start, entries_bound, entries */
	if (st[5] < st[4] || st[5] - st[4] > ST_ENTRIES_READ)
		return 0;
	n = st[5] - st[4];
	if (runtime_proc_read(pp, st[6] + st[4] * ST_ENTRY_SIZE, entries, n * ST_ENTRY_SIZE))
		return 0;
	for (i = 0; i < n; i++)
		if (entries[3 * i + 1] == id && entries[3 * i] != ~0ull)
			return entries[3 * i + 2];
	return 0;
}

/* A class's or module's name ("OpenSSL::Digest"), malloc'd; NULL if it has none. */
/* What a class keeps at the offset its version says (off), or as instance variable id. */
static uint64_t class_value(struct rb_proc *pp, uint64_t klass, uint16_t off, uint64_t id)
{
	uint64_t v = 0;

	if (!off)
		return class_ivar(pp, klass, id);
	return read_u64(pp, klass + off, &v) ? 0 : v;
}

static char *class_name(struct rb_proc *pp, uint64_t klass)
{
	uint64_t path = class_value(pp, klass, pp->n->class_path, pp->id_classpath);
	char *name = NULL;

	if (path)
		read_string(pp, path, NAME_MAX_BYTES, &name);
	return name;
}

/* "Owner#name", "Owner.name" for a singleton's method, or the name alone when the owner says none. */
static char *method_name(struct rb_proc *pp, uint64_t me, char *name)
{
	uint64_t owner, flags, attached;
	char *cls = NULL, *full;
	bool singleton;

	if (!pp->class_ids_sought && !pp->n->class_path)
		find_class_ids(pp);
	if (read_u64(pp, me + ME_OWNER, &owner) || !owner || (owner & 7) ||
	    read_u64(pp, owner, &flags))
		return name;
	singleton = flags & FL_SINGLETON;
	if (singleton &&
	    (attached = class_value(pp, owner, pp->n->class_attached, pp->id_attached)) &&
	    !(attached & 7))
		cls = class_name(pp, attached);
	else if (!singleton)
		cls = class_name(pp, owner);
	if (!cls)
		return name;
	full = xmalloc(strlen(cls) + strlen(name) + 2);
	sprintf(full, "%s%c%s", cls, singleton ? '.' : '#', name);
	free(cls);
	free(name);
	return full;
}

static void name_method(struct ruby *rb, struct rb_proc *pp, uint64_t me)
{
	struct rb_method *m;
	uint64_t head[2], def, id, def_head[2];

	if (find_method(pp, me))
		return;
	ALLOC_GROW(pp->methods, pp->nr_methods + 1, pp->methods_alloc);
	m = &pp->methods[pp->nr_methods];
	m->me = me;
	m->name = NULL;
	m->func = 0;
	/* A method entry (an imemo of that kind), its definition, the name it was defined with. */
	if (pp->known && !runtime_proc_read(pp, me, head, sizeof(head)) &&
	    (head[0] & T_MASK) == T_IMEMO && IMEMO_TYPE(head[0]) == IMEMO_MENT &&
	    !read_u64(pp, me + ME_DEF, &def) && def && !read_u64(pp, def + DEF_ORIGINAL_ID, &id) &&
	    !id_name(pp, id, &m->name)) {
		m->name = method_name(pp, me, m->name);
		if (!runtime_proc_read(pp, def, def_head, sizeof(def_head)) &&
		    DEF_TYPE(def_head[0]) == DEF_TYPE_CFUNC)
			m->func = def_head[DEF_CFUNC_FUNC / 8];
	}
	if (m->name)
		rb->stats.methods++;
	else
		rb->stats.method_errors++;
	itab_insert(&pp->method_index, hash_u64(me), pp->nr_methods++);
}

/* Notices ---------------------------------------------------------------------- */

/* A new stack: its iseqs, their lines and its methods read. */
static void stack_seen(struct ruby *rb, uint32_t tgid, uint32_t gen, const struct interp_stack *st)
{
	struct rb_proc *pp = get_proc(rb, tgid, gen);
	uint32_t i, n = st->n < INTERP_MAX_FRAMES ? st->n : INTERP_MAX_FRAMES;

	if (!pp->known)
		return;
	for (i = 0; i < n; i++) {
		const struct interp_frame *f = &st->frames[i];
		struct rb_iseq *q;

		if (f->instr & RB_FRAME_CFUNC) {
			name_method(rb, pp, f->code);
			continue;
		}
		q = name_iseq(rb, pp, f->code);
		if (q->ok)
			name_line(pp, q, f->instr & RB_FRAME_PC_MASK);
	}
}

static int on_notice(void *ctx, void *data, size_t size)
{
	const struct interp_notice *n = data;

	if (size >= sizeof(*n) && n->stack.n <= INTERP_MAX_FRAMES && n->stack.runtime == RUNTIME_RUBY)
		stack_seen(ctx, n->tgid, n->gen, &n->stack);
	return 0;
}

/* Files ---------------------------------------------------------------------- */

/* What the program is told of a process mapping file f at start (runtime_proc_fn). */
static void process_of(const void *file, uint64_t start, uint64_t offset, uint32_t gen, void *proc)
{
	const struct ruby_file *f = file;
	struct ruby_process *p = proc;

	p->vm_exec_lo = start - offset + f->vm_exec_lo_rel;
	p->vm_exec_hi = start - offset + f->vm_exec_hi_rel;
	p->vm_entry_lo = start - offset + f->vm_entry_lo_rel;
	p->vm_entry_hi = start - offset + f->vm_entry_hi_rel;
	p->ec_tls = f->ec_tls_rel ? start - offset + f->ec_tls_rel : 0;
	p->ec_tp_off = f->ec_tp_off;
	p->symbols = start - offset + f->symbols_rel;
	p->last_op_id = f->last_op_id;
	p->version = f->version;
	p->gc = f->gc;
	if (f->gc.vm_ptr)
		p->gc.vm_ptr = start - offset + f->gc.vm_ptr;
	p->gen = gen;
	p->known = f->known;
	p->l = f->l;
}

static bool file_opened(void *rt, const struct unwind_file_key *key, int fd, const char *path,
			const char *root)
{
	struct ruby *rb = rt;
	struct ruby_file f;

	(void)root;	/* everything it reads is in the file */
	if (runtime_files_find(&rb->b.files, key))
		return true;
	if (ruby_file_identify(fd, path, &f) != 1)
		return false;
	if (!f.known)
		warning("Ruby %u.%u in '%s': a version or build whose frames bpfprof cannot read (it "
			"reads CRuby 3.1 and 3.3, x86-64); its samples keep their native frames",
			f.version >> 8, f.version & 0xff, path);
	runtime_base_file_found(&rb->b, key, &f, path);
	rb->stats.files++;
	rb->stats.unknown_files += !f.known;
	return true;
}

/* Merging --------------------------------------------------------------------- */

/* The profile location of frame f: its iseq's, at its line; or its C method's. */
static uint32_t frame_location(struct profile *p, const struct rb_proc *pp,
			       const struct interp_frame *f)
{
	const struct rb_method *m;
	const struct rb_iseq *q;
	const struct rb_line *l;

	if (f->instr & RB_FRAME_CFUNC) {
		/* A C method: its name, a Ruby frame of no file. */
		m = find_method(pp, f->code);
		if (!m || !m->name)
			return profile_special_location(p, "[ruby: method not read]");
		return interp_location(p, RUNTIME_RUBY, interp_function(p, m->name, NULL, 0), 0);
	}
	q = find_iseq(pp, f->code);
	if (!q || !q->ok)
		return profile_special_location(p, "[ruby: iseq not read]");
	l = find_line(pp, q->addr, f->instr & RB_FRAME_PC_MASK);
	return interp_location(p, RUNTIME_RUBY, interp_function(p, q->label, q->file, q->first_lineno),
			       l ? l->line : q->first_lineno);
}

static bool in_range(const struct profile *p, uint32_t loc, uint64_t lo, uint64_t hi)
{
	const struct prof_location *l = &p->locations[loc];

	return l->kind == FRAME_USER && l->address >= lo && l->address < hi;
}

/*
 * Frame i is the VM's: vm_exec_core, or YJIT's code (in no file) that
 * rb_vm_exec called, which runs the entry's Ruby frames as the VM would.
 */
static bool in_vm(const struct profile *p, const struct ruby_process *vm, const uint32_t *frames,
		  uint32_t i, uint32_t n)
{
	return in_range(p, frames[i], vm->vm_exec_lo, vm->vm_exec_hi) ||
	       (i + 1 < n && runtime_frame_anonymous(p, frames[i]) &&
		in_range(p, frames[i + 1], vm->vm_entry_lo, vm->vm_entry_hi));
}

/*
 * An rb_vm_exec met before any vm_exec_core of its own: the sample caught
 * the VM entering, the entry's first frame pushed (a block rb_yield runs,
 * a method rb_funcall calls) and its code not run yet. It stands for that
 * entry when the newest frame left to place is an iseq's that begins one
 * (after vm_exec_core has returned, the entry's frames are gone and the
 * newest left is its caller's).
 */
static bool entering_vm(const struct profile *p, const struct ruby_process *vm,
			const struct raw_interp *rr, uint32_t g, uint32_t loc)
{
	uint32_t instr = rr->frames[g].instr;

	return (instr & INTERP_FRAME_ENTRY) && !(instr & RB_FRAME_CFUNC) &&
	       in_range(p, loc, vm->vm_entry_lo, vm->vm_entry_hi);
}

/*
 * A C method stands at its own native frame, so that one called from C (a
 * method calling another through rb_funcall) stands above its caller's C
 * frames: of the native frames from..to, the one nearest above the start
 * of the C function it runs. That one is its own when its frame is there:
 * any other function's addresses above that start lie past its end. None
 * within reach (a tail call, a sample taken before the call): UINT32_MAX.
 */
#define CFUNC_REACH	(64u << 10)

static uint32_t cfunc_frame(const struct profile *p, const uint32_t *frames, uint32_t from,
			    uint32_t to, uint64_t func)
{
	uint64_t nearest = CFUNC_REACH;
	uint32_t at = UINT32_MAX, i;

	for (i = from; i < to; i++) {
		const struct prof_location *l = &p->locations[frames[i]];

		if (l->kind == FRAME_USER && l->address >= func && l->address - func < nearest) {
			nearest = l->address - func;
			at = i;
		}
	}
	return at;
}

/*
 * Where each of the C methods at the top of the VM entry whose Ruby frames
 * begin at g stands among the native frames from..to (to: the entry's VM
 * frame): at[k - g], or UINT32_MAX to stand with the entry. Newer methods
 * stand nearer the leaf. Returns how many C methods head the entry.
 */
static uint32_t place_cfuncs(const struct profile *p, const struct merge_names *nm,
			     const struct raw_interp *rr, uint32_t g, uint32_t rn,
			     const uint32_t *frames, uint32_t from, uint32_t to, uint32_t *at)
{
	uint32_t k;

	for (k = g; k < rn && (rr->frames[k].instr & RB_FRAME_CFUNC) &&
		    !(rr->frames[k].instr & INTERP_FRAME_ENTRY); k++) {
		uint64_t func = nm->cfunc(nm->ctx, rr->frames[k].code);

		at[k - g] = func ? cfunc_frame(p, frames, from, to, func) : UINT32_MAX;
		if (at[k - g] != UINT32_MAX)
			from = at[k - g] + 1;
	}
	return k - g;
}

/* Ruby frame g into out[*m], "[ruby: gc]" (gc) before the newest when collecting; returns g. */
static uint32_t put(struct profile *p, const struct merge_names *nm, const struct raw_interp *rr,
		    uint32_t g, uint32_t gc, uint32_t *out, uint32_t *m)
{
	if (!g && gc)
		out[(*m)++] = gc;
	out[(*m)++] = nm->locate(nm->ctx, p, rr->frames, g, rr->n);
	return g;
}

/*
 * Frames from..to, between two entries into the VM with no C method
 * between, are the VM's own way from one to the next (a method defined by
 * define_method, a block run by the VM): frames of libruby with no name,
 * replaced as the VM's frame is. Any other (rb_yield, a C function of an
 * extension) is kept, and so are they all.
 */
static bool vm_helpers(const struct profile *p, const uint32_t *frames, uint32_t from, uint32_t to)
{
	uint32_t vm_mapping = p->locations[frames[to]].mapping, i;

	for (i = from; i < to; i++) {
		const struct prof_location *l = &p->locations[frames[i]];

		if (l->kind != FRAME_USER || l->nlines || l->label || l->mapping != vm_mapping)
			return false;
	}
	return vm_mapping != 0;
}

uint32_t ruby_merge_frames(struct profile *p, const struct ruby_process *vm,
			   const struct raw_interp *rr, const struct merge_names *nm,
			   const uint32_t *frames, uint32_t n, uint32_t *out, uint32_t max,
			   uint32_t *vms, uint32_t *unmatched)
{
	uint32_t m = 0, g = 0, i, v;
	uint32_t rn = rr->n < INTERP_MAX_FRAMES ? rr->n : INTERP_MAX_FRAMES;
	uint32_t at[INTERP_MAX_FRAMES], heads, first, k, gc, stop;

	*vms = *unmatched = 0;
	/* Collecting garbage: said above the newest Ruby frame, as the native GC frames are. */
	gc = rr->state == RB_VM_GC ? profile_special_location(p, "[ruby: gc]") : 0;
	for (i = 0; i < n && m < max; i = v + 1) {
		/* The native frames above the next VM frame v, and the C methods among them. */
		for (v = i; v < n && (g >= rn || !(in_vm(p, vm, frames, v, n) ||
						    entering_vm(p, vm, rr, g, frames[v]))); v++)
			;
		heads = v < n ? place_cfuncs(p, nm, rr, g, rn, frames, i, v, at) : 0;
		for (k = 0, stop = UINT32_MAX, first = UINT32_MAX; k < heads; k++)
			if (at[k] != UINT32_MAX) {
				first = first == UINT32_MAX ? k : first;
				stop = at[k] + 1;
			}
		/*
		 * C methods whose own frames are not there stand next to the
		 * nearest placed: newer ones at this stretch's leaf end, older
		 * ones with their callee. Below the method the VM called, the
		 * VM's call helpers are replaced, as the VM's frame is.
		 */
		if (stop == UINT32_MAX)
			stop = v, heads = 0;
		if (*vms && !heads && v < n && vm_helpers(p, frames, i, v))
			i = v;
		for (k = 0; k < first && k < heads && m + 1 < max; k++)
			put(p, nm, rr, g++, gc, out, &m);
		for (; i < stop && m < max; i++) {
			out[m++] = frames[i];
			for (k = 0; k < heads && at[k] != i; k++)
				;
			for (; k < heads && (at[k] == i || at[k] == UINT32_MAX) && m + 1 < max; k++)
				put(p, nm, rr, g++, gc, out, &m);
		}
		i = v;
		if (v >= n || m + 1 >= max)
			break;
		(*vms)++;
		/* The rest of this entry into the VM's frames, newest first, up to the one it began with. */
		while (g < rn && m + 1 < max)
			if (rr->frames[put(p, nm, rr, g++, gc, out, &m)].instr & INTERP_FRAME_ENTRY)
				break;
		/* rb_vm_exec, which entered vm_exec_core: the VM's too. */
		if (v + 1 < n && in_range(p, frames[v + 1], vm->vm_entry_lo, vm->vm_entry_hi))
			v++;
	}
	if (!*vms)
		return m;
	/* Frames whose VM entries the native stack does not show (cut short): at its root. */
	*unmatched = rn - g;
	for (; g < rn && m < max; g++)
		out[m++] = nm->locate(nm->ctx, p, rr->frames, g, rr->n);
	return m;
}

/* merge_names.locate: a frame of process ctx (a struct rb_proc). */
static uint32_t locate(void *ctx, struct profile *p, const struct interp_frame *frames, uint32_t g,
		       uint32_t n)
{
	(void)n;
	return frame_location(p, ctx, &frames[g]);
}

/* merge_names.cfunc: of process ctx. */
static uint64_t cfunc(void *ctx, uint64_t me)
{
	const struct rb_method *mt = find_method(ctx, me);

	return mt ? mt->func : 0;
}

static uint32_t merge(void *rt, struct profile *p, uint32_t tgid, const struct raw_interp *rr,
		      uint32_t *frames, uint32_t n, uint32_t max)
{
	struct ruby *rb = rt;
	uint32_t out[2 * BPFPROF_MAX_DEPTH + INTERP_MAX_FRAMES], m, vms, unmatched;
	struct merge_names nm = { .locate = locate, .cfunc = cfunc };
	const struct rb_proc *pp;

	pthread_mutex_lock(&rb->b.lock);
	pp = find_proc(rb, tgid);
	if (!pp || !pp->known) {
		pthread_mutex_unlock(&rb->b.lock);
		return n;
	}
	if (max > ARRAY_SIZE(out))
		max = ARRAY_SIZE(out);
	nm.ctx = (void *)pp;
	m = ruby_merge_frames(p, &pp->bpf, rr, &nm, frames, n, out, max, &vms, &unmatched);
	if (!vms) {
		/* No VM on the native stack: the thread runs no Ruby now, whatever its context says. */
		rb->stats.no_vm_frame++;
		pthread_mutex_unlock(&rb->b.lock);
		return n;
	}
	rb->stats.unmatched += unmatched;
	rb->stats.merged++;
	pthread_mutex_unlock(&rb->b.lock);
	memcpy(frames, out, m * sizeof(*out));
	return m;
}

/* The runtime interface (runtime.h) --------------------------------------------- */

static const struct runtime_info ruby_info = {
	.name = "ruby",
	.kind = RUNTIME_RUBY,
	.option = "ruby",
	.what = "Ruby",
	.frame_type = "ruby",
	.versions = "CRuby 3.1 and 3.3",
	.builds = "libruby a shared library (Debian's, `--enable-shared`), under YJIT too, in "
		  "`ruby` or embedded in another program; a `ruby` built static with its VM "
		  "(`--disable-shared`, ruby-build's default); a build that hides "
		  "`ruby_current_ec` while its `.symtab` is there, or stripped of it where exported "
		  "code gives them (Debian trixie's `ruby3.3`)",
	.not_read = "2.7, 3.0, 3.2, 3.4 and later; a build that hides its symbols, stripped of "
		    "`.symtab`, whose `rb_errinfo`, `rb_iseq_eval_main` or `rb_during_gc` are of "
		    "another shape (warned: \"cannot read\")",
	.layout = "a row by version (`ruby_api_version`) in `src/runtime/ruby_file.c`; the rest "
		  "from the file's code and relocations, no debug information needed",
	.tested = "`e2e/ruby`: Debian's 3.1, interpreted and under YJIT, and embedded in a C "
		  "program; trixie's `ruby3.3` (stripped) in the newer root; 3.3.8 built static "
		  "from Debian's source (`tests/tools/static_ruby.sh`); 3.3.8 built shared from its "
		  "release only with `RUBY_EXTRA` (not in `make test`)",
	/* Rose: Ruby's red, kept apart from the native reds by its blue. */
	.colour = { { 215, 40, 0 }, { 80, 50, 1 }, { 140, 50, 1 } },
};

static void *start(struct sampler *sampler, uint32_t (*gen)(void *ctx, uint32_t tgid), void *ctx)
{
	static const struct runtime_desc kind = {
		.what = "Ruby",
		.file_size = sizeof(struct ruby_file),
		.proc_size = sizeof(struct rb_proc),
		.release = release_proc,
		.process_of = process_of,
		.proc_value_size = sizeof(struct ruby_process),
		.on_notice = on_notice,
		.file_opened = file_opened,
		.runtime = RUNTIME_RUBY,
		.merge = merge,
	};
	struct runtime_maps m;

	sampler_runtime_maps(sampler, &ruby_info, &m);
	return runtime_base_new(sizeof(struct ruby), &kind, &m, gen, ctx);
}

static void rt_stats(void *rt, struct run_figures *f)
{
	struct ruby *rb = rt;

	pthread_mutex_lock(&rb->b.lock);
	*RUN_FIGURES_OF(f, RUNTIME_RUBY, struct ruby_stats) = rb->stats;
	pthread_mutex_unlock(&rb->b.lock);
}

/* Ruby processes: how many samples got their Ruby frames, and why others did not. */
static void summarize_ruby(const struct sampler_stats *st, const struct run_figures *f)
{
	const uint64_t *t = st->total, *end = &st->total[STAT_RB(END)];
	const struct ruby_stats *rb = RUN_FIGURES_OF(f, RUNTIME_RUBY, const struct ruby_stats);

	if (!(st->runtimes_on & 1u << RUNTIME_RUBY) || !t[STAT_RB(SAMPLES)])
		return;
	fprintf(stderr, "bpfprof: ruby: %llu samples of Ruby processes, %llu with their Ruby frames "
		"(cut: %llu at %u frames, %llu at an unreadable frame); without: %llu in a thread "
		"with no Ruby context, %llu with no frame, %llu of a version or build not read; %llu collecting "
		"garbage; %llu iseqs and %llu C methods named, %llu and %llu not readable\n",
		(unsigned long long)t[STAT_RB(SAMPLES)],
		(unsigned long long)(end[INTERP_WALK_WHOLE] + end[INTERP_WALK_DEPTH] + end[INTERP_WALK_FAULT]),
		(unsigned long long)end[INTERP_WALK_DEPTH], INTERP_MAX_FRAMES,
		(unsigned long long)end[INTERP_WALK_FAULT], (unsigned long long)t[STAT_RB(NO_EC)],
		(unsigned long long)t[STAT_RB(NO_FRAME)], (unsigned long long)t[STAT_RB(UNKNOWN_VERSION)],
		(unsigned long long)t[STAT_RB(GC)],
		(unsigned long long)rb->iseqs, (unsigned long long)rb->methods,
		(unsigned long long)rb->iseq_errors, (unsigned long long)rb->method_errors);
	debug("ruby: %u VM files (%u not read); %llu samples merged, %llu frames whose VM entry "
	      "the native stack did not show, %llu samples with no VM on it", rb->files,
	      rb->unknown_files, (unsigned long long)rb->merged, (unsigned long long)rb->unmatched,
	      (unsigned long long)rb->no_vm_frame);
}

const struct runtime_ops ruby_runtime = {
	.info = &ruby_info,
	.start = start,
	.file_opened = runtime_file_opened,
	.process_maps = runtime_process_maps,
	.take_notices = runtime_take_notices,
	.merge = runtime_merge,
	.after_drain = runtime_after_drain,
	.renumber = runtime_renumber_none,
	.stats = rt_stats,
	.summarize = summarize_ruby,
	.free = runtime_free,
};
