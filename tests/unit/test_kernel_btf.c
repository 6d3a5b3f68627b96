// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* kernel_btf: per-CPU variables' offsets from raw BTF, as libbpf's parse finds them. */
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "bpfprof/kernel_btf.h"
#include "bpfprof/util.h"
#include "unit.h"

static const char *const names[] = { "runqueues", "__preempt_count" };

/* A hand-made BTF: an int, the two variables around a struct and an enum64, their section. */
static size_t made_btf(unsigned char *buf)
{
	static const char strs[] = "\0int\0runqueues\0s\0__preempt_count\0e\0.data..percpu";
	uint32_t types[64], *t = types;
	struct btf_header h = { .magic = BTF_MAGIC, .version = 1, .hdr_len = sizeof(h) };

#define BTF_INFO_ENC(kind, kflag, vlen) ((uint32_t)(kind) << 24 | (uint32_t)(kflag) << 31 | (vlen))
#define W(...) do { uint32_t w_[] = { __VA_ARGS__ }; memcpy(t, w_, sizeof(w_)); t += ARRAY_SIZE(w_); } while (0)
	W(1, BTF_INFO_ENC(BTF_KIND_INT, 0, 0), 4, 32);				/* 1 int */
	W(5, BTF_INFO_ENC(BTF_KIND_VAR, 0, 0), 1, 0);				/* 2 runqueues */
	W(15, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 2), 8, 1, 1, 0, 1, 1, 32);	/* 3 s */
	W(17, BTF_INFO_ENC(BTF_KIND_VAR, 0, 0), 1, 0);				/* 4 __preempt_count */
	W(33, BTF_INFO_ENC(BTF_KIND_ENUM64, 0, 1), 8, 1, 7, 0);			/* 5 e */
	W(35, BTF_INFO_ENC(BTF_KIND_DATASEC, 0, 2), 0x2000, 2, 0x1000, 8, 4, 0x20, 4);
#undef W
#undef BTF_INFO_ENC
	h.type_len = (t - types) * 4;
	h.str_off = h.type_len;
	h.str_len = sizeof(strs);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), types, h.type_len);
	memcpy(buf + sizeof(h) + h.type_len, strs, sizeof(strs));
	return sizeof(h) + h.type_len + sizeof(strs);
}

/* What libbpf finds for the same names in the file at path, into off. */
static bool libbpf_offsets(const char *path, int64_t *off)
{
	struct btf *btf = btf__parse(path, NULL);
	const struct btf_var_secinfo *v;
	const struct btf_type *sec;
	int id, i, k;

	if (!btf)
		return false;
	off[0] = off[1] = -1;
	id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	sec = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (i = 0, v = sec ? btf_var_secinfos(sec) : NULL; sec && i < btf_vlen(sec); i++, v++)
		for (k = 0; k < 2; k++)
			if (!strcmp(btf__name_by_offset(btf, btf__type_by_id(btf, v->type)->name_off),
				    names[k]))
				off[k] = v->offset;
	btf__free(btf);
	return true;
}

void test_kernel_btf(void)
{
	unsigned char buf[512];
	int64_t off[2], want[2] = { -2, -2 };
	size_t len = made_btf(buf), n;
	char *raw;
	int err;

	err = kernel_btf_percpu_offsets(buf, len, names, off, 2);
	CHECK(!err && off[0] == 0x1000 && off[1] == 0x20,
	      "kernel_btf: both variables found past a struct and an enum64 (%lld, %lld)",
	      (long long)off[0], (long long)off[1]);
	CHECK(kernel_btf_percpu_offsets(buf, len - 20, names, off, 2) < 0,
	      "kernel_btf: cut short, refused");
	buf[sizeof(struct btf_header) + 4 * 4 + 7] = 0x1f;	/* the variable's kind: none known */
	CHECK(kernel_btf_percpu_offsets(buf, len, names, off, 2) < 0,
	      "kernel_btf: a kind not known, refused");
	if (read_file("/sys/kernel/btf/vmlinux", &raw, &n)) {
		unit_skip("no /sys/kernel/btf/vmlinux", "kernel_btf: this kernel's BTF as libbpf reads it");
		return;
	}
	err = kernel_btf_percpu_offsets(raw, n, names, off, 2);
	if (!libbpf_offsets("/sys/kernel/btf/vmlinux", want))
		err = -1;
	CHECK(!err && off[0] >= 0 && off[0] == want[0] &&
		      off[1] == want[1],
	      "kernel_btf: this kernel's runqueues and __preempt_count where libbpf finds them "
	      "(%lld, %lld; libbpf %lld, %lld)", (long long)off[0], (long long)off[1],
	      (long long)want[0], (long long)want[1]);
	free(raw);
}
