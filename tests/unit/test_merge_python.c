// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Python's merge (python_merge_frames, python_merge) on samples recorded
 * from tests/example/demo.py under Debian's python3.11 (bpfprof -F 999,
 * with and without --no-python): each native _PyEval_EvalFrameDefault
 * replaced by the Python frames its eval call ran, checked frame by frame
 * against the folded line bpfprof wrote. Then the walks cut short: by an
 * unreadable frame and at INTERP_MAX_FRAMES (the eval calls left unread keep
 * their native frame), and a native stack cut short (the frames of the
 * eval calls it did not reach at its root, counted); a code object not
 * named, and a process bpfprof has no record of (each frame
 * "[python: code not read]" in its place).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/python.h"
#include "bpfprof/python_merge.h"
#include "bpfprof/ruby_frames.h"
#include "runtime_stacks.h"
#include "unit.h"

#define DEMO "tests/example/demo.py"

/* demo.py's code objects in the recorded process: address, first line. */
#define CHECKSUM	0x7f0e4b6a1c30, 18
#define HANDLE_REQUEST	0x7f0e4b6a3ab0, 26
#define MAIN		0x7f0e4b6c4e10, 32
#define MODULE		0x7f0e4b70da50, 1
#define RENDER_REPORT	0x7f0e4b6a0f70, 14
#define REPORT_GENEXPR	0x7f0e4b6cd2b0, 15
#define RENDER_ROW	0x7f0e4b6a07f0, 10
#define ROW_GENEXPR	0x7f0e4b6cc6f0, 11

/* What its namer read of them. */
static const struct code {
	uint64_t addr;
	uint32_t firstlineno;
	const char *qualname;
	uint32_t line;		/* of the frame's instruction, as python_code_line gives it */
} codes[] = {
	{ CHECKSUM, "checksum", 19 },
	{ HANDLE_REQUEST, "handle_request", 27 },
	{ MAIN, "main", 36 },
	{ MODULE, "<module>", 41 },
	{ RENDER_REPORT, "render_report", 15 },
	{ REPORT_GENEXPR, "render_report.<locals>.<genexpr>", 15 },
	{ RENDER_ROW, "render_row", 11 },
	{ ROW_GENEXPR, "render_row.<locals>.<genexpr>", 11 },
};

/* merge_names.locate: as frame_location, from codes[] (ctx); one not there was not read. */
static uint32_t locate(void *ctx, struct profile *p, const struct interp_frame *frames, uint32_t g,
		       uint32_t n)
{
	const struct interp_frame *f = &frames[g];
	size_t i;

	(void)ctx;
	(void)n;
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i].addr == f->code && codes[i].firstlineno == f->firstlineno)
			return rs_runtime(p, FRAME_INTERP + RUNTIME_PYTHON, codes[i].qualname, DEMO,
					  codes[i].firstlineno, codes[i].line);
	return profile_special_location(p, "[python: code not read]");
}

static const struct merge_names names = { .locate = locate };

/* A frame of code object code at instruction byte offset instr (| INTERP_FRAME_ENTRY). */
#define FRAME(code, instr) FRAME_(code, instr)
#define FRAME_(addr, firstlineno, instr) { addr, (instr), firstlineno }
#define ENTRY INTERP_FRAME_ENTRY

/* The Python stacks the BPF program sent, newest first. */
static const struct interp_stack checksum_stack = {
	.n = 4, .end = INTERP_WALK_WHOLE, .runtime = RUNTIME_PYTHON,
	.frames = { FRAME(CHECKSUM, 0xd6), FRAME(HANDLE_REQUEST, 0xe2), FRAME(MAIN, 0x10c),
		    FRAME(MODULE, 0x1d0 | ENTRY) },
};

