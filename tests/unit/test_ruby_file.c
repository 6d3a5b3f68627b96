// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * ruby_file_identify on Debian 12's libruby-3.1 (package libruby3.1,
 * stripped): what docs/research/ruby.md found by hand in it (readelf and
 * objdump, and live processes): the version, ruby_current_ec's GOT pair,
 * vm_exec_core's bounds, the symbol table rb_id2str reads, the GC flag
 * rb_during_gc reads. Then files that
 * hold no Ruby (not Ruby, no crash), and the layout table's rows.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/ruby_file.h"
#include "unit.h"

#define LIBRUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2"
#define LIBRUBY33 "/var/cache/bpfprof-test/newer-root/usr/lib/x86_64-linux-gnu/libruby-3.3.so.3.3.8"
#define STATIC_RUBY "/var/cache/bpfprof-test/ruby-static/bin/ruby"
/* Its TLS block: 0x18 bytes aligned 8, ruby_current_ec at 0x10 (GCC 12, 3.3.8). */
#define STATIC_EC_TP_OFF (-8)

static int identify(const char *path, struct ruby_file *f)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	ret = ruby_file_identify(fd, path, f);
	close(fd);
	return ret;
}

void test_ruby_file(void)
{
	struct ruby_file f;
	int ret;

	ret = identify(LIBRUBY, &f);
	if (ret < 0) {
		unit_skip("no libruby3.1 (sudo make deps installs ruby3.1)", "ruby: %s", LIBRUBY);
	} else {
		/* Build ID 862794fba1ac9d77263f555b39818ec3baacbeb8 (3.1.2, deb12u1). */
		CHECK(ret == 1 && f.known && f.version == 0x301,
		      "ruby: libruby-3.1 is Ruby 3.1, read (ret %d, known %u, version %#x)", ret,
		      f.known, f.version);
		CHECK(f.ec_tls_rel == 0x3aea48, "ruby: ruby_current_ec's GOT pair at 0x3aea48 (%#llx)",
		      (unsigned long long)f.ec_tls_rel);
		CHECK(f.vm_exec_lo_rel == 0x24ebd0 && f.vm_exec_hi_rel == 0x253047,
		      "ruby: vm_exec_core 0x24ebd0..0x253047 (%#llx..%#llx)",
		      (unsigned long long)f.vm_exec_lo_rel, (unsigned long long)f.vm_exec_hi_rel);
		CHECK(f.symbols_rel == 0x3af1c0 && f.last_op_id == 0xa9,
		      "ruby: the symbol table at 0x3af1c0, tLAST_OP_ID 169 (%#llx, %u)",
		      (unsigned long long)f.symbols_rel, f.last_op_id);
		CHECK(f.l.cfp_size == 64, "ruby: 3.1's control frames are 64 bytes (%u)", f.l.cfp_size);
		/* rb_during_gc: *(u8 *)(vm->objspace + 0x10) >> 5 & 1, vm at ruby_current_vm_ptr. */
		CHECK(f.gc.vm_ptr == 0x3bd370 && f.gc.objspace_off == 0x450 && f.gc.flags_off == 0x10 &&
			      f.gc.bit == 5,
		      "ruby: the GC flag: vm at 0x3bd370, objspace +0x450, flags +0x10, bit 5 (%#llx, %#x, "
		      "%#x, %u)", (unsigned long long)f.gc.vm_ptr, f.gc.objspace_off, f.gc.flags_off,
		      f.gc.bit);
	}
	/*
	 * Debian trixie's libruby-3.3 (3.3.8-2.2, stripped) exports
	 * ruby_api_version but hides ruby_current_ec, rb_vm_exec and
	 * ruby_current_vm_ptr: a Ruby VM all the same (1, not 0), so that
	 * what cannot be read of it is warned about.
	 */
	ret = identify(LIBRUBY33, &f);
	if (ret < 0)
		unit_skip("no trixie root (tests/tools/newer_root.sh makes it)", "ruby: %s", LIBRUBY33);
	else {
		CHECK(ret == 1 && f.version == 0x303,
		      "ruby: trixie's stripped libruby-3.3 is Ruby 3.3 (ret %d, version %#x)", ret,
		      f.version);
		/*
		 * What its code gives (docs/research/containers.md): rb_errinfo's
		 * lea of the GOT pair, rb_iseq_eval_main's tail call to rb_vm_exec,
		 * the instruction table below it, rb_during_gc's lea of the VM.
		 */
		CHECK(f.known && f.ec_tls_rel == 0x45aad0,
		      "ruby: trixie's 3.3 read, ruby_current_ec's pair 0x45aad0 (known %u, %#llx)",
		      f.known, (unsigned long long)f.ec_tls_rel);
		CHECK(f.vm_entry_lo_rel == 0x27dfa0 && f.vm_entry_hi_rel == 0x27e1f5,
		      "ruby: trixie's 3.3: rb_vm_exec 0x27dfa0..0x27e1f5 (%#llx..%#llx)",
		      (unsigned long long)f.vm_entry_lo_rel, (unsigned long long)f.vm_entry_hi_rel);
		/*
		 * The table's 204 slots into one function: 0x27901d..0x27bcd5 in
		 * the FDE 0x278fd0..0x27df8f (40 slots just before it point at
		 * small functions at 0x2606xx: another table).
		 */
		CHECK(f.vm_exec_lo_rel == 0x278fd0 && f.vm_exec_hi_rel == 0x27df8f,
		      "ruby: trixie's 3.3: vm_exec_core 0x278fd0..0x27df8f (%#llx..%#llx)",
		      (unsigned long long)f.vm_exec_lo_rel, (unsigned long long)f.vm_exec_hi_rel);
		CHECK(f.gc.vm_ptr == 0x46bbe8 && f.gc.objspace_off == 0x518 &&
			      f.gc.flags_off == 0x10 && f.gc.bit == 5,
		      "ruby: trixie's 3.3: GC flag, vm at 0x46bbe8, objspace +0x518, flags +0x10, bit 5 "
		      "(%#llx, %#x, %#x, %u)", (unsigned long long)f.gc.vm_ptr, f.gc.objspace_off,
		      f.gc.flags_off, f.gc.bit);
		CHECK(f.last_op_id == 0xa9, "ruby: trixie's 3.3: tLAST_OP_ID 169 (%u, table %#llx)",
		      f.last_op_id, (unsigned long long)f.symbols_rel);
	}
	/*
	 * Ruby 3.3 built static (tests/tools/static_ruby.sh): the VM in the
	 * executable, ruby_current_ec its own TLS variable, read at a fixed
	 * offset from the thread pointer, no GOT pair.
	 */
	ret = identify(STATIC_RUBY, &f);
	if (ret < 0)
		unit_skip("no static Ruby (tests/tools/static_ruby.sh builds it)", "ruby: %s", STATIC_RUBY);
	else {
		CHECK(ret == 1 && f.known && f.version == 0x303 && !f.ec_tls_rel,
		      "ruby: the static ruby is Ruby 3.3, read, no GOT pair (ret %d, known %u, version "
		      "%#x, pair %#llx)", ret, f.known, f.version, (unsigned long long)f.ec_tls_rel);
		/* What its own code reads: rb_errinfo's mov %fs:STATIC_EC_TP_OFF,%rax. */
		CHECK(f.ec_tp_off == STATIC_EC_TP_OFF,
		      "ruby: the static ruby's ruby_current_ec at %%fs:%lld, as its code reads it (%lld)",
		      (long long)STATIC_EC_TP_OFF, (long long)f.ec_tp_off);
		/*
		 * Build ID da4d9914...: vm_exec_core 0x240d30..0x246882 (its
		 * symbol), 62 KiB above rb_vm_exec 0x231860; rb_id2str's lookup
		 * inline, the table the symbol ruby_global_symbols; rb_during_gc
		 * loads ruby_current_vm_ptr directly (no GOT). Another build of
		 * the same source and compiler may place them elsewhere: checked
		 * by what holds for any.
		 */
		CHECK(f.vm_exec_lo_rel < f.vm_exec_hi_rel && f.vm_exec_hi_rel - f.vm_exec_lo_rel > 0x1000 &&
			      f.vm_entry_lo_rel < f.vm_entry_hi_rel && f.symbols_rel && f.last_op_id == 0xa9,
		      "ruby: the static ruby: vm_exec_core %#llx..%#llx, rb_vm_exec %#llx, the symbol "
		      "table %#llx, tLAST_OP_ID %u", (unsigned long long)f.vm_exec_lo_rel,
		      (unsigned long long)f.vm_exec_hi_rel, (unsigned long long)f.vm_entry_lo_rel,
		      (unsigned long long)f.symbols_rel, f.last_op_id);
		CHECK(f.gc.vm_ptr && f.gc.objspace_off == 0x518 && f.gc.flags_off == 0x10 && f.gc.bit == 5,
		      "ruby: the static ruby: GC flag, vm at %#llx, objspace +0x518, flags +0x10, bit 5 "
		      "(%#x, %#x, %u)", (unsigned long long)f.gc.vm_ptr, f.gc.objspace_off,
		      f.gc.flags_off, f.gc.bit);
	}
	/* Libruby's in its shared case: a GOT pair, no offset from the thread pointer. */
	if (identify(LIBRUBY, &f) == 1)
		CHECK(f.ec_tls_rel && !f.ec_tp_off, "ruby: libruby-3.1's context through its GOT pair");
	CHECK(identify("/usr/lib/x86_64-linux-gnu/libc.so.6", &f) == 0, "ruby: libc is no Ruby");
	CHECK(identify("/etc/passwd", &f) == 0, "ruby: a text file is no Ruby");
	CHECK(ruby_layout_of(3, 1) && !ruby_layout_of(9, 9), "ruby: the layout table has 3.1, not 9.9");
	/* 3.3 dropped the control frame's bp and keeps a String's length in a field of its own. */
	CHECK(ruby_layout_of(3, 3) && ruby_layout_of(3, 3)->cfp_size == 56 && ruby_names_of(0x303) &&
		      ruby_names_of(0x303)->str_len_at == 16 && !ruby_names_of(0x301)->str_len_at,
	      "ruby: 3.3's row: 56-byte control frames, a String's length at 16 (3.1: in its flags)");
}
