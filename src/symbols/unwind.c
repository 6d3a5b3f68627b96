// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/unwind.h"
#include "bpfprof/util.h"

/* x86-64 DWARF register numbers: the only ones a copied stack lets us follow. */
enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

void unwinder_init(struct unwinder *u)
{
	memset(u, 0, sizeof(*u));
}

void unwinder_release(struct unwinder *u)
{
	uint32_t i;

	for (i = 0; i < u->nr_frames; i++)
		free(u->frames[i].frame);
	free(u->frames);
	itab_release(&u->index);
	memset(u, 0, sizeof(*u));
}

const char *unwind_end_name(enum unwind_end end)
{
	static const char *const names[] = {
		[UNWIND_COMPLETE] = "complete",
		[UNWIND_NO_CFI] = "no CFI",
		[UNWIND_NO_STACK] = "beyond the copied stack",
		[UNWIND_DEPTH] = "depth limit",
		[UNWIND_BAD] = "unfollowable rule",
	};

	return end < UNWIND_END_MAX ? names[end] : "?";
}

/* The registers of one frame, and which of them are known. */
struct state {
	uint64_t reg[17];
	uint32_t known;		/* bit per register */
	uint64_t cfa;
	bool has_cfa;
};

/* The copied stack: [base, base + size). */
struct memory {
	const uint8_t *bytes;
	uint64_t base;
	uint32_t size;
};

static bool read_word(const struct memory *mem, uint64_t addr, uint64_t *out)
{
	if (addr < mem->base || addr > mem->base + mem->size - 8 || mem->size < 8)
		return false;
	memcpy(out, mem->bytes + (addr - mem->base), 8);
	return true;
}

/*
 * Evaluates a DWARF expression from the CFI (a CFA rule, or where or what a
 * register is) on a small stack. What .eh_frame uses: register + offset,
 * the CFA, constants, arithmetic, comparisons (PLT stubs), dereferences
 * (signal frames). *is_value: the expression ends with DW_OP_stack_value.
 */
static bool evaluate(const Dwarf_Op *ops, size_t nops, const struct state *st,
		     const struct memory *mem, uint64_t *out, bool *is_value)
{
	uint64_t stack[16], a, b;
	size_t i, sp = 0;

	*is_value = false;
	for (i = 0; i < nops; i++) {
		uint8_t op = ops[i].atom;

		if (sp >= ARRAY_SIZE(stack) - 1)
			return false;
		if ((op >= DW_OP_breg0 && op <= DW_OP_breg31) || op == DW_OP_bregx) {
			uint64_t reg = op == DW_OP_bregx ? ops[i].number : (uint64_t)(op - DW_OP_breg0);
			int64_t off = op == DW_OP_bregx ? (int64_t)ops[i].number2 : (int64_t)ops[i].number;

			if (reg >= ARRAY_SIZE(st->reg) || !(st->known >> reg & 1))
				return false;
			stack[sp++] = st->reg[reg] + off;
		} else if ((op >= DW_OP_reg0 && op <= DW_OP_reg31) || op == DW_OP_regx) {
			/* "In register N": the value itself, not an address. */
			uint64_t reg = op == DW_OP_regx ? ops[i].number : (uint64_t)(op - DW_OP_reg0);

			if (reg >= ARRAY_SIZE(st->reg) || !(st->known >> reg & 1))
				return false;
			stack[sp++] = st->reg[reg];
			*is_value = true;
		} else if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			stack[sp++] = op - DW_OP_lit0;
		} else {
			switch (op) {
			case DW_OP_call_frame_cfa:
				if (!st->has_cfa)
					return false;
				stack[sp++] = st->cfa;
				break;
			case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u:
			case DW_OP_const8u: case DW_OP_constu:
			case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s:
			case DW_OP_const8s: case DW_OP_consts:
				stack[sp++] = ops[i].number;
				break;
			case DW_OP_plus_uconst:
				if (!sp)
					return false;
				stack[sp - 1] += ops[i].number;
				break;
			case DW_OP_deref:
				if (!sp || !read_word(mem, stack[sp - 1], &stack[sp - 1]))
					return false;
				break;
			case DW_OP_stack_value:
				*is_value = true;
				break;
			case DW_OP_plus: case DW_OP_minus: case DW_OP_and: case DW_OP_or:
			case DW_OP_shl: case DW_OP_shr: case DW_OP_ge: case DW_OP_gt:
			case DW_OP_le: case DW_OP_lt: case DW_OP_eq: case DW_OP_ne:
				if (sp < 2)
					return false;
				b = stack[--sp];
				a = stack[sp - 1];
				stack[sp - 1] = op == DW_OP_plus ? a + b : op == DW_OP_minus ? a - b :
						op == DW_OP_and ? a & b : op == DW_OP_or ? a | b :
						op == DW_OP_shl ? a << (b & 63) : op == DW_OP_shr ? a >> (b & 63) :
						op == DW_OP_ge ? (int64_t)a >= (int64_t)b :
						op == DW_OP_gt ? (int64_t)a > (int64_t)b :
						op == DW_OP_le ? (int64_t)a <= (int64_t)b :
						op == DW_OP_lt ? (int64_t)a < (int64_t)b :
						op == DW_OP_eq ? a == b : a != b;
				break;
			default:
				return false;
			}
		}
	}
	if (!sp)
		return false;
	*out = stack[sp - 1];
	return true;
}

