// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Code objects named from a live interpreter's memory (python_code.c), for
 * every CPython on the machine: tests/unit/py_codes.py prints its code
 * objects as Python sees them (qualified name, file, first line and
 * co_lines()), then holds a stack still; every name is read back through
 * process_vm_readv and the line of every instruction checked against
 * Python's own, and the held stack is walked as the BPF program walks it
 * (the instruction pointer its frames keep, less the code object) to see
 * that each frame gets the line Python gives it. Then what must fail: an
 * unreadable address, an object that is no code object, real line tables
 * cut short, made-up ones.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bpfprof/python_code.h"
#include "bpfprof/python_offsets.h"
#include "unit.h"

#define SCRIPT "tests/unit/py_codes.py"

static int read_pid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = *(pid_t *)ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

static uint64_t read_word(pid_t pid, uint64_t addr, unsigned size)
{
	uint64_t v = 0;

	return read_pid(&pid, addr, &v, size) ? 0 : v;
}

/*
 * Python's hex UTF-8 as the reader shows it: control characters as
 * U+FFFD, cut at PY_NAME_MAX code points. Caller frees.
 */
static char *unhex(const char *hex)
{
	size_t n = strlen(hex) / 2, i, points = 0;
	char *s = malloc(3 * n + 1), *p = s;
	unsigned b;

	for (i = 0; i < n && sscanf(hex + 2 * i, "%2x", &b) == 1; i++) {
		if ((b & 0xc0) != 0x80 && ++points > PY_NAME_MAX)
			break;
		if (b < 0x20 || b == 0x7f)
			p = memcpy(p, "\xef\xbf\xbd", 3) + 3;
		else
			*p++ = b;
	}
	*p = '\0';
	return s;
}

/* What the script printed: a code object as Python sees it, its line ranges, the held stack. */
struct code_seen {
	unsigned long long id;
	char *qualname, *filename;
	unsigned firstlineno;
	size_t first_range, nr_ranges;	/* into seen.ranges */
};

struct range_seen {
	unsigned start, end;	/* bytes of bytecode */
	int line;		/* -1: none */
};

struct frame_seen {
	unsigned long long code;
	int lasti;		/* f_lasti, bytes; -1: the newest, not said */
	unsigned line;
};

#define MAX_FRAMES 32

struct seen {
	struct code_seen *codes;
	size_t nr_codes;
	struct range_seen *ranges;
	size_t nr_ranges;
	struct frame_seen frames[MAX_FRAMES];
	size_t nr_frames;
	unsigned long long code_type, str, tstate;
	pid_t pid;
};

static void add_code(struct seen *s, const char *line)
{
	char *qhex = NULL, *fhex = NULL;
	struct code_seen c = { 0 };

	if (sscanf(line, "CODE %llu %llu %u %ms %ms", &c.id, &s->code_type, &c.firstlineno, &qhex,
		   &fhex) == 5) {
		c.qualname = unhex(qhex);
		c.filename = unhex(fhex);
		c.first_range = s->nr_ranges;
		s->codes = realloc(s->codes, (s->nr_codes + 1) * sizeof(c));
		s->codes[s->nr_codes++] = c;
	}
	free(qhex);
	free(fhex);
}

/* LINE lines follow their CODE line. */
static void add_range(struct seen *s, const char *line)
{
	unsigned long long id;
	struct range_seen r;

	if (sscanf(line, "LINE %llu %u %u %d", &id, &r.start, &r.end, &r.line) != 4 || !s->nr_codes ||
	    s->codes[s->nr_codes - 1].id != id)
		return;
	if (!(s->nr_ranges & (s->nr_ranges + 1)))
		s->ranges = realloc(s->ranges, (2 * s->nr_ranges + 1) * sizeof(r));
	s->ranges[s->nr_ranges++] = r;
	s->codes[s->nr_codes - 1].nr_ranges++;
}

static void parse(FILE *p, struct seen *s)
{
	char *line = NULL;
	size_t size = 0;
	struct frame_seen *f;

	while (getline(&line, &size, p) > 0) {
		f = &s->frames[s->nr_frames];
		if (!strncmp(line, "CODE ", 5))
			add_code(s, line);
		else if (!strncmp(line, "LINE ", 5))
			add_range(s, line);
		else if (s->nr_frames < MAX_FRAMES &&
			 sscanf(line, "FRAME %llu %d %u", &f->code, &f->lasti, &f->line) == 3)
			s->nr_frames++;
		else if (sscanf(line, "STR %llu", &s->str) == 1 ||
			 sscanf(line, "TSTATE %llu", &s->tstate) == 1)
			;
		else if (sscanf(line, "READY %d", &s->pid) == 1)
			break;
	}
	free(line);
}

