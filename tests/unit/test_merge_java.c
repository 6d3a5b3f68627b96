// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Java's merge (java_merge_frames) on samples built by hand from live
 * JVMs (Debian's OpenJDK 17 running tests/workloads/JavaSplit.java and
 * JavaDeflate.java): the code cache's and libjvm's addresses as
 * java_names_probe and jcmd Compiler.codelist showed them, the methods and
 * the inlining at a pc of round as java_names read them. Not recorded by
 * bpfprof: the Java frames' records (JAVA_FRAME_AT) are written as the
 * walk writes them, a frame for each return address into the code cache.
 * Checked frame by frame as a folded line: each Java frame where its
 * native frame was, a compiled frame's inlined methods innermost nearest
 * the leaf, the kernel's frames and the native frames above JNI kept,
 * stubs named (and a stub not named); then places that do not hold (a
 * frame past the user stack, two frames at one place, out of order): the
 * sample left alone; a merge cut at max; one frame per Java frame when
 * the names give one location each.
 */
#include <stdlib.h>
#include <string.h>

#include "bpfprof/java_merge.h"
#include "bpfprof/sampler.h"
#include "runtime_stacks.h"
#include "unit.h"

/* Where the process had its files (each one's offset 0), and its code cache. */
#define LIBJVM	0x7f11f2e00000ull	/* lib/server/libjvm.so */
#define LIBJLI	0x7f11f4000000ull	/* lib/libjli.so */
#define LIBZIP	0x7f11d4a00000ull	/* lib/libzip.so */
#define LIBZ	0x7f11f3f00000ull	/* libz.so.1 */
#define LIBC	0x7f11f4200000ull
#define CODE	0x7f11d5400000ull	/* the code cache's low bound */

/* Blobs in the code cache: java_names_probe's and jcmd's. */
#define CALL_STUB	0x7f11dc938b90ull	/* "StubRoutines (1)" */
#define ADAPTER		0x7f11dc93f210ull	/* not named: freed since */
#define NM_WORK		0x7f11dcec9e10ull	/* C2: JavaSplit.work */
#define NM_ROUND	0x7f11dcecb290ull	/* C2: JavaSplit.round, alpha and mix inlined */
#define NM_DEFLATE	0x7f11dcec7010ull	/* Deflater.deflateBytesBytes's native wrapper */
#define NM_COMPRESS	0x7f11dced4a90ull	/* C2: JavaDeflate.compress, Deflater.deflate inlined */
#define MAIN		0x7f11b0412a58ull	/* Method*: JavaSplit.main */
#define DEFLATE_MAIN	0x7f11b0419e30ull	/* Method*: JavaDeflate.main */

/* One method as the namer read it: its name, file, first line, and the line at the frame. */
struct jm {
	const char *name, *file;
	uint32_t first, line;
};

/* What each Java frame stands for: its methods innermost first, or a stub's name. */
static const struct named {
	uint64_t code;
	const char *stub;	/* a stub's name; NULL: methods */
	struct jm m[4];
	unsigned n;
} named[] = {
	{ CALL_STUB, "StubRoutines (1)", { { 0 } }, 0 },
	{ NM_WORK, NULL, { { "JavaSplit.work", "JavaSplit.java", 54, 58 } }, 1 },
	{ NM_ROUND, NULL, { { "JavaSplit.mix", "JavaSplit.java", 65, 66 },
			    { "JavaSplit.alpha", "JavaSplit.java", 75, 76 },
			    { "JavaSplit.round", "JavaSplit.java", 86, 88 } }, 3 },
	{ MAIN, NULL, { { "JavaSplit.main", "JavaSplit.java", 199, 226 } }, 1 },
	{ NM_DEFLATE, NULL, { { "java.util.zip.Deflater.deflateBytesBytes", "Deflater.java", 0,
				0 } }, 1 },
	{ NM_COMPRESS, NULL, { { "java.util.zip.Deflater.deflate", "Deflater.java", 553, 569 },
			       { "JavaDeflate.compress", "JavaDeflate.java", 47, 52 } }, 2 },
	{ DEFLATE_MAIN, NULL, { { "JavaDeflate.main", "JavaDeflate.java", 80, 101 } }, 1 },
};

static const struct named *find(uint64_t code)
{
	size_t i;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (named[i].code == code)
			return &named[i];
	return NULL;
}

