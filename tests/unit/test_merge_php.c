// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * PHP's merge (php_merge_frames) on samples recorded from
 * tests/unit/php_merge.php under Debian's php8.2 (8.2.36-1~deb12u1;
 * bpfprof -F 999 -p, the native frames and the PHP frames the BPF program
 * sent, each sample's merged line as bpfprof wrote it), the interpreter
 * alone and under opcache's tracing JIT: each execute_ex frame, and the
 * JIT code running in its frame, replaced by the PHP frames of its entry
 * into the VM, checked frame by frame against the folded line bpfprof
 * wrote. User code over execute_ex; the VM's own unnamed helpers at the
 * leaf left out (under the kernel's frames too; a named function there
 * keeps them); hash() above its C
 * code; array_map calling a closure back through zend_call_function (two
 * entries); array_map calling strtoupper back (an entry of C alone, above
 * zend_call_function). Then stacks cut short: native stacks that do not
 * reach an entry's execute_ex (its frames at the root, counted; none
 * reached: the sample keeps its native frames), a walk cut after the
 * closure, and a function not named.
 */
#include <stdlib.h>
#include <string.h>

#include "bpfprof/php_file.h"
#include "bpfprof/php_merge.h"
#include "bpfprof/sampler.h"
#include "runtime_stacks.h"
#include "unit.h"

/* Where each recorded process had php8.2 and libc: their file offset 0. */
#define PHP	0x56442fe44000ull	/* the interpreter's run */
#define LIBC	0x7f987e50c000ull
#define JPHP	0x55ca497be000ull	/* the JIT's run */
#define JLIBC	0x7f245121e000ull
#define JIT_BUF	0x55ca3d600000ull	/* its JIT buffer, "[anon]" at offset 0x8000000 */

/* Debian's php8.2 (test_php_file, nm -D): execute_ex, zend_call_function, the JIT's way back. */
static struct php_process vm_at(uint64_t base)
{
	return (struct php_process){
		.execute_ex_lo = base + 0x36cbe0, .execute_ex_hi = base + 0x375efe,
		.jit_vm_pc = base + 0x36cca8,
		.call_lo = base + 0x2f38f0, .call_hi = base + 0x2f4328,
		.known = 1, .version = 0x802,
	};
}

/* Each run's functions (zend_function *) and what its namer read of them. */
static const struct func {
	uint64_t addr;
	const char *name;
	uint32_t first;		/* 0: an internal function, no file */
} funcs[] = {
	{ 0x7f987be7b100, "{main}", 1 },
	{ 0x7f987be04110, "alpha", 19 },
	{ 0x7f987be04208, "digest", 28 },
	{ 0x7f987be04300, "mapper", 33 },
	{ 0x7f987be8e338, "{closure}", 35 },
	{ 0x7f987be044f0, "upper", 44 },
	{ 0x7f987be045e8, "tables", 49 },
	{ 0x564434720fd0, "hash", 0 },
	{ 0x56443472bb40, "array_map", 0 },
	{ 0x5644347339f0, "strtoupper", 0 },
	/* Under the JIT: opcache keeps the script's functions in its shared memory. */
	{ 0x7f244ec71100, "{main}", 1 },
	{ 0x55ca3ded4a68, "alpha", 19 },
	{ 0x55ca3ded4d60, "digest", 28 },
	{ 0x55ca3ded4f80, "mapper", 33 },
	{ 0x7f244ec841b8, "{closure}", 35 },
	{ 0x55ca7d402210, "hash", 0 },
	{ 0x55ca7d40cd80, "array_map", 0 },
};

#define FILE_PHP "tests/unit/php_merge.php"

/* merge_names.locate: as php.c's frame_location, from funcs[]; others were not read. */
static uint32_t locate(void *ctx, struct profile *p, const struct interp_frame *frames, uint32_t g,
		       uint32_t n)
{
	const struct interp_frame *f = &frames[g];
	uint32_t line = f->instr & PHP_FRAME_LINE_MASK;
	size_t i;

	(void)ctx;
	(void)n;
	for (i = 0; i < ARRAY_SIZE(funcs); i++) {
		if (funcs[i].addr != f->code)
			continue;
		if (f->instr & PHP_FRAME_INTERNAL)
			return rs_runtime(p, FRAME_INTERP + RUNTIME_PHP, funcs[i].name, NULL, 0, 0);
		return rs_runtime(p, FRAME_INTERP + RUNTIME_PHP, funcs[i].name, FILE_PHP,
				  funcs[i].first, line ? line : funcs[i].first);
	}
	return profile_special_location(p, "[php: function not read]");
}

