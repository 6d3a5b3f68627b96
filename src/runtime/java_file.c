// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* A HotSpot JVM's description of itself, read from its file (java_file.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/elf.h"
#include "bpfprof/java_file.h"
#include "bpfprof/runtime_elf.h"
#include "bpfprof/util.h"

#define R_RELATIVE 8		/* R_X86_64_RELATIVE */

/* Bounds on what the tables may claim: real ones have a few thousand entries under 64 bytes. */
#define MAX_ENTRIES (1u << 17)
#define MAX_STRIDE 256
#define MAX_NAME 256		/* a type's or field's name, with its NUL */
#define MAX_RELOCS (1u << 22)
#define MAX_CLASS_SIZE 0x10000	/* no HotSpot class is near it; offsets are u16 */

/*
 * The exported symbols describing the four tables. The offsets and strides
 * are set at load by a static constructor (0 in the file, in .bss): then
 * the values vmStructs.hpp has declared since JDK 6 stand in (VMStructEntry:
 * typeName, fieldName, typeString, int32 isStatic, uint64 offset, address;
 * VMTypeEntry: typeName, superclassName, three int32 flags, uint64 size;
 * the constants: name, then an int32 or uint64 value).
 */
enum table_sym {
	SYM_STRUCTS, SYM_STRUCT_STRIDE, SYM_STRUCT_TYPE_NAME, SYM_STRUCT_FIELD_NAME,
	SYM_STRUCT_TYPE_STRING, SYM_STRUCT_IS_STATIC, SYM_STRUCT_OFFSET, SYM_STRUCT_ADDRESS,
	SYM_TYPES, SYM_TYPE_STRIDE, SYM_TYPE_TYPE_NAME, SYM_TYPE_SIZE,
	SYM_INTS, SYM_INT_STRIDE, SYM_INT_NAME, SYM_INT_VALUE,
	SYM_LONGS, SYM_LONG_STRIDE, SYM_LONG_NAME, SYM_LONG_VALUE,
	NR_SYMS
};

static const struct {
	const char *name;
	uint64_t declared;
} table_syms[NR_SYMS] = {
	[SYM_STRUCTS] = { "gHotSpotVMStructs" },
	[SYM_STRUCT_STRIDE] = { "gHotSpotVMStructEntryArrayStride", 48 },
	[SYM_STRUCT_TYPE_NAME] = { "gHotSpotVMStructEntryTypeNameOffset", 0 },
	[SYM_STRUCT_FIELD_NAME] = { "gHotSpotVMStructEntryFieldNameOffset", 8 },
	[SYM_STRUCT_TYPE_STRING] = { "gHotSpotVMStructEntryTypeStringOffset", 16 },
	[SYM_STRUCT_IS_STATIC] = { "gHotSpotVMStructEntryIsStaticOffset", 24 },
	[SYM_STRUCT_OFFSET] = { "gHotSpotVMStructEntryOffsetOffset", 32 },
	[SYM_STRUCT_ADDRESS] = { "gHotSpotVMStructEntryAddressOffset", 40 },
	[SYM_TYPES] = { "gHotSpotVMTypes" },
	[SYM_TYPE_STRIDE] = { "gHotSpotVMTypeEntryArrayStride", 40 },
	[SYM_TYPE_TYPE_NAME] = { "gHotSpotVMTypeEntryTypeNameOffset", 0 },
	[SYM_TYPE_SIZE] = { "gHotSpotVMTypeEntrySizeOffset", 32 },
	[SYM_INTS] = { "gHotSpotVMIntConstants" },
	[SYM_INT_STRIDE] = { "gHotSpotVMIntConstantEntryArrayStride", 16 },
	[SYM_INT_NAME] = { "gHotSpotVMIntConstantEntryNameOffset", 0 },
	[SYM_INT_VALUE] = { "gHotSpotVMIntConstantEntryValueOffset", 8 },
	[SYM_LONGS] = { "gHotSpotVMLongConstants" },
	[SYM_LONG_STRIDE] = { "gHotSpotVMLongConstantEntryArrayStride", 16 },
	[SYM_LONG_NAME] = { "gHotSpotVMLongConstantEntryNameOffset", 0 },
	[SYM_LONG_VALUE] = { "gHotSpotVMLongConstantEntryValueOffset", 8 },
};

struct reloc {
	uint64_t at, target;
};

struct jf {
	Elf *elf;
	int fd;
	struct runtime_segments segs;
	Elf_Scn *rela;
	struct reloc *relocs;		/* relative relocations, sorted by address */
	size_t nr_relocs;
	uint64_t sym[NR_SYMS];		/* the symbols' addresses; 0: not found */
};

static void note_symbol(void *file, const char *name, const GElf_Sym *sym, size_t index)
{
	struct jf *f = file;
	size_t i;

	(void)index;
	if (strncmp(name, "gHotSpotVM", 10) || GELF_ST_TYPE(sym->st_info) != STT_OBJECT ||
	    sym->st_size != 8)
		return;
	for (i = 0; i < NR_SYMS; i++)
		if (!f->sym[i] && !strcmp(name, table_syms[i].name))
			f->sym[i] = sym->st_value;
}

