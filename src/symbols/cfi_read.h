/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Inside the CFI readers (cfi_rows.c): a CFI section's bytes read with
 * every read bounds-checked (numbers, LEB128, encoded pointers), and the
 * section's entries (CIEs and FDEs). Inline: the CFA programs' hot loop
 * reads through them.
 */
#ifndef BPFPROF_CFI_READ_H
#define BPFPROF_CFI_READ_H

#include <dwarf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes being read: a read past end sets bad and gives 0. */
struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static inline uint64_t read_le(struct cursor *c, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << 8 * i;
	c->p += n;
	return v;
}

/* LEB128: bits past the 64th are dropped. */
static inline uint64_t leb(struct cursor *c, bool is_signed)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (c->p >= c->end) {
			c->bad = true;
			return 0;
		}
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift = shift < 64 ? shift + 7 : shift;
	} while (b & 0x80);
	if (is_signed && shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return v;
}

#define uleb(c) leb((c), false)
#define sleb(c) ((int64_t)leb((c), true))

/* n * factor; one that overflows is no multiple of 8 that fits a row. */
static inline int64_t factored(int64_t n, int64_t factor)
{
	int64_t v;

	return __builtin_mul_overflow(n, factor, &v) ? INT64_MIN + 1 : v;
}

/*
 * A pointer encoded as enc (DW_EH_PE_*) at c, whose field is at vaddr
 * field. Bases we cannot know (textrel, funcrel, aligned) fail; datarel is
 * taken from 0, as libdw does (x86-64 has no data base for .eh_frame).
 */
static inline bool read_encoded(struct cursor *c, uint8_t enc, uint64_t field, uint64_t *out)
{
	uint64_t v;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8:
		v = read_le(c, 8);
		break;
	case DW_EH_PE_uleb128: v = uleb(c); break;
	case DW_EH_PE_sleb128: v = sleb(c); break;
	case DW_EH_PE_udata2: v = read_le(c, 2); break;
	case DW_EH_PE_udata4: v = read_le(c, 4); break;
	case DW_EH_PE_sdata2: v = (uint64_t)(int64_t)(int16_t)read_le(c, 2); break;
	case DW_EH_PE_sdata4: v = (uint64_t)(int64_t)(int32_t)read_le(c, 4); break;
	default:
		return false;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr: case DW_EH_PE_datarel:
		break;
	case DW_EH_PE_pcrel:
		v += field;
		break;
	default:
		return false;
	}
	*out = v;
	return !c->bad;
}

/* A CFI section's bytes. */
struct section {
	const uint8_t *data;
	size_t size;
	uint64_t addr;			/* sh_addr: the base of pcrel pointers */
	bool eh;			/* .eh_frame, else .debug_frame */
};

/* A CIE or FDE: its fields past the CIE id (or pointer), to its end. */
struct entry {
	size_t off, next;		/* where it and the next entry start */
	size_t id_off;			/* where its id is */
	uint64_t id;
	bool dwarf64;
	struct cursor c;
};

/* 1: an entry (c.bad if too short for its id), 0: the end or a zero terminator, -1: cut short. */
static inline int read_entry(const struct section *s, size_t off, struct entry *e)
{
	struct cursor c = { s->data + off, s->data + s->size, false };
	uint64_t len = read_le(&c, 4);

	if (c.bad || !len)
		return 0;
	e->dwarf64 = len == 0xffffffff;
	if (e->dwarf64)
		len = read_le(&c, 8);
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return -1;
	e->off = off;
	e->id_off = c.p - s->data;
	e->next = e->id_off + len;
	c.end = c.p + len;
	e->id = read_le(&c, e->dwarf64 ? 8 : 4);
	e->c = c;
	return 1;
}

static inline bool is_cie(const struct section *s, const struct entry *e)
{
	return e->id == (s->eh ? 0 : e->dwarf64 ? DW_CIE_ID_64 : DW_CIE_ID_32);
}

#endif
