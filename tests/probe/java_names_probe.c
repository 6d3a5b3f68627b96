// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A developer's check of java_file and java_names against a live JVM:
 *   java_names_probe PID            the layout read, then the code cache's
 *                                   blobs by name (walked as the BPF walk
 *                                   will: heaps, segment maps, blob headers)
 *   jcmd PID Compiler.codelist | java_names_probe PID -
 *                                   each nmethod jcmd lists: its name by
 *                                   jcmd, then the scopes java_names finds at
 *                                   its first and middle pcs, with lines
 * Reads /proc/PID/mem: root, or the JVM's user with ptrace allowed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/elf.h"
#include "bpfprof/java_file.h"
#include "bpfprof/java_names.h"

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	ssize_t got = pread(*(int *)ctx, buf, len, (off_t)addr);

	return got == (ssize_t)len ? 0 : got < 0 ? -errno : -EIO;
}

static uint64_t u64_at(int *mem, uint64_t addr)
{
	uint64_t v = 0;

	mem_read(mem, addr, &v, sizeof(v));
	return v;
}

static void show_method(const struct java_vm *vm, int *mem, uint64_t method, uint32_t bci)
{
	static struct java_method m;
	int ret = java_method_read(vm, mem_read, mem, method, &m);

	if (ret) {
		printf("    method %#" PRIx64 ": error %d\n", method, ret);
		return;
	}
	printf("    %s.%s%s (%s:%u)%s bci %d\n", m.klass, m.name, m.signature,
	       m.file[0] ? m.file : "?", java_method_line(vm, &m, bci), m.native ? " native" : "",
	       bci == JAVA_BCI_NONE ? -1 : (int)bci);
}

static void show_scopes(const struct java_vm *vm, int *mem, uint64_t nm, uint32_t pc,
			uint32_t id)
{
	struct java_scope s[JAVA_MAX_SCOPES];
	int i, n = java_compiled_scopes(vm, mem_read, mem, nm, pc, id, s, JAVA_MAX_SCOPES);

	printf("  pc +%#x: %d scope(s)\n", pc, n);
	for (i = 0; i < n; i++)
		show_method(vm, mem, s[i].method, s[i].bci);
}

/* jcmd's lines: "ID LEVEL STATE name [HEADER, CODE_BEGIN - CODE_END]". */
static void codelist(const struct java_vm *vm, int *mem)
{
	char line[4096], name[2048];
	uint64_t header, begin, end;
	unsigned id, level, state;

	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "%u %u %u %2047s [%" SCNx64 ", %" SCNx64 " - %" SCNx64 "]", &id,
			   &level, &state, name, &header, &begin, &end) != 7)
			continue;
		printf("%u %s (jcmd) nmethod %#" PRIx64 "\n", id, name, header);
		show_scopes(vm, mem, header, 0, id);
		show_scopes(vm, mem, header, (uint32_t)(end - begin) / 2, id);
		if (java_compiled_scopes(vm, mem_read, mem, header, 0, id + 1, (struct java_scope[1]){ { 0, 0 } }, 1) != -ESTALE)
			printf("  ! another compile id not told apart\n");
	}
}

/* The code cache's blobs, as the walk finds them: each heap's used blocks by its segment map. */
static void blobs(const struct java_vm *vm, int *mem, uint64_t base)
{
	const struct java_layout *l = &vm->file.l;
	uint64_t heaps = u64_at(mem, base + l->code_heaps), data = u64_at(mem, heaps + l->array_data);
	uint32_t len = 0, h;

	mem_read(mem, heaps + l->array_len, &len, 4);
	printf("code cache %#" PRIx64 "..%#" PRIx64 ", %u heaps\n", u64_at(mem, base + l->low_bound),
	       u64_at(mem, base + l->high_bound), len);
	for (h = 0; h < len && h < JAVA_MAX_HEAPS; h++) {
		uint64_t heap = u64_at(mem, data + 8 * h), lo, hi, map, seg, nsegs, counted = 0;
		uint32_t shift = 0;
		uint8_t *segmap;

		lo = u64_at(mem, heap + l->heap_memory + l->vs_low_boundary);
		hi = u64_at(mem, heap + l->heap_memory + l->vs_high_boundary);
		map = u64_at(mem, heap + l->heap_segmap + l->vs_low_boundary);
		mem_read(mem, heap + l->heap_log2_segment, &shift, 4);
		nsegs = shift < 32 ? (hi - lo) >> shift : 0;
		printf(" heap %u: %#" PRIx64 "..%#" PRIx64 " segments of %u bytes\n", h, lo, hi,
		       1u << shift);
		segmap = malloc(nsegs ? nsegs : 1);
		if (!segmap || mem_read(mem, map, segmap, nsegs)) {
			free(segmap);
			continue;
		}
		/* A used block starts where its segment's byte is 0; free ones are 0xff. */
		for (seg = 0; seg < nsegs && counted < 12; seg++) {
			char name[JAVA_NAME_MAX];
			uint64_t blob = lo + (seg << shift) + l->heap_block_size;

			if (segmap[seg] != 0 || java_blob_name(vm, mem_read, mem, blob, name,
							       sizeof(name)))
				continue;
			printf("  blob %#" PRIx64 ": %s\n", blob, name);
			counted++;
		}
		free(segmap);
	}
}

int main(int argc, char **argv)
{
	char path[4096], maps[64], line[4096 + 128];
	uint64_t start, off, base = 0;
	struct java_vm vm;
	FILE *f;
	int fd, mem, ret;
	Elf *elf;

	if (argc < 2)
		return fprintf(stderr, "usage: java_names_probe PID [-]\n"), 2;
	snprintf(maps, sizeof(maps), "/proc/%s/maps", argv[1]);
	if (!(f = fopen(maps, "r")))
		return perror(maps), 1;
	path[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/libjvm.so") && strstr(line, " r-xp ") &&
		    sscanf(line, "%" SCNx64 "-%*x %*s %" SCNx64 " %*s %*s %4095s", &start, &off, path) == 3)
			base = start - off;
	fclose(f);
	if (!base)
		return fprintf(stderr, "no libjvm.so in %s\n", maps), 1;
	elf_version(EV_CURRENT);
	if ((fd = open(path, O_RDONLY)) < 0 || !(elf = elf_open_fd(fd)))
		return perror(path), 1;
	ret = java_file_read(elf, fd, &vm);
	printf("%s: java_file_read %d, JDK %u\n", path, ret, vm.file.version);
	snprintf(maps, sizeof(maps), "/proc/%s/mem", argv[1]);
	if ((mem = open(maps, O_RDONLY)) < 0)
		return perror(maps), 1;
	ret = java_vm_read_offsets(&vm, mem_read, &mem, base);
	printf("java_vm_read_offsets %d: walk known %u, names known %u, nmethod layout %u, "
	       "code offsets %u\n", ret, vm.file.l.known, vm.o.known, vm.o.nmethod_layout,
	       vm.o.code_offsets);
	if (ret)
		return 1;
	if (argc > 2 && !strcmp(argv[2], "-"))
		codelist(&vm, &mem);
	else
		blobs(&vm, &mem, base);
	return 0;
}