static int read_sections(struct jf *f)
{
	Elf_Scn *scn = NULL, *symtab = NULL;
	GElf_Shdr sh, symtab_sh;
	size_t shstrndx;
	GElf_Ehdr eh;

	if (elf_kind(f->elf) != ELF_K_ELF)
		return -ENOENT;
	if (!gelf_getehdr(f->elf, &eh) || elf_getshdrstrndx(f->elf, &shstrndx))
		return -EINVAL;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		return -ENOENT;
	while ((scn = elf_nextscn(f->elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		name = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_DYNSYM)
			runtime_elf_symbols(f->elf, scn, &sh, note_symbol, f);
		else if (sh.sh_type == SHT_SYMTAB)
			symtab = scn, symtab_sh = sh;
		else if (sh.sh_type == SHT_RELA && name && !strcmp(name, ".rela.dyn"))
			f->rela = scn;
	}
	/* The exports are in .dynsym; .symtab, if any, only where a build hides some. */
	if (symtab && (!f->sym[SYM_STRUCTS] || !f->sym[SYM_TYPES]))
		runtime_elf_symbols(f->elf, symtab, &symtab_sh, note_symbol, f);
	if (!f->sym[SYM_STRUCTS])
		return -ENOENT;
	runtime_elf_segments(f->elf, false, &f->segs);
	return 0;
}

static int by_address(const void *a, const void *b)
{
	const struct reloc *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/* The relative relocations of .rela.dyn, sorted by where they write (ld writes them so already). */
static int read_relocs(struct jf *f)
{
	Elf_Data *d = f->rela ? runtime_elf_section_data(f->rela, ELF_MAX_SYMTAB_BYTES) : NULL;
	size_t i, n, entsize = gelf_fsize(f->elf, ELF_T_RELA, 1, EV_CURRENT);
	bool sorted = true;
	GElf_Rela r;

	if (!d || !entsize)
		return -EINVAL;
	n = d->d_size / entsize;
	if (n > MAX_RELOCS)
		return -EINVAL;
	f->relocs = malloc((n ? n : 1) * sizeof(*f->relocs));
	if (!f->relocs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!gelf_getrela(d, i, &r) || GELF_R_TYPE(r.r_info) != R_RELATIVE)
			continue;
		if (f->nr_relocs && r.r_offset < f->relocs[f->nr_relocs - 1].at)
			sorted = false;
		f->relocs[f->nr_relocs++] = (struct reloc){ r.r_offset, (uint64_t)r.r_addend };
	}
	if (!sorted)
		qsort(f->relocs, f->nr_relocs, sizeof(*f->relocs), by_address);
	return 0;
}

/* The relocation target of the pointer at vaddr; false if no relative relocation writes it. */
static bool reloc_at(const struct jf *f, uint64_t vaddr, uint64_t *target)
{
	size_t lo = 0, hi = f->nr_relocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->relocs[mid].at < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == f->nr_relocs || f->relocs[lo].at != vaddr)
		return false;
	*target = f->relocs[lo].target;
	return true;
}

/*
 * The pointer at vaddr as loaded, less the load address: its relocation's
 * target, else the file's bytes (0: a null pointer). Negative errno if
 * the file does not hold vaddr.
 */
static int pointer_at(const struct jf *f, uint64_t vaddr, uint64_t *out)
{
	int ret;

	if (reloc_at(f, vaddr, out))
		return 0;
	ret = runtime_elf_read(&f->segs, f->fd, vaddr, out, sizeof(*out));
	return ret < 0 ? ret : ret ? 0 : -EINVAL;
}

/* The NUL-terminated string at vaddr, of fewer than size bytes: 0 or a negative errno. */
static int string_at(const struct jf *f, uint64_t vaddr, char *buf, size_t size)
{
	const struct runtime_segment *s = runtime_segment_of(&f->segs, vaddr);
	size_t n = size;
	int ret;

	if (!s)
		return -EINVAL;
	if (n > s->filesz - (vaddr - s->vaddr))
		n = s->filesz - (vaddr - s->vaddr);
	ret = runtime_elf_read(&f->segs, f->fd, vaddr, buf, n);
	if (ret <= 0)
		return ret < 0 ? ret : -EINVAL;
	return memchr(buf, '\0', n) ? 0 : -EINVAL;
}

/*
 * A symbol's value as the file holds it (a relocation's target for a
 * pointer), or the declared one where the file holds none: the symbol in
 * .bss, or absent.
 */
static uint64_t sym_value(const struct jf *f, enum table_sym i)
{
	uint64_t v;

	if (f->sym[i] && pointer_at(f, f->sym[i], &v) == 0 && v)
		return v;
	return table_syms[i].declared;
}

/* One table: where it is, its entries' size, and where an entry's members lie (~0: none). */
struct table {
	char kind;			/* 'F', 'T', 'I', 'L' as java_entry_fn's */
	uint64_t base, stride;
	uint64_t name, field, type_string, is_static, value, address;
	uint8_t value_size;
};

static bool member_fits(const struct table *t, uint64_t at, size_t size)
{
	return at == ~0ull || (at <= t->stride && size <= t->stride - at);
}

static bool table_fits(const struct table *t)
{
	return t->stride >= 8 && t->stride <= MAX_STRIDE && member_fits(t, t->name, 8) &&
	       member_fits(t, t->field, 8) && member_fits(t, t->type_string, 8) &&
	       member_fits(t, t->is_static, 4) && member_fits(t, t->value, t->value_size) &&
	       member_fits(t, t->address, 8) && t->name != ~0ull;
}

