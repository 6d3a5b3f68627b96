// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The PHP detector (php_file_identify) on any bytes as an ELF file, from a
 * memfd as the runtime hands it one, twice: the same answer both times. A
 * file that is not PHP, or not readable, says nothing at all; one that is
 * says a version of the form it checks (or none). One not read says why and
 * nothing else; a read one its table row exactly, execute_ex's bounds in
 * order and in the file's code, the JIT's way back inside them and
 * zend_call_function's in order and in the file's code.
 */
#include <string.h>
#include <unistd.h>

#include "bpfprof/php_file.h"
#include "fuzz.h"

static void check(int rc, const struct php_file *f, const char *why)
{
	const struct php_layout *l;
	struct php_file rest;

	FUZZ_CHECK(rc <= 1);
	if (rc != 1) {
		FUZZ_CHECK(fuzz_all_zero(f, sizeof(*f)) && !why);
		return;
	}
	FUZZ_CHECK((f->version >> 8) <= 99 && (f->version & 0xff) <= 99);
	FUZZ_CHECK(f->known <= 1 && !f->reserved);
	if (!f->known) {
		/* The version, if found, and the reason: nothing else. */
		rest = *f;
		rest.version = 0;
		FUZZ_CHECK(why && fuzz_all_zero(&rest, sizeof(rest)));
		return;
	}
	FUZZ_CHECK(!why);
	l = php_layout_of(f->version >> 8, f->version & 0xff);
	FUZZ_CHECK(l && !memcmp(l, &f->l, sizeof(*l)));
	FUZZ_CHECK(f->execute_ex_lo_rel < f->execute_ex_hi_rel);
	/* Both functions in the file's code. */
	FUZZ_CHECK(f->text_lo_rel <= f->execute_ex_lo_rel && f->execute_ex_hi_rel <= f->text_hi_rel);
	FUZZ_CHECK(!f->jit_vm_pc_rel || (f->jit_vm_pc_rel >= f->execute_ex_lo_rel &&
					 f->jit_vm_pc_rel < f->execute_ex_hi_rel));
	FUZZ_CHECK((!f->call_lo_rel && !f->call_hi_rel) ||
		   (f->call_lo_rel < f->call_hi_rel && f->text_lo_rel <= f->call_lo_rel &&
		    f->call_hi_rel <= f->text_hi_rel));
}

int fuzz_php_file(const uint8_t *data, size_t size)
{
	struct php_file a, b;
	const char *why_a, *why_b;
	int fd = fuzz_input_file(data, size), rc;

	if (fd < 0)
		return 0;
	memset(&a, 0xa5, sizeof(a));
	rc = php_file_identify(fd, "/fuzz/php8.2", &a, &why_a);
	check(rc, &a, why_a);
	memset(&b, 0x5a, sizeof(b));
	FUZZ_CHECK(php_file_identify(fd, "/fuzz/other", &b, &why_b) == rc);
	FUZZ_CHECK(!memcmp(&a, &b, sizeof(a)) && why_a == why_b);
	close(fd);
	return 0;
}
