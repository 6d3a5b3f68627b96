// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * LuaJIT 2.1 prototypes (GCproto, GC64) named from another process's
 * memory: file and lines for a frame, and the name a call site gives the
 * function it calls, derived from the caller's bytecode and debug info as
 * LuaJIT's lj_debug_funcname does, so a profile names a frame as a Lua
 * traceback would. Nothing read is trusted: every size and pointer is
 * checked against the prototype's own allocation before it is used.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/luajit_proto.h"
#include "bpfprof/util.h"

/* GCproto members luajit_frames.h does not name (GC64). */
#define PT_GCT		0x09
#define PT_K		0x20	/* MRef: the number constants; GC constants below it */
#define PT_SIZEKGC	0x30
#define PT_SIZEPT	0x38	/* the whole allocation: header, bytecode, constants, debug */
#define PT_SIZEUV	0x3c
#define PT_UVINFO	0x58
#define PT_VARINFO	0x60
/* GCstr (GC64). */
#define STR_GCT		0x09
#define STR_LEN		0x14
#define STR_DATA	0x18
/* GC object types as a header's gct byte holds them (~LJ_T*: LJ_TSTR is ~4u). */
#define GCT_STR		4
#define GCT_PROTO	7
/* At most this much of a prototype's upvalue and variable names is read. */
#define DEBUG_MAX	(1u << 20)

/* What an opcode's A operand is, as far as naming a slot needs (lj_bc.h BCMode). */
enum { A_OTHER, A_DST, A_BASE };

/*
 * LuaJIT 2.1's opcodes in number order (lj_bc.h BCDEF), with their A
 * mode and the metamethod they can run (MM_call: a call). The names are
 * jit.vmdef's bcnames; the numbers were read from both Debian builds.
 */
static const struct bc_op {
	char name[7];
	uint8_t amode;
	const char *mm;
} ops[] = {
	{ "ISLT", A_OTHER, "lt" }, { "ISGE", A_OTHER, "lt" }, { "ISLE", A_OTHER, "le" },
	{ "ISGT", A_OTHER, "le" }, { "ISEQV", A_OTHER, "eq" }, { "ISNEV", A_OTHER, "eq" },
	{ "ISEQS", A_OTHER, "eq" }, { "ISNES", A_OTHER, "eq" }, { "ISEQN", A_OTHER, "eq" },
	{ "ISNEN", A_OTHER, "eq" }, { "ISEQP", A_OTHER, "eq" }, { "ISNEP", A_OTHER, "eq" },
	{ "ISTC", A_DST, NULL }, { "ISFC", A_DST, NULL }, { "IST", A_OTHER, NULL },
	{ "ISF", A_OTHER, NULL }, { "ISTYPE", A_OTHER, NULL }, { "ISNUM", A_OTHER, NULL },
	{ "MOV", A_DST, NULL }, { "NOT", A_DST, NULL }, { "UNM", A_DST, "unm" },
	{ "LEN", A_DST, "len" }, { "ADDVN", A_DST, "add" }, { "SUBVN", A_DST, "sub" },
	{ "MULVN", A_DST, "mul" }, { "DIVVN", A_DST, "div" }, { "MODVN", A_DST, "mod" },
	{ "ADDNV", A_DST, "add" }, { "SUBNV", A_DST, "sub" }, { "MULNV", A_DST, "mul" },
	{ "DIVNV", A_DST, "div" }, { "MODNV", A_DST, "mod" }, { "ADDVV", A_DST, "add" },
	{ "SUBVV", A_DST, "sub" }, { "MULVV", A_DST, "mul" }, { "DIVVV", A_DST, "div" },
	{ "MODVV", A_DST, "mod" }, { "POW", A_DST, "pow" }, { "CAT", A_DST, "concat" },
	{ "KSTR", A_DST, NULL }, { "KCDATA", A_DST, NULL }, { "KSHORT", A_DST, NULL },
	{ "KNUM", A_DST, NULL }, { "KPRI", A_DST, NULL }, { "KNIL", A_BASE, NULL },
	{ "UGET", A_DST, NULL }, { "USETV", A_OTHER, NULL }, { "USETS", A_OTHER, NULL },
	{ "USETN", A_OTHER, NULL }, { "USETP", A_OTHER, NULL }, { "UCLO", A_OTHER, NULL },
	{ "FNEW", A_DST, "gc" }, { "TNEW", A_DST, "gc" }, { "TDUP", A_DST, "gc" },
	{ "GGET", A_DST, "index" }, { "GSET", A_OTHER, "newindex" }, { "TGETV", A_DST, "index" },
	{ "TGETS", A_DST, "index" }, { "TGETB", A_DST, "index" }, { "TGETR", A_DST, "index" },
	{ "TSETV", A_OTHER, "newindex" }, { "TSETS", A_OTHER, "newindex" },
	{ "TSETB", A_OTHER, "newindex" }, { "TSETM", A_BASE, "newindex" },
	{ "TSETR", A_OTHER, "newindex" }, { "CALLM", A_BASE, "call" }, { "CALL", A_BASE, "call" },
	{ "CALLMT", A_BASE, "call" }, { "CALLT", A_BASE, "call" }, { "ITERC", A_BASE, "call" },
	{ "ITERN", A_BASE, "call" }, { "VARG", A_BASE, NULL }, { "ISNEXT", A_BASE, NULL },
	{ "RETM", A_BASE, NULL }, { "RET", A_OTHER, NULL }, { "RET0", A_OTHER, NULL },
	{ "RET1", A_OTHER, NULL }, { "FORI", A_BASE, NULL }, { "JFORI", A_BASE, NULL },
	{ "FORL", A_BASE, NULL }, { "IFORL", A_BASE, NULL }, { "JFORL", A_BASE, NULL },
	{ "ITERL", A_BASE, NULL }, { "IITERL", A_BASE, NULL }, { "JITERL", A_BASE, NULL },
	{ "LOOP", A_OTHER, NULL }, { "ILOOP", A_OTHER, NULL }, { "JLOOP", A_OTHER, NULL },
	{ "JMP", A_OTHER, NULL }, { "FUNCF", A_OTHER, NULL }, { "IFUNCF", A_OTHER, NULL },
	{ "JFUNCF", A_OTHER, NULL }, { "FUNCV", A_OTHER, NULL }, { "IFUNCV", A_OTHER, NULL },
	{ "JFUNCV", A_OTHER, NULL }, { "FUNCC", A_OTHER, NULL }, { "FUNCCW", A_OTHER, NULL },
};