/* render_report -> "\n".join(genexpr) -> render_row -> "|".join(genexpr) -> format(). */
static const struct interp_stack report_stack = {
	.n = 7, .end = INTERP_WALK_WHOLE, .runtime = RUNTIME_PYTHON,
	.frames = { FRAME(ROW_GENEXPR, 0xe4 | ENTRY), FRAME(RENDER_ROW, 0xd0),
		    FRAME(REPORT_GENEXPR, 0xcc | ENTRY), FRAME(RENDER_REPORT, 0xd0),
		    FRAME(HANDLE_REQUEST, 0xc6), FRAME(MAIN, 0x10c), FRAME(MODULE, 0x1d0 | ENTRY) },
};

static struct raw_interp raw_of(const struct interp_stack *st)
{
	return (struct raw_interp){ st->frames, st->n, st->end, st->runtime, st->state };
}

/* The process's mappings, where the recorded one had them. */
struct maps {
	uint32_t python, libc, hashlib, crypto;
};

static struct maps mappings(struct profile *p)
{
	return (struct maps){
		rs_mapping(p, "/usr/bin/python3.11", 0x55c7f4e6a000, 0x6a000, 0x2ac000),
		rs_mapping(p, "/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7f0e4c428000, 0x28000,
			   0x155000),
		rs_mapping(p, "/usr/lib/python3.11/lib-dynload/"
			   "_hashlib.cpython-311-x86_64-linux-gnu.so",
			   0x7f0e4b8e4000, 0x4000, 0x7000),
		rs_mapping(p, "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", 0x7f0e4bafe000, 0xce000,
			   0x27d000),
	};
}

/* The native frames from _start to the first eval call, leaf first, into f. */
static uint32_t root_frames(struct profile *p, const struct maps *m, uint32_t *f)
{
	uint32_t n = 0;

	f[n++] = rs_native(p, m->python, 0x55c7f4f1c93e, "_PyEval_EvalFrameDefault", NULL);
	f[n++] = rs_native(p, m->python, 0x55c7f4fd6a87, "PyEval_EvalCode", "_PyEval_Vector",
			   "_PyEval_EvalFrame", NULL);
	f[n++] = rs_native(p, m->python, 0x55c7f500a2b8, "run_eval_code_obj.lto_priv.0", NULL);
	f[n++] = rs_native(p, m->python, 0x55c7f5006fe3, "run_mod.lto_priv.0", NULL);
	f[n++] = rs_native(p, m->python, 0x55c7f4ef9d58, "pyrun_file.lto_priv.0", NULL);
	f[n++] = rs_native(p, m->python, 0x55c7f4ef9a0c, "_PyRun_SimpleFileObject", NULL);
	f[n++] = rs_native(p, m->python, 0x55c7f4ef9613, "_PyRun_AnyFileObject", NULL);
	f[n++] = rs_native(p, m->python, 0x55c7f501d6f9, "Py_RunMain", "pymain_run_python",
			   "pymain_run_file", "pymain_run_file_obj", NULL);
	f[n++] = rs_native(p, m->python, 0x55c7f4ff2a3a, "Py_BytesMain", NULL);
	f[n++] = rs_native(p, m->libc, 0x7f0e4c44f249, "__libc_start_call_main", NULL);
	f[n++] = rs_native(p, m->libc, 0x7f0e4c44f304, "__libc_start_main", NULL);
	f[n++] = rs_native(p, m->python, 0x55c7f4ff2960, "_start", NULL);
	return n;
}

#define ROOT "python3;_start;__libc_start_main;__libc_start_call_main;Py_BytesMain;Py_RunMain;" \
	"pymain_run_python_[i];pymain_run_file_[i];pymain_run_file_obj_[i];_PyRun_AnyFileObject;" \
	"_PyRun_SimpleFileObject;pyrun_file.lto_priv.0;run_mod.lto_priv.0;" \
	"run_eval_code_obj.lto_priv.0;PyEval_EvalCode;_PyEval_Vector_[i];_PyEval_EvalFrame_[i]"