static uint64_t le_at(const uint8_t *p, size_t size)
{
	uint64_t v = 0;

	memcpy(&v, p, size);
	return v;
}

/* An entry as each_entry gives it: at, the address of its value member. */
typedef void entry_fn(void *ctx, char kind, const char *type, const char *field,
		      const char *type_string, uint64_t value, uint64_t address, uint64_t at);

/*
 * Each entry of t to fn, up to the one whose name is null; -EINVAL if an
 * entry, a pointer or a name cannot be read or there is no end.
 */
static int each_entry(const struct jf *f, const struct table *t, entry_fn *fn, void *ctx)
{
	char name[MAX_NAME], field[MAX_NAME], type_string[MAX_NAME];
	uint8_t e[MAX_STRIDE];
	uint64_t i, at, p, address;
	int ret;

	if (!t->base || !table_fits(t))
		return -EINVAL;
	for (i = 0; i < MAX_ENTRIES; i++) {
		at = t->base + i * t->stride;
		ret = runtime_elf_read(&f->segs, f->fd, at, e, t->stride);
		if (ret <= 0)
			return ret < 0 ? ret : -EINVAL;
		if ((ret = pointer_at(f, at + t->name, &p)))
			return ret;
		if (!p)
			return 0;
		if ((ret = string_at(f, p, name, sizeof(name))))
			return ret;
		field[0] = type_string[0] = '\0';
		if (t->field != ~0ull) {
			if ((ret = pointer_at(f, at + t->field, &p)) ||
			    (p && (ret = string_at(f, p, field, sizeof(field)))))
				return ret;
		}
		if (t->type_string != ~0ull) {
			if ((ret = pointer_at(f, at + t->type_string, &p)) ||
			    (p && (ret = string_at(f, p, type_string, sizeof(type_string)))))
				return ret;
		}
		address = 0;
		if (t->is_static != ~0ull && le_at(e + t->is_static, 4) &&
		    (ret = pointer_at(f, at + t->address, &address)))
			return ret;
		fn(ctx, t->kind, name, field, type_string, le_at(e + t->value, t->value_size),
		   address, at + t->value);
	}
	return -EINVAL;
}

/* The four tables, types first: a field is checked against its class's size. */
static int each_table(const struct jf *f, entry_fn *fn, void *ctx)
{
	const uint64_t none = ~0ull;
	struct table t[4] = {
		{ 'T', sym_value(f, SYM_TYPES), sym_value(f, SYM_TYPE_STRIDE),
		  sym_value(f, SYM_TYPE_TYPE_NAME), none, none, none, sym_value(f, SYM_TYPE_SIZE),
		  none, 8 },
		{ 'F', sym_value(f, SYM_STRUCTS), sym_value(f, SYM_STRUCT_STRIDE),
		  sym_value(f, SYM_STRUCT_TYPE_NAME), sym_value(f, SYM_STRUCT_FIELD_NAME),
		  sym_value(f, SYM_STRUCT_TYPE_STRING), sym_value(f, SYM_STRUCT_IS_STATIC),
		  sym_value(f, SYM_STRUCT_OFFSET), sym_value(f, SYM_STRUCT_ADDRESS), 8 },
		{ 'I', sym_value(f, SYM_INTS), sym_value(f, SYM_INT_STRIDE),
		  sym_value(f, SYM_INT_NAME), none, none, none, sym_value(f, SYM_INT_VALUE), none, 4 },
		{ 'L', sym_value(f, SYM_LONGS), sym_value(f, SYM_LONG_STRIDE),
		  sym_value(f, SYM_LONG_NAME), none, none, none, sym_value(f, SYM_LONG_VALUE), none,
		  8 },
	};
	size_t i;
	int ret;

	/* The tables' symbols hold pointers to them: the symbol's value is where it points. */
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		if (t[i].kind != 'T' && t[i].kind != 'F' && !t[i].base)
			continue;	/* the constants are optional */
		if ((ret = each_entry(f, &t[i], fn, ctx)))
			return ret;
	}
	return 0;
}

static int open_file(struct jf *f, Elf *elf, int fd)
{
	int ret;

	memset(f, 0, sizeof(*f));
	f->elf = elf, f->fd = fd;
	if ((ret = read_sections(f)))
		return ret;
	return read_relocs(f);
}

struct lister {
	java_entry_fn *fn;
	void *ctx;
};

static void list_entry(void *ctx, char kind, const char *type, const char *field,
		       const char *type_string, uint64_t value, uint64_t address, uint64_t at)
{
	struct lister *l = ctx;

	(void)at;
	l->fn(l->ctx, kind, type, field, type_string, value, address);
}

int java_file_entries(Elf *elf, int fd, java_entry_fn *fn, void *ctx)
{
	struct lister l = { fn, ctx };
	struct jf f;
	int ret = open_file(&f, elf, fd);

	if (!ret)
		ret = each_table(&f, list_entry, &l);
	free(f.relocs);
	return ret;
}

/* What is read of the tables: classes' sizes, statics' addresses, fields' offsets. */
enum java_class {
	C_NONE, C_HEAP_BLOCK, C_CONST_METHOD, C_CONSTANT_POOL, C_PC_DESC, C_SYMBOL, C_CODE_BLOB,
	C_NMETHOD, C_METHOD, C_KLASS, C_INSTANCE_KLASS, C_CODE_HEAP, C_VIRTUAL_SPACE,
	NR_CLASSES
};