_Static_assert(ARRAY_SIZE(ops) == 97, "LuaJIT 2.1 has 97 opcodes");

enum { OP_MOV = 18, OP_UGET = 45, OP_GGET = 54, OP_TGETS = 57, OP_ITERC = 69, OP_KNIL = 44,
       OP_FUNCF = 89, OP_JFUNCV = 94 };

#define bc_op(i) ((i) & 0xff)
#define bc_a(i) ((i) >> 8 & 0xff)
#define bc_b(i) ((i) >> 24)
#define bc_c(i) ((i) >> 16 & 0xff)
#define bc_d(i) ((i) >> 16)

/* The internal locals' names varinfo codes as bytes 1-6 (lj_debug.h VARNAMEDEF). */
static const char *const varname_fixed[] = {
	NULL, "(for index)", "(for limit)", "(for step)", "(for generator)", "(for state)",
	"(for control)",
};

int luajit_bc_op(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if (!strcmp(ops[i].name, name))
			return i;
	return -1;
}

/* A prototype's header, checked: the sizes and pointers the rest relies on. */
struct proto_head {
	uint64_t proto, end;		/* the allocation: [proto, end) */
	uint64_t bc_end;		/* the bytecode's end: constants and debug info follow */
	uint64_t k, chunkname, lineinfo, uvinfo, varinfo;
	uint32_t sizebc, sizekgc;
	int32_t firstline, numline;
	uint8_t sizeuv;
};

static bool gc_addr(uint64_t a)
{
	return a && a < (1ull << 47) && !(a & 7);
}

/* [addr, addr + len) inside the prototype, after its bytecode (where its debug info lives). */
static bool in_tail(const struct proto_head *h, uint64_t addr, uint64_t len)
{
	return addr >= h->bc_end && addr <= h->end && len <= h->end - addr;
}

