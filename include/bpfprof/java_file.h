/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What a HotSpot JVM's file (libjvm.so) says of itself, read from the file
 * alone, before or without any process: the tables vmStructs.cpp exports
 * for debuggers (gHotSpotVMStructs: fields' offsets and statics' addresses;
 * gHotSpotVMTypes: sizes; gHotSpotVMIntConstants, gHotSpotVMLongConstants).
 *
 * The tables are initialised data of the file, but their pointers (names,
 * statics' addresses) are relative relocations: their targets are the
 * addends in .rela.dyn. The exported gHotSpotVM*Offset and *Stride
 * symbols that describe an entry's layout are set by a static
 * constructor (they lie in .bss, 0 in the file): where the file has no
 * value, the layout vmStructs.hpp has declared since JDK 6 is taken and
 * checked against the tables themselves (names that are strings, a
 * terminating entry).
 *
 * A reader of untrusted files: every count, stride, offset and string is
 * bounded; never prints; errors are negative errnos.
 */
#ifndef BPFPROF_JAVA_FILE_H
#define BPFPROF_JAVA_FILE_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/interp_names.h"
#include "bpfprof/java_frames.h"

/* A field of a HotSpot class: its offset and width in bytes (1, 2, 4 or 8); width 0: not found. */
struct java_field {
	uint16_t off;
	uint8_t size;
};

/* How an nmethod keeps its metadata and debug information, by version. */
enum java_nmethod_layout {
	/*
	 * JDK 9..22: in the blob, after the code: metadata (at
	 * nmethod::_metadata_offset), scopes data (CompiledMethod::
	 * _scopes_data_begin, a pointer), scopes pcs (_scopes_pcs_offset),
	 * dependencies (_dependencies_offset): each ends where the next begins.
	 */
	JAVA_NMETHOD_IN_BLOB = 1,
	/*
	 * JDK 23, 24: metadata in the blob at _code_end + _metadata_offset (u2)
	 * to the blob's end; scopes pcs then scopes data in a separate block
	 * (_immutable_data, _immutable_data_size), at offsets into it.
	 */
	JAVA_NMETHOD_IMMUTABLE = 2,
	/*
	 * JDK 25+: as 23, but metadata lies in the mutable data block
	 * (CodeBlob::_mutable_data), after its relocations (_relocation_size)
	 * up to _mutable_data_size.
	 */
	JAVA_NMETHOD_MUTABLE = 3,
};

/*
 * Where the namer (java_names.c) reads: offsets into HotSpot's classes,
 * from the same tables. A field the JVM does not have has size 0.
 */
struct java_offsets {
	/* Symbol: a u2 length, then the bytes (UTF-8, modified) */
	struct java_field symbol_length, symbol_body;
	struct java_field klass_name;			/* Klass::_name: Symbol* */
	/* The source file's constant pool index: in ConstantPool since JDK 15, InstanceKlass before */
	struct java_field cp_source_file_index, ik_source_file_index;
	struct java_field cp_holder;			/* ConstantPool::_pool_holder: InstanceKlass* */
	uint16_t cp_size;				/* sizeof(ConstantPool): its slots follow it */
	struct java_field method_const_method, method_access_flags;
	struct java_field cm_constants, cm_code_size, cm_flags, cm_name_index, cm_signature_index;
	uint16_t cm_size;				/* sizeof(ConstMethod): its bytecodes follow */
	uint32_t cm_has_linenumber_table;		/* the flag's bit in cm_flags */
	uint32_t acc_native;				/* JVM_ACC_NATIVE in method_access_flags */

	struct java_field blob_name, blob_code_begin, blob_code_end, blob_size;
	struct java_field blob_relocation_size, blob_mutable_data, blob_mutable_data_size;
	struct java_field nm_compile_id, nm_method, nm_metadata_offset;
	struct java_field nm_scopes_pcs_offset, nm_scopes_data, nm_dependencies_offset;
	struct java_field nm_immutable_data, nm_immutable_data_size, nm_immutable_ref_count;
	struct java_field nm_deopt;			/* the deopt handler (java_layout.nmethod_deopt) */
	struct java_field blob_frame_complete;		/* its width: int, or int16_t at JDK 25 */
	struct java_field pc_offset, pc_scope_decode_offset;	/* PcDesc's */
	uint16_t pc_desc_size;				/* sizeof(PcDesc) */
	uint16_t nmethod_size;				/* sizeof(nmethod): the header read at once */

	uint8_t nmethod_layout;				/* enum java_nmethod_layout */
	uint8_t code_offsets;				/* code begin/end are offsets from the blob (23+) */
	uint8_t unsigned5_excluded;			/* bytes UNSIGNED5 leaves out: 0 to JDK 19, 1 from 20 */
	uint8_t known;					/* every offset the namer needs was found */
};

/* Fields of HotSpot's classes read: as many as java_file.c asks for. */
#define JAVA_VM_FIELDS 64

/*
 * All a libjvm.so says, for the walk and for the names. Its fields'
 * offsets are not in the file: vmStructs' static constructor computes them
 * when the library loads (the file's tables hold 0), so they are read once
 * from a process running the file (java_vm_read_offsets), at the entries
 * the file names.
 */
struct java_vm {
	struct java_file file;		/* the walk's layout (file.l.known) and the version */
	struct java_offsets o;		/* the namer's (o.known) */
	/* What java_vm_read_offsets reads: */
	uint64_t code_bias;		/* a vaddr less it: its offset as the code segment maps it */
	uint64_t stride_rel;		/* gHotSpotVMStructEntryArrayStride: 0 until the constructor ran */
	uint64_t field_at[JAVA_VM_FIELDS];	/* each field's offset word in its entry; 0: none */
	uint64_t name_at[JAVA_VM_FIELDS];	/* and where its entry's type name points */
	uint16_t name_off;			/* where an entry's type name lies, from its offset word */
	uint8_t field_size[JAVA_VM_FIELDS];	/* its width, from its type's name */
	uint16_t class_size[JAVA_VM_FIELDS];	/* its class's size, to check it against; 0: none */
};

/*
 * Reads the HotSpot JVM in the ELF file fd (elf: libelf's handle on it):
 * 0 and *out filled from the file: the version, the statics' addresses,
 * the classes' sizes, where each field's offset lies (l.known and o.known
 * still 0); -ENOENT: not a HotSpot JVM (no gHotSpotVMStructs); -EINVAL: a
 * JVM whose tables are unreadable or corrupt; another negative errno from
 * a read. On an error, *out is zeroed.
 */
int java_file_read(Elf *elf, int fd, struct java_vm *out);

/*
 * Completes vm (java_file_read's) with its fields' offsets, read from a
 * process that runs the file, loaded at base (as java_process.base: an
 * address is base + a file offset of the code segment's mapping), through
 * read: 0, vm->file.l.known 1 if the walk can use the layout, vm->o.known 1
 * if the namer can; -EAGAIN: the library's constructors have not run yet
 * (try again later); -EINVAL: that memory is not this file's tables, or
 * offsets lie outside their class; another negative errno from read.
 * Once per file: the offsets are the build's, the same in every process.
 */
int java_vm_read_offsets(struct java_vm *vm, interp_read_fn *read, void *ctx, uint64_t base);

/*
 * Each entry of the file's tables to fn, for a tool that lists them: kind
 * 'F' a field (type, field, off; address a static's file address, else
 * 0), 'T' a type (type, size in off), 'I' or 'L' a constant (type the
 * name, value in off). 0 or a negative errno as java_file_read.
 */
typedef void java_entry_fn(void *ctx, char kind, const char *type, const char *field,
			   const char *type_string, uint64_t off, uint64_t address);
int java_file_entries(Elf *elf, int fd, java_entry_fn *fn, void *ctx);

#endif