static const char *const class_names[NR_CLASSES] = {
	[C_HEAP_BLOCK] = "HeapBlock", [C_CONST_METHOD] = "ConstMethod",
	[C_CONSTANT_POOL] = "ConstantPool", [C_PC_DESC] = "PcDesc", [C_SYMBOL] = "Symbol",
	[C_CODE_BLOB] = "CodeBlob", [C_NMETHOD] = "nmethod", [C_METHOD] = "Method",
	[C_KLASS] = "Klass", [C_INSTANCE_KLASS] = "InstanceKlass", [C_CODE_HEAP] = "CodeHeap",
	[C_VIRTUAL_SPACE] = "VirtualSpace",
};

enum java_static { S_CODE_HEAPS, S_LOW_BOUND, S_HIGH_BOUND, S_VM_MAJOR, NR_STATICS };

enum java_item {
	F_ARRAY_LEN, F_ARRAY_DATA, F_HEAP_MEMORY, F_HEAP_SEGMAP, F_HEAP_LOG2, F_VS_LOW, F_VS_HIGH,
	F_BLOB_NAME, F_BLOB_FRAME_COMPLETE, F_BLOB_FRAME_SIZE, F_BLOB_CODE_BEGIN, F_BLOB_CODE_OFFSET,
	F_BLOB_CODE_END, F_BLOB_DATA_OFFSET, F_BLOB_SIZE, F_BLOB_RELOCATION_SIZE,
	F_BLOB_MUTABLE_DATA, F_BLOB_MUTABLE_DATA_SIZE,
	F_NM_COMPILE_ID, F_NM_ORIG_PC, F_NM_DEOPT_BEGIN, F_NM_DEOPT_OFFSET, F_NM_METHOD,
	F_NM_METADATA_OFFSET, F_NM_SCOPES_PCS_OFFSET, F_NM_SCOPES_DATA_BEGIN,
	F_NM_SCOPES_DATA_OFFSET, F_NM_DEPENDENCIES_OFFSET, F_NM_IMMUTABLE_DATA,
	F_NM_IMMUTABLE_DATA_SIZE, F_NM_IMMUTABLE_REF_COUNT,
	F_PC_OFFSET, F_PC_SCOPE_DECODE,
	F_METHOD_CONST_METHOD, F_METHOD_ACCESS_FLAGS,
	F_CM_CONSTANTS, F_CM_CODE_SIZE, F_CM_FLAGS, F_CM_NAME_INDEX, F_CM_SIGNATURE_INDEX,
	F_CP_HOLDER, F_CP_SOURCE_FILE, F_IK_SOURCE_FILE, F_KLASS_NAME,
	F_SYMBOL_LENGTH, F_SYMBOL_LENGTH_AND_REFCOUNT, F_SYMBOL_BODY,
	NR_ITEMS
};
_Static_assert(NR_ITEMS <= JAVA_VM_FIELDS, "java_vm holds every field");

/*
 * The fields, by the names they have had: nmethod's were CompiledMethod's
 * to JDK 22; a name's later spellings in data.go's order. The class is
 * the one whose size bounds the offset; size: the width where the type's
 * name does not say (AccessFlags: a u2 at JDK 25, a jint before; the low
 * bytes are read either way).
 */