/* merge_names.locations: as java.c's frame_locations, from named[]. */
static uint32_t locations(void *ctx, struct profile *p, const struct interp_frame *frames,
			  uint32_t g, uint32_t n, uint32_t *out, uint32_t max)
{
	const struct named *w = find(frames[g].code);
	uint32_t k = 0;
	char label[128];

	(void)ctx, (void)n;
	if (!max)
		return 0;
	if (JAVA_FRAME_KIND_OF(frames[g].instr) == JAVA_STUB) {
		snprintf(label, sizeof(label), "[jvm: %s]", w && w->stub ? w->stub : "stub");
		out[0] = profile_special_location(p, label);
		return 1;
	}
	if (!w) {
		out[0] = profile_special_location(p, "[java: method not read]");
		return 1;
	}
	for (k = 0; k < w->n && k < max; k++)
		out[k] = rs_runtime(p, FRAME_INTERP + RUNTIME_JAVA, w->m[k].name, w->m[k].file,
				    w->m[k].first, w->m[k].line);
	return k;
}

/* merge_names.locate: the first location alone. */
static uint32_t locate(void *ctx, struct profile *p, const struct interp_frame *frames, uint32_t g,
		       uint32_t n)
{
	uint32_t loc = 0;

	locations(ctx, p, frames, g, n, &loc, 1);
	return loc;
}

static const struct merge_names names = { .locate = locate, .locations = locations };
static const struct merge_names one_each = { .locate = locate };

#define AT(i) JAVA_FRAME_AT(i)
#define COMPILED(nm, at, pos, id) { nm, JAVA_FRAME_KIND(JAVA_COMPILED) | AT(at) | (pos), id }
#define INTERPRETED(m, at, bci) { m, JAVA_FRAME_KIND(JAVA_INTERPRETED) | AT(at) | (bci), 0x3620 }
#define STUB(blob, at) { blob, JAVA_FRAME_KIND(JAVA_STUB) | AT(at) | 0x1a7, 0 }

/* JavaSplit's main thread in work, called from round (alpha and mix inlined), newest first. */
static const struct interp_stack split_stack = {
	.n = 4, .end = INTERP_WALK_WHOLE, .runtime = RUNTIME_JAVA,
	.frames = { COMPILED(NM_WORK, 0, 0x5c, 412), COMPILED(NM_ROUND, 1, 0x608, 433),
		    INTERPRETED(MAIN, 2, 87), STUB(CALL_STUB, 3) },
};

/* JavaDeflate in zlib, under Deflater's JNI method, compress and main. */
static const struct interp_stack deflate_stack = {
	.n = 4, .end = INTERP_WALK_WHOLE, .runtime = RUNTIME_JAVA,
	.frames = { COMPILED(NM_DEFLATE, 3, 0x94, 377), COMPILED(NM_COMPRESS, 4, 0x1b4, 501),
		    INTERPRETED(DEFLATE_MAIN, 5, 40), STUB(CALL_STUB, 6) },
};

static struct raw_interp raw_of(const struct interp_stack *st)
{
	return (struct raw_interp){ st->frames, st->n, st->end, st->runtime, st->state };
}

/* Two kernel frames, then the thread's native frames from start_thread up, leaf first. */
static uint32_t kernel_frames(struct profile *p, uint32_t *f)
{
	f[0] = profile_special_location(p, "asm_sysvec_apic_timer_interrupt_[k]");
	f[1] = profile_special_location(p, "irqentry_exit_to_user_mode_[k]");
	return 2;
}

static uint32_t root_frames(struct profile *p, uint32_t *f)
{
	uint32_t jvm = rs_mapping(p, "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so",
				  LIBJVM + 0x24c000, 0x24c000, 0xd00000);
	uint32_t jli = rs_mapping(p, "/usr/lib/jvm/java-17-openjdk-amd64/lib/libjli.so",
				  LIBJLI + 0x2000, 0x2000, 0x8000);
	uint32_t libc = rs_mapping(p, "/usr/lib/x86_64-linux-gnu/libc.so.6", LIBC + 0x28000,
				   0x28000, 0x155000);
	uint32_t n = 0;

	f[n++] = rs_native(p, jvm, LIBJVM + 0x854a21, "JavaCalls::call_helper", NULL);
	f[n++] = rs_native(p, jvm, LIBJVM + 0x8f3c52, "jni_CallStaticVoidMethod", NULL);
	f[n++] = rs_native(p, jli, LIBJLI + 0x4d1e, "JavaMain", NULL);
	f[n++] = rs_native(p, jli, LIBJLI + 0x8a29, "ThreadJavaMain", NULL);
	f[n++] = rs_native(p, libc, LIBC + 0x89134, "start_thread", NULL);
	f[n++] = rs_native(p, libc, LIBC + 0x1097dc, "clone3", NULL);
	return n;
}

#define ROOT "java;clone3;start_thread;ThreadJavaMain;JavaMain;jni_CallStaticVoidMethod;" \
	"JavaCalls::call_helper;[jvm: StubRoutines (1)]"
#define KERNEL "irqentry_exit_to_user_mode_[k];asm_sysvec_apic_timer_interrupt_[k]"

