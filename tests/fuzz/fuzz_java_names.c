// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A HotSpot JVM's memory, as hostile as can be, read by the namer
 * (java_names.c) with the layout its process says (java_vm_read_offsets).
 * The input: a header, then stretches of memory each at its own address,
 * as a live JVM's were recorded (tests/probe/java_capture.c); the whole
 * input is also memory at FUZZ_MEMORY_BASE (a stretch that overlaps it or
 * one before is left out). Little-endian:
 *   0  u8  which JVM file below (17, 25: its java_file_read)
 *   4  u32 a bytecode index          8  u64 libjvm's load address
 *   16 u64 a Method*                 24 u64 an nmethod
 *   32 u32 a pc offset in it         36 u32 its compile id
 *   40 u64 a code blob (a stub)
 *   48 stretches: u64 address, u32 length, the bytes
 * The offsets are read from that memory at that load address; if they do
 * not read, the ones the real process gave are used. Then the Method is
 * read and its lines looked up, the nmethod's scopes at the pc found (and
 * each scope's method read), the blob named. What comes out: names that
 * end within their buffers, lines only for bytecodes the method has,
 * scopes within max (the same first ones for a smaller max), another
 * compile id never named, the same answer twice.
 */
#include <errno.h>
#include <string.h>

#include "bpfprof/java_names.h"
#include "fuzz.h"

#define HEADER 48
#define MAX_STRETCHES 512