/* The instr a frame at byte offset off of the bytecode has, as the BPF walk records it. */
static uint32_t instr_at(const struct py_offsets *o, unsigned off)
{
	if (o->frames == PY_FRAMES_38)
		return off;
	return o->frames == PY_FRAMES_310 ? off / 2 : off + o->code_code_adaptive;
}

/* The byte offset in the bytecode of a frame's instr. */
static int64_t offset_of(const struct py_offsets *o, uint32_t instr)
{
	if (o->frames == PY_FRAMES_38)
		return instr;
	if (o->frames == PY_FRAMES_310)
		return 2 * (int64_t)instr;
	return (int64_t)instr - o->code_code_adaptive;
}

/* Every instruction of every range co_lines() gave for c: how many, and how many right. */
static void check_lines(const struct seen *s, const struct py_offsets *o, const struct code_seen *c,
			const struct py_code_info *got, const char *label, unsigned *n, unsigned *right)
{
	size_t i;

	for (i = c->first_range; i < c->first_range + c->nr_ranges; i++) {
		const struct range_seen *r = &s->ranges[i];
		/* No line, or 3.11's line 0 of a module's first instruction: the first line. */
		uint32_t want = r->line > 0 ? (uint32_t)r->line : got->firstlineno;
		unsigned off;

		for (off = r->start; off < r->end; off += 2) {
			uint32_t l = python_code_line(o, got, instr_at(o, off));

			(*n)++;
			if (l == want)
				(*right)++;
			else if (*n - *right < 5)
				printf("#   %s: %s at byte %u: line %u, Python says %d\n", label,
				       c->qualname, off, l, r->line);
		}
	}
}

/*
 * The table cut at every length: each instruction's line the whole
 * table's, or the first line, but for those of the one entry the cut went
 * through (3.11 on: up to 8 code units; 3.10's pairs are whole or
 * ignored). 3.8's and 3.9's co_lnotab says where lines change, not which
 * bytes have one: the bytes its whole pairs cover keep their lines, those
 * after any. false on any other.
 */
static bool check_cuts(const struct py_offsets *o, struct py_code_info *got, uint32_t bytecode)
{
	uint32_t len = got->linetable_len, cut, off, *whole = malloc(bytecode / 2 * sizeof(*whole));
	unsigned slack = o->frames == PY_FRAMES_310 ? 0 : 16;
	bool ok = true;

	for (off = 0; off < bytecode; off += 2)
		whole[off / 2] = python_code_line(o, got, instr_at(o, off));
	for (cut = 0; cut < len && ok; cut++) {
		uint32_t lo = UINT32_MAX, hi = 0, covered = 0, i;

		for (i = 0; i + 1 < cut; i += 2)
			covered += got->linetable[i];
		got->linetable_len = cut;
		for (off = 0; off < bytecode; off += 2) {
			uint32_t l = python_code_line(o, got, instr_at(o, off));

			if (o->frames == PY_FRAMES_38 ? off < covered && l != whole[off / 2]
						       : l != whole[off / 2] && l != got->firstlineno) {
				lo = off < lo ? off : lo;
				hi = off;
			}
		}
		ok = lo == UINT32_MAX || hi - lo < slack;
		if (!ok)
			printf("#   %s cut at %u of %u bytes: other lines at bytes %u to %u\n",
			       got->qualname, cut, len, lo, hi);
	}
	got->linetable_len = len;
	free(whole);
	return ok;
}

