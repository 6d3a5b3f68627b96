// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include "bpfprof/intern.h"
#include "bpfprof/util.h"

uint32_t itab_find(const struct itab *t, uint64_t hash, itab_eq_fn *eq, const void *owner,
		   const void *key)
{
	uint32_t h = (uint32_t)hash, i;

	if (!t->slots)
		return ITAB_NONE;
	for (i = h & t->mask;; i = (i + 1) & t->mask) {
		const struct itab_slot *s = &t->slots[i];

		if (!s->idx1)
			return ITAB_NONE;
		if (s->hash == h && eq(owner, key, s->idx1 - 1))
			return s->idx1 - 1;
	}
}

static void place(struct itab_slot *slots, uint32_t mask, uint32_t hash, uint32_t idx1)
{
	uint32_t i = hash & mask;

	while (slots[i].idx1)
		i = (i + 1) & mask;
	slots[i].idx1 = idx1;
	slots[i].hash = hash;
}

void itab_insert(struct itab *t, uint64_t hash, uint32_t idx)
{
	/* Keep the load under 3/4 so probes stay short. */
	if (!t->slots || (t->count + 1) * 4 > (t->mask + 1) * 3) {
		uint32_t cap = t->slots ? (t->mask + 1) * 2 : 64, i;
		struct itab_slot *slots = xcalloc(cap, sizeof(*slots));

		for (i = 0; t->slots && i <= t->mask; i++)
			if (t->slots[i].idx1)
				place(slots, cap - 1, t->slots[i].hash, t->slots[i].idx1);
		free(t->slots);
		t->slots = slots;
		t->mask = cap - 1;
	}
	place(t->slots, t->mask, (uint32_t)hash, idx + 1);
	t->count++;
}

void itab_clear(struct itab *t)
{
	if (t->slots)
		memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
	t->count = 0;
}

void itab_release(struct itab *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

struct str_key {
	const char *s;
	size_t n;
};

static bool str_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct strtab *st = owner;
	const struct str_key *k = key;
	const char *s = strtab_get(st, idx);

	return strncmp(s, k->s, k->n) == 0 && s[k->n] == '\0';
}

void strtab_init(struct strtab *st)
{
	memset(st, 0, sizeof(*st));
	strtab_intern(st, "");
}

void strtab_release(struct strtab *st)
{
	free(st->chars);
	free(st->offs);
	itab_release(&st->index);
	memset(st, 0, sizeof(*st));
}

uint32_t strtab_intern_n(struct strtab *st, const char *s, size_t n)
{
	struct str_key key = { s, n };
	uint64_t hash = hash_bytes(s, n, 0);
	uint32_t id = itab_find(&st->index, hash, str_eq, st, &key);

	if (id != ITAB_NONE)
		return id;
	ALLOC_GROW(st->chars, st->len + n + 1, st->alloc);
	ALLOC_GROW(st->offs, st->nr + 1, st->offs_alloc);
	memcpy(st->chars + st->len, s, n);
	st->chars[st->len + n] = '\0';
	st->offs[st->nr] = st->len;
	st->len += n + 1;
	id = st->nr++;
	itab_insert(&st->index, hash, id);
	return id;
}

uint32_t strtab_intern(struct strtab *st, const char *s)
{
	return strtab_intern_n(st, s, strlen(s));
}
