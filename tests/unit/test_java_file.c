// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * java_file_read on the machine's HotSpot JVMs (Debian's OpenJDK 17,
 * Temurin 25) when installed: the version, the statics, the sizes and
 * where every field's offset lies; java_vm_read_offsets on memory that is
 * not yet initialised or not the file's. Then files that are no JVM, and
 * corrupted copies of one (tables overwritten, the file cut): an error or
 * a layout not known, never a crash. The offsets themselves are read from
 * a live JVM: tests/probe/java_names_probe checks them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/elf.h"
#include "bpfprof/java_file.h"
#include "unit.h"

#define JDK17 "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"
#define JDK25 "/usr/lib/jvm/temurin-25-jdk-amd64/lib/server/libjvm.so"

static int read_fd(int fd, struct java_vm *vm)
{
	Elf *elf;
	int ret;

	elf_version(EV_CURRENT);
	if (!(elf = elf_open_fd(fd)))
		return -EINVAL;
	ret = java_file_read(elf, fd, vm);
	elf_end(elf);
	return ret;
}

static int read_path(const char *path, struct java_vm *vm)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = read_fd(fd, vm);
	close(fd);
	return ret;
}

static size_t fields_found(const struct java_vm *vm)
{
	size_t i, n = 0;

	for (i = 0; i < JAVA_VM_FIELDS; i++)
		n += vm->field_at[i] != 0;
	return n;
}

/* Process memory where the tables' constructor has not run: every byte 0. */
static int zeros(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx, (void)addr;
	memset(buf, 0, len);
	return 0;
}

/* Memory of another file: a stride, but names that point elsewhere. */
static int other(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx, (void)addr;
	memset(buf, 0x30, len);
	return 0;
}

static void check_jvm(const char *path, unsigned version, size_t fields, struct java_vm *vm)
{
	int ret = read_path(path, vm);

	if (ret == -ENOENT && access(path, R_OK)) {
		unit_skip("not installed", "java: %s", path);
		return;
	}
	CHECK(ret == 0 && vm->file.version == version, "java: %s is JDK %u (ret %d, version %u)",
	      path, version, ret, vm->file.version);
	CHECK(vm->file.l.code_heaps && vm->file.l.low_bound && vm->file.l.high_bound &&
		      vm->file.l.code_heaps != vm->file.l.low_bound,
	      "java: JDK %u: CodeCache's statics (%#llx %#llx %#llx)", version,
	      (unsigned long long)vm->file.l.code_heaps, (unsigned long long)vm->file.l.low_bound,
	      (unsigned long long)vm->file.l.high_bound);
	CHECK(vm->file.l.heap_block_size >= 8 && vm->file.l.heap_block_size <= 16 &&
		      vm->file.l.const_method_size >= 0x30 && vm->file.l.const_method_size < 0x100,
	      "java: JDK %u: sizeof(HeapBlock) %u, sizeof(ConstMethod) %#x", version,
	      vm->file.l.heap_block_size, vm->file.l.const_method_size);
	CHECK(vm->o.pc_desc_size == 16 && vm->o.cp_size && vm->o.nmethod_size > 0x80,
	      "java: JDK %u: sizeof(PcDesc) 16, ConstantPool %#x, nmethod %#x", version,
	      vm->o.cp_size, vm->o.nmethod_size);
	/* Of the fields asked for, JDK 17 has 36 (CompiledMethod's), 25 has 38 (immutable data). */
	CHECK(fields_found(vm) == fields && vm->stride_rel && !vm->file.l.known && !vm->o.known,
	      "java: JDK %u: %zu fields to read from a process, not known before", version,
	      fields_found(vm));
	CHECK(java_vm_read_offsets(vm, zeros, NULL, 0x7f0000000000) == -EAGAIN,
	      "java: JDK %u: a process whose libjvm is not initialised yet: try again", version);
	CHECK(java_vm_read_offsets(vm, other, NULL, 0x7f0000000000) == -EINVAL && !vm->file.l.known,
	      "java: JDK %u: memory not of this file: refused", version);
}

/* A copy of path in a temporary file, for corruption; -1 if none. */
static int copy_of(const char *path, off_t *size)
{
	char tmpl[] = "/tmp/bpfprof-java-XXXXXX", buf[1 << 16];
	int in = open(path, O_RDONLY | O_CLOEXEC), out = mkstemp(tmpl);
	ssize_t n;

	*size = 0;
	if (out >= 0)
		unlink(tmpl);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			break;
		else
			*size += n;
	if (in >= 0)
		close(in);
	return out;
}

static void check_corrupt(const char *path, const struct java_vm *good)
{
	uint64_t at = good->field_at[0] + good->code_bias;
	struct java_vm vm;
	unsigned seed, bad = 0, tries = 24;
	off_t size;
	int fd = copy_of(path, &size), ret;
	uint8_t junk[4096];

	if (fd < 0 || !at) {
		unit_skip("no copy", "java: corrupted copies of %s", path);
		if (fd >= 0)
			close(fd);
		return;
	}
	/* The tables (the .data around a field's entry) overwritten with junk, a part at a time. */
	for (seed = 1; seed <= tries; seed++) {
		size_t i;

		srand(seed);
		for (i = 0; i < sizeof(junk); i++)
			junk[i] = seed & 1 ? rand() : (rand() & 1 ? 0xff : 0);
		if (pwrite(fd, junk, sizeof(junk), (off_t)(at - 0x2000 + (seed % 8) * 0x1000)) < 0)
			break;
		ret = read_fd(fd, &vm);
		bad += ret < 0 || fields_found(&vm) < fields_found(good) || memcmp(&vm, good,
										    sizeof(vm));
	}
	CHECK(bad == tries, "java: %u of %u copies with junk in the tables read as the file's",
	      tries - bad, tries);
	CHECK(ftruncate(fd, size / 2) == 0 && read_fd(fd, &vm) < 0,
	      "java: a libjvm.so cut in half: an error");
	CHECK(ftruncate(fd, 4096) == 0 && read_fd(fd, &vm) < 0, "java: its first page: an error");
	close(fd);
}

void test_java_file(void)
{
	static struct java_vm vm17, vm25, vm;

	check_jvm(JDK17, 17, 36, &vm17);
	if (vm17.file.version)
		CHECK(vm17.o.nmethod_size == 0x160 && vm17.file.l.heap_block_size == 16,
		      "java: JDK 17: sizeof(nmethod) 0x160, HeapBlock 16 (%#x, %u)",
		      vm17.o.nmethod_size, vm17.file.l.heap_block_size);
	check_jvm(JDK25, 25, 38, &vm25);
	if (vm25.file.version)
		CHECK(vm25.o.nmethod_size == 0xe0 && vm25.file.l.heap_block_size == 8,
		      "java: JDK 25: sizeof(nmethod) 0xe0, HeapBlock 8 (%#x, %u)",
		      vm25.o.nmethod_size, vm25.file.l.heap_block_size);
	if (vm17.file.version)
		check_corrupt(JDK17, &vm17);
	CHECK(read_path("/usr/lib/x86_64-linux-gnu/libc.so.6", &vm) == -ENOENT,
	      "java: libc is no JVM");
	CHECK(read_path("/etc/passwd", &vm) == -ENOENT || read_path("/etc/passwd", &vm) == -EINVAL,
	      "java: a text file is no JVM");
}
