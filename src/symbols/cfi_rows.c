// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A file's unwind table for the BPF program, from its CFI: each FDE's CFA
 * program run once from start to end, a row emitted whenever the location
 * advances, mapped to struct unwind_row (x86-64: rules for the CFA, rbp and
 * the return address; everything else has a fixed answer or none).
 */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bpfprof/cfi_rows.h"
#include "bpfprof/elf.h"
#include "bpfprof/util.h"
#include "cfi_read.h"

/* x86-64 DWARF register numbers. */
enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

/* remember_state's stack: GCC nests two at most. */
#define MAX_REMEMBER 16
/* Executable segments looked at (each FDE against all): the kernel loads none with 74 headers. */
#define MAX_SEGMENTS 128

/* Rules, and the DWARF expressions in them the row format can express --- */

/* A DWARF expression, recognised from its bytes. */
struct expr {
	enum { EXPR_OTHER, EXPR_BREG, EXPR_BREG_DEREF, EXPR_PLT } kind;
	uint8_t reg, k;			/* bregN; EXPR_PLT: the threshold litK */
	int64_t off;			/* bregN's offset */
};

/*
 * breg N; breg N, deref; and the PLT stubs' breg7 N; breg16 0; lit15;
 * and; litK; ge; lit3; shl; plus: rsp + N, plus 8 once (pc & 15) >= K.
 */
static struct expr classify(const uint8_t *p, uint64_t len)
{
	static const uint8_t plt[] = { DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
				       DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };
	struct cursor c = { p, p + len, false };
	struct expr e = { EXPR_OTHER };
	uint8_t ops[ARRAY_SIZE(plt)];
	int64_t args[ARRAY_SIZE(plt)];
	size_t n = 0, i;

	while (c.p < c.end) {
		uint8_t op = *c.p++;

		if (n == ARRAY_SIZE(ops))
			return e;
		args[n] = 0;
		if (op >= DW_OP_breg0 && op <= DW_OP_breg31)
			args[n] = sleb(&c);
		else if (!(op >= DW_OP_lit0 && op <= DW_OP_lit31) && op != DW_OP_deref &&
			 op != DW_OP_and && op != DW_OP_ge && op != DW_OP_shl && op != DW_OP_plus)
			return e;
		ops[n++] = op;
	}
	if (c.bad || !n || ops[0] < DW_OP_breg0 || ops[0] > DW_OP_breg31)
		return e;
	e.reg = ops[0] - DW_OP_breg0;
	e.off = args[0];
	if (n == 1) {
		e.kind = EXPR_BREG;
	} else if (n == 2 && ops[1] == DW_OP_deref) {
		e.kind = EXPR_BREG_DEREF;
	} else if (n == ARRAY_SIZE(plt) && !args[1] && ops[4] >= DW_OP_lit0 &&
		   ops[4] <= DW_OP_lit31) {
		for (i = 0; i < n && (i == 4 || ops[i] == plt[i]); i++)
			;
		if (i == n) {
			e.kind = EXPR_PLT;
			e.k = ops[4] - DW_OP_lit0;
		}
	}
	return e;
}

/* A register's rule: only rbp's and the return address's matter. */
struct rule {
	enum { RULE_UNSET, RULE_UNDEFINED, RULE_SAME, RULE_OFFSET, RULE_EXPR, RULE_OTHER } how;
	int64_t off;			/* RULE_OFFSET: saved at CFA + off */
	struct expr e;			/* RULE_EXPR: saved at the address it computes */
};

/* The rules of one row. As readelf and libgcc have it, remember_state saves the CFA's too. */
struct state {
	enum { CFA_UNSET, CFA_REG, CFA_EXPR } cfa_how;
	uint64_t cfa_reg;
	int64_t cfa_off;		/* kept under an expression, for def_cfa_register */
	struct expr cfa_expr;
	struct rule rbp, ra;
};

struct cie {
	size_t offset;			/* in its section */
	bool ok;			/* parsed, and its initial instructions too */
	bool has_z, signal;		/* augmentation data in its FDEs; 'S': a signal frame */
	uint8_t fde_enc;		/* DW_EH_PE_* of its FDEs' addresses */
	uint64_t caf, ra_reg;		/* code alignment factor, return address column */
	int64_t daf;			/* data alignment factor */
	struct state initial;		/* after its initial instructions: DW_CFA_restore's */
	struct cursor insns;		/* those instructions, for an FDE's first row */
};