static bool frame_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct cached_frame *a = &((const struct unwinder *)owner)->frames[idx], *b = key;

	return a->cfi == b->cfi && a->vaddr == b->vaddr;
}

static void decode_rule(Dwarf_Frame *frame, int reg, struct unwind_rule *r)
{
	if (dwarf_frame_register(frame, reg, r->mem, &r->ops, &r->nops))
		r->how = RULE_UNKNOWN;
	else if (!r->nops)
		r->how = r->ops ? RULE_UNDEFINED : RULE_SAME;
	else
		r->how = RULE_OPS;
	/* The entry is copied, and moves as the cache grows: mem is found again where it is. */
	if (r->ops == r->mem)
		r->ops = NULL;
}

/*
 * The CFI frame at vaddr, looked up and decoded once per code address;
 * NULL if the CFI has none. Valid until the next call.
 */
static const struct cached_frame *frame_at(struct unwinder *u, Dwarf_CFI *cfi, uint64_t vaddr)
{
	struct cached_frame key = { .cfi = cfi, .vaddr = vaddr };
	uint64_t h = hash_mix((uintptr_t)cfi, vaddr);
	uint32_t idx = itab_find(&u->index, h, frame_eq, u, &key);

	if (idx == ITAB_NONE) {
		if (dwarf_cfi_addrframe(cfi, vaddr, &key.frame))
			key.frame = NULL;
		if (key.frame) {
			key.ra_reg = dwarf_frame_info(key.frame, NULL, NULL, &key.signal);
			if (dwarf_frame_cfa(key.frame, &key.cfa_ops, &key.cfa_nops) || !key.cfa_nops)
				key.cfa_ops = NULL;
			decode_rule(key.frame, REG_RA, &key.ra);
			decode_rule(key.frame, REG_RBP, &key.rbp);
			decode_rule(key.frame, REG_RSP, &key.rsp);
		}
		ALLOC_GROW(u->frames, u->nr_frames + 1, u->frames_alloc);
		u->frames[u->nr_frames] = key;
		itab_insert(&u->index, h, idx = u->nr_frames++);
	}
	return u->frames[idx].frame ? &u->frames[idx] : NULL;
}

/* The frame at pc: from .eh_frame, else .debug_frame. Valid until the next lookup. */
static const struct cached_frame *lookup(struct unwinder *u, unwind_cfi_fn *cfi_at, void *ctx,
					 uint64_t pc)
{
	Dwarf_CFI *cfi[2] = { NULL, NULL };
	const struct cached_frame *frame = NULL;
	uint64_t vaddr;

	if (!cfi_at(ctx, pc, &vaddr, cfi))
		return NULL;
	if (cfi[0])
		frame = frame_at(u, cfi[0], vaddr);
	if (!frame && cfi[1])
		frame = frame_at(u, cfi[1], vaddr);
	return frame;
}