/* checksum()'s sample: hashlib.sha256 over OpenSSL, called from checksum, leaf first. */
static uint32_t checksum_frames(struct profile *p, uint32_t *f)
{
	struct maps m = mappings(p);
	uint32_t n = 0;

	f[n++] = rs_native(p, m.crypto, 0x7f0e4bccc54a, NULL);
	f[n++] = rs_native(p, m.crypto, 0x7f0e4bccbfd3, "SHA256_Update", NULL);
	f[n++] = rs_native(p, m.hashlib, 0x7f0e4b8e5ae1, "py_evp_fromname", "EVP_hash", NULL);
	f[n++] = rs_native(p, m.hashlib, 0x7f0e4b8e6d4c, "_hashlib_openssl_sha256",
			   "_hashlib_openssl_sha256_impl", NULL);
	return n + root_frames(p, &m, f + n);
}

#define CHECKSUM_LEAF "_hashlib_openssl_sha256;_hashlib_openssl_sha256_impl_[i];py_evp_fromname;" \
	"EVP_hash_[i];SHA256_Update;[libcrypto.so.3+0x29c54a]"

/* "|".join's and "\n".join's way from the eval loop to the generator's eval call. */
static uint32_t join_frames(struct profile *p, const struct maps *m, uint32_t *f)
{
	uint32_t n = 0;

	f[n++] = rs_native(p, m->python, 0x55c7f4f5d1a2, "_PyEval_EvalFrameDefault", NULL);
	f[n++] = rs_native(p, m->python, 0x55c7f4f3e0b5, "gen_iternext.lto_priv.0", "gen_send_ex2",
			   "_PyEval_EvalFrame", NULL);
	f[n++] = rs_native(p, m->python, 0x55c7f4f2f7e9, "list_extend.lto_priv.0", NULL);
	f[n++] = rs_native(p, m->python, 0x55c7f4f30161, "PySequence_List", "_PyList_Extend", NULL);
	f[n++] = rs_native(p, m->python, 0x55c7f4f8c6b0, "unicode_join.lto_priv.0",
			   "PyUnicode_Join", "PySequence_Fast", NULL);
	return n;
}

#define JOIN "unicode_join.lto_priv.0;PyUnicode_Join_[i];PySequence_Fast_[i];PySequence_List;" \
	"_PyList_Extend_[i];list_extend.lto_priv.0;gen_iternext.lto_priv.0;gen_send_ex2_[i];" \
	"_PyEval_EvalFrame_[i]"

/*
 * render_row's generator formatting an int, three eval calls deep, leaf
 * first; cut, the frames up to render_report's join only.
 */
static uint32_t report_frames(struct profile *p, uint32_t *f, bool cut)
{
	struct maps m = mappings(p);
	uint32_t n = 0;

	f[n++] = rs_native(p, m.python, 0x55c7f4f7b2c1,
			   "long_to_decimal_string_internal.lto_priv.0", NULL);
	f[n++] = rs_native(p, m.python, 0x55c7f4f7f9d2, "_PyLong_FormatAdvancedWriter",
			   "_PyLong_FormatAdvancedWriter", "format_long_internal", "_PyLong_Format",
			   NULL);
	f[n++] = rs_native(p, m.python, 0x55c7f4fb3f0e, "int___format__.lto_priv.0",
			   "int___format___impl", NULL);
	f[n++] = rs_native(p, m.python, 0x55c7f4f40a6c, "cfunction_vectorcall_O.lto_priv.0", NULL);
	f[n++] = rs_native(p, m.python, 0x55c7f4f4e4f5, "PyObject_CallOneArg",
			   "_PyObject_VectorcallTstate", NULL);
	f[n++] = rs_native(p, m.python, 0x55c7f4f6fd21, "PyObject_Format", NULL);
	n += join_frames(p, &m, f + n);		/* render_row's "|".join */
	n += join_frames(p, &m, f + n);		/* render_report's "\n".join */
	if (cut)
		return n;
	return n + root_frames(p, &m, f + n);
}

#define REPORT_LEAF "PyObject_Format;PyObject_CallOneArg;_PyObject_VectorcallTstate_[i];" \
	"cfunction_vectorcall_O.lto_priv.0;int___format__.lto_priv.0;int___format___impl_[i];" \
	"_PyLong_FormatAdvancedWriter;_PyLong_FormatAdvancedWriter_[i];format_long_internal_[i];" \
	"_PyLong_Format_[i];long_to_decimal_string_internal.lto_priv.0"