/*
 * An FDE used, in file offsets (below 2^32); its rows are pieces[first,
 * first + n), each up to the next, the last up to end.
 */
struct fde {
	uint64_t start, end;
	uint32_t seq;			/* in the order FDEs were read: the tie-break */
	size_t first, n;
};

/* An executable PT_LOAD segment. */
struct segment {
	uint64_t vaddr, offset, filesz;
};

struct builder {
	struct cfi_rows *out;
	struct segment *segs;
	size_t nsegs;
	struct cie *cies;		/* the section's, by offset */
	size_t ncies, cies_alloc;
	struct unwind_row *pieces;
	size_t npieces, pieces_alloc;
	/* FDEs used; the earlier sections' ncover first, sorted (cover_max: the largest end yet). */
	struct fde *fdes;
	size_t nfdes, fdes_alloc, ncover;
	uint64_t *cover_max;
};

/* The row a state makes ---------------------------------------------------- */

/* off in 8-byte units within [min, max]. */
static bool units(int64_t off, int64_t min, int64_t max, int64_t *out)
{
	if (off % 8 || off / 8 < min || off / 8 > max)
		return false;
	*out = off / 8;
	return true;
}

static bool is_breg(const struct rule *r, unsigned reg, int64_t off)
{
	return r->how == RULE_EXPR && r->e.kind == EXPR_BREG && r->e.reg == reg && r->e.off == off;
}

/* glibc's __restore_rt: the interrupted registers in the ucontext at rsp. */
static bool is_signal_frame(const struct cie *cie, const struct state *st)
{
	return cie->signal && st->cfa_how == CFA_EXPR && st->cfa_expr.kind == EXPR_BREG_DEREF &&
	       st->cfa_expr.reg == REG_RSP && st->cfa_expr.off == SIGFRAME_RSP &&
	       is_breg(&st->ra, REG_RSP, SIGFRAME_RIP) && is_breg(&st->rbp, REG_RSP, SIGFRAME_RBP);
}

/* The row for st; ROW_CFA_NONE, all zero, where the format cannot express its rules. */
static struct unwind_row to_row(const struct cie *cie, const struct state *st)
{
	const struct expr *e = &st->cfa_expr;
	struct unwind_row r = { 0 };
	int64_t cfa_units, rbp_units = 0, off;
	unsigned cfa, rbp;

	if (cie->ra_reg != REG_RA)
		return r;
	if (st->ra.how == RULE_UNDEFINED) {
		r.rules = ROW_CFA_END;
		return r;
	}
	if (is_signal_frame(cie, st)) {
		r.rules = ROW_CFA_SIGNAL;
		return r;
	}
	if (st->ra.how != RULE_OFFSET || st->ra.off != -8)
		return r;
	if (st->cfa_how == CFA_REG && (st->cfa_reg == REG_RSP || st->cfa_reg == REG_RBP)) {
		cfa = st->cfa_reg == REG_RSP ? ROW_CFA_RSP : ROW_CFA_RBP;
		off = st->cfa_off;
	} else if (st->cfa_how == CFA_EXPR && e->kind == EXPR_PLT) {
		cfa = ROW_CFA_PLT;
		off = e->off;
	} else if (st->cfa_how == CFA_EXPR && e->kind == EXPR_BREG_DEREF && e->reg == REG_RBP) {
		cfa = ROW_CFA_DEREF_RBP;
		off = e->off;
	} else {
		return r;
	}
	if (!units(off, INT16_MIN, INT16_MAX, &cfa_units))
		return r;
	switch (st->rbp.how) {
	case RULE_UNSET: case RULE_UNDEFINED: case RULE_SAME:
		rbp = ROW_RBP_SAME;
		break;
	case RULE_OFFSET:
		if (!units(st->rbp.off, INT8_MIN, INT8_MAX, &rbp_units))
			return r;
		rbp = ROW_RBP_AT_CFA;
		break;
	default:
		/*
		 * A realigned frame keeps the caller's rbp where its own rbp
		 * points; not once the CFA is back on rsp: after leave, at
		 * the ret, GCC's CFI still says so of the caller's rbp.
		 */
		if (cfa != ROW_CFA_DEREF_RBP || !is_breg(&st->rbp, REG_RBP, 0))
			return r;
		rbp = ROW_RBP_AT_RBP;
	}
	if (cfa == ROW_CFA_PLT) {
		/* rbp_off holds the threshold: a stub saves no rbp. */
		if (rbp != ROW_RBP_SAME)
			return r;
		rbp_units = e->k;
	}
	r.cfa_off = cfa_units;
	r.rbp_off = rbp_units;
	r.rules = cfa | rbp;
	return r;
}

