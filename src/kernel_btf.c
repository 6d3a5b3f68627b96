// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A reader of raw BTF (the kernel's UAPI linux/btf.h) just far enough to
 * find a data section's variables: each type's size follows from its kind
 * and count, so one pass finds the variables by name and the section that
 * places them.
 */
#include <errno.h>
#include <string.h>

#include <linux/btf.h>

#include "bpfprof/kernel_btf.h"

/* The bytes after a type's common head, or -1 for a kind not known. */
static int64_t type_tail(const struct btf_type *t)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (int64_t)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (int64_t)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (int64_t)vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return (int64_t)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64:
		return (int64_t)vlen * sizeof(struct btf_enum64);
	default:
		return -1;
	}
}

/* Is the string at off in strs (len bytes) name? */
static int name_is(const char *strs, uint32_t len, uint32_t off, const char *name)
{
	size_t n = strlen(name);

	return off < len && len - off > n && !memcmp(strs + off, name, n + 1);
}

int kernel_btf_percpu_offsets(const void *btf, size_t len, const char *const *names,
			      int64_t *offsets, size_t n)
{
	const struct btf_header *h = btf;
	const struct btf_type *sec = NULL;
	const unsigned char *types;
	const char *strs;
	uint32_t ids[8], id = 1;
	size_t pos, i;
	int64_t tail;

	if (n > 8 || len < sizeof(*h) || h->magic != BTF_MAGIC || h->hdr_len < sizeof(*h) ||
	    h->hdr_len > len || (uint64_t)h->type_off + h->type_len > len - h->hdr_len ||
	    (uint64_t)h->str_off + h->str_len > len - h->hdr_len || (h->type_off & 3))
		return -EINVAL;
	types = (const unsigned char *)btf + h->hdr_len + h->type_off;
	strs = (const char *)btf + h->hdr_len + h->str_off;
	for (i = 0; i < n; i++) {
		ids[i] = 0;
		offsets[i] = -1;
	}
	for (pos = 0; pos + sizeof(struct btf_type) <= h->type_len; id++) {
		const struct btf_type *t = (const void *)(types + pos);

		if ((tail = type_tail(t)) < 0 || (size_t)tail > h->type_len - pos - sizeof(*t))
			return -EINVAL;
		if (BTF_INFO_KIND(t->info) == BTF_KIND_VAR) {
			for (i = 0; i < n; i++)
				if (name_is(strs, h->str_len, t->name_off, names[i]))
					ids[i] = id;
		} else if (BTF_INFO_KIND(t->info) == BTF_KIND_DATASEC &&
			   name_is(strs, h->str_len, t->name_off, ".data..percpu")) {
			sec = t;
		}
		pos += sizeof(*t) + tail;
	}
	if (pos != h->type_len)
		return -EINVAL;
	for (pos = 0; sec && pos < BTF_INFO_VLEN(sec->info); pos++) {
		const struct btf_var_secinfo *v = (const struct btf_var_secinfo *)(sec + 1) + pos;

		for (i = 0; i < n; i++)
			if (ids[i] && v->type == ids[i])
				offsets[i] = v->offset;
	}
	return 0;
}