/* Merges st into frames[0..n) with codes[]' names; the folded line; *unmatched as it says. */
static char *merged_in(struct profile *p, const struct py_eval_code *eval,
		       const struct interp_stack *st, const uint32_t *frames, uint32_t n,
		       uint32_t *unmatched)
{
	uint32_t out[2 * BPFPROF_MAX_DEPTH + INTERP_MAX_FRAMES], m;
	struct raw_interp rp = raw_of(st);

	m = python_merge_frames(p, profile_string(p, "_PyEval_EvalFrameDefault"), eval, &rp,
				&names, frames, n, out, sizeof(out) / sizeof(out[0]), unmatched);
	return rs_folded(p, "python3", out, m);
}

static char *merged(struct profile *p, const struct interp_stack *st, const uint32_t *frames,
		    uint32_t n, uint32_t *unmatched)
{
	return merged_in(p, NULL, st, frames, n, unmatched);
}

static void typical(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], n, unmatched;
	struct profile p;
	char *got;

	profile_init(&p);
	n = checksum_frames(&p, frames);
	got = merged(&p, &checksum_stack, frames, n, &unmatched);
	expect_text(got, ROOT ";<module> (demo.py:1);main (demo.py:32);handle_request (demo.py:26);"
		    "checksum (demo.py:18);" CHECKSUM_LEAF,
		    "python: checksum's eval call replaced by its four frames, OpenSSL above");
	CHECK(unmatched == 0, "python: every frame had its eval call (%u without)", unmatched);
	free(got);
	profile_release(&p);

	/* Three eval calls, each replaced by its own frames. */
	profile_init(&p);
	n = report_frames(&p, frames, false);
	got = merged(&p, &report_stack, frames, n, &unmatched);
	expect_text(got, ROOT ";<module> (demo.py:1);main (demo.py:32);handle_request (demo.py:26);"
		    "render_report (demo.py:14);" JOIN
		    ";render_report.<locals>.<genexpr> (demo.py:15);"
		    "render_row (demo.py:10);" JOIN ";render_row.<locals>.<genexpr> (demo.py:11);"
		    REPORT_LEAF,
		    "python: three eval calls, each replaced by the frames it ran");
	CHECK(unmatched == 0, "python: three eval calls, every frame placed (%u without)",
	      unmatched);
	free(got);
	profile_release(&p);
}