/* Waits for pid to sleep (in time.sleep, its stack then still): false after some 5 s. */
static bool wait_sleeping(pid_t pid)
{
	struct timespec tick = { 0, 5 * 1000 * 1000 };
	char path[64], buf[256], *state;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = '\0';
		if ((state = strrchr(buf, ')')) && state[1] == ' ' && state[2] == 'S')
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

/* A frame as the BPF program records it: its code object, its instr (without INTERP_FRAME_ENTRY). */
struct walked {
	uint64_t code;
	uint32_t instr;
};

/*
 * The thread's frames newest first, read as bpf/python.bpf.h reads them:
 * the frames an eval call starts with on the C stack (3.12 on) left out.
 */
static size_t walk(const struct py_offsets *o, pid_t pid, uint64_t tstate, struct walked *w)
{
	uint64_t frame = read_word(pid, tstate + o->tstate_frame, 8);
	size_t n = 0;

	if (o->cframe_current_frame != PY_NO_MEMBER && frame)
		frame = read_word(pid, frame + o->cframe_current_frame, 8);
	for (; frame && n < MAX_FRAMES; frame = read_word(pid, frame + o->frame_previous, 8)) {
		uint64_t code = read_word(pid, frame + o->frame_code, 8);

		if ((o->frames == PY_FRAMES_312 || o->frames == PY_FRAMES_314) &&
		    read_word(pid, frame + o->frame_entry, 1) == PY_FRAME_OWNED_BY_CSTACK)
			continue;
		w[n].code = code;
		w[n].instr = o->frames == PY_FRAMES_310 || o->frames == PY_FRAMES_38
				     ? read_word(pid, frame + o->frame_instr, 4)
				     : read_word(pid, frame + o->frame_instr, 8) - code;
		w[n++].instr &= ~INTERP_FRAME_ENTRY;
	}
	return n;
}

/* The held stack walked: each frame's code object, its offset as f_lasti says, its line. */
static void check_stack(const struct seen *s, const struct py_offsets *o, const char *python)
{
	struct walked w[MAX_FRAMES];
	unsigned offsets = 0, lines = 0;
	struct py_code_info got;
	size_t n, i;

	if (!CHECK(s->tstate && s->nr_frames > 5 && wait_sleeping(s->pid),
		   "%s: a stack of %zu frames held, asleep", python, s->nr_frames))
		return;
	n = walk(o, s->pid, s->tstate, w);
	if (!CHECK(n == s->nr_frames, "%s: %zu frames walked from the thread state, Python says %zu",
		   python, n, s->nr_frames))
		return;
	for (i = 0; i < n; i++) {
		const struct frame_seen *f = &s->frames[i];
		uint32_t line = 0;

		if (w[i].code != f->code ||
		    python_code_read(o, s->code_type, read_pid, (void *)&s->pid, w[i].code, &got)) {
			printf("#   %s: frame %zu: code %#llx not %#llx, or not read\n", python, i,
			       (unsigned long long)w[i].code, f->code);
			continue;
		}
		line = python_code_line(o, &got, w[i].instr);
		if (f->lasti < 0 || offset_of(o, w[i].instr) == f->lasti)
			offsets++;
		if (line == f->line)
			lines++;
		else
			printf("#   %s: %s at byte %lld: line %u, Python says %u\n", python, got.qualname,
			       (long long)offset_of(o, w[i].instr), line, f->line);
		python_code_release(&got);
	}
	CHECK(offsets == n, "%s: %u of %zu frames at the instruction f_lasti says", python, offsets,
	      n);
	CHECK(lines == n, "%s: %u of %zu frames on the line f_lineno says (Python calls, a C call, a "
	      "generator; the newest in a C function)", python, lines, n);
}

static unsigned python_version(const char *python)
{
	char cmd[512];
	unsigned v = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s -c 'import sys; print(sys.version_info[0] << 8 | sys.version_info[1])'",
		 python);
	if ((p = popen(cmd, "r"))) {
		if (fscanf(p, "%u", &v) != 1)
			v = 0;
		pclose(p);
	}
	return v;
}

/* Bytes of bytecode co_lines() covers for c. */
static uint32_t bytecode_of(const struct seen *s, const struct code_seen *c)
{
	return c->nr_ranges ? s->ranges[c->first_range + c->nr_ranges - 1].end : 0;
}

