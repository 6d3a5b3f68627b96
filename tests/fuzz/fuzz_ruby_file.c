// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The CRuby detector (ruby_file_identify) on any bytes as an ELF file,
 * from a memfd as the runtime hands it one, twice: the same answer both
 * times. A file that is not Ruby, or not readable, says nothing at all;
 * one that is says a version of the form it checks (or none), and a known
 * one its table row exactly, a names row, and vm_exec_core's bounds
 * in order; an unknown one no layout.
 */
#include <string.h>
#include <unistd.h>

#include "bpfprof/ruby_file.h"
#include "fuzz.h"

static void check(int rc, const struct ruby_file *f)
{
	const struct ruby_layout *l;
	unsigned major = f->version >> 8, minor = f->version & 0xff;

	FUZZ_CHECK(rc <= 1);
	if (rc != 1) {
		FUZZ_CHECK(fuzz_all_zero(f, sizeof(*f)));
		return;
	}
	FUZZ_CHECK(!f->version || (major >= 2 && major <= 9 && minor <= 99));
	FUZZ_CHECK(f->known <= 1 && !f->reserved && !f->reserved2);
	if (!f->known) {
		FUZZ_CHECK(fuzz_all_zero(&f->l, sizeof(f->l)));
		return;
	}
	l = ruby_layout_of(major, minor);
	FUZZ_CHECK(l && !memcmp(l, &f->l, sizeof(*l)));
	FUZZ_CHECK(ruby_names_of(f->version));
	/* Bounds less the same bias: a function's size, not wrapped. */
	FUZZ_CHECK(f->vm_exec_hi_rel - f->vm_exec_lo_rel - 1 < UINT32_MAX);
	FUZZ_CHECK(f->gc.bit <= 7);
}

int fuzz_ruby_file(const uint8_t *data, size_t size)
{
	struct ruby_file a, b;
	int fd = fuzz_input_file(data, size), rc;

	if (fd < 0)
		return 0;
	memset(&a, 0xa5, sizeof(a));
	rc = ruby_file_identify(fd, "/fuzz/libruby-3.1.so.3.1", &a);
	check(rc, &a);
	memset(&b, 0x5a, sizeof(b));
	FUZZ_CHECK(ruby_file_identify(fd, "/fuzz/other", &b) == rc);
	FUZZ_CHECK(!memcmp(&a, &b, sizeof(a)));
	close(fd);
	return 0;
}