static void cut(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], n, unmatched, i;
	struct interp_stack st = report_stack;
	struct profile p;
	char *got;

	/* handle_request's frame unreadable under the walk: its eval call keeps what was read. */
	profile_init(&p);
	n = report_frames(&p, frames, false);
	st.n = 4;
	st.end = INTERP_WALK_FAULT;
	got = merged(&p, &st, frames, n, &unmatched);
	expect_text(got, ROOT ";render_report (demo.py:14);" JOIN
		    ";render_report.<locals>.<genexpr> (demo.py:15);render_row (demo.py:10);" JOIN
		    ";render_row.<locals>.<genexpr> (demo.py:11);" REPORT_LEAF,
		    "python: a walk cut at an unreadable frame: the oldest eval call has what was "
		    "read");
	CHECK(unmatched == 0, "python: cut walk, nothing put at the root (%u)", unmatched);
	free(got);

	/* Cut at the second eval call's first frame: the first eval call stays native. */
	st.n = 3;
	got = merged(&p, &st, frames, n, &unmatched);
	expect_text(got, ROOT ";_PyEval_EvalFrameDefault;" JOIN
		    ";render_report.<locals>.<genexpr> (demo.py:15);render_row (demo.py:10);" JOIN
		    ";render_row.<locals>.<genexpr> (demo.py:11);" REPORT_LEAF,
		    "python: an eval call with none of its frames read keeps its native frame");
	free(got);
	profile_release(&p);

	/* Recursion past INTERP_MAX_FRAMES in checksum's eval call: the newest 64, none at the root. */
	profile_init(&p);
	n = checksum_frames(&p, frames);
	memset(&st, 0, sizeof(st));
	st.n = INTERP_MAX_FRAMES;
	st.end = INTERP_WALK_DEPTH;
	for (i = 0; i < INTERP_MAX_FRAMES; i++)
		st.frames[i] = (struct interp_frame)FRAME(CHECKSUM, 0xd6);
	got = merged(&p, &st, frames, n, &unmatched);
	{
		struct strbuf want;

		strbuf_init(&want);
		strbuf_addstr(&want, ROOT);
		for (i = 0; i < INTERP_MAX_FRAMES; i++)
			strbuf_addstr(&want, ";checksum (demo.py:18)");
		strbuf_addstr(&want, ";" CHECKSUM_LEAF);
		expect_text(got, want.buf,
			    "python: a walk cut at 64 frames: all 64 in the eval call");
		strbuf_release(&want);
	}
	CHECK(unmatched == 0, "python: cut at 64, nothing at the root (%u)", unmatched);
	free(got);
	profile_release(&p);

	/* The native walk stopped in the outer join: render_report's eval call not reached. */
	profile_init(&p);
	n = report_frames(&p, frames, true);
	got = merged(&p, &report_stack, frames, n, &unmatched);
	expect_text(got, "python3;<module> (demo.py:1);main (demo.py:32);"
		    "handle_request (demo.py:26);"
		    "render_report (demo.py:14);unicode_join.lto_priv.0;PyUnicode_Join_[i];"
		    "PySequence_Fast_[i];PySequence_List;_PyList_Extend_[i];list_extend.lto_priv.0;"
		    "gen_iternext.lto_priv.0;gen_send_ex2_[i];_PyEval_EvalFrame_[i];"
		    "render_report.<locals>.<genexpr> (demo.py:15);render_row (demo.py:10);" JOIN
		    ";render_row.<locals>.<genexpr> (demo.py:11);" REPORT_LEAF,
		    "python: a native stack cut short: the unreached eval call's frames at its "
		    "root");
	CHECK(unmatched == 4, "python: the 4 frames of the unreached eval call counted (%u)",
	      unmatched);
	free(got);
	profile_release(&p);
}

/*
 * An eval loop split hot/cold in a stripped file (sid's 3.13): the sample's
 * eval frame unnamed, in the cold block. By the loop's code it is still
 * the eval call; by its name alone, the frames go to the root.
 */
static void split(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], n, unmatched;
	struct py_eval_code eval = { { 0x55c7f4f1a000, 0x55c7f4e9a000 },
				     { 0x55c7f4f1a950, 0x55c7f4eaba00 } };
	struct profile p;
	struct maps m;
	char *got;

	profile_init(&p);
	m = mappings(&p);
	n = checksum_frames(&p, frames);
	frames[4] = rs_native(&p, m.python, 0x55c7f4e9b13e, NULL);	/* was eval's, named */
	got = merged_in(&p, &eval, &checksum_stack, frames, n, &unmatched);
	expect_text(got, ROOT ";<module> (demo.py:1);main (demo.py:32);handle_request (demo.py:26);"
		    "checksum (demo.py:18);" CHECKSUM_LEAF,
		    "python: an unnamed frame in eval's cold block is its eval call");
	CHECK(unmatched == 0, "python: split loop, every frame placed (%u without)", unmatched);
	free(got);
	got = merged(&p, &checksum_stack, frames, n, &unmatched);
	CHECK(unmatched == 4, "python: split loop by name only: 4 frames at the root (%u)",
	      unmatched);
	free(got);
	profile_release(&p);
}

/* python_new without the program's maps: its warnings that it cannot read them kept quiet. */
static struct python *quiet_python(void)
{
	int null = open("/dev/null", O_WRONLY), saved = dup(2);
	struct python *py;