static void check_codes(const struct seen *s, const struct py_offsets *o, const char *python)
{
	unsigned names = 0, n = 0, right = 0, cut = 0, cuts_ok = 0;
	struct py_code_info got;
	size_t i;

	for (i = 0; i < s->nr_codes; i++) {
		const struct code_seen *c = &s->codes[i];

		if (python_code_read(o, s->code_type, read_pid, (void *)&s->pid, c->id, &got)) {
			printf("#   %s: %s not read\n", python, c->qualname);
			continue;
		}
		if (!strcmp(got.qualname, c->qualname) && !strcmp(got.filename, c->filename) &&
		    got.firstlineno == c->firstlineno)
			names++;
		else
			printf("#   %s: read '%s' '%s' %u, Python says '%s' '%s' %u\n", python,
			       got.qualname, got.filename, got.firstlineno, c->qualname, c->filename,
			       c->firstlineno);
		check_lines(s, o, c, &got, python, &n, &right);
		/* A few dozen middling tables cut at every length. */
		if (cut < 40 && got.linetable_len >= 24 && got.linetable_len <= 200 && !(i % 7)) {
			cut++;
			cuts_ok += check_cuts(o, &got, bytecode_of(s, c));
		}
		python_code_release(&got);
	}
	CHECK(names == s->nr_codes, "%s: %u of %zu code objects read with the qualified name, file and "
	      "first line Python gives", python, names, s->nr_codes);
	CHECK(n > 10000 && right == n, "%s: the line of %u of %u instructions as co_lines() says",
	      python, right, n);
	CHECK(cut >= 20 && cuts_ok == cut, "%s: %u of %u line tables cut at every length give the "
	      "line or the first line, but in the entry cut", python, cuts_ok, cut);
}

/*
 * The script still makes what the checks above are for: names and files of
 * every str kind (Latin-1, 2 and 4 bytes a character), a name cut at
 * PY_NAME_MAX.
 */
static void check_kinds(const struct seen *s, const char *python)
{
	static const char *const want[] = { "café", "函数", "函数_𠀀",
					    "/tmp/bpfprof-unit/café/naïve.py",
					    "/tmp/bpfprof-unit/函数/模块.py",
					    "/tmp/bpfprof-unit/ñ/函数/𠀀.py",
					    "/tmp/bpfprof-unit/tab\xef\xbf\xbdhere.py" };
	unsigned found = 0, cut = 0;
	size_t i, j;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		for (j = 0; j < s->nr_codes; j++)
			if (!strcmp(s->codes[j].qualname, want[i]) ||
			    !strcmp(s->codes[j].filename, want[i])) {
				found++;
				break;
			}
	for (j = 0; j < s->nr_codes; j++)
		cut += strlen(s->codes[j].qualname) == PY_NAME_MAX;
	CHECK(found == i, "%s: %u of %zu names and files of each str kind, and with a control "
	      "character, among those checked", python, found, i);
	CHECK(cut == 1, "%s: a name of 1500 characters among them, read as its first %d", python,
	      PY_NAME_MAX);
}

static void check_interpreter(const char *python)
{
	const struct py_offsets *o = python_offsets_known(python_version(python));
	struct seen s = { 0 };
	struct py_code_info got;
	char cmd[512];
	size_t i;
	FILE *p;

	if (!CHECK(o != NULL, "%s: a layout for its version", python))
		return;
	snprintf(cmd, sizeof(cmd), "exec %s %s", python, SCRIPT);
	if (!CHECK((p = popen(cmd, "r")) != NULL, "%s: runs %s", python, SCRIPT))
		return;
	parse(p, &s);
	if (!CHECK(s.pid > 0 && s.nr_codes > 1000, "%s: %s printed %zu code objects", python, SCRIPT,
		   s.nr_codes))
		goto out;
	check_stack(&s, o, python);
	check_codes(&s, o, python);
	check_kinds(&s, python);
	CHECK(python_code_read(o, s.code_type, read_pid, &s.pid, 0x10, &got) < 0,
	      "%s: an unreadable address gives an error", python);
	CHECK(python_code_read(o, s.code_type, read_pid, &s.pid, s.str, &got) == -EINVAL,
	      "%s: a str object is no code object (-EINVAL)", python);
	CHECK(python_code_read(o, s.code_type, read_pid, &s.pid, s.codes[0].id + 8, &got) < 0,
	      "%s: a code object's address off by 8 gives an error", python);
out:
	if (s.pid > 0)
		kill(s.pid, SIGKILL);
	pclose(p);
	for (i = 0; i < s.nr_codes; i++) {
		free(s.codes[i].qualname);
		free(s.codes[i].filename);
	}
	free(s.codes);
	free(s.ranges);
}