/* The CFA program ------------------------------------------------------------ */

struct interp {
	struct builder *b;		/* NULL: a CIE's initial instructions */
	const struct section *s;
	const struct cie *cie;
	struct state st, stack[MAX_REMEMBER];
	struct rule ignored;		/* the other registers' */
	struct rule *head;		/* an FDE's first row alone: every register's rules */
	unsigned depth;
	uint64_t loc, end;		/* the row's start and the FDE's end, vaddrs */
	uint64_t seg_vaddr, seg_offset;	/* file offset = vaddr - seg_vaddr + seg_offset */
	bool done;			/* the location reached the FDE's end */
};

/* Ends the current row at to (within the FDE); the next starts there. */
static void move_to(struct interp *in, uint64_t to)
{
	struct builder *b = in->b;
	struct unwind_row *p;

	if (to > in->end)
		to = in->end;
	if (to > in->loc) {
		ALLOC_GROW(b->pieces, b->npieces + 1, b->pieces_alloc);
		p = &b->pieces[b->npieces++];
		*p = to_row(in->cie, &in->st);
		p->addr = in->loc - in->seg_vaddr + in->seg_offset;
		in->loc = to;
	}
	in->done = to == in->end;
}

static bool advance(struct interp *in, uint64_t delta)
{
	uint64_t to;

	if (in->head) {
		in->done = true;	/* the first row ends */
		return true;
	}
	if (!in->b)
		return false;	/* no location in a CIE */
	if (__builtin_mul_overflow(delta, in->cie->caf, &delta) ||
	    __builtin_add_overflow(in->loc, delta, &to))
		to = in->end;
	move_to(in, to);
	return true;
}

static struct rule *rule_of(struct interp *in, uint64_t reg)
{
	if (in->head)
		return reg < CFI_HEAD_REGS ? &in->head[reg] : &in->ignored;
	return reg == REG_RBP ? &in->st.rbp : reg == REG_RA ? &in->st.ra : &in->ignored;
}

static void set_rule(struct interp *in, uint64_t reg, int how, int64_t off)
{
	struct rule *r = rule_of(in, reg);

	r->how = how;
	r->off = off;
}

static void restore_rule(struct interp *in, uint64_t reg)
{
	static const struct rule unset;
	const struct rule *initial = !in->b ? &unset : reg == REG_RBP ? &in->cie->initial.rbp :
				     &in->cie->initial.ra;

	*rule_of(in, reg) = *initial;
}

/* An expression block at c: what it computes, if we know it. */
static struct expr read_expr(struct cursor *c)
{
	uint64_t len = uleb(c);
	struct expr e = { EXPR_OTHER };

	if (c->bad || len > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return e;
	}
	e = classify(c->p, len);
	c->p += len;
	return e;
}

/* A CFA rule's instruction; false if op is not one. */
static bool cfa_op(struct interp *in, struct cursor *c, uint8_t op)
{
	const struct cie *cie = in->cie;
	struct state *st = &in->st;

	switch (op) {
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
		st->cfa_how = CFA_REG;
		st->cfa_reg = uleb(c);
		st->cfa_off = op == DW_CFA_def_cfa ? (int64_t)uleb(c) : factored(sleb(c), cie->daf);
		return true;
	case DW_CFA_def_cfa_register:
		st->cfa_how = CFA_REG;
		st->cfa_reg = uleb(c);
		return true;
	case DW_CFA_def_cfa_offset:
		st->cfa_off = uleb(c);
		return true;
	case DW_CFA_def_cfa_offset_sf:
		st->cfa_off = factored(sleb(c), cie->daf);
		return true;
	case DW_CFA_def_cfa_expression:
		st->cfa_how = CFA_EXPR;
		st->cfa_expr = read_expr(c);
		return true;
	}
	return false;
}