	fflush(stderr);
	dup2(null, 2);
	py = python_new(&(struct runtime_maps){ -1, -1, -1, -1, NULL, NULL }, NULL, NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(null);
	return py;
}

static void freed(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], n, unmatched, before[BPFPROF_MAX_DEPTH];
	struct interp_stack st = checksum_stack;
	struct raw_interp rp;
	struct python *py;
	struct profile p;
	char *got;

	/* handle_request's code object freed before it was named. */
	profile_init(&p);
	n = checksum_frames(&p, frames);
	st.frames[1].code = 0x7f0e4b6a5570;
	got = merged(&p, &st, frames, n, &unmatched);
	expect_text(got, ROOT ";<module> (demo.py:1);main (demo.py:32);[python: code not read];"
		    "checksum (demo.py:18);" CHECKSUM_LEAF,
		    "python: a code object not named is [python: code not read], in its place");
	free(got);

	/* The same first line at a reused address: another code object, not named either. */
	st = checksum_stack;
	st.frames[0].firstlineno = 40;
	got = merged(&p, &st, frames, n, &unmatched);
	expect_text(got, ROOT ";<module> (demo.py:1);main (demo.py:32);handle_request (demo.py:26);"
		    "[python: code not read];" CHECKSUM_LEAF,
		    "python: a code address read with another first line is not the one named");
	free(got);
	profile_release(&p);

	/* python_merge for a process it has no record of (gone, or never named). */
	py = quiet_python();
	if (!CHECK(py, "python: python_new without the program's maps"))
		return;
	profile_init(&p);
	n = checksum_frames(&p, frames);
	rp = raw_of(&checksum_stack);
	n = python_merge(py, &p, 4242, &rp, frames, n, BPFPROF_MAX_DEPTH);
	got = rs_folded(&p, "python3", frames, n);
	expect_text(got, ROOT ";[python: code not read];[python: code not read];"
		    "[python: code not read];[python: code not read];" CHECKSUM_LEAF,
		    "python: a process with no record: each frame [python: code not read]");
	free(got);

	/* Another runtime's frames are not Python's: the stack as it was. */
	n = checksum_frames(&p, frames);
	memcpy(before, frames, n * sizeof(*frames));
	rp.runtime = RUNTIME_RUBY;
	CHECK(python_merge(py, &p, 4242, &rp, frames, n, BPFPROF_MAX_DEPTH) == n &&
		      !memcmp(before, frames, n * sizeof(*frames)),
	      "python: a Ruby stack leaves the native frames as they are");
	profile_release(&p);

	/*
	 * Eval calls not on the native stack (it stops in the outer join),
	 * twice: said once on stderr, each sample counted.
	 */
	{
		FILE *err = tmpfile();
		int saved = dup(2);
		struct python_stats ps, ps0;
		char text[1024] = "";
		size_t len = 0;
		const char *hit;

		profile_init(&p);
		python_renumber(py);	/* a new profile where the last was: its names anew */
		python_stats(py, &ps0);
		fflush(stderr);
		if (err)
			dup2(fileno(err), 2);
		for (int k = 0; k < 2; k++) {
			n = report_frames(&p, frames, true);
			rp = raw_of(&report_stack);
			python_merge(py, &p, 4242, &rp, frames, n, BPFPROF_MAX_DEPTH);
		}
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		if (err) {
			rewind(err);
			len = fread(text, 1, sizeof(text) - 1, err);
			text[len] = 0;
			fclose(err);
		}
		python_stats(py, &ps);
		hit = strstr(text, "eval calls not found on the native stack");
		CHECK(hit && !strstr(hit + 1, "eval calls not found") && ps.unmatched_samples - ps0.unmatched_samples == 2 &&
			      ps.unmatched - ps0.unmatched == 8,
		      "python: frames at the root said once on stderr, 2 samples and 8 frames counted "
		      "(%llu, %llu): %s", (unsigned long long)(ps.unmatched_samples - ps0.unmatched_samples),
		      (unsigned long long)(ps.unmatched - ps0.unmatched), text);
		profile_release(&p);
	}
	python_free(py);
}

void test_merge_python(void)
{
	typical();
	cut();
	split();
	freed();
}