/* java_capture -c on Debian's OpenJDK 17 and Temurin 25: the files as java_file_read reads them. */
static const struct java_vm files[] = {
	/* 17 */
	{
		.file = { .version = 17, .l = { .code_heaps = 0x131c600, .low_bound = 0x131c620, .high_bound = 0x131c618,
			.heap_block_size = 16, .const_method_size = 48 } },
		.o = { .cp_size = 72, .cm_size = 48, .pc_desc_size = 16, .nmethod_size = 352 },
		.code_bias = 0, .stride_rel = 0x13668b8, .name_off = 32,
		.field_at = {
			0x1306a30, 0x1306a90, 0x1306b50, 0x1306b80, 0x1306bb0, 0x1306010,
			0x1306040, 0x1307a50, 0x1307ae0, 0x1307b40, 0x1307ba0, 0,
			0x1307bd0, 0x1307b10, 0x1307a80, 0, 0, 0,
			0x1308140, 0x1307e70, 0x1307d50, 0, 0x1307cc0, 0x1307f30,
			0x1307f60, 0x1307d20, 0, 0x1307f90, 0, 0,
			0, 0x1307990, 0x13079c0, 0x1305200, 0x1305290, 0x1305440,
			0x1305500, 0x13054d0, 0x1305530, 0x1305560, 0x13041e0, 0x1304330,
			0, 0x1304b40, 0x13056e0, 0, 0x1305710 },
		.name_at = {
			0x1050734, 0x1050746, 0xfcd70b, 0xfcd70b, 0xfcd70b, 0x10520db,
			0x10520db, 0xfdcca7, 0xfdcca7, 0xfdcca7, 0xfdcca7, 0,
			0xfdcca7, 0xfdcca7, 0xfdcca7, 0, 0, 0,
			0x1021679, 0x1021679, 0x10508b8, 0, 0x10508b8, 0x1021679,
			0x1021679, 0x10508b8, 0, 0x1021679, 0, 0,
			0, 0x10508e1, 0x10508e1, 0x1006bb1, 0x1006bb1, 0xfb3a9a,
			0xfb3a9a, 0xfb3a9a, 0xfb3a9a, 0xfb3a9a, 0x1057844, 0x1057844,
			0, 0x102446a, 0xfd10df, 0, 0xfd10df },
		.field_size = {
			0x4, 0x8, 0x8, 0x8, 0x4, 0x8,
			0x8, 0x8, 0x4, 0x4, 0x8, 0,
			0x8, 0x4, 0x4, 0, 0, 0,
			0x4, 0x4, 0x8, 0, 0x8, 0x4,
			0x4, 0x8, 0, 0x4, 0, 0,
			0, 0x4, 0x4, 0x8, 0x2, 0x8,
			0x2, 0x2, 0x2, 0x2, 0x8, 0x2,
			0, 0x8, 0x2, 0, 0x1 },
		.class_size = {
			0, 0, 0x158, 0x158, 0x158, 0x70,
			0x70, 0x68, 0x68, 0x68, 0x68, 0,
			0x68, 0x68, 0x68, 0, 0, 0,
			0x160, 0x160, 0x160, 0, 0x160, 0x160,
			0x160, 0x160, 0, 0x160, 0, 0,
			0, 0x10, 0x10, 0x58, 0x58, 0x30,
			0x30, 0x30, 0x30, 0x30, 0x48, 0x48,
			0, 0xd0, 0x8, 0, 0x8 },
	},
	/* 25 */
	{
		.file = { .version = 25, .l = { .code_heaps = 0x17a3990, .low_bound = 0x17a39b0, .high_bound = 0x17a39a8,
			.heap_block_size = 8, .const_method_size = 56 } },
		.o = { .cp_size = 72, .cm_size = 56, .pc_desc_size = 16, .nmethod_size = 224 },
		.code_bias = 0, .stride_rel = 0x180b5d8, .name_off = 32,
		.field_at = {
			0x178bb20, 0x178bb80, 0x178bc40, 0x178bc70, 0x178bca0, 0x178b100,
			0x178b130, 0x178c000, 0x178c150, 0x178c1b0, 0, 0x178c120,
			0, 0x178c180, 0x178c030, 0x178c0c0, 0x178c240, 0x178c270,
			0x178c660, 0x178c450, 0, 0x178c3f0, 0x178c300, 0,
			0x178c4b0, 0, 0x178c4e0, 0, 0x178c600, 0x178c630,
			0, 0x178bf40, 0x178bf70, 0x178a320, 0x178a3b0, 0x178a530,
			0x178a5f0, 0x178a5c0, 0x178a620, 0x178a650, 0x17892d0, 0x1789420,
			0, 0x1789cc0, 0x178a800, 0, 0x178a830 },
		.name_at = {
			0x13a3acb, 0x13a3add, 0x137c467, 0x137c467, 0x137c467, 0x13a41fc,
			0x13a41fc, 0x13804b6, 0x13804b6, 0x13804b6, 0, 0x13804b6,
			0, 0x13804b6, 0x13804b6, 0x13804b6, 0x13804b6, 0x13804b6,
			0x1394ffd, 0x1394ffd, 0, 0x1394ffd, 0x1394ffd, 0,
			0x1394ffd, 0, 0x1394ffd, 0, 0x1394ffd, 0x1394ffd,
			0, 0x13a3c72, 0x13a3c72, 0x138d646, 0x138d646, 0x1377321,
			0x1377321, 0x1377321, 0x1377321, 0x1377321, 0x13a6ae5, 0x13a6ae5,
			0, 0x1395c89, 0x137ca7e, 0, 0x137ca7e },
		.field_size = {
			0x4, 0x8, 0x8, 0x8, 0x4, 0x8,
			0x8, 0x8, 0x2, 0x4, 0, 0x4,
			0, 0x4, 0x4, 0x4, 0x8, 0x4,
			0x4, 0x4, 0, 0x4, 0x8, 0,
			0x4, 0, 0x4, 0, 0x8, 0x4,
			0, 0x4, 0x4, 0x8, 0x2, 0x8,
			0x2, 0x4, 0x2, 0x2, 0x8, 0x2,
			0, 0x8, 0x2, 0, 0x1 },
		.class_size = {
			0, 0, 0x150, 0x150, 0x150, 0x70,
			0x70, 0x40, 0x40, 0x40, 0, 0x40,
			0, 0x40, 0x40, 0x40, 0x40, 0x40,
			0xe0, 0xe0, 0, 0xe0, 0xe0, 0,
			0xe0, 0, 0xe0, 0, 0xe0, 0xe0,
			0, 0x10, 0x10, 0x58, 0x58, 0x38,
			0x38, 0x38, 0x38, 0x38, 0x48, 0x48,
			0, 0xc8, 0x8, 0, 0x8 },
	},
};