/* A return address into the code cache: a frame of no file, as the symbolizer leaves it. */
static uint32_t cc(struct profile *p, uint64_t addr)
{
	return rs_native(p, rs_mapping(p, "[anon]", CODE, 0, 0xf000000), addr, NULL);
}

/* The split sample: kernel, then work's, round's, the interpreter's and the call stub's pcs. */
static uint32_t split_frames(struct profile *p, uint32_t *f, uint32_t *user_base)
{
	uint32_t n = kernel_frames(p, f);

	*user_base = n;
	f[n++] = cc(p, NM_WORK + 0x1a0 + 0x5c);
	f[n++] = cc(p, NM_ROUND + 0x1a0 + 0x608);
	f[n++] = cc(p, 0x7f11dc95a6c0);			/* the interpreter's invoke return */
	f[n++] = cc(p, CALL_STUB + 0x1a7 + 0x80);
	return n + root_frames(p, f + n);
}

#define SPLIT_JAVA "JavaSplit.main (JavaSplit.java:199);JavaSplit.round (JavaSplit.java:86);" \
	"JavaSplit.alpha (JavaSplit.java:75);JavaSplit.mix (JavaSplit.java:65);" \
	"JavaSplit.work (JavaSplit.java:54)"

static uint32_t deflate_frames(struct profile *p, uint32_t *f, uint32_t *user_base)
{
	uint32_t zip = rs_mapping(p, "/usr/lib/jvm/java-17-openjdk-amd64/lib/libzip.so",
				  LIBZIP + 0x3000, 0x3000, 0x8000);
	uint32_t z = rs_mapping(p, "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", LIBZ + 0x2000,
				0x2000, 0x14000);
	uint32_t n = 0;

	*user_base = 0;
	f[n++] = rs_native(p, z, LIBZ + 0x6b3e, "longest_match", NULL);
	f[n++] = rs_native(p, z, LIBZ + 0x7f05, "deflate_slow", NULL);
	f[n++] = rs_native(p, zip, LIBZIP + 0x4c21, "Java_java_util_zip_Deflater_deflateBytesBytes",
			   NULL);
	f[n++] = cc(p, NM_DEFLATE + 0x94 + 0x100);
	f[n++] = cc(p, NM_COMPRESS + 0x1b4 + 0x100);
	f[n++] = cc(p, 0x7f11dc95a6c0);
	f[n++] = cc(p, CALL_STUB + 0x1a7 + 0x80);
	return n + root_frames(p, f + n);
}

#define DEFLATE_LEAF "JavaDeflate.main (JavaDeflate.java:80);JavaDeflate.compress (JavaDeflate.java:47);" \
	"java.util.zip.Deflater.deflate (Deflater.java:553);" \
	"java.util.zip.Deflater.deflateBytesBytes (Deflater.java:0);" \
	"Java_java_util_zip_Deflater_deflateBytesBytes;deflate_slow;longest_match"

/* Merges st into frames[0..n) with names nm (room for max): the folded line; NULL if left alone. */
static char *merged_with(struct profile *p, const struct interp_stack *st, uint32_t base,
			 const struct merge_names *nm, const uint32_t *frames, uint32_t n,
			 uint32_t max)
{
	uint32_t out[2 * BPFPROF_MAX_DEPTH + INTERP_MAX_FRAMES * 4], m;
	struct raw_interp ri = raw_of(st);

	if (max > sizeof(out) / sizeof(out[0]))
		max = sizeof(out) / sizeof(out[0]);
	m = java_merge_frames(p, &ri, base, nm, frames, n, out, max);
	return m ? rs_folded(p, "java", out, m) : NULL;
}

static char *merged(struct profile *p, const struct interp_stack *st, uint32_t base,
		    const uint32_t *frames, uint32_t n)
{
	return merged_with(p, st, base, &names, frames, n, UINT32_MAX);
}

static void check_line(char *got, const char *want, const char *what)
{
	if (!CHECK(got, "%s: merged", what))
		return;
	expect_text(got, want, what);
	free(got);
}

static void typical(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], n, base;
	struct profile p;

	profile_init(&p);
	n = split_frames(&p, frames, &base);
	check_line(merged(&p, &split_stack, base, frames, n), ROOT ";" SPLIT_JAVA ";" KERNEL,
		   "java: each Java frame at its native frame, round's inlined methods innermost "
		   "nearest the leaf, the kernel's frames kept");
	profile_release(&p);

	profile_init(&p);
	n = deflate_frames(&p, frames, &base);
	check_line(merged(&p, &deflate_stack, base, frames, n), ROOT ";" DEFLATE_LEAF,
		   "java: the native frames JNI called kept above the native method's wrapper");
	profile_release(&p);
}