static int read_head(interp_read_fn *read, void *ctx, uint64_t proto, struct proto_head *h)
{
	uint8_t b[LJ_PROTO_SIZE + 4];
	uint32_t sizept, ins;
	int err;

	if (!gc_addr(proto))
		return -EINVAL;
	if ((err = read(ctx, proto, b, sizeof(b))))
		return err;
	memset(h, 0, sizeof(*h));
	h->proto = proto;
	memcpy(&h->sizebc, b + LJ_PROTO_SIZEBC, 4);
	memcpy(&h->k, b + PT_K, 8);
	memcpy(&h->sizekgc, b + PT_SIZEKGC, 4);
	memcpy(&sizept, b + PT_SIZEPT, 4);
	h->sizeuv = b[PT_SIZEUV];
	memcpy(&h->chunkname, b + LJ_PROTO_CHUNKNAME, 8);
	memcpy(&h->firstline, b + LJ_PROTO_FIRSTLINE, 4);
	memcpy(&h->numline, b + LJ_PROTO_NUMLINE, 4);
	memcpy(&h->lineinfo, b + LJ_PROTO_LINEINFO, 8);
	memcpy(&h->uvinfo, b + PT_UVINFO, 8);
	memcpy(&h->varinfo, b + PT_VARINFO, 8);
	memcpy(&ins, b + LJ_PROTO_SIZE, 4);
	/* A function has a header and a return at least; its first instruction is the header. */
	if (b[PT_GCT] != GCT_PROTO || h->sizebc < 2 || h->sizebc > LUA_FRAME_POS_MASK ||
	    sizept > LJ_PROTO_MAX || sizept < LJ_PROTO_SIZE + 4ull * h->sizebc ||
	    bc_op(ins) < OP_FUNCF || bc_op(ins) > OP_JFUNCV ||
	    h->firstline < -1 || h->numline < 0)
		return -EINVAL;
	h->end = proto + sizept;
	h->bc_end = proto + LJ_PROTO_SIZE + 4ull * h->sizebc;
	/* The GC constants sit just below k, the numbers above it, all inside the prototype. */
	if (!in_tail(h, h->k, 0) || h->sizekgc > (h->k - h->bc_end) / 8 ||
	    (h->lineinfo && !in_tail(h, h->lineinfo, 0)) ||
	    (h->uvinfo && !in_tail(h, h->uvinfo, 0)) || (h->varinfo && !in_tail(h, h->varinfo, 0)))
		return -EINVAL;
	return 0;
}

/* The bytes of the GCstr at addr, at most max of them, NUL-terminated: 0 or -errno. */
static int read_str(interp_read_fn *read, void *ctx, uint64_t addr, size_t max, char **out,
		    size_t *len)
{
	uint8_t head[STR_DATA];
	uint32_t n;
	int err;

	if (!gc_addr(addr))
		return -EINVAL;
	if ((err = read(ctx, addr, head, sizeof(head))))
		return err;
	memcpy(&n, head + STR_LEN, 4);
	if (head[STR_GCT] != GCT_STR || n > INT32_MAX)
		return -EINVAL;
	if (n > max)
		n = max;
	*out = xmalloc(n + 1);
	if (n && (err = read(ctx, addr + STR_DATA, *out, n))) {
		free(*out);
		*out = NULL;
		return err;
	}
	(*out)[n] = '\0';
	*len = n;
	return 0;
}

/* The length of a valid UTF-8 sequence at s (of n bytes), or 0. */
static size_t utf8_len(const uint8_t *s, size_t n)
{
	size_t len, i;
	uint8_t lo = 0x80, hi = 0xbf;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	len = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	/* No overlong forms, surrogates or code points past U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* Appends n bytes of a Lua string as valid UTF-8 without control characters (U+FFFD for them). */
static void add_clean(struct strbuf *sb, const char *s, size_t n)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t i = 0, len;

	while (i < n) {
		len = p[i] < 0x20 || p[i] == 0x7f ? 0 : utf8_len(p + i, n - i);
		if (!len) {
			strbuf_add(sb, "\xef\xbf\xbd", 3);
			i++;
		} else {
			strbuf_add(sb, p + i, len);
			i += len;
		}
	}
}