/* Tables cut short or made up: a line or -1, never a read past their end. */
static void check_hostile_tables(void)
{
	static const uint8_t t310[] = { 6, 1, 4, 0x80, 8, 2, 2 };	/* odd length: the last half-pair ignored */
	static const uint8_t t311[] = { 0x80 | 13 << 3 | 1, 0x7f /* a varint that never ends */ };
	static const uint8_t t38[] = { 6, 1, 4, 0xff, 8, 2, 2 };	/* the same; -1 a signed byte */
	uint8_t junk[256];
	unsigned i, seed = 1;
	bool sane = true;

	CHECK(python_linetable_line(PY_FRAMES_310, t310, sizeof(t310), 10, 0) == 11 &&
		      python_linetable_line(PY_FRAMES_310, t310, sizeof(t310), 10, 7) == -1 &&
		      python_linetable_line(PY_FRAMES_310, t310, sizeof(t310), 10, 12) == 13,
	      "3.10 table: lines of ranges, -1 for a range with no line");
	CHECK(python_linetable_line(PY_FRAMES_38, t38, sizeof(t38), 10, 0) == 10 &&
		      python_linetable_line(PY_FRAMES_38, t38, sizeof(t38), 10, 6) == 11 &&
		      python_linetable_line(PY_FRAMES_38, t38, sizeof(t38), 10, 10) == 10 &&
		      python_linetable_line(PY_FRAMES_38, t38, sizeof(t38), 10, 17) == 10 &&
		      python_linetable_line(PY_FRAMES_38, t38, sizeof(t38), 10, 18) == 12 &&
		      python_linetable_line(PY_FRAMES_38, t38, sizeof(t38), 10, 1000) == 12,
	      "3.8 table: the line of the last change at or before the byte, deltas signed");
	CHECK(python_linetable_line(PY_FRAMES_311, t311, sizeof(t311), 10, 0) != 1 << 30,
	      "3.11 table cut inside a varint: no read past its end");
	for (i = 0; i < 2000; i++) {
		unsigned j;

		for (j = 0; j < sizeof(junk); j++)
			junk[j] = (seed = seed * 1103515245 + 12345) >> 16;
		sane &= python_linetable_line(PY_FRAMES_311, junk, sizeof(junk), 5, i) >= -1;
		sane &= python_linetable_line(PY_FRAMES_310, junk, 1 + i % sizeof(junk), 5, i) >= -1;
		sane &= python_linetable_line(PY_FRAMES_38, junk, 1 + i % sizeof(junk), 5, i) >= -1;
	}
	CHECK(sane, "2000 made-up tables of each layout: a line or -1 each");
}

static void check_short_file(void)
{
	static const char *const cases[][2] = {
		{ "/usr/lib/python3.11/json/decoder.py", "decoder.py" },
		{ "/usr/lib/python3.11/json/__init__.py", "json/__init__.py" },
		{ "/srv/app/__main__.py", "app/__main__.py" },
		{ "pkg//__init__.py", "pkg//__init__.py" },
		{ "/__init__.py", "__init__.py" },
		{ "__main__.py", "__main__.py" },
		{ "<frozen os>", "<frozen os>" },
		{ "/a/__init__.pyc", "__init__.pyc" },
		{ "", "" },
	};
	size_t i, right = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = interp_short_file(cases[i][0]);

		if (!strcmp(got, cases[i][1]))
			right++;
		else
			printf("#   '%s' shown as '%s', not '%s'\n", cases[i][0], got, cases[i][1]);
	}
	CHECK(right == i, "short file names: %zu of %zu (a package's __init__.py and __main__.py with "
	      "its folder)", right, i);
}

void test_python_code(void)
{
	static const char *const pyenv[] = { "3.8.18/bin/python3.8", "3.9.18/bin/python3.9",
					     "3.10.13/bin/python3.10", "3.11.7/bin/python3.11",
					     "3.12.1/bin/python3.12", "3.13.0/bin/python3.13" };
	char path[256];
	size_t i;

	check_interpreter("/usr/bin/python3.11");
	for (i = 0; i < sizeof(pyenv) / sizeof(pyenv[0]); i++) {
		snprintf(path, sizeof(path), "/root/.pyenv/versions/%s", pyenv[i]);
		if (access(path, X_OK)) {
			printf("# %s: not on this machine, not checked\n", path);
			continue;
		}
		check_interpreter(path);
	}
	check_hostile_tables();
	check_short_file();
}