static const struct want {
	uint8_t item, cls;
	const char *type, *field;
	uint8_t size;
} wants[] = {
	{ F_ARRAY_LEN, C_NONE, "GrowableArrayBase", "_len", 4 },
	{ F_ARRAY_LEN, C_NONE, "GenericGrowableArray", "_len", 4 },
	{ F_ARRAY_DATA, C_NONE, "GrowableArray<int>", "_data", 8 },
	{ F_HEAP_MEMORY, C_CODE_HEAP, "CodeHeap", "_memory", 8 },
	{ F_HEAP_SEGMAP, C_CODE_HEAP, "CodeHeap", "_segmap", 8 },
	{ F_HEAP_LOG2, C_CODE_HEAP, "CodeHeap", "_log2_segment_size", 4 },
	{ F_VS_LOW, C_VIRTUAL_SPACE, "VirtualSpace", "_low_boundary", 8 },
	{ F_VS_HIGH, C_VIRTUAL_SPACE, "VirtualSpace", "_high_boundary", 8 },
	{ F_BLOB_NAME, C_CODE_BLOB, "CodeBlob", "_name", 8 },
	{ F_BLOB_FRAME_COMPLETE, C_CODE_BLOB, "CodeBlob", "_frame_complete_offset", 4 },
	{ F_BLOB_FRAME_SIZE, C_CODE_BLOB, "CodeBlob", "_frame_size", 4 },
	{ F_BLOB_CODE_BEGIN, C_CODE_BLOB, "CodeBlob", "_code_begin", 8 },
	{ F_BLOB_CODE_OFFSET, C_CODE_BLOB, "CodeBlob", "_code_offset", 4 },
	{ F_BLOB_CODE_END, C_CODE_BLOB, "CodeBlob", "_code_end", 8 },
	{ F_BLOB_DATA_OFFSET, C_CODE_BLOB, "CodeBlob", "_data_offset", 4 },
	{ F_BLOB_SIZE, C_CODE_BLOB, "CodeBlob", "_size", 4 },
	{ F_BLOB_RELOCATION_SIZE, C_CODE_BLOB, "CodeBlob", "_relocation_size", 4 },
	{ F_BLOB_MUTABLE_DATA, C_CODE_BLOB, "CodeBlob", "_mutable_data", 8 },
	{ F_BLOB_MUTABLE_DATA_SIZE, C_CODE_BLOB, "CodeBlob", "_mutable_data_size", 4 },
	{ F_NM_COMPILE_ID, C_NMETHOD, "nmethod", "_compile_id", 4 },
	{ F_NM_ORIG_PC, C_NMETHOD, "nmethod", "_orig_pc_offset", 4 },
	{ F_NM_DEOPT_BEGIN, C_NMETHOD, "CompiledMethod", "_deopt_handler_begin", 8 },
	{ F_NM_DEOPT_BEGIN, C_NMETHOD, "nmethod", "_deopt_handler_begin", 8 },
	{ F_NM_DEOPT_OFFSET, C_NMETHOD, "nmethod", "_deoptimize_offset", 4 },
	{ F_NM_DEOPT_OFFSET, C_NMETHOD, "nmethod", "_deopt_handler_offset", 4 },
	{ F_NM_DEOPT_OFFSET, C_NMETHOD, "nmethod", "_deopt_handler_entry_offset", 4 },
	{ F_NM_METHOD, C_NMETHOD, "CompiledMethod", "_method", 8 },
	{ F_NM_METHOD, C_NMETHOD, "nmethod", "_method", 8 },
	{ F_NM_METADATA_OFFSET, C_NMETHOD, "nmethod", "_metadata_offset", 4 },
	{ F_NM_SCOPES_PCS_OFFSET, C_NMETHOD, "nmethod", "_scopes_pcs_offset", 4 },
	{ F_NM_SCOPES_DATA_BEGIN, C_NMETHOD, "CompiledMethod", "_scopes_data_begin", 8 },
	{ F_NM_SCOPES_DATA_BEGIN, C_NMETHOD, "nmethod", "_scopes_data_begin", 8 },
	{ F_NM_SCOPES_DATA_OFFSET, C_NMETHOD, "nmethod", "_scopes_data_offset", 4 },
	{ F_NM_DEPENDENCIES_OFFSET, C_NMETHOD, "nmethod", "_dependencies_offset", 4 },
	{ F_NM_IMMUTABLE_DATA, C_NMETHOD, "nmethod", "_immutable_data", 8 },
	{ F_NM_IMMUTABLE_DATA_SIZE, C_NMETHOD, "nmethod", "_immutable_data_size", 4 },
	{ F_NM_IMMUTABLE_REF_COUNT, C_NMETHOD, "nmethod", "_immutable_data_ref_count_offset", 4 },
	{ F_PC_OFFSET, C_PC_DESC, "PcDesc", "_pc_offset", 4 },
	{ F_PC_SCOPE_DECODE, C_PC_DESC, "PcDesc", "_scope_decode_offset", 4 },
	{ F_METHOD_CONST_METHOD, C_METHOD, "Method", "_constMethod", 8 },
	{ F_METHOD_ACCESS_FLAGS, C_METHOD, "Method", "_access_flags", 2 },
	{ F_CM_CONSTANTS, C_CONST_METHOD, "ConstMethod", "_constants", 8 },
	{ F_CM_CODE_SIZE, C_CONST_METHOD, "ConstMethod", "_code_size", 2 },
	{ F_CM_FLAGS, C_CONST_METHOD, "ConstMethod", "_flags", 1 },
	{ F_CM_FLAGS, C_CONST_METHOD, "ConstMethod", "_flags._flags", 1 },
	{ F_CM_NAME_INDEX, C_CONST_METHOD, "ConstMethod", "_name_index", 2 },
	{ F_CM_SIGNATURE_INDEX, C_CONST_METHOD, "ConstMethod", "_signature_index", 2 },
	{ F_CP_HOLDER, C_CONSTANT_POOL, "ConstantPool", "_pool_holder", 8 },
	{ F_CP_SOURCE_FILE, C_CONSTANT_POOL, "ConstantPool", "_source_file_name_index", 2 },
	{ F_IK_SOURCE_FILE, C_INSTANCE_KLASS, "InstanceKlass", "_source_file_name_index", 2 },
	{ F_KLASS_NAME, C_KLASS, "Klass", "_name", 8 },
	{ F_SYMBOL_LENGTH, C_SYMBOL, "Symbol", "_length", 2 },
	{ F_SYMBOL_LENGTH_AND_REFCOUNT, C_SYMBOL, "Symbol", "_length_and_refcount", 4 },
	{ F_SYMBOL_BODY, C_SYMBOL, "Symbol", "_body", 1 },
};

static const struct {
	const char *type, *field;
} statics[NR_STATICS] = {
	[S_CODE_HEAPS] = { "CodeCache", "_heaps" },
	[S_LOW_BOUND] = { "CodeCache", "_low_bound" },
	[S_HIGH_BOUND] = { "CodeCache", "_high_bound" },
	[S_VM_MAJOR] = { "Abstract_VM_Version", "_vm_major_version" },
};