char *luajit_chunk_file(const char *chunkname, bool builtin)
{
	/* LuaJIT's short_src: LUA_IDSIZE bytes, its lj_debug_shortname's cuts. */
	enum { IDSIZE = 60 };
	struct strbuf sb;
	size_t len;

	strbuf_init(&sb);
	if (chunkname[0] == '=') {
		len = strlen(chunkname + 1);
		add_clean(&sb, chunkname + 1, len < IDSIZE - 1 ? len : IDSIZE - 1);
	} else if (chunkname[0] == '@') {
		/* The whole path: LuaJIT cuts it to its last 56 bytes, a profile wants it all. */
		add_clean(&sb, chunkname + 1, strlen(chunkname + 1));
	} else {
		/* Source text: up to its first control character, cut to 45 bytes and "...". */
		for (len = 0; len < IDSIZE - 12; len++)
			if ((unsigned char)chunkname[len] < ' ')
				break;
		strbuf_addstr(&sb, builtin ? "[builtin:" : "[string \"");
		if (chunkname[len]) {
			add_clean(&sb, chunkname, len < IDSIZE - 15 ? len : IDSIZE - 15);
			strbuf_addstr(&sb, "...");
		} else {
			add_clean(&sb, chunkname, len);
		}
		strbuf_addstr(&sb, builtin ? "]" : "\"]");
	}
	return strbuf_detach(&sb);
}

int luajit_proto_read(interp_read_fn *read, void *ctx, uint64_t proto, struct lua_proto_info *out)
{
	struct proto_head h;
	size_t len;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = read_head(read, ctx, proto, &h)))
		return err;
	if ((err = read_str(read, ctx, h.chunkname, LJ_CHUNKNAME_MAX, &out->chunkname, &len)))
		return err;
	/* LuaJIT's own Lua-coded functions have firstline ~0 and no lines to show. */
	out->builtin = h.firstline == -1;
	out->firstline = out->builtin ? 0 : h.firstline;
	out->numline = h.numline;
	out->sizebc = h.sizebc;
	out->file = luajit_chunk_file(out->chunkname, out->builtin);
	out->line_width = h.numline < 256 ? 1 : h.numline < 65536 ? 2 : 4;
	if (h.lineinfo && !out->builtin) {
		/* One entry per position after the header. */
		size_t size = (size_t)(h.sizebc - 1) * out->line_width;

		if (!in_tail(&h, h.lineinfo, size)) {
			luajit_proto_release(out);
			return -EINVAL;
		}
		out->lineinfo = xmalloc(size);
		if ((err = read(ctx, h.lineinfo, out->lineinfo, size))) {
			luajit_proto_release(out);
			return err;
		}
	}
	return 0;
}

void luajit_proto_release(struct lua_proto_info *p)
{
	free(p->chunkname);
	free(p->file);
	free(p->lineinfo);
	memset(p, 0, sizeof(*p));
}

uint32_t luajit_proto_line(const struct lua_proto_info *p, uint32_t pos)
{
	uint32_t off;

	if (!p->lineinfo || pos == 0 || pos >= p->sizebc)
		return p->firstline;
	pos--;
	if (p->line_width == 1)
		off = ((const uint8_t *)p->lineinfo)[pos];
	else if (p->line_width == 2)
		off = ((const uint16_t *)p->lineinfo)[pos];
	else
		off = ((const uint32_t *)p->lineinfo)[pos];
	/* No instruction lies past the function's last line: a table saying so is not its own. */
	return off <= p->numline ? p->firstline + off : p->firstline;
}

/* A call site being named: the caller's header, bytecode up to the site, debug info read once. */
struct namer {
	interp_read_fn *read;
	void *ctx;
	struct proto_head h;
	uint32_t *bc;
	uint8_t *varinfo, *uvinfo;
	size_t varinfo_len, uvinfo_len;
	bool varinfo_read, uvinfo_read;
};

/* How a slot got its value (lj_debug_slotname's answers); negative: an errno. */
enum { SLOT_NONE, SLOT_LOCAL, SLOT_GLOBAL, SLOT_FIELD, SLOT_METHOD, SLOT_UPVALUE };

static int namer_read(struct namer *n, uint64_t addr, void *buf, size_t len)
{
	return n->read(n->ctx, addr, buf, len);
}