static const struct merge_names names = { .locate = locate };

#define ENTRY INTERP_FRAME_ENTRY
#define INTERNAL PHP_FRAME_INTERNAL
#define USER(fn, line, first) { fn, (line), first }
#define C_FN(fn, flags) { fn, INTERNAL | (flags), 0 }

/* The PHP stacks the BPF program sent, newest first: the interpreter's run. */
#define ST(...) { .n = sizeof((struct interp_frame[]){ __VA_ARGS__ }) / sizeof(struct interp_frame), \
		  .end = INTERP_WALK_WHOLE, .runtime = RUNTIME_PHP, .frames = { __VA_ARGS__ } }
#define MAIN_AT(line) USER(0x7f987be7b100, ENTRY | (line), 1)
static const struct interp_stack alpha_stack = ST(USER(0x7f987be04110, 23, 19), MAIN_AT(72));
static const struct interp_stack tables_stack = ST(USER(0x7f987be045e8, 53, 49), MAIN_AT(76));
static const struct interp_stack hash_stack = ST(C_FN(0x564434720fd0, 0),
						 USER(0x7f987be04208, 30, 28), MAIN_AT(73));
static const struct interp_stack closure_stack = ST(USER(0x7f987be8e338, ENTRY | 38, 35),
						    C_FN(0x56443472bb40, 0),
						    USER(0x7f987be04300, 35, 33), MAIN_AT(74));
static const struct interp_stack upper_stack = ST(C_FN(0x5644347339f0, ENTRY),
						  C_FN(0x56443472bb40, 0),
						  USER(0x7f987be044f0, 46, 44), MAIN_AT(75));
/* The JIT's run. */
#define JMAIN_AT(line) USER(0x7f244ec71100, ENTRY | (line), 1)
static const struct interp_stack jit_alpha_stack = ST(USER(0x55ca3ded4a68, 16, 19), JMAIN_AT(72));
static const struct interp_stack jit_hash_stack = ST(C_FN(0x55ca7d402210, 0),
						     USER(0x55ca3ded4d60, 30, 28), JMAIN_AT(73));
static const struct interp_stack jit_closure_stack = ST(USER(0x7f244ec841b8, ENTRY | 35, 35),
							C_FN(0x55ca7d40cd80, 0),
							USER(0x55ca3ded4f80, 35, 33), JMAIN_AT(74));

static struct raw_interp raw_of(const struct interp_stack *st)
{
	return (struct raw_interp){ st->frames, st->n, st->end, st->runtime, st->state };
}

struct maps {
	uint64_t php, libc;	/* their bases */
	uint32_t m_php, m_libc, m_jit;
};

/* The mappings of a run: php8.2's code and libc's, and the JIT buffer (the JIT's run). */
static struct maps mappings(struct profile *p, bool jit)
{
	struct maps m = { jit ? JPHP : PHP, jit ? JLIBC : LIBC, 0, 0, 0 };

	m.m_php = rs_mapping(p, "/usr/bin/php8.2", m.php + 0xeb000, 0xeb000, 0x30c000);
	m.m_libc = rs_mapping(p, "/usr/lib/x86_64-linux-gnu/libc.so.6", m.libc + 0x26000, 0x26000,
			      0x156000);
	if (jit)
		m.m_jit = rs_mapping(p, "[anon]", JIT_BUF + 0x8000000, 0x8000000, 0x4000000);
	return m;
}

/* A php8.2 frame at file offset off: unnamed, or named by name (its .dynsym's). */
#define PHPF(off) rs_native(p, m->m_php, m->php + (off), NULL)
#define NAMED(off, name) rs_native(p, m->m_php, m->php + (off), name, NULL)
#define EXECUTE_EX(off) NAMED(off, "execute_ex")
#define JIT(off) rs_native(p, m->m_jit, JIT_BUF + (off), NULL)