/* A register rule's instruction (the extended forms); false if op is not one. */
static bool register_op(struct interp *in, struct cursor *c, uint8_t op)
{
	uint64_t reg;
	int64_t off;
	struct rule *r;

	switch (op) {
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
	case DW_CFA_GNU_negative_offset_extended:
		reg = uleb(c);
		off = op == DW_CFA_offset_extended_sf ? sleb(c) : (int64_t)uleb(c);
		off = factored(off, in->cie->daf);
		if (op == DW_CFA_GNU_negative_offset_extended)
			off = (int64_t)(0 - (uint64_t)off);
		set_rule(in, reg, RULE_OFFSET, off);
		return true;
	case DW_CFA_restore_extended:
		restore_rule(in, uleb(c));
		return true;
	case DW_CFA_undefined:
		set_rule(in, uleb(c), RULE_UNDEFINED, 0);
		return true;
	case DW_CFA_same_value:
		set_rule(in, uleb(c), RULE_SAME, 0);
		return true;
	case DW_CFA_register:
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
		reg = uleb(c);
		leb(c, op == DW_CFA_val_offset_sf);	/* the other register, or the offset */
		set_rule(in, reg, RULE_OTHER, 0);
		return true;
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		r = rule_of(in, uleb(c));
		r->e = read_expr(c);
		r->how = op == DW_CFA_expression ? RULE_EXPR : RULE_OTHER;
		return true;
	}
	return false;
}

/*
 * What a first row is read from: CFA and offset rules, and what ends it
 * (buildvm and GCC write nothing else there). Others fail the row.
 */
static bool head_follows(uint8_t op)
{
	if (op & 0xc0)
		return (op & 0xc0) != DW_CFA_restore;
	switch (op) {
	case DW_CFA_nop: case DW_CFA_GNU_args_size:
	case DW_CFA_set_loc: case DW_CFA_advance_loc1: case DW_CFA_advance_loc2:
	case DW_CFA_advance_loc4:
	case DW_CFA_def_cfa: case DW_CFA_def_cfa_sf: case DW_CFA_def_cfa_register:
	case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf:
	case DW_CFA_offset_extended: case DW_CFA_offset_extended_sf:
		return true;
	}
	return false;
}

/* Runs the instructions at c; false if they are malformed. Stops at the FDE's end. */
static bool run(struct interp *in, struct cursor c)
{
	const struct cie *cie = in->cie;
	struct state *st = &in->st;

	while (c.p < c.end && !in->done && !c.bad) {
		uint8_t op = *c.p++;
		uint64_t to;

		if (in->head && !head_follows(op))
			return false;
		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			if (!advance(in, op & 0x3f))
				return false;
			continue;
		case DW_CFA_offset:
			set_rule(in, op & 0x3f, RULE_OFFSET, factored(uleb(&c), cie->daf));
			continue;
		case DW_CFA_restore:
			restore_rule(in, op & 0x3f);
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
			break;
		case DW_CFA_GNU_args_size:
			uleb(&c);
			break;
		case DW_CFA_set_loc:
			if (in->head) {
				in->done = true;
				break;
			}
			to = in->s->addr + (c.p - in->s->data);	/* the field's vaddr */
			if (!in->b || !read_encoded(&c, cie->fde_enc, to, &to) || to < in->loc)
				return false;
			move_to(in, to);
			break;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
			to = read_le(&c, op == DW_CFA_advance_loc1 ? 1 :
					 op == DW_CFA_advance_loc2 ? 2 : 4);
			if (c.bad || !advance(in, to))
				return false;
			break;
		case DW_CFA_remember_state:
			if (in->depth == MAX_REMEMBER)
				return false;
			in->stack[in->depth++] = *st;
			break;
		case DW_CFA_restore_state:
			if (!in->depth)
				return false;
			*st = in->stack[--in->depth];
			break;
		default:
			/* Unknown: its operands' size too. */
			if (!cfa_op(in, &c, op) && !register_op(in, &c, op))
				return false;
		}
	}
	return !c.bad;
}