static void stubs(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], n, base;
	struct interp_stack st = split_stack;
	struct profile p;

	/* An adapter between main and round, and the call stub's blob not named. */
	profile_init(&p);
	n = split_frames(&p, frames, &base);
	memmove(frames + base + 3, frames + base + 2, (n - base - 2) * sizeof(*frames));
	frames[base + 2] = cc(&p, ADAPTER + 0x40);
	n++;
	st.n = 5;
	st.frames[2] = (struct interp_frame)STUB(ADAPTER, 2);
	st.frames[3] = (struct interp_frame)INTERPRETED(MAIN, 3, 87);
	st.frames[4] = (struct interp_frame)STUB(CALL_STUB, 4);
	check_line(merged(&p, &st, base, frames, n), ROOT ";" "JavaSplit.main (JavaSplit.java:199);"
		   "[jvm: stub];JavaSplit.round (JavaSplit.java:86);JavaSplit.alpha (JavaSplit.java:75);"
		   "JavaSplit.mix (JavaSplit.java:65);JavaSplit.work (JavaSplit.java:54);" KERNEL,
		   "java: a stub named where it was read, [jvm: stub] where it was not");
	profile_release(&p);
}

static void places(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], n, base;
	struct interp_stack st = split_stack;
	struct profile p;
	char *got;

	profile_init(&p);
	n = split_frames(&p, frames, &base);
	/* The call stub's place past the user stack: its last frame is n - base - 1. */
	st.frames[3].instr = JAVA_FRAME_KIND(JAVA_STUB) | AT(n - base);
	got = merged(&p, &st, base, frames, n);
	CHECK(!got, "java: a frame placed past the user stack: the sample left alone (%s)",
	      got ? got : "");
	free(got);
	/* Its last frame is a place still. */
	st.frames[3].instr = JAVA_FRAME_KIND(JAVA_STUB) | AT(n - base - 1);
	got = merged(&p, &st, base, frames, n);
	CHECK(got && strstr(got, "java;[jvm: StubRoutines (1)];start_thread;"),
	      "java: a frame at the user stack's last frame placed there (%s)", got ? got : "");
	free(got);
	/* The user stack shorter than the places say (the walk and the stack disagree). */
	got = merged(&p, &split_stack, n - 2, frames, n);
	CHECK(!got, "java: places past a short user stack: the sample left alone (%s)",
	      got ? got : "");
	free(got);
	/* Two frames at one place, and out of order. */
	st = split_stack;
	st.frames[1].instr = (st.frames[1].instr & ~JAVA_FRAME_AT(0x7f)) | AT(0);
	got = merged(&p, &st, base, frames, n);
	CHECK(!got, "java: two frames at one place: the sample left alone (%s)", got ? got : "");
	free(got);
	st = split_stack;
	st.frames[2].instr = (st.frames[2].instr & ~JAVA_FRAME_AT(0x7f)) | AT(5);
	got = merged(&p, &st, base, frames, n);
	CHECK(!got, "java: frames out of order: the sample left alone (%s)", got ? got : "");
	free(got);
	profile_release(&p);
}

static void limits(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], out[8], n, base, m, i;
	struct raw_interp ri = raw_of(&split_stack);
	char *got, *whole;
	struct profile p;

	profile_init(&p);
	n = split_frames(&p, frames, &base);
	/* Room for 5: the kernel's two, work, then round's 3 cut to 2. */
	for (i = 0; i < 8; i++)
		out[i] = UINT32_MAX;
	m = java_merge_frames(&p, &ri, base, &names, frames, n, out, 5);
	CHECK(m == 5 && out[5] == UINT32_MAX, "java: a merge cut at max writes max (%u)", m);
	got = rs_folded(&p, "java", out, m);
	expect_text(got, "java;JavaSplit.alpha (JavaSplit.java:75);JavaSplit.mix (JavaSplit.java:65);"
		    "JavaSplit.work (JavaSplit.java:54);" KERNEL,
		    "java: cut at max: the leaf's frames kept, innermost first");
	free(got);
	/* One location a frame: each Java frame its innermost method. */
	got = merged_with(&p, &split_stack, base, &one_each, frames, n, UINT32_MAX);
	check_line(got, ROOT ";JavaSplit.main (JavaSplit.java:199);JavaSplit.mix (JavaSplit.java:65);"
		   "JavaSplit.work (JavaSplit.java:54);" KERNEL,
		   "java: names with one location a frame: one frame each");
	/* No Java frames: the stack as it was. */
	ri.n = 0;
	m = java_merge_frames(&p, &ri, base, &names, frames, n, out, 8);
	whole = rs_folded(&p, "java", frames, 8);
	got = rs_folded(&p, "java", out, m);
	expect_text(got, whole, "java: no Java frames: the native frames as they were");
	free(got);
	free(whole);
	profile_release(&p);
}

void test_merge_java(void)
{
	typical();
	stubs();
	places();
	limits();
}