/* And the offsets java_vm_read_offsets read from their processes. */
static const struct java_offsets offsets[] = {
	{
		.symbol_length = { 4, 2 },
		.symbol_body = { 6, 1 },
		.klass_name = { 24, 8 },
		.cp_source_file_index = { 54, 2 },
		.ik_source_file_index = { 0, 0 },
		.cp_holder = { 24, 8 },
		.cp_size = 72,
		.method_const_method = { 8, 8 },
		.method_access_flags = { 40, 2 },
		.cm_constants = { 8, 8 },
		.cm_code_size = { 32, 2 },
		.cm_flags = { 28, 2 },
		.cm_name_index = { 34, 2 },
		.cm_signature_index = { 36, 2 },
		.cm_size = 48,
		.cm_has_linenumber_table = 1,
		.acc_native = 256,
		.blob_name = { 96, 8 },
		.blob_code_begin = { 32, 8 },
		.blob_code_end = { 40, 8 },
		.blob_size = { 12, 4 },
		.blob_relocation_size = { 0, 0 },
		.blob_mutable_data = { 0, 0 },
		.blob_mutable_data_size = { 0, 0 },
		.nm_compile_id = { 304, 4 },
		.nm_method = { 112, 8 },
		.nm_metadata_offset = { 260, 4 },
		.nm_scopes_pcs_offset = { 268, 4 },
		.nm_scopes_data = { 120, 8 },
		.nm_dependencies_offset = { 272, 4 },
		.nm_immutable_data = { 0, 0 },
		.nm_immutable_data_size = { 0, 0 },
		.nm_immutable_ref_count = { 0, 0 },
		.nm_deopt = { 128, 8 },
		.blob_frame_complete = { 20, 4 },
		.pc_offset = { 0, 4 },
		.pc_scope_decode_offset = { 4, 4 },
		.pc_desc_size = 16,
		.nmethod_size = 352,
		.nmethod_layout = 1,
		.code_offsets = 0,
		.unsigned5_excluded = 0,
		.known = 1,
	},
	{
		.symbol_length = { 4, 2 },
		.symbol_body = { 6, 1 },
		.klass_name = { 24, 8 },
		.cp_source_file_index = { 54, 2 },
		.ik_source_file_index = { 0, 0 },
		.cp_holder = { 24, 8 },
		.cp_size = 72,
		.method_const_method = { 8, 8 },
		.method_access_flags = { 44, 2 },
		.cm_constants = { 8, 8 },
		.cm_code_size = { 34, 2 },
		.cm_flags = { 28, 4 },
		.cm_name_index = { 36, 2 },
		.cm_signature_index = { 38, 2 },
		.cm_size = 56,
		.cm_has_linenumber_table = 1,
		.acc_native = 256,
		.blob_name = { 8, 8 },
		.blob_code_begin = { 36, 4 },
		.blob_code_end = { 40, 4 },
		.blob_size = { 24, 4 },
		.blob_relocation_size = { 28, 4 },
		.blob_mutable_data = { 16, 8 },
		.blob_mutable_data_size = { 48, 4 },
		.nm_compile_id = { 212, 4 },
		.nm_method = { 80, 8 },
		.nm_metadata_offset = { 0, 0 },
		.nm_scopes_pcs_offset = { 196, 4 },
		.nm_scopes_data = { 200, 4 },
		.nm_dependencies_offset = { 0, 0 },
		.nm_immutable_data = { 96, 8 },
		.nm_immutable_data_size = { 160, 4 },
		.nm_immutable_ref_count = { 0, 0 },
		.nm_deopt = { 176, 4 },
		.blob_frame_complete = { 54, 2 },
		.pc_offset = { 0, 4 },
		.pc_scope_decode_offset = { 4, 4 },
		.pc_desc_size = 16,
		.nmethod_size = 224,
		.nmethod_layout = 3,
		.code_offsets = 1,
		.unsigned5_excluded = 1,
		.known = 1,
	},
};