/* Sections and their entries ----------------------------------------------- */

/* The CIE in e; false if we cannot read it. */
static bool parse_cie(const struct section *s, struct entry *e, struct cie *cie)
{
	struct cursor *c = &e->c;
	struct interp in = { .cie = cie };
	const char *aug;
	unsigned version;
	size_t aug_len, i;

	memset(cie, 0, sizeof(*cie));
	cie->offset = e->off;
	version = read_le(c, 1);
	if (c->bad || (version != 1 && version != 3 && version != 4))
		return false;
	aug = (const char *)c->p;
	aug_len = strnlen(aug, c->end - c->p);
	if (aug_len == (size_t)(c->end - c->p))
		return false;
	c->p += aug_len + 1;
	if (!strcmp(aug, "eh"))
		read_le(c, 8);	/* GCC 2's exception table pointer */
	else if (aug_len && aug[0] != 'z')
		return false;	/* an augmentation we cannot skip */
	/* DWARF 4: address and segment selector sizes. */
	if (version == 4 && (read_le(c, 1) != 8 || read_le(c, 1) != 0))
		return false;
	cie->caf = uleb(c);
	cie->daf = sleb(c);
	cie->ra_reg = version == 1 ? read_le(c, 1) : uleb(c);
	cie->fde_enc = DW_EH_PE_absptr;
	cie->has_z = aug[0] == 'z';
	if (cie->has_z) {
		uint64_t len = uleb(c), v;
		struct cursor a = { c->p, c->p, false };
		uint8_t enc;

		if (c->bad || len > (uint64_t)(c->end - c->p))
			return false;
		a.end = c->p += len;
		/* Up to the first letter we do not know: its data is skipped with the rest. */
		for (i = 1; i < aug_len && strchr("RPLS", aug[i]); i++) {
			if (aug[i] == 'R')
				cie->fde_enc = read_le(&a, 1);
			else if (aug[i] == 'L')
				read_le(&a, 1);
			else if (aug[i] == 'S')
				cie->signal = true;
			else if ((enc = read_le(&a, 1)) != DW_EH_PE_omit &&
				 !read_encoded(&a, enc & ~DW_EH_PE_indirect, 0, &v))
				return false;	/* the personality: skipped, never followed */
		}
		if (a.bad)
			return false;
	}
	/* The FDEs' own addresses: never indirect, never omitted. */
	if (c->bad || (cie->fde_enc & DW_EH_PE_indirect) ||
	    ((cie->fde_enc & 0x70) != DW_EH_PE_absptr && (cie->fde_enc & 0x70) != DW_EH_PE_pcrel &&
	     (cie->fde_enc & 0x70) != DW_EH_PE_datarel))
		return false;
	cie->insns = *c;
	in.s = s;
	if (!run(&in, *c))
		return false;
	cie->initial = in.st;
	cie->ok = true;
	return true;
}

static int cie_cmp(const void *key, const void *elem)
{
	size_t off = *(const size_t *)key, at = ((const struct cie *)elem)->offset;

	return off < at ? -1 : off > at;
}

/*
 * The section's CIEs, each read once: an FDE may name any. Counts what is
 * malformed but FDEs: CIEs, entries too short for their id, a cut.
 */
static void read_cies(struct builder *b, const struct section *s)
{
	struct entry e;
	size_t off = 0;
	int rc;

	b->ncies = 0;
	while ((rc = read_entry(s, off, &e)) > 0) {
		if (e.c.bad) {
			b->out->stats.bad++;
		} else if (is_cie(s, &e)) {
			ALLOC_GROW(b->cies, b->ncies + 1, b->cies_alloc);
			if (!parse_cie(s, &e, &b->cies[b->ncies]))
				b->out->stats.bad++;
			b->ncies++;
		}
		off = e.next;
	}
	if (rc < 0)
		b->out->stats.bad++;
}