/* A type's name as vmStructs writes it: its width, or fallback if it does not say. */
static uint8_t width_of(const char *t, uint8_t fallback)
{
	static const struct {
		const char *name;
		uint8_t size;
	} widths[] = {
		{ "int", 4 }, { "jint", 4 }, { "juint", 4 }, { "u4", 4 }, { "uint", 4 },
		{ "int32_t", 4 }, { "uint32_t", 4 }, { "unsigned int", 4 },
		{ "u2", 2 }, { "jushort", 2 }, { "jshort", 2 }, { "short", 2 }, { "int16_t", 2 },
		{ "uint16_t", 2 }, { "unsigned short", 2 },
		{ "u1", 1 }, { "jubyte", 1 }, { "jbyte", 1 }, { "bool", 1 }, { "char", 1 },
		{ "int8_t", 1 }, { "uint8_t", 1 },
		{ "u8", 8 }, { "jlong", 8 }, { "julong", 8 }, { "intx", 8 }, { "uintx", 8 },
		{ "size_t", 8 }, { "address", 8 }, { "int64_t", 8 }, { "uint64_t", 8 },
		{ "intptr_t", 8 }, { "uintptr_t", 8 },
	};
	size_t i, n = strlen(t);

	if (n && t[n - 1] == '*')
		return 8;
	for (i = 0; i < ARRAY_SIZE(widths); i++)
		if (!strcmp(t, widths[i].name))
			return widths[i].size;
	return fallback;
}

/* What the file stage gathers. */
struct gather {
	struct java_vm *vm;
	uint64_t class_size[NR_CLASSES];
	uint64_t statics[NR_STATICS];
	uint64_t name_member;		/* the structs' type name member, and its value member */
	uint64_t value_member;
	const struct jf *f;
	int error;
};

static void gather_entry(void *ctx, char kind, const char *type, const char *field,
			 const char *type_string, uint64_t value, uint64_t address, uint64_t at)
{
	struct gather *g = ctx;
	struct java_vm *vm = g->vm;
	uint64_t name;
	size_t i;

	if (kind == 'T') {
		for (i = 1; i < NR_CLASSES; i++)
			if (!strcmp(type, class_names[i]))
				g->class_size[i] = value;
		return;
	}
	if (kind != 'F')
		return;
	if (address) {
		for (i = 0; i < NR_STATICS; i++)
			if (!g->statics[i] && !strcmp(type, statics[i].type) &&
			    !strcmp(field, statics[i].field))
				g->statics[i] = address;
		return;
	}
	for (i = 0; i < ARRAY_SIZE(wants); i++) {
		const struct want *w = &wants[i];

		if (vm->field_at[w->item] || strcmp(type, w->type) || strcmp(field, w->field))
			continue;
		/* Its type name's pointer, to tell the process's copy of the tables is this file's. */
		if (pointer_at(g->f, at - g->value_member + g->name_member, &name) || !name) {
			g->error = -EINVAL;
			return;
		}
		vm->field_at[w->item] = at;
		vm->name_at[w->item] = name;
		vm->field_size[w->item] = width_of(type_string, w->size);
		vm->class_size[w->item] = g->class_size[w->cls] < MAX_CLASS_SIZE ?
					  g->class_size[w->cls] : 0;
	}
}

/* The class sizes both sides use, if plausible; 0 if not found or not. */
static uint16_t size_of(const struct gather *g, enum java_class c)
{
	return g->class_size[c] && g->class_size[c] < MAX_CLASS_SIZE ? g->class_size[c] : 0;
}

int java_file_read(Elf *elf, int fd, struct java_vm *out)
{
	struct gather g = { .vm = out };
	const struct runtime_segment *code;
	struct java_layout *l = &out->file.l;
	int32_t major;
	struct jf f;
	size_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = open_file(&f, elf, fd);
	if (ret)
		goto out;
	g.f = &f;
	g.name_member = sym_value(&f, SYM_STRUCT_TYPE_NAME);
	g.value_member = sym_value(&f, SYM_STRUCT_OFFSET);
	code = runtime_code_segment(&f.segs);
	if (!code || !f.sym[SYM_STRUCT_STRIDE] || g.name_member > MAX_STRIDE ||
	    g.value_member > MAX_STRIDE) {
		ret = -EINVAL;
		goto out;
	}
	ret = each_table(&f, gather_entry, &g);
	if (!ret)
		ret = g.error;
	if (ret)
		goto out;
	out->code_bias = code->vaddr - code->offset;
	/* Every address kept as its offset in the code segment's mapping: the walk's base + it. */
	for (i = 0; i < JAVA_VM_FIELDS; i++) {
		if (out->field_at[i])
			out->field_at[i] -= out->code_bias;
		if (out->name_at[i])
			out->name_at[i] -= out->code_bias;
	}
	out->stride_rel = f.sym[SYM_STRUCT_STRIDE] - out->code_bias;
	out->name_off = (uint16_t)(g.value_member - g.name_member);
	if (g.statics[S_CODE_HEAPS] && g.statics[S_LOW_BOUND] && g.statics[S_HIGH_BOUND]) {
		l->code_heaps = g.statics[S_CODE_HEAPS] - out->code_bias;
		l->low_bound = g.statics[S_LOW_BOUND] - out->code_bias;
		l->high_bound = g.statics[S_HIGH_BOUND] - out->code_bias;
	}
	/* The version: the static's initial value, a constant of the build (VERSION_FEATURE). */
	if (g.statics[S_VM_MAJOR] &&
	    runtime_elf_read(&f.segs, fd, g.statics[S_VM_MAJOR], &major, sizeof(major)) == 1 &&
	    major >= 9 && major < 100)
		out->file.version = major;
	l->heap_block_size = size_of(&g, C_HEAP_BLOCK);
	l->const_method_size = size_of(&g, C_CONST_METHOD);
	out->o.cm_size = l->const_method_size;
	out->o.cp_size = size_of(&g, C_CONSTANT_POOL);
	out->o.pc_desc_size = size_of(&g, C_PC_DESC);
	out->o.nmethod_size = size_of(&g, C_NMETHOD);
out:
	free(f.relocs);
	if (ret)
		memset(out, 0, sizeof(*out));
	return ret;
}

