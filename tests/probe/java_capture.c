// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Seeds for the Java namer's fuzz target (tests/fuzz/fuzz_java_names.c)
 * from a live JVM: the memory java_names reads, and nothing else, as the
 * target takes it.
 *   jcmd PID Compiler.codelist | java_capture PID OUT [BLOB]
 * reads the JVM's layout (java_vm_read_offsets), finds the compiled
 * method and pc with the most inlined methods among the nmethods jcmd
 * lists, names them (java_compiled_scopes, then java_method_read of each),
 * and the code blob at BLOB (a stub: java_names_probe PID lists them),
 * recording every byte read; OUT: a header and those bytes at their own
 * addresses (fuzz_java_names.c says how). With -c, it prints the JVM's
 * file as fuzz_java_names.c's table holds it (java_vm before the offsets
 * are read, and the offsets read) instead.
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

struct range {
	uint64_t lo, hi;
};

static struct range ranges[1 << 16];
static size_t nr_ranges;
static int mem_fd;
static int recording;

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	ssize_t got = pread(mem_fd, buf, len, (off_t)addr);

	(void)ctx;
	if (got != (ssize_t)len)
		return got < 0 ? -errno : -EIO;
	if (recording && nr_ranges < sizeof(ranges) / sizeof(ranges[0]))
		ranges[nr_ranges++] = (struct range){ addr, addr + len };
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void put(FILE *f, const void *p, size_t n)
{
	fwrite(p, 1, n, f);
}

/* The seed: the header fuzz_java_names reads, then each stretch read (merged) at its address. */
static void write_seed(const char *path, uint8_t nvm, uint64_t base, uint64_t method, uint32_t bci,
		       uint64_t nmethod, uint32_t pc, uint32_t id, uint64_t blob)
{
	FILE *f = fopen(path, "w");
	uint8_t head[4] = { nvm, 0, 0, 0 };
	size_t i, k, bytes = 0, segs = 0;

	if (!f) {
		perror(path);
		exit(1);
	}
	put(f, head, 4);
	put(f, &bci, 4);
	put(f, &base, 8);
	put(f, &method, 8);
	put(f, &nmethod, 8);
	put(f, &pc, 4);
	put(f, &id, 4);
	put(f, &blob, 8);
	qsort(ranges, nr_ranges, sizeof(ranges[0]), range_cmp);
	for (i = 0; i < nr_ranges; i = k) {
		struct range r = ranges[i];
		uint32_t len;
		uint8_t *buf;

		for (k = i + 1; k < nr_ranges && ranges[k].lo <= r.hi; k++)
			if (ranges[k].hi > r.hi)
				r.hi = ranges[k].hi;
		len = (uint32_t)(r.hi - r.lo);
		buf = malloc(len);
		if (pread(mem_fd, buf, len, (off_t)r.lo) != (ssize_t)len) {
			fprintf(stderr, "cannot read %#" PRIx64 " again\n", r.lo);
			exit(1);
		}
		put(f, &r.lo, 8);
		put(f, &len, 4);
		put(f, buf, len);
		free(buf);
		bytes += len;
		segs++;
	}
	fclose(f);
	fprintf(stderr, "%s: %zu stretches, %zu bytes\n", path, segs, bytes);
}

#define FIELD(f) printf("\t\t." #f " = { %u, %u },\n", o->f.off, o->f.size)
#define U(f) printf("\t\t." #f " = %u,\n", (unsigned)o->f)