/* The debug info at addr, to the prototype's end or DEBUG_MAX bytes: 0 or -errno. */
static int read_debug(struct namer *n, uint64_t addr, uint8_t **buf, size_t *len, bool *done)
{
	size_t size;
	int err;

	if (*done)
		return 0;
	*done = true;
	if (!addr)
		return 0;
	size = n->h.end - addr;
	if (size > DEBUG_MAX)
		size = DEBUG_MAX;
	*buf = xmalloc(size ? size : 1);
	if ((err = namer_read(n, addr, *buf, size)))
		return err;
	*len = size;
	return 0;
}

/* LuaJIT's unsigned LEB128, in bounds: false at the buffer's end or past 32 bits. */
static bool uleb(const uint8_t *p, size_t len, size_t *i, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	do {
		if (*i >= len || shift > 28)
			return false;
		*v |= (uint64_t)(p[*i] & 0x7f) << shift;
		shift += 7;
	} while (p[(*i)++] & 0x80);
	return true;
}

/*
 * The name of the local in slot at position pos (lj_debug.c debug_varname):
 * varinfo lists variables by start, each a name (or a byte 1-6 for an
 * internal one), then its start (less the previous one's) and its length
 * in positions as ULEB128; the slot-th live one at pos is the slot's.
 */
static int varname(struct namer *n, uint32_t pos, uint32_t slot, struct strbuf *sb)
{
	uint64_t start = 0, span;
	size_t i = 0, name;
	uint8_t vn;
	int err;

	if ((err = read_debug(n, n->h.varinfo, &n->varinfo, &n->varinfo_len, &n->varinfo_read)))
		return err;
	for (;;) {
		if (i >= n->varinfo_len)
			return SLOT_NONE;
		name = i;
		vn = n->varinfo[i];
		if (vn == 0)
			return SLOT_NONE;
		if (vn >= ARRAY_SIZE(varname_fixed)) {
			while (i < n->varinfo_len && n->varinfo[i])
				i++;
		}
		i++;
		if (!uleb(n->varinfo, n->varinfo_len, &i, &span))
			return SLOT_NONE;
		start += span;
		if (start > pos)
			return SLOT_NONE;
		if (!uleb(n->varinfo, n->varinfo_len, &i, &span))
			return SLOT_NONE;
		if (pos < start + span && slot-- == 0)
			break;
	}
	if (vn < ARRAY_SIZE(varname_fixed))
		strbuf_addstr(sb, varname_fixed[vn]);
	else
		add_clean(sb, (const char *)n->varinfo + name,
			  strnlen((const char *)n->varinfo + name, LJ_NAME_MAX));
	return SLOT_LOCAL;
}

/* Upvalue idx's name: uvinfo is sizeuv NUL-terminated names. */
static int uvname(struct namer *n, uint32_t idx, struct strbuf *sb)
{
	size_t i = 0, len;
	int err;

	if (idx >= n->h.sizeuv)
		return SLOT_NONE;
	if ((err = read_debug(n, n->h.uvinfo, &n->uvinfo, &n->uvinfo_len, &n->uvinfo_read)))
		return err;
	for (; idx; idx--) {
		while (i < n->uvinfo_len && n->uvinfo[i])
			i++;
		i++;
	}
	if (i >= n->uvinfo_len)
		return SLOT_NONE;
	len = strnlen((const char *)n->uvinfo + i, n->uvinfo_len - i);
	if (!len || i + len >= n->uvinfo_len)
		return SLOT_NONE;
	add_clean(sb, (const char *)n->uvinfo + i, len < LJ_NAME_MAX ? len : LJ_NAME_MAX);
	return SLOT_UPVALUE;
}

/* GC constant idx (an operand's ~idx), which must be a string: 0 or -errno. */
static int kstr(struct namer *n, uint32_t idx, struct strbuf *sb)
{
	uint64_t ref, addr;
	size_t len;
	char *s;
	int err;

	if (idx >= n->h.sizekgc)
		return -EINVAL;
	addr = n->h.k - 8ull * (idx + 1);
	if ((err = namer_read(n, addr, &ref, 8)))
		return err;
	/* GC64 keeps GC constants as plain pointers. */
	if ((err = read_str(n->read, n->ctx, ref, LJ_NAME_MAX, &s, &len)))
		return err;
	add_clean(sb, s, len);
	free(s);
	return 0;
}