/* A kernel frame named name at address (the kernel's own mapping). */
static uint32_t kernel(struct profile *p, uint64_t address, const char *name)
{
	uint32_t s = profile_string(p, name), mapping, loc;
	struct prof_line line = { .function = profile_function(p, s, s, 0) };

	mapping = rs_mapping(p, "[kernel.kallsyms]", 0xffffffff81000000ull, 0, 0x27f8911);
	loc = profile_location_find(p, mapping, address);
	return loc != ITAB_NONE ? loc : profile_location_add(p, mapping, address, FRAME_KERNEL, &line, 1);
}

/* From the script's execute_ex (at off) to _start, leaf first, into f. */
static uint32_t root_frames(struct profile *p, const struct maps *m, uint64_t off, uint32_t *f)
{
	uint32_t n = 0;

	f[n++] = EXECUTE_EX(off);
	f[n++] = NAMED(0x376034, "zend_execute");
	f[n++] = NAMED(0x303298, "zend_execute_scripts");
	f[n++] = NAMED(0x29ba7d, "php_execute_script");
	f[n++] = PHPF(0x3ed1bb);	/* do_cli */
	f[n++] = PHPF(0x12aaf6);	/* main */
	f[n++] = rs_native(p, m->m_libc, m->libc + 0x27249, "__libc_start_call_main", NULL);
	f[n++] = rs_native(p, m->m_libc, m->libc + 0x27304, "__libc_start_main", NULL);
	f[n++] = NAMED(0x12bd60, "_start");
	return n;
}

#define ROOT "php8.2;_start;__libc_start_main;__libc_start_call_main;[php8.2+0x12aaf6];" \
	"[php8.2+0x3ed1bb];php_execute_script;zend_execute_scripts;zend_execute;" \
	"{main} (php_merge.php:1)"

/* Merges st into frames[0..n); the folded line, *vms and *unmatched as they say. */
static char *merged(struct profile *p, bool jit, const struct interp_stack *st,
		    const uint32_t *frames, uint32_t n, uint32_t *vms, uint32_t *unmatched)
{
	uint32_t out[2 * BPFPROF_MAX_DEPTH + INTERP_MAX_FRAMES], m;
	struct php_process vm = vm_at(jit ? JPHP : PHP);
	struct raw_interp rr = raw_of(st);

	m = php_merge_frames(p, &vm, &rr, &names, frames, n, out, ARRAY_SIZE(out), vms, unmatched);
	return rs_folded(p, "php8.2", out, m);
}

/* Merges and checks the line, one entry met per execute_ex, nothing unmatched. */
static void expect(struct profile *p, bool jit, const struct interp_stack *st, const uint32_t *f,
		   uint32_t n, const char *want, uint32_t want_vms, const char *what)
{
	uint32_t vms, unmatched;
	char *got = merged(p, jit, st, f, n, &vms, &unmatched);

	expect_text(got, want, what);
	CHECK(vms == want_vms && unmatched == 0,
	      "php: the same: %u VM entries met (%u), every frame placed (%u unmatched)", want_vms,
	      vms, unmatched);
	free(got);
}