struct image {
	struct {
		uint64_t addr;
		const uint8_t *data;
		uint32_t len;
	} s[MAX_STRETCHES];
	unsigned n;
	struct fuzz_memory flat;
};

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Whether [addr, addr + len) meets a stretch kept or the input's own
 * memory: such a stretch is left out, so that each byte has one value
 * (a process's memory does), whichever read reads it.
 */
static bool overlaps(const struct image *im, uint64_t addr, uint32_t len)
{
	unsigned i;

	if (!len || addr + len < addr)
		return true;
	if (addr < FUZZ_MEMORY_BASE + im->flat.size && addr + len > FUZZ_MEMORY_BASE)
		return true;
	for (i = 0; i < im->n; i++)
		if (addr < im->s[i].addr + im->s[i].len && addr + len > im->s[i].addr)
			return true;
	return false;
}

/* interp_read_fn: a stretch that holds all len bytes, else the input at FUZZ_MEMORY_BASE. */
static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct image *im = ctx;
	unsigned i;

	for (i = 0; i < im->n; i++)
		if (addr >= im->s[i].addr && addr - im->s[i].addr <= im->s[i].len &&
		    len <= im->s[i].len - (addr - im->s[i].addr)) {
			memcpy(buf, im->s[i].data + (addr - im->s[i].addr), len);
			return 0;
		}
	return fuzz_memory_read((void *)&im->flat, addr, buf, len);
}

static bool field_in(struct java_field f, unsigned size)
{
	return !f.size || f.off + f.size <= size;
}

/* What the namer takes on trust from a layout the reader said is known. */
static void check_offsets(const struct java_vm *vm)
{
	const struct java_offsets *o = &vm->o;
	unsigned nm = o->nmethod_size;

	FUZZ_CHECK(o->known <= 1 && vm->file.l.known <= 1);
	if (!o->known)
		return;
	FUZZ_CHECK(o->nmethod_layout >= JAVA_NMETHOD_IN_BLOB &&
		   o->nmethod_layout <= JAVA_NMETHOD_MUTABLE);
	FUZZ_CHECK(field_in(o->nm_compile_id, nm) && field_in(o->nm_method, nm) &&
		   field_in(o->nm_metadata_offset, nm) && field_in(o->nm_scopes_pcs_offset, nm) &&
		   field_in(o->nm_scopes_data, nm) && field_in(o->nm_dependencies_offset, nm) &&
		   field_in(o->nm_immutable_data, nm) && field_in(o->nm_immutable_data_size, nm) &&
		   field_in(o->nm_immutable_ref_count, nm) && field_in(o->blob_code_end, nm) &&
		   field_in(o->blob_size, nm) && field_in(o->blob_relocation_size, nm) &&
		   field_in(o->blob_mutable_data, nm) && field_in(o->blob_mutable_data_size, nm));
}

static bool ends_within(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

/* s is one line of UTF-8, as folded lines and pprof's strings must be. */
static bool printable_utf8(const char *s)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t len, k;

	for (; *p; p += len) {
		if (*p < 0x20 || *p == 0x7f)
			return false;
		len = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 && *p >= 0xc2 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : 0;
		if (!len || (len == 3 && ((*p == 0xe0 && p[1] < 0xa0) || (*p == 0xed && p[1] >= 0xa0))))
			return false;
		for (k = 1; k < len; k++)
			if ((p[k] & 0xc0) != 0x80)
				return false;
	}
	return true;
}

static void check_method(const struct java_vm *vm, struct image *im, uint64_t addr, uint32_t bci)
{
	static struct java_method m, again;
	int ret = java_method_read(vm, image_read, im, addr, &m);
	uint32_t b;

	FUZZ_CHECK(ret <= 0);
	FUZZ_CHECK(java_method_read(vm, image_read, im, addr, &again) == ret);
	if (ret)
		return;
	FUZZ_CHECK(!memcmp(&m, &again, sizeof(m)));
	FUZZ_CHECK(ends_within(m.klass, sizeof(m.klass)) && ends_within(m.name, sizeof(m.name)) &&
		   ends_within(m.signature, sizeof(m.signature)) &&
		   ends_within(m.file, sizeof(m.file)));
	FUZZ_CHECK(printable_utf8(m.klass) && printable_utf8(m.name) &&
		   printable_utf8(m.signature) && printable_utf8(m.file));
	FUZZ_CHECK(m.lines_len <= JAVA_LINES_MAX && (!m.native || !m.lines_len));
	/* A line for each bytecode the method has, none past them or for none. */
	for (b = 0; b < m.code_size && b < 4096; b += 1 + b / 64)
		java_method_line(vm, &m, b);
	java_method_line(vm, &m, bci);
	FUZZ_CHECK(!java_method_line(vm, &m, m.code_size));
	FUZZ_CHECK(!java_method_line(vm, &m, JAVA_BCI_NONE));
	FUZZ_CHECK(!m.native || !java_method_line(vm, &m, 0));
}

