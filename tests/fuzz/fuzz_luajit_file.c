// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The LuaJIT detector (luajit_file_identify) on any bytes as an ELF file,
 * from a memfd as the runtime hands it one, twice: the same answer both
 * times. A file that is not LuaJIT, or not readable, says nothing at all;
 * one that is says its flavour, and a known layout must be whole (the VM's
 * bounds in order, the offsets found), an unknown one nothing but the
 * flavour.
 */
#include <string.h>
#include <unistd.h>

#include "bpfprof/luajit_file.h"
#include "fuzz.h"

static void check(int rc, const struct luajit_file *f)
{
	struct luajit_file rest = *f;

	FUZZ_CHECK(rc <= 1);
	if (rc != 1) {
		FUZZ_CHECK(fuzz_all_zero(f, sizeof(*f)));
		return;
	}
	FUZZ_CHECK(f->flavour == LUAJIT_UPSTREAM || f->flavour == LUAJIT_OPENRESTY);
	FUZZ_CHECK(f->known <= 1 && fuzz_all_zero(f->reserved, sizeof(f->reserved)));
	if (!f->known) {
		rest.flavour = 0;
		FUZZ_CHECK(fuzz_all_zero(&rest, sizeof(rest)));
		return;
	}
	/* Bounds less the same bias: the VM's size, not wrapped. */
	FUZZ_CHECK(f->vm_end_rel - f->vm_begin_rel - 1 < UINT32_MAX);
	FUZZ_CHECK(f->dispatch_to_g && f->g_j);
}

int fuzz_luajit_file(const uint8_t *data, size_t size)
{
	struct luajit_file a, b;
	int fd = fuzz_input_file(data, size), rc;

	if (fd < 0)
		return 0;
	memset(&a, 0xa5, sizeof(a));
	rc = luajit_file_identify(fd, "/fuzz/libluajit-5.1.so.2", &a);
	check(rc, &a);
	memset(&b, 0x5a, sizeof(b));
	FUZZ_CHECK(luajit_file_identify(fd, NULL, &b) == rc);
	FUZZ_CHECK(!memcmp(&a, &b, sizeof(a)));
	close(fd);
	return 0;
}