/* The offsets read from the process, by item; size 0: not found. */
struct read_fields {
	struct java_field f[NR_ITEMS];
};

static bool has(const struct read_fields *r, enum java_item i)
{
	return r->f[i].size;
}

/* The first of two spellings found (the other is of another version). */
static struct java_field either(const struct read_fields *r, enum java_item a, enum java_item b)
{
	return has(r, a) ? r->f[a] : r->f[b];
}

static bool in_blob_read(struct java_field f)
{
	return f.size && f.off + f.size <= JAVA_BLOB_READ;
}

static void fill_layout(struct java_vm *vm, const struct read_fields *r)
{
	struct java_layout *l = &vm->file.l;
	bool offsets = has(r, F_BLOB_CODE_OFFSET);
	struct java_field code = offsets ? r->f[F_BLOB_CODE_OFFSET] : r->f[F_BLOB_CODE_BEGIN];
	struct java_field deopt = offsets ? r->f[F_NM_DEOPT_OFFSET] : r->f[F_NM_DEOPT_BEGIN];

	l->array_len = r->f[F_ARRAY_LEN].off;
	l->array_data = r->f[F_ARRAY_DATA].off;
	l->heap_memory = r->f[F_HEAP_MEMORY].off;
	l->heap_segmap = r->f[F_HEAP_SEGMAP].off;
	l->heap_log2_segment = r->f[F_HEAP_LOG2].off;
	l->vs_low_boundary = r->f[F_VS_LOW].off;
	l->vs_high_boundary = r->f[F_VS_HIGH].off;
	l->blob_name = r->f[F_BLOB_NAME].off;
	l->blob_frame_complete = r->f[F_BLOB_FRAME_COMPLETE].off;
	l->blob_frame_size = r->f[F_BLOB_FRAME_SIZE].off;
	l->blob_code_begin = code.off;
	l->nmethod_compile_id = r->f[F_NM_COMPILE_ID].off;
	l->nmethod_orig_pc = r->f[F_NM_ORIG_PC].off;
	l->nmethod_deopt = deopt.off;
	l->method_const_method = r->f[F_METHOD_CONST_METHOD].off;
	l->code_offsets = offsets;
	vm->o.code_offsets = offsets;
	vm->o.nm_deopt = deopt;
	vm->o.blob_frame_complete = r->f[F_BLOB_FRAME_COMPLETE];
	/* The walk reads a blob's first JAVA_BLOB_READ bytes: its fields must lie in them. */
	l->known = vm->file.version && l->code_heaps && l->low_bound && l->high_bound &&
		   has(r, F_ARRAY_LEN) && has(r, F_ARRAY_DATA) && has(r, F_HEAP_MEMORY) &&
		   has(r, F_HEAP_SEGMAP) && has(r, F_HEAP_LOG2) && has(r, F_VS_LOW) &&
		   has(r, F_VS_HIGH) && l->heap_block_size && l->const_method_size &&
		   in_blob_read(r->f[F_BLOB_NAME]) && in_blob_read(r->f[F_BLOB_FRAME_COMPLETE]) &&
		   in_blob_read(r->f[F_BLOB_FRAME_SIZE]) && in_blob_read(code) &&
		   in_blob_read(r->f[F_NM_COMPILE_ID]) && in_blob_read(r->f[F_NM_ORIG_PC]) &&
		   in_blob_read(deopt) && has(r, F_METHOD_CONST_METHOD);
}

