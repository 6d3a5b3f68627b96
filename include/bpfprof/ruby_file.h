/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Which ELF files hold a CRuby VM (libruby), and what the BPF program's
 * Ruby walk needs of each (struct ruby_file, ruby_frames.h), found without
 * debug information (Debian's libruby is stripped):
 *   the version       from the exported ruby_api_version, and with it the
 *                     layout of control frames: a row of a table by version
 *   the context       the GOT pair the dynamic linker fills for the
 *                     thread-local ruby_current_ec (its DTPMOD64 relocation)
 *   vm_exec_core      the VM's one native frame per entry: not exported,
 *                     found by the table of its instruction addresses (the
 *                     longest run of relative relocations into one function,
 *                     just below the exported rb_vm_exec) and that
 *                     function's bounds in .eh_frame_hdr's table
 * Where a stripped build hides ruby_current_ec, rb_vm_exec and
 * ruby_current_vm_ptr (Debian trixie's libruby-3.3), from exported code:
 * the GOT pair rb_errinfo's __tls_get_addr call loads, the function
 * rb_iseq_eval_main's tail call enters, the variable rb_during_gc's lea
 * names.
 * A ruby executable built static (--disable-shared, ruby-build's default)
 * holds the VM itself: ruby_current_ec is then the program's own TLS
 * variable, at a fixed offset from the thread pointer (its symbol and
 * PT_TLS; stripped, rb_errinfo's %fs load) instead of a GOT pair.
 * A reader: never prints but debug lines, returns 1, 0 or a negative errno.
 */
#ifndef BPFPROF_RUBY_FILE_H
#define BPFPROF_RUBY_FILE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/ruby_frames.h"

/*
 * Whether the ELF file on fd (at path, for debug lines) holds a Ruby VM: it
 * exports ruby_api_version. 1: it does, *out filled, out->known 0 for a
 * Ruby bpfprof cannot read (a version not in the table, a value not found:
 * the caller warns); 0: not Ruby; a negative errno: the file could not be
 * read.
 */
int ruby_file_identify(int fd, const char *path, struct ruby_file *out);

/* The layout of Ruby major.minor, or NULL: not in the table. */
const struct ruby_layout *ruby_layout_of(unsigned major, unsigned minor);

/*
 * Where names are read from, by version: an iseq's body (offsets in it),
 * a String's bytes, an embedded Array's length, a class's name and a
 * singleton class's object.
 */
struct ruby_names {
	uint16_t body_pathobj, body_label, body_first_lineno;	/* rb_iseq_constant_body */
	bool first_lineno_fixnum;	/* a VALUE (3.1), else an int */
	uint16_t body_insns_info, body_insns_size, body_succ_table;
	uint8_t insn_info_size;		/* iseq_insn_info_entry, line_no first */
	uint8_t str_len_at;		/* RString's len, embedded or not; 0: in the flags if embedded */
	uint8_t str_embed_at;		/* an embedded String's bytes */
	uint8_t ary_embed_len_mask;	/* an embedded Array's length: flags >> 15 & this */
	uint8_t class_ext;		/* RClass's ext pointer, when class_path is 0 */
	uint16_t class_path;		/* the name's VALUE in the class; 0: ivar __classpath__ */
	uint16_t class_attached;	/* a singleton's object in the class; 0: ivar __attached__ */
};

/* What names read for version (major << 8 | minor), or NULL: not in the table. */
const struct ruby_names *ruby_names_of(unsigned version);

#endif
