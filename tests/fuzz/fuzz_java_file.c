// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The HotSpot reader (java_file_read) on any bytes as an ELF file, from a
 * memfd as the runtime hands it one, twice: the same answer both times.
 * A file that is not a JVM, or whose tables do not read, says nothing at
 * all; one that does says a version of the form it checks (or none),
 * addresses that lie in the file's reach, widths a field can have, and
 * nothing known yet (the offsets come from a process). Its every entry
 * listed (java_file_entries): names that end, the same answer.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/elf.h"
#include "bpfprof/java_file.h"
#include "fuzz.h"

static int read_vm(int fd, struct java_vm *vm)
{
	Elf *elf = elf_open_fd(fd);
	int ret;

	if (!elf) {
		memset(vm, 0, sizeof(*vm));
		return -1000;
	}
	ret = java_file_read(elf, fd, vm);
	elf_end(elf);
	return ret;
}

static void check(int rc, const struct java_vm *vm)
{
	size_t i;

	FUZZ_CHECK(rc <= 0);
	if (rc) {
		FUZZ_CHECK(fuzz_all_zero(vm, sizeof(*vm)));
		return;
	}
	FUZZ_CHECK(!vm->file.version || (vm->file.version >= 9 && vm->file.version < 100));
	FUZZ_CHECK(!vm->file.l.known && !vm->o.known);
	FUZZ_CHECK(vm->stride_rel != 0);
	for (i = 0; i < JAVA_VM_FIELDS; i++) {
		uint8_t w = vm->field_size[i];

		FUZZ_CHECK(w == 0 || w == 1 || w == 2 || w == 4 || w == 8);
		FUZZ_CHECK(vm->field_at[i] || (!vm->name_at[i] && !w && !vm->class_size[i]));
	}
}

static unsigned entries;

static void entry(void *ctx, char kind, const char *type, const char *field,
		  const char *type_string, uint64_t off, uint64_t address)
{
	(void)ctx, (void)off, (void)address;
	entries++;
	FUZZ_CHECK(kind == 'F' || kind == 'T' || kind == 'I' || kind == 'L');
	/* Each name a string that ends (ASan reads it to its end). */
	if (type)
		(void)strlen(type);
	if (field)
		(void)strlen(field);
	if (type_string)
		(void)strlen(type_string);
}

int fuzz_java_file(const uint8_t *data, size_t size)
{
	static struct java_vm a, b;
	int fd = fuzz_input_file(data, size), rc;
	unsigned first;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	memset(&a, 0xa5, sizeof(a));
	rc = read_vm(fd, &a);
	if (rc != -1000) {
		check(rc, &a);
		memset(&b, 0x5a, sizeof(b));
		FUZZ_CHECK(read_vm(fd, &b) == rc);
		FUZZ_CHECK(!memcmp(&a, &b, sizeof(a)));
	}
	if ((elf = elf_open_fd(fd))) {
		int r1, r2;

		entries = 0;
		r1 = java_file_entries(elf, fd, entry, NULL);
		first = entries;
		entries = 0;
		r2 = java_file_entries(elf, fd, entry, NULL);
		FUZZ_CHECK(r1 <= 0 && r1 == r2 && first == entries);
		/* The entries read where the file read. */
		FUZZ_CHECK(rc == -1000 || (r1 == -ENOENT) == (rc == -ENOENT));
		elf_end(elf);
	}
	close(fd);
	return 0;
}