/* Field names of tables of tables are followed this deep ("a.b.c.f"). */
#define FIELD_DEPTH 4

/*
 * What put the value in slot at position pos (lj_debug_slotname): a
 * local's name, else the last instruction before pos that wrote the
 * slot; for a field, the table's own name where it can be told.
 */
static int slotname(struct namer *n, uint32_t pos, uint32_t slot, unsigned depth,
		    struct strbuf *sb)
{
	uint32_t ins, op, ra;
	size_t mark;
	int kind, err;

restart:
	if ((kind = varname(n, pos, slot, sb)))
		return kind;
	while (--pos > 0) {
		ins = n->bc[pos];
		op = bc_op(ins);
		ra = bc_a(ins);
		if (op >= ARRAY_SIZE(ops))
			return -EINVAL;
		if (ops[op].amode == A_BASE) {
			if (slot >= ra && (op != OP_KNIL || slot <= bc_d(ins)))
				return SLOT_NONE;
		} else if (ops[op].amode == A_DST && ra == slot) {
			switch (op) {
			case OP_MOV:
				slot = bc_d(ins);
				goto restart;
			case OP_GGET:
				return (err = kstr(n, bc_d(ins), sb)) ? err : SLOT_GLOBAL;
			case OP_TGETS: {
				/* A method call first copies the object to ra + 2 (FR2). */
				uint32_t prev = n->bc[pos - 1];
				bool method = bc_op(prev) == OP_MOV && bc_a(prev) == ra + 2 &&
					      bc_d(prev) == bc_b(ins);

				mark = sb->len;
				kind = depth < FIELD_DEPTH
					       ? slotname(n, pos, bc_b(ins), depth + 1, sb)
					       : SLOT_NONE;
				if (kind < 0)
					return kind;
				if (kind == SLOT_NONE || sb->len == mark)
					strbuf_setlen(sb, mark);
				else
					strbuf_addch(sb, method ? ':' : '.');
				return (err = kstr(n, bc_c(ins), sb)) ? err
				       : method ? SLOT_METHOD : SLOT_FIELD;
			}
			case OP_UGET:
				return uvname(n, bc_d(ins), sb);
			default:
				return SLOT_NONE;
			}
		}
	}
	return SLOT_NONE;
}

int luajit_call_name(interp_read_fn *read, void *ctx, uint64_t caller_proto, uint32_t pos,
		     char **name)
{
	struct namer n = { .read = read, .ctx = ctx };
	struct strbuf sb;
	uint32_t ins, slot;
	int err, kind = SLOT_NONE;

	*name = NULL;
	if (pos == LUA_NO_PC)
		return -ENOENT;
	if ((err = read_head(read, ctx, caller_proto, &n.h)))
		return err;
	if (pos == 0 || pos >= n.h.sizebc)
		return -EINVAL;
	n.bc = xmalloc(4ull * (pos + 1));
	if ((err = read(ctx, caller_proto + LJ_PROTO_SIZE, n.bc, 4ull * (pos + 1))))
		goto out;
	ins = n.bc[pos];
	strbuf_init(&sb);
	if (bc_op(ins) >= ARRAY_SIZE(ops)) {
		kind = -EINVAL;
	} else if (ops[bc_op(ins)].mm && !strcmp(ops[bc_op(ins)].mm, "call")) {
		/* ITERC calls the generator, three slots below its base. */
		slot = bc_a(ins);
		if (bc_op(ins) == OP_ITERC)
			slot -= 3;
		kind = slot < 256 ? slotname(&n, pos, slot, 0, &sb) : SLOT_NONE;
	} else if (ops[bc_op(ins)].mm) {
		strbuf_addf(&sb, "__%s", ops[bc_op(ins)].mm);
		kind = SLOT_FIELD;
	}
	if (kind > 0 && sb.len) {
		*name = strbuf_detach(&sb);
		err = 0;
	} else {
		strbuf_release(&sb);
		err = kind < 0 ? kind : -ENOENT;
	}
out:
	free(n.bc);
	free(n.varinfo);
	free(n.uvinfo);
	return err;
}