/* The interpreter's run: samples 1, 6, 5, 1689, 87, 280 and 454 of the recording. */
static void interpreted(void)
{
	uint32_t f[BPFPROF_MAX_DEPTH], n;
	struct profile prof, *p = &prof;
	struct maps ms, *m = &ms;

	profile_init(p);
	ms = mappings(p, false);
	n = root_frames(p, m, 0x370550, f);
	expect(p, false, &alpha_stack, f, n, ROOT ";alpha (php_merge.php:19)", 1,
	       "php: alpha's loop in execute_ex: execute_ex replaced by {main} and alpha");

	/* The same loop in an unnamed function of php8.2 execute_ex called: the VM's own. */
	n = 0;
	f[n++] = PHPF(0x32dbf4);
	n += root_frames(p, m, 0x36d23c, f + n);
	expect(p, false, &alpha_stack, f, n, ROOT ";alpha (php_merge.php:19)", 1,
	       "php: a VM helper at the leaf (unnamed, php8.2's) left out with execute_ex");

	/*
	 * The helper interrupted (sample 5): left out under the kernel's frames
	 * too (since cc8faa8; the recording's bpfprof, before it, kept it).
	 */
	n = 0;
	f[n++] = kernel(p, 0xffffffff821f3125, "irqentry_exit_to_user_mode");
	f[n++] = kernel(p, 0xffffffff81000e45, "asm_sysvec_reschedule_ipi");
	f[n++] = PHPF(0x32dc0e);
	n += root_frames(p, m, 0x36d23c, f + n);
	expect(p, false, &alpha_stack, f, n,
	       ROOT ";alpha (php_merge.php:19);asm_sysvec_reschedule_ipi_[k];"
	       "irqentry_exit_to_user_mode_[k]",
	       1, "php: a VM helper under the kernel's frames left out, the kernel's kept");

	/* A named function at the leaf: the helpers between are the engine's C code it is in. */
	n = 0;
	f[n++] = NAMED(0x31258e, "zend_hash_lookup");
	f[n++] = PHPF(0x34cf8d);
	f[n++] = PHPF(0x362674);
	n += root_frames(p, m, 0x36e51a, f + n);
	expect(p, false, &tables_stack, f, n,
	       ROOT ";tables (php_merge.php:49);[php8.2+0x362674];[php8.2+0x34cf8d];zend_hash_lookup",
	       1, "php: zend_hash_lookup at the leaf keeps the unnamed frames under it");

	/*
	 * hash(): its C code (zif_hash and php_hash_do_hash, which Debian's
	 * php8.2 does not export) under its PHP name; its unnamed leaf kept.
	 */
	n = 0;
	f[n++] = PHPF(0x194e65);
	f[n++] = NAMED(0x1952cb, "PHP_SHA256Update");
	f[n++] = PHPF(0x18ff17);
	f[n++] = PHPF(0x1900cb);
	n += root_frames(p, m, 0x36f702, f + n);
	expect(p, false, &hash_stack, f, n,
	       ROOT ";digest (php_merge.php:28);hash;[php8.2+0x1900cb];[php8.2+0x18ff17];"
	       "PHP_SHA256Update;[php8.2+0x194e65]",
	       1, "php: hash above its C code, under digest");

	/* array_map calling the closure back: a VM entry of its own, above zend_call_function. */
	n = 0;
	f[n++] = PHPF(0x32dc07);
	f[n++] = EXECUTE_EX(0x36d23c);
	f[n++] = NAMED(0x2f4079, "zend_call_function");
	f[n++] = PHPF(0x22591b);	/* zif_array_map */
	n += root_frames(p, m, 0x36f702, f + n);
	expect(p, false, &closure_stack, f, n,
	       ROOT ";mapper (php_merge.php:33);array_map;[php8.2+0x22591b];zend_call_function;"
	       "{closure} (php_merge.php:35)",
	       2, "php: array_map's closure above zend_call_function, the VM's helper left out");

	/* array_map calling strtoupper back: C calling C, no VM between. */
	n = 0;
	f[n++] = NAMED(0x2fa30d, "zend_string_toupper_ex");
	f[n++] = PHPF(0x25f54d);	/* strtoupper's C code */
	f[n++] = NAMED(0x2f3d81, "zend_call_function");
	f[n++] = PHPF(0x22591b);
	n += root_frames(p, m, 0x36f702, f + n);
	expect(p, false, &upper_stack, f, n,
	       ROOT ";upper (php_merge.php:44);array_map;[php8.2+0x22591b];zend_call_function;"
	       "strtoupper;[php8.2+0x25f54d];zend_string_toupper_ex",
	       1, "php: strtoupper called back by array_map above zend_call_function");
	profile_release(p);
}

/*
 * Opcache's tracing JIT (samples 2, 79 and 241): the JIT code ([anon], in
 * no file) runs in execute_ex's frame; the walk went on at execute_ex's
 * body (0x36cca8) below it.
 */