static const struct segment *segment_of(const struct builder *b, uint64_t vaddr)
{
	size_t i;

	for (i = 0; i < b->nsegs; i++)
		if (vaddr - b->segs[i].vaddr < b->segs[i].filesz)
			return &b->segs[i];
	return NULL;
}

/* Whether [start, end) meets an FDE of an earlier (better) section. */
static bool covered(const struct builder *b, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = b->ncover;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->fdes[mid].start < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && b->cover_max[lo - 1] > start;
}

/*
 * The FDE in e: its CIE, and its code's [*start, *end); e->c then at its
 * instructions. NULL if it is malformed.
 */
static const struct cie *fde_header(const struct builder *b, const struct section *s,
				    struct entry *e, uint64_t *start, uint64_t *end)
{
	struct cursor *c = &e->c;
	const struct cie *cie;
	size_t cie_off;
	uint64_t range;

	if (s->eh && e->id > e->id_off)
		return NULL;
	cie_off = s->eh ? e->id_off - e->id : e->id;
	cie = b->ncies ? bsearch(&cie_off, b->cies, b->ncies, sizeof(*b->cies), cie_cmp) : NULL;
	if (!cie || !cie->ok ||
	    !read_encoded(c, cie->fde_enc, s->addr + (c->p - s->data), start) ||
	    !read_encoded(c, cie->fde_enc & 0x0f, 0, &range) ||
	    __builtin_add_overflow(*start, range, end))
		return NULL;
	if (cie->has_z) {
		uint64_t len = uleb(c);

		if (c->bad || len > (uint64_t)(c->end - c->p))
			return NULL;
		c->p += len;
	}
	return cie;
}