static void fill_offsets(struct java_vm *vm, const struct read_fields *r)
{
	struct java_offsets *o = &vm->o;
	bool nm_ok;

	o->symbol_length = r->f[F_SYMBOL_LENGTH];
	if (!has(r, F_SYMBOL_LENGTH) && has(r, F_SYMBOL_LENGTH_AND_REFCOUNT))
		/* JDK 12..: the length is the top half of a u4 (little-endian) */
		o->symbol_length = (struct java_field){ r->f[F_SYMBOL_LENGTH_AND_REFCOUNT].off + 2, 2 };
	o->symbol_body = r->f[F_SYMBOL_BODY];
	o->klass_name = r->f[F_KLASS_NAME];
	o->cp_source_file_index = r->f[F_CP_SOURCE_FILE];
	o->ik_source_file_index = r->f[F_IK_SOURCE_FILE];
	o->cp_holder = r->f[F_CP_HOLDER];
	o->method_const_method = r->f[F_METHOD_CONST_METHOD];
	o->method_access_flags = r->f[F_METHOD_ACCESS_FLAGS];
	o->cm_constants = r->f[F_CM_CONSTANTS];
	o->cm_code_size = r->f[F_CM_CODE_SIZE];
	o->cm_flags = r->f[F_CM_FLAGS];
	o->cm_name_index = r->f[F_CM_NAME_INDEX];
	o->cm_signature_index = r->f[F_CM_SIGNATURE_INDEX];
	/* Constants of the class file format and of HotSpot's since JDK 8 (method.go's too). */
	o->cm_has_linenumber_table = 1;
	o->acc_native = 0x100;
	o->blob_name = r->f[F_BLOB_NAME];
	o->blob_code_begin = o->code_offsets ? r->f[F_BLOB_CODE_OFFSET] : r->f[F_BLOB_CODE_BEGIN];
	o->blob_code_end = o->code_offsets ? r->f[F_BLOB_DATA_OFFSET] : r->f[F_BLOB_CODE_END];
	o->blob_size = r->f[F_BLOB_SIZE];
	o->blob_relocation_size = r->f[F_BLOB_RELOCATION_SIZE];
	o->blob_mutable_data = r->f[F_BLOB_MUTABLE_DATA];
	o->blob_mutable_data_size = r->f[F_BLOB_MUTABLE_DATA_SIZE];
	o->nm_compile_id = r->f[F_NM_COMPILE_ID];
	o->nm_method = r->f[F_NM_METHOD];
	o->nm_metadata_offset = r->f[F_NM_METADATA_OFFSET];
	o->nm_scopes_pcs_offset = r->f[F_NM_SCOPES_PCS_OFFSET];
	o->nm_scopes_data = either(r, F_NM_SCOPES_DATA_BEGIN, F_NM_SCOPES_DATA_OFFSET);
	o->nm_dependencies_offset = r->f[F_NM_DEPENDENCIES_OFFSET];
	o->nm_immutable_data = r->f[F_NM_IMMUTABLE_DATA];
	o->nm_immutable_data_size = r->f[F_NM_IMMUTABLE_DATA_SIZE];
	o->nm_immutable_ref_count = r->f[F_NM_IMMUTABLE_REF_COUNT];
	o->pc_offset = r->f[F_PC_OFFSET];
	o->pc_scope_decode_offset = r->f[F_PC_SCOPE_DECODE];
	/* UNSIGNED5 leaves out the 0 byte since JDK 20 (JDK-8292758); CompressedStream did not. */
	o->unsigned5_excluded = vm->file.version >= 20;

	/* data.go's three cases: immutable data (23+), its metadata in mutable data (25+). */
	if (has(r, F_NM_IMMUTABLE_DATA)) {
		o->nmethod_layout = has(r, F_BLOB_MUTABLE_DATA) ? JAVA_NMETHOD_MUTABLE
								: JAVA_NMETHOD_IMMUTABLE;
		nm_ok = has(r, F_NM_SCOPES_DATA_OFFSET) && has(r, F_NM_IMMUTABLE_DATA_SIZE) &&
			(o->nmethod_layout == JAVA_NMETHOD_MUTABLE ?
				 has(r, F_BLOB_RELOCATION_SIZE) && has(r, F_BLOB_MUTABLE_DATA_SIZE) :
				 has(r, F_NM_METADATA_OFFSET) && has(r, F_BLOB_SIZE)) &&
			o->code_offsets && has(r, F_BLOB_DATA_OFFSET);
	} else {
		o->nmethod_layout = JAVA_NMETHOD_IN_BLOB;
		nm_ok = has(r, F_NM_SCOPES_DATA_BEGIN) && has(r, F_NM_METADATA_OFFSET) &&
			has(r, F_NM_DEPENDENCIES_OFFSET) && has(r, F_BLOB_CODE_BEGIN);
	}
	o->known = nm_ok && vm->file.version && o->symbol_length.size == 2 &&
		   o->symbol_body.size && o->klass_name.size &&
		   (o->cp_source_file_index.size || o->ik_source_file_index.size) &&
		   o->cp_holder.size && o->cp_size && o->method_const_method.size &&
		   o->method_access_flags.size && o->cm_constants.size && o->cm_code_size.size &&
		   o->cm_flags.size && o->cm_name_index.size && o->cm_signature_index.size &&
		   o->cm_size && o->blob_name.size && o->nm_compile_id.size && o->nm_method.size &&
		   o->nm_scopes_pcs_offset.size && o->pc_offset.size &&
		   o->pc_scope_decode_offset.size && o->pc_desc_size && o->nmethod_size;
}

int java_vm_read_offsets(struct java_vm *vm, interp_read_fn *read, void *ctx, uint64_t base)
{
	struct read_fields r;
	uint64_t stride, off, name;
	size_t i;
	int ret;

	if (!vm->stride_rel)
		return -EINVAL;
	if ((ret = read(ctx, base + vm->stride_rel, &stride, sizeof(stride))))
		return ret;
	if (!stride)
		return -EAGAIN;
	memset(&r, 0, sizeof(r));
	for (i = 0; i < NR_ITEMS; i++) {
		if (!vm->field_at[i])
			continue;
		if ((ret = read(ctx, base + vm->field_at[i], &off, sizeof(off))) ||
		    (ret = read(ctx, base + vm->field_at[i] - vm->name_off, &name, sizeof(name))))
			return ret;
		/* Another file's tables, or another base: the entry's name is not where it is here. */
		if (name != base + vm->name_at[i])
			return -EINVAL;
		if (off >= MAX_CLASS_SIZE ||
		    (vm->class_size[i] && off + vm->field_size[i] > vm->class_size[i]))
			return -EINVAL;
		r.f[i] = (struct java_field){ (uint16_t)off, vm->field_size[i] ? vm->field_size[i] : 1 };
	}
	fill_layout(vm, &r);
	fill_offsets(vm, &r);
	return 0;
}