/* The caller's value of register reg under its rule r; false if it cannot be known. */
static bool caller_register(const struct unwind_rule *r, int reg, const struct state *st,
			    const struct memory *mem, uint64_t *out)
{
	bool is_value;
	uint64_t v;

	switch (r->how) {
	case RULE_SAME:
		if (!(st->known >> reg & 1))
			return false;
		*out = st->reg[reg];
		return true;
	case RULE_OPS:
		if (!evaluate(r->ops ? r->ops : r->mem, r->nops, st, mem, &v, &is_value))
			return false;
		if (is_value) {
			*out = v;
			return true;
		}
		return read_word(mem, v, out);
	default:
		return false;
	}
}

uint32_t unwind_stack(struct unwinder *u, unwind_cfi_fn *cfi_at, void *ctx,
		      const struct unwind_regs *regs, const uint8_t *stack, uint32_t stack_bytes,
		      uint64_t *ips, uint32_t max, enum unwind_end *end)
{
	struct memory mem = { stack, regs->sp, stack_bytes };
	struct state st = { 0 };
	bool exact = true;	/* the leaf's pc, or a signal frame's: not a return address */
	uint32_t n = 0;

	st.reg[REG_RA] = regs->ip;
	st.reg[REG_RSP] = regs->sp;
	st.reg[REG_RBP] = regs->bp;
	st.known = 1u << REG_RA | 1u << REG_RSP | 1u << REG_RBP;
	*end = UNWIND_DEPTH;
	while (n < max) {
		/* A return address is just past its call: look up and name the call itself. */
		uint64_t pc = exact ? st.reg[REG_RA] : st.reg[REG_RA] - 1, ra, cfa, rbp, rsp;
		const struct cached_frame *frame;
		bool is_value;

		ips[n++] = pc;
		frame = lookup(u, cfi_at, ctx, pc);
		/*
		 * In a system call the leaf's pc is past the syscall instruction,
		 * which may end its function's CFI (__restore_rt's rt_sigreturn):
		 * the instruction itself has the same rule.
		 */
		if (!frame && n == 1 && regs->in_syscall)
			frame = lookup(u, cfi_at, ctx, pc - 1);
		if (!frame) {
			*end = UNWIND_NO_CFI;
			return n;
		}
		/*
		 * A signal trampoline (CFI augmentation 'S', libc's __restore_rt)
		 * was not called: the handler "returns" to its first byte, which
		 * names it; its CFI starts a byte earlier for lookups like ours.
		 */
		if (frame->signal && !exact)
			ips[n - 1] = pc + 1;
		if (!frame->cfa_ops || !evaluate(frame->cfa_ops, frame->cfa_nops, &st, &mem, &cfa, &is_value) ||
		    frame->ra_reg != REG_RA) {
			*end = UNWIND_BAD;
			return n;
		}
		st.cfa = cfa;
		st.has_cfa = true;
		/* No return address: the outermost frame (_start, clone's thread start). */
		if (frame->ra.how == RULE_UNDEFINED) {
			*end = UNWIND_COMPLETE;
			return n;
		}
		if (!caller_register(&frame->ra, REG_RA, &st, &mem, &ra)) {
			/* A return address beyond what was copied, or none at all. */
			*end = cfa + 8 > mem.base + mem.size ? UNWIND_NO_STACK : UNWIND_BAD;
			return n;
		}
		if (!ra) {
			*end = UNWIND_COMPLETE;
			return n;
		}
		if (cfa <= st.reg[REG_RSP] && !frame->signal) {
			*end = UNWIND_BAD;	/* the stack must grow up towards the callers */
			return n;
		}
		/*
		 * The caller's registers, all from this frame's: rsp is the CFA
		 * unless a rule says (a signal frame's context); rbp as its rule
		 * keeps it, else unknown.
		 */
		if (!caller_register(&frame->rsp, REG_RSP, &st, &mem, &rsp))
			rsp = cfa;
		if (caller_register(&frame->rbp, REG_RBP, &st, &mem, &rbp)) {
			st.reg[REG_RBP] = rbp;
			st.known |= 1u << REG_RBP;
		} else {
			st.known &= ~(1u << REG_RBP);
		}
		st.reg[REG_RSP] = rsp;
		st.reg[REG_RA] = ra;
		st.has_cfa = false;
		exact = frame->signal;
	}
	return n;
}