static void print_offsets(const struct java_offsets *o)
{
	FIELD(symbol_length); FIELD(symbol_body); FIELD(klass_name); FIELD(cp_source_file_index);
	FIELD(ik_source_file_index); FIELD(cp_holder); U(cp_size); FIELD(method_const_method);
	FIELD(method_access_flags); FIELD(cm_constants); FIELD(cm_code_size); FIELD(cm_flags);
	FIELD(cm_name_index); FIELD(cm_signature_index); U(cm_size); U(cm_has_linenumber_table);
	U(acc_native); FIELD(blob_name); FIELD(blob_code_begin); FIELD(blob_code_end);
	FIELD(blob_size); FIELD(blob_relocation_size); FIELD(blob_mutable_data);
	FIELD(blob_mutable_data_size); FIELD(nm_compile_id); FIELD(nm_method);
	FIELD(nm_metadata_offset); FIELD(nm_scopes_pcs_offset); FIELD(nm_scopes_data);
	FIELD(nm_dependencies_offset); FIELD(nm_immutable_data); FIELD(nm_immutable_data_size);
	FIELD(nm_immutable_ref_count); FIELD(nm_deopt); FIELD(blob_frame_complete);
	FIELD(pc_offset); FIELD(pc_scope_decode_offset); U(pc_desc_size); U(nmethod_size);
	U(nmethod_layout); U(code_offsets); U(unsigned5_excluded); U(known);
}

static void print_array(const char *name, const void *a, size_t width)
{
	size_t i, last = 0;
	uint64_t v;

	for (i = 0; i < JAVA_VM_FIELDS; i++) {
		v = 0;
		memcpy(&v, (const uint8_t *)a + i * width, width);
		if (v)
			last = i + 1;
	}
	printf("\t.%s = {", name);
	for (i = 0; i < last; i++) {
		v = 0;
		memcpy(&v, (const uint8_t *)a + i * width, width);
		printf("%s%s%#" PRIx64, i % 6 ? " " : "\n\t\t", i ? "" : "", v);
		if (i + 1 < last)
			printf(",");
	}
	printf(" },\n");
}

/* The file as read (the offsets not yet), then the offsets read, as C. */
static void print_vm(const struct java_vm *pre, const struct java_vm *vm)
{
	const struct java_layout *l = &pre->file.l;
	const struct java_offsets *o;

	printf("{\n\t.file = { .version = %u, .l = { .code_heaps = %#" PRIx64 ", .low_bound = %#"
	       PRIx64 ", .high_bound = %#" PRIx64 ",\n\t\t.heap_block_size = %u, "
	       ".const_method_size = %u } },\n", pre->file.version, (uint64_t)l->code_heaps,
	       (uint64_t)l->low_bound, (uint64_t)l->high_bound, l->heap_block_size,
	       l->const_method_size);
	o = &pre->o;
	printf("\t.o = { .cp_size = %u, .cm_size = %u, .pc_desc_size = %u, .nmethod_size = %u },\n",
	       o->cp_size, o->cm_size, o->pc_desc_size, o->nmethod_size);
	printf("\t.code_bias = %#" PRIx64 ", .stride_rel = %#" PRIx64 ", .name_off = %u,\n",
	       pre->code_bias, pre->stride_rel, pre->name_off);
	print_array("field_at", pre->field_at, 8);
	print_array("name_at", pre->name_at, 8);
	print_array("field_size", pre->field_size, 1);
	print_array("class_size", pre->class_size, 2);
	/* Everything java_file_read says is above. */
	{
		struct java_vm chk = { 0 };

		chk.file.version = pre->file.version;
		chk.file.l.code_heaps = l->code_heaps, chk.file.l.low_bound = l->low_bound;
		chk.file.l.high_bound = l->high_bound, chk.file.l.heap_block_size = l->heap_block_size;
		chk.file.l.const_method_size = l->const_method_size;
		chk.o.cp_size = o->cp_size, chk.o.cm_size = o->cm_size;
		chk.o.pc_desc_size = o->pc_desc_size, chk.o.nmethod_size = o->nmethod_size;
		chk.code_bias = pre->code_bias, chk.stride_rel = pre->stride_rel;
		chk.name_off = pre->name_off;
		memcpy(chk.field_at, pre->field_at, sizeof(chk.field_at));
		memcpy(chk.name_at, pre->name_at, sizeof(chk.name_at));
		memcpy(chk.field_size, pre->field_size, sizeof(chk.field_size));
		memcpy(chk.class_size, pre->class_size, sizeof(chk.class_size));
		if (memcmp(&chk, pre, sizeof(chk)))
			fprintf(stderr, "java_capture: the file says more than is printed\n");
	}
	printf("},\n/* its offsets */\n{\n");
	print_offsets(&vm->o);
	printf("},\n");
}

