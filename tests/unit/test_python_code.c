// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Code objects named from a live interpreter's memory (python_code.c), for
 * every CPython on the machine: tests/unit/py_codes.py prints each of its
 * code objects as Python sees it (qualified name, file, first line and
 * co_lines()) and waits; every name is read back through process_vm_readv
 * and the line of every instruction checked against Python's own. Then
 * what must fail: an unreadable address, an object that is no code
 * object, line tables cut short or made up.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
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

/* hex as a string (caller frees). */
static char *unhex(const char *hex)
{
	size_t n = strlen(hex) / 2, i;
	char *s = malloc(n + 1);
	unsigned b;

	for (i = 0; i < n && sscanf(hex + 2 * i, "%2x", &b) == 1; i++)
		s[i] = b;
	s[i] = '\0';
	return s;
}

/* What the script printed: a code object as Python sees it, and its line ranges. */
struct code_seen {
	unsigned long long id;
	char *qualname, *filename;
	unsigned firstlineno;
};

struct range_seen {
	unsigned long long id;
	unsigned start, end;	/* bytes of bytecode */
	int line;		/* -1: none */
};

struct seen {
	struct code_seen *codes;
	size_t nr_codes;
	struct range_seen *ranges;
	size_t nr_ranges;
	unsigned long long code_type, str;
	pid_t pid;
};

static void parse(FILE *p, struct seen *s)
{
	char line[8192], qhex[4096], fhex[4096];
	struct code_seen c;
	struct range_seen r;

	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "CODE %llu %llu %u %4095s %4095s", &c.id, &s->code_type,
			   &c.firstlineno, qhex, fhex) == 5) {
			c.qualname = unhex(qhex);
			c.filename = unhex(fhex);
			s->codes = realloc(s->codes, (s->nr_codes + 1) * sizeof(c));
			s->codes[s->nr_codes++] = c;
		} else if (sscanf(line, "LINE %llu %u %u %d", &r.id, &r.start, &r.end, &r.line) == 4) {
			s->ranges = realloc(s->ranges, (s->nr_ranges + 1) * sizeof(r));
			s->ranges[s->nr_ranges++] = r;
		} else if (sscanf(line, "STR %llu", &s->str) != 1 && sscanf(line, "READY %d", &s->pid) == 1) {
			return;
		}
	}
}

/* The instr a frame at byte offset off of the bytecode has, as the BPF walk records it. */
static uint32_t instr_at(const struct py_offsets *o, unsigned off)
{
	return o->frames == PY_FRAMES_310 ? off / 2 : off + o->code_code_adaptive;
}

/* Every instruction of every range co_lines() gave for c: how many, and how many right. */
static void check_lines(const struct seen *s, const struct py_offsets *o, const struct code_seen *c,
			const struct py_code_info *got, const char *label, unsigned *n, unsigned *right)
{
	size_t i;

	for (i = 0; i < s->nr_ranges; i++) {
		const struct range_seen *r = &s->ranges[i];
		/* No line, or 3.11's line 0 of a module's first instruction: the first line. */
		uint32_t want = r->line > 0 ? (uint32_t)r->line : got->firstlineno;
		unsigned off;

		for (off = r->start; r->id == c->id && off < r->end; off += 2) {
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

static void check_interpreter(const char *python)
{
	const struct py_offsets *o = python_offsets_known(python_version(python));
	unsigned names = 0, n = 0, right = 0;
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
	if (!CHECK(s.pid > 0 && s.nr_codes > 10, "%s: %s printed %zu code objects", python, SCRIPT,
		   s.nr_codes))
		goto out;
	for (i = 0; i < s.nr_codes; i++) {
		const struct code_seen *c = &s.codes[i];

		if (python_code_read(o, s.code_type, read_pid, &s.pid, c->id, &got)) {
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
		check_lines(&s, o, c, &got, python, &n, &right);
		python_code_release(&got);
	}
	CHECK(names == s.nr_codes, "%s: %u of %zu code objects read with the qualified name, file and "
	      "first line Python gives", python, names, s.nr_codes);
	CHECK(n > 100 && right == n, "%s: the line of %u of %u instructions as co_lines() says", python,
	      right, n);
	CHECK(python_code_read(o, s.code_type, read_pid, &s.pid, 0x10, &got) < 0,
	      "%s: an unreadable address gives an error", python);
	CHECK(python_code_read(o, s.code_type, read_pid, &s.pid, s.str, &got) == -EINVAL,
	      "%s: a str object is no code object (-EINVAL)", python);
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
	uint8_t junk[256];
	unsigned i, seed = 1;
	bool sane = true;

	CHECK(python_linetable_line(PY_FRAMES_310, t310, sizeof(t310), 10, 0) == 11 &&
		      python_linetable_line(PY_FRAMES_310, t310, sizeof(t310), 10, 7) == -1 &&
		      python_linetable_line(PY_FRAMES_310, t310, sizeof(t310), 10, 12) == 13,
	      "3.10 table: lines of ranges, -1 for a range with no line");
	CHECK(python_linetable_line(PY_FRAMES_311, t311, sizeof(t311), 10, 0) != 1 << 30,
	      "3.11 table cut inside a varint: no read past its end");
	for (i = 0; i < 2000; i++) {
		unsigned j;

		for (j = 0; j < sizeof(junk); j++)
			junk[j] = (seed = seed * 1103515245 + 12345) >> 16;
		sane &= python_linetable_line(PY_FRAMES_311, junk, sizeof(junk), 5, i) >= -1;
		sane &= python_linetable_line(PY_FRAMES_310, junk, 1 + i % sizeof(junk), 5, i) >= -1;
	}
	CHECK(sane, "2000 made-up tables of each layout: a line or -1 each");
}

void test_python_code(void)
{
	static const char *const pyenv[] = { "3.10.13/bin/python3.10", "3.11.7/bin/python3.11",
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
}