/* The FDE in e: its rows into b->pieces, unless it is malformed (counted) or not ours to use. */
static void parse_fde(struct builder *b, const struct section *s, struct entry *e)
{
	struct interp in = { .b = b, .s = s };
	const struct segment *seg;
	size_t first = b->npieces, i;
	uint64_t start, end;

	if (!(in.cie = fde_header(b, s, e, &start, &end)))
		goto bad;
	/* Code in an executable segment, as far as the segment (and a row's offset) goes. */
	seg = segment_of(b, start);
	if (start == end || !seg || start - seg->vaddr + seg->offset > UINT32_MAX)
		return;
	if (end - seg->vaddr > seg->filesz)
		end = seg->vaddr + seg->filesz;
	if (end - seg->vaddr + seg->offset > (uint64_t)UINT32_MAX + 1)
		end = (uint64_t)UINT32_MAX + 1 - seg->offset + seg->vaddr;
	if (covered(b, start - seg->vaddr + seg->offset, end - seg->vaddr + seg->offset))
		return;
	in.st = in.cie->initial;
	in.loc = start;
	in.end = end;
	in.seg_vaddr = seg->vaddr;
	in.seg_offset = seg->offset;
	if (!run(&in, e->c)) {
		b->npieces = first;
		goto bad;
	}
	move_to(&in, end);
	for (i = first; i < b->npieces; i++) {
		b->out->stats.rows_in++;
		b->out->stats.unsupported += b->pieces[i].rules == ROW_CFA_NONE;
	}
	ALLOC_GROW(b->fdes, b->nfdes + 1, b->fdes_alloc);
	b->fdes[b->nfdes] = (struct fde){ start - seg->vaddr + seg->offset,
					  end - seg->vaddr + seg->offset, b->nfdes, first,
					  b->npieces - first };
	b->nfdes++;
	b->out->stats.fdes++;
	return;
bad:
	b->out->stats.bad++;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Reads one section's FDEs; then they cover what the next sections may not. */
static void read_section(struct builder *b, const struct section *s)
{
	struct entry e;
	size_t off = 0, i;

	read_cies(b, s);
	while (read_entry(s, off, &e) > 0) {
		if (!e.c.bad && !is_cie(s, &e))
			parse_fde(b, s, &e);
		off = e.next;
	}
	if (b->nfdes)
		qsort(b->fdes, b->nfdes, sizeof(*b->fdes), fde_cmp);
	b->cover_max = xrealloc(b->cover_max, (b->nfdes ? b->nfdes : 1) * sizeof(*b->cover_max));
	for (i = 0; i < b->nfdes; i++)
		b->cover_max[i] = i && b->cover_max[i - 1] > b->fdes[i].end ? b->cover_max[i - 1] :
									      b->fdes[i].end;
	b->ncover = b->nfdes;
}

/* An .eh_frame's FDEs and their first rows (cfi_fde_heads()) ---------------- */

/* The rules of an FDE's first row into h; row_ok false if they cannot be followed. */
static void first_row(const struct section *s, const struct cie *cie, struct cursor insns,
		      struct cfi_fde_head *h)
{
	struct rule rules[CFI_HEAD_REGS] = { 0 };
	struct interp in = { .s = s, .cie = cie, .head = rules };
	unsigned r;

	h->row_ok = run(&in, cie->insns) && run(&in, insns);
	h->cfa_reg = in.st.cfa_reg;
	h->cfa_off = in.st.cfa_off;
	h->other = in.ignored.how != RULE_UNSET;
	for (r = 0; r < CFI_HEAD_REGS; r++) {
		h->saved[r] = rules[r].how == RULE_OFFSET;
		h->saved_at[r] = rules[r].off;
	}
}

void cfi_fde_heads(const void *data, size_t size, uint64_t addr, cfi_fde_head_fn *fn, void *ctx)
{
	struct cfi_rows unused = { 0 };		/* what read_cies() counts */
	struct builder b = { .out = &unused };
	struct section s = { data, size, addr, true };
	const struct cie *cie;
	struct cfi_fde_head h;
	struct entry e;
	size_t off = 0;

	read_cies(&b, &s);
	while (read_entry(&s, off, &e) > 0) {
		if (!e.c.bad && !is_cie(&s, &e) &&
		    (cie = fde_header(&b, &s, &e, &h.start, &h.end))) {
			h.offset = off;
			h.next = e.next;
			first_row(&s, cie, e.c, &h);
			fn(ctx, &h);
		}
		off = e.next;
	}
	free(b.cies);
}

/* The table ------------------------------------------------------------------ */

/* Appends a row at addr, unless it says what the last one does. */
static void push_row(struct cfi_rows *t, uint64_t addr, struct unwind_row row)
{
	const struct unwind_row *last = t->nr ? &t->rows[t->nr - 1] : NULL;

	if (addr > UINT32_MAX || (last && last->cfa_off == row.cfa_off &&
				  last->rbp_off == row.rbp_off && last->rules == row.rules))
		return;
	row.addr = addr;
	ALLOC_GROW(t->rows, t->nr + 1, t->alloc);
	t->rows[t->nr++] = row;
}

/*
 * The rows in order of address, from the FDEs sorted by start (by
 * read_section()). Where FDEs overlap (never in a sane file) the one that
 * starts first wins, the one read first on a tie; where an FDE ends and
 * no other starts, a ROW_CFA_NONE row.
 */
static void finish(struct builder *b)
{
	static const struct unwind_row none;
	uint64_t covered_to = 0;
	bool any = false;
	size_t i, j;

	for (i = 0; i < b->nfdes; i++) {
		const struct fde *f = &b->fdes[i];

		for (j = f->first; j < f->first + f->n; j++) {
			const struct unwind_row *p = &b->pieces[j];
			uint64_t end = j + 1 < f->first + f->n ? p[1].addr : f->end;
			uint64_t start = any && p->addr < covered_to ? covered_to : p->addr;

			if (start >= end)
				continue;
			if (any && start > covered_to)
				push_row(b->out, covered_to, none);
			push_row(b->out, start, *p);
			covered_to = end;
			any = true;
		}
	}
	if (any)
		push_row(b->out, covered_to, none);
}

static void read_segments(struct builder *b, Elf *elf, size_t phnum)
{
	size_t i, alloc = 0;

	for (i = 0; i < phnum && b->nsegs < MAX_SEGMENTS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    !ph.p_filesz || ph.p_vaddr + ph.p_filesz < ph.p_vaddr ||
		    ph.p_offset + ph.p_filesz < ph.p_offset)
			continue;
		ALLOC_GROW(b->segs, b->nsegs + 1, alloc);
		b->segs[b->nsegs++] = (struct segment){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
	}
}

/* elf's .eh_frame and .debug_frame (or GNU's compressed .zdebug_frame), if it has them. */
static void find_sections(Elf *elf, Elf_Scn **eh, Elf_Scn **debug, bool *zdebug)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!*eh && !strcmp(name, ".eh_frame")) {
			*eh = scn;
		} else if (!*debug &&
			   (!strcmp(name, ".debug_frame") || !strcmp(name, ".zdebug_frame"))) {
			*debug = scn;
			*zdebug = name[1] == 'z';
		}
	}
}