static void check_scopes(const struct java_vm *vm, struct image *im, uint64_t nm, uint32_t pc,
			 uint32_t id)
{
	struct java_scope all[JAVA_MAX_SCOPES], few[3];
	int n = java_compiled_scopes(vm, image_read, im, nm, pc, id, all, JAVA_MAX_SCOPES), k, i;

	FUZZ_CHECK(n <= JAVA_MAX_SCOPES && n != 0);
	if (n < 1)
		return;
	/* Another compile id than the one that matched: not this nmethod's code. */
	k = java_compiled_scopes(vm, image_read, im, nm, pc, id + 1, few, 3);
	FUZZ_CHECK(k == -ESTALE);
	k = java_compiled_scopes(vm, image_read, im, nm, pc, id, few, 3);
	FUZZ_CHECK(k >= 1 && k <= 3 && (n > 3 ? k == 3 : k == n));
	for (i = 0; i < k && i < n; i++)
		FUZZ_CHECK(few[i].method == all[i].method && few[i].bci == all[i].bci);
	for (i = 0; i < n && i < 8; i++)
		check_method(vm, im, all[i].method, all[i].bci);
}

static void check_blob(const struct java_vm *vm, struct image *im, uint64_t blob)
{
	char name[JAVA_NAME_MAX], cut[8], big[JAVA_NAME_MAX + 16];
	int ret = java_blob_name(vm, image_read, im, blob, name, sizeof(name));

	FUZZ_CHECK(ret <= 0);
	if (ret)
		return;
	FUZZ_CHECK(ends_within(name, sizeof(name)) && printable_utf8(name));
	/*
	 * A smaller buffer: the name cut (a character cut at the end made '?');
	 * a bigger one: no more than JAVA_NAME_MAX kept.
	 */
	if (!java_blob_name(vm, image_read, im, blob, cut, sizeof(cut)))
		FUZZ_CHECK(ends_within(cut, sizeof(cut)) && printable_utf8(cut) &&
			   !strncmp(cut, name, strlen(cut) > 3 ? strlen(cut) - 3 : 0));
	if (!java_blob_name(vm, image_read, im, blob, big, sizeof(big)))
		FUZZ_CHECK(strlen(big) < JAVA_NAME_MAX && !strcmp(big, name));
}

int fuzz_java_names(const uint8_t *data, size_t size)
{
	static struct image im;
	struct java_vm vm;
	const uint8_t *p = data + HEADER, *end = data + size;
	uint32_t bci, pc, id;
	int ret;

	if (size < HEADER)
		return 0;
	im.n = 0;
	im.flat = (struct fuzz_memory){ data, size };
	while (end - p >= 12 && im.n < MAX_STRETCHES) {
		uint32_t len = u32_at(p + 8);

		if (len > end - p - 12)
			len = end - p - 12;
		if (!overlaps(&im, u64_at(p), len)) {
			im.s[im.n].addr = u64_at(p);
			im.s[im.n].len = len;
			im.s[im.n++].data = p + 12;
		}
		p += 12 + len;
	}
	vm = files[data[0] % (sizeof(files) / sizeof(files[0]))];
	ret = java_vm_read_offsets(&vm, image_read, &im, u64_at(data + 8));
	FUZZ_CHECK(ret <= 0);
	check_offsets(&vm);
	if (ret || !vm.o.known)
		vm.o = offsets[data[0] % (sizeof(files) / sizeof(files[0]))];
	bci = u32_at(data + 4);
	pc = u32_at(data + 32);
	id = u32_at(data + 36);
	check_method(&vm, &im, u64_at(data + 16), bci);
	check_scopes(&vm, &im, u64_at(data + 24), pc, id);
	check_blob(&vm, &im, u64_at(data + 40));
	return 0;
}