static void jitted(void)
{
	uint32_t f[BPFPROF_MAX_DEPTH], n = 0;
	struct profile prof, *p = &prof;
	struct maps ms, *m = &ms;

	profile_init(p);
	ms = mappings(p, true);
	f[n++] = JIT(0x8000d83);
	n += root_frames(p, m, 0x36cca8, f + n);
	expect(p, true, &jit_alpha_stack, f, n, ROOT ";alpha (php_merge.php:19)", 1,
	       "php: alpha's trace ([anon]) and execute_ex replaced by alpha");

	n = 0;
	f[n++] = PHPF(0x194ed3);
	f[n++] = NAMED(0x1952cb, "PHP_SHA256Update");
	f[n++] = PHPF(0x18ff17);
	f[n++] = PHPF(0x1900cb);
	f[n++] = JIT(0x80014a5);
	n += root_frames(p, m, 0x36cca8, f + n);
	expect(p, true, &jit_hash_stack, f, n,
	       ROOT ";digest (php_merge.php:28);hash;[php8.2+0x1900cb];[php8.2+0x18ff17];"
	       "PHP_SHA256Update;[php8.2+0x194ed3]",
	       1, "php: hash called from JIT code: above its C code, the JIT code replaced");

	n = 0;
	f[n++] = JIT(0x80015ca);
	f[n++] = EXECUTE_EX(0x36cca8);
	f[n++] = NAMED(0x2f4079, "zend_call_function");
	f[n++] = PHPF(0x22591b);
	f[n++] = JIT(0x8001a0a);
	n += root_frames(p, m, 0x36cca8, f + n);
	expect(p, true, &jit_closure_stack, f, n,
	       ROOT ";mapper (php_merge.php:33);array_map;[php8.2+0x22591b];zend_call_function;"
	       "{closure} (php_merge.php:35)",
	       2, "php: both entries in JIT code: each replaced by its frames");
	profile_release(p);
}

/* The closure's sample (280), its native stack or its PHP walk cut short. */
static void cut(void)
{
	uint32_t f[BPFPROF_MAX_DEPTH], n = 0, vms, unmatched;
	struct interp_stack st = closure_stack;
	struct profile prof, *p = &prof;
	struct maps ms, *m = &ms;
	char *got;

	profile_init(p);
	ms = mappings(p, false);
	f[n++] = PHPF(0x32dc07);
	f[n++] = EXECUTE_EX(0x36d23c);
	f[n++] = NAMED(0x2f4079, "zend_call_function");
	f[n++] = PHPF(0x22591b);
	n += root_frames(p, m, 0x36f702, f + n);

	/* The native walk stopped in zif_array_map: the outer entry's frames at the root. */
	got = merged(p, false, &closure_stack, f, 4, &vms, &unmatched);
	expect_text(got, "php8.2;{main} (php_merge.php:1);mapper (php_merge.php:33);array_map;"
		    "[php8.2+0x22591b];zend_call_function;{closure} (php_merge.php:35)",
		    "php: a native stack cut short: the unreached entry's frames at its root");
	CHECK(vms == 1 && unmatched == 3, "php: one entry met (%u), three frames unmatched (%u)",
	      vms, unmatched);
	free(got);

	/* Stopped in the closure's helper, short of any execute_ex: no PHP frames taken. */
	got = merged(p, false, &closure_stack, f, 1, &vms, &unmatched);
	CHECK(vms == 0 && unmatched == 0,
	      "php: a native stack with no VM frame: none met (%u), nothing placed (%u)", vms,
	      unmatched);
	free(got);

	/* The PHP walk cut after the closure: the outer execute_ex has none, and stays. */
	st.n = 1;
	st.end = INTERP_WALK_FAULT;
	got = merged(p, false, &st, f, n, &vms, &unmatched);
	expect_text(got, "php8.2;_start;__libc_start_main;__libc_start_call_main;[php8.2+0x12aaf6];"
		    "[php8.2+0x3ed1bb];php_execute_script;zend_execute_scripts;zend_execute;"
		    "execute_ex;[php8.2+0x22591b];zend_call_function;{closure} (php_merge.php:35)",
		    "php: a walk cut after the closure: the outer execute_ex kept, native");
	CHECK(vms == 1 && unmatched == 0, "php: cut walk, one entry met (%u), none unmatched (%u)",
	      vms, unmatched);
	free(got);

	/* mapper's function not named (freed before its stack was read): said, in its place. */
	st = closure_stack;
	st.frames[2].code = 0x7f987be04400;
	got = merged(p, false, &st, f, n, &vms, &unmatched);
	expect_text(got, ROOT ";[php: function not read];array_map;[php8.2+0x22591b];"
		    "zend_call_function;{closure} (php_merge.php:35)",
		    "php: a function not named is [php: function not read], in its place");
	free(got);
	profile_release(p);
}

void test_merge_php(void)
{
	interpreted();
	jitted();
	cut();
}