int main(int argc, char **argv)
{
	static struct java_method m;
	char path[4096], maps[64], line[4096 + 128], name[2048];
	struct java_scope s[JAVA_MAX_SCOPES], best_s[JAVA_MAX_SCOPES];
	uint64_t start, off, base = 0, header, begin, end, best_nm = 0, blob = 0;
	unsigned id, level, state, best_id = 0;
	uint32_t pc, best_pc = 0;
	int fd, ret, n, best = 0, i;
	struct java_vm vm, pre;
	bool c_out = argc > 2 && !strcmp(argv[2], "-c");
	FILE *f;
	Elf *elf;

	if (argc < 3)
		return fprintf(stderr, "usage: java_capture PID OUT|-c [BLOB]\n"), 2;
	if (argc > 3)
		blob = strtoull(argv[3], NULL, 0);
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
	if ((ret = java_file_read(elf, fd, &vm)))
		return fprintf(stderr, "%s: java_file_read %d\n", path, ret), 1;
	pre = vm;
	snprintf(maps, sizeof(maps), "/proc/%s/mem", argv[1]);
	if ((mem_fd = open(maps, O_RDONLY)) < 0)
		return perror(maps), 1;
	recording = 1;
	if ((ret = java_vm_read_offsets(&vm, mem_read, NULL, base)) || !vm.o.known)
		return fprintf(stderr, "java_vm_read_offsets %d, known %u\n", ret, vm.o.known), 1;
	if (c_out) {
		print_vm(&pre, &vm);
		return 0;
	}
	/* The nmethod and pc with the most scopes (not recorded: only the chosen one's reads are). */
	recording = 0;
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "%u %u %u %2047s [%" SCNx64 ", %" SCNx64 " - %" SCNx64 "]", &id,
			   &level, &state, name, &header, &begin, &end) != 7 || end - begin > 1 << 16)
			continue;
		for (pc = 0; pc < end - begin; pc += 4) {
			n = java_compiled_scopes(&vm, mem_read, NULL, header, pc, id, s, JAVA_MAX_SCOPES);
			if (n > best) {
				best = n, best_nm = header, best_pc = pc, best_id = id;
				memcpy(best_s, s, sizeof(s));
				fprintf(stderr, "%s +%#x: %d scopes\n", name, pc, n);
			}
		}
	}
	if (!best)
		return fprintf(stderr, "no nmethod named\n"), 1;
	recording = 1;
	n = java_compiled_scopes(&vm, mem_read, NULL, best_nm, best_pc, best_id, s, JAVA_MAX_SCOPES);
	for (i = 0; i < n; i++) {
		ret = java_method_read(&vm, mem_read, NULL, s[i].method, &m);
		fprintf(stderr, "  %s.%s%s (%s:%u) %d\n", m.klass, m.name, m.signature, m.file,
			java_method_line(&vm, &m, s[i].bci), ret);
	}
	java_blob_name(&vm, mem_read, NULL, best_nm, name, sizeof(name));
	if (blob && !java_blob_name(&vm, mem_read, NULL, blob, name, sizeof(name)))
		fprintf(stderr, "  blob %#" PRIx64 ": %s\n", blob, name);
	/* fuzz_java_names.c's table: 17, 25, 21. */
	write_seed(argv[2], vm.file.version == 17 ? 0 : vm.file.version == 25 ? 1 : 2, base, s[0].method, s[0].bci, best_nm, best_pc, best_id, blob);
	return 0;
}
