// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * /proc/kallsyms text: text symbols sorted by address, names and modules
 * inside the names buffer, each symbol found at its address, and the
 * names, as kernel frames, valid in folded lines.
 */
#include <errno.h>
#include <string.h>

#include "bpfprof/kallsyms.h"
#include "fuzz.h"

static bool name_ok(const struct kallsyms *ks, uint32_t off)
{
	return off < ks->names_len && memchr(ks->names + off, '\0', ks->names_len - off);
}

/* The last symbol at or below addr, or NULL when every one is above it. */
static void check_lookup(const struct kallsyms *ks, uint64_t addr)
{
	const struct ksym *s = kallsyms_lookup(ks, addr);

	if (!ks->nr || ks->syms[0].addr > addr) {
		FUZZ_CHECK(!s);
		return;
	}
	FUZZ_CHECK(s && s->addr <= addr && (s + 1 == ks->syms + ks->nr || s[1].addr > addr));
}

int fuzz_kallsyms(const uint8_t *data, size_t size)
{
	struct fuzz_loc locs[FUZZ_FOLD_MAX];
	struct kallsyms ks;
	size_t i, n = 0;
	int err = kallsyms_parse(&ks, (const char *)data, size);

	FUZZ_CHECK(!err || err == -EINVAL || err == -EPERM);
	if (err) {
		FUZZ_CHECK(!ks.syms && !ks.names && !ks.nr);
		return 0;
	}
	check_lookup(&ks, 0);
	check_lookup(&ks, UINT64_MAX);
	for (i = 0; i < ks.nr; i++) {
		const struct ksym *s = &ks.syms[i];

		FUZZ_CHECK(!i || ks.syms[i - 1].addr <= s->addr);
		FUZZ_CHECK(name_ok(&ks, s->name) && name_ok(&ks, s->module));
		if (!name_ok(&ks, s->name) || !name_ok(&ks, s->module))
			continue;
		FUZZ_CHECK(*ksym_name(&ks, s));
		check_lookup(&ks, s->addr);
		check_lookup(&ks, s->addr - 1);
		check_lookup(&ks, s->addr + 1);
		if (n < FUZZ_FOLD_MAX && i % (ks.nr / FUZZ_FOLD_MAX + 1) == 0)
			locs[n++] = (struct fuzz_loc){ { ksym_name(&ks, s) }, 1, FRAME_KERNEL };
	}
	fuzz_fold("prog", "[kernel.kallsyms]", locs, n);
	kallsyms_release(&ks);
	return 0;
}
