/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Interning: an open-addressing index over an array the caller owns, and a
 * string table built on it.
 *
 * struct itab stores (index, hash) pairs; the caller keeps the elements in
 * its own array and answers "is element idx equal to this key?". Indices
 * are stable: elements are only ever appended.
 */
#ifndef BPFPROF_INTERN_H
#define BPFPROF_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ITAB_NONE UINT32_MAX

struct itab_slot {
	uint32_t idx1;		/* element index + 1; 0 = empty */
	uint32_t hash;
};

struct itab {
	struct itab_slot *slots;
	uint32_t mask;		/* capacity - 1 (capacity a power of two) */
	uint32_t count;
};

typedef bool itab_eq_fn(const void *owner, const void *key, uint32_t idx);

/* Index of the element equal to key, or ITAB_NONE. */
uint32_t itab_find(const struct itab *t, uint64_t hash, itab_eq_fn *eq, const void *owner,
		   const void *key);
/* Record element idx under hash; the caller has checked it is absent. */
void itab_insert(struct itab *t, uint64_t hash, uint32_t idx);
/* Empty again, keeping its room. */
void itab_clear(struct itab *t);
void itab_release(struct itab *t);

/* Strings interned once; id 0 is always "". Ids are dense: 0..nr-1. */
struct strtab {
	char *chars;
	size_t len, alloc;
	uint32_t *offs;		/* offs[id]: start of string id in chars */
	uint32_t nr, offs_alloc;
	struct itab index;
};

void strtab_init(struct strtab *st);
void strtab_release(struct strtab *st);
uint32_t strtab_intern(struct strtab *st, const char *s);
uint32_t strtab_intern_n(struct strtab *st, const char *s, size_t n);
static inline const char *strtab_get(const struct strtab *st, uint32_t id)
{
	return st->chars + st->offs[id];
}

#endif