/*
 * A section's bytes (NOBITS, empty or too big: none), inflated into
 * *owned if compressed; the caller frees *owned.
 */
static bool section_bytes(Elf_Scn *scn, bool zdebug, struct section *s, void **owned)
{
	struct cursor c;
	GElf_Shdr sh;
	Elf_Data *d;
	uint64_t size;
	uLongf len;

	*owned = NULL;
	if (!scn || !gelf_getshdr(scn, &sh) ||
	    !(d = elf_section_data(scn, CFI_MAX_SECTION_BYTES)) || !d->d_buf || !d->d_size)
		return false;
	s->data = d->d_buf;
	s->size = d->d_size;
	s->addr = sh.sh_addr;
	if (!(sh.sh_flags & SHF_COMPRESSED) && !zdebug)
		return true;
	c = (struct cursor){ s->data, s->data + s->size, false };
	if (sh.sh_flags & SHF_COMPRESSED) {
		/* Elf64_Chdr: type, reserved, size, alignment. */
		if (read_le(&c, 4) != ELFCOMPRESS_ZLIB)
			return false;
		read_le(&c, 4);
		size = read_le(&c, 8);
		read_le(&c, 8);
	} else {
		/* GNU's: "ZLIB", then the size, big-endian. */
		if (s->size < 12 || memcmp(s->data, "ZLIB", 4))
			return false;
		size = get_uint(s->data + 4, 8, true);
		c.p += 12;
	}
	if (c.bad || !size || size > CFI_MAX_SECTION_BYTES)
		return false;
	*owned = xmalloc(size);
	len = size;
	if (uncompress(*owned, &len, c.p, c.end - c.p) != Z_OK || len != size) {
		free(*owned);
		*owned = NULL;
		return false;
	}
	s->data = *owned;
	s->size = size;
	return true;
}

/* x86-64 code, 64-bit little-endian: the only registers the rows know. */
static bool is_x86_64(Elf *elf, GElf_Ehdr *eh)
{
	return elf_kind(elf) == ELF_K_ELF && gelf_getclass(elf) == ELFCLASS64 &&
	       gelf_getehdr(elf, eh) && eh->e_machine == EM_X86_64 &&
	       eh->e_ident[EI_DATA] == ELFDATA2LSB;
}

int cfi_rows_build(Elf *elf, Elf *debug, struct cfi_rows *out)
{
	struct builder b = { .out = out };
	/* In order of preference: .eh_frame, the file's .debug_frame, its debug file's. */
	Elf_Scn *scn[3] = { NULL, NULL, NULL }, *unused = NULL;
	bool zdebug[3] = { false, false, false };
	GElf_Ehdr eh;
	size_t phnum, i;

	memset(out, 0, sizeof(*out));
	if (!elf || !is_x86_64(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return -ENOEXEC;
	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	read_segments(&b, elf, phnum);
	find_sections(elf, &scn[0], &scn[1], &zdebug[1]);
	if (debug && is_x86_64(debug, &eh))
		find_sections(debug, &unused, &scn[2], &zdebug[2]);
	for (i = 0; i < ARRAY_SIZE(scn); i++) {
		struct section s = { .eh = i == 0 };
		void *owned;

		if (section_bytes(scn[i], zdebug[i], &s, &owned))
			read_section(&b, &s);
		free(owned);
	}
	finish(&b);
	free(b.segs);
	free(b.cies);
	free(b.pieces);
	free(b.fdes);
	free(b.cover_max);
	return 0;
}

void cfi_rows_free(struct cfi_rows *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct unwind_row *cfi_rows_find(const struct cfi_rows *t, uint32_t off)
{
	size_t lo = 0, hi = t->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].addr <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}
