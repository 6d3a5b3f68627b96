// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * What the fuzz targets share: inputs as files, strings and a process's
 * memory, checks of what readers return, and the folded check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpfprof/demangle.h"
#include "bpfprof/output.h"
#include "bpfprof/util.h"
#include "fuzz.h"

bool fuzz_abort_on_failure = true;
unsigned fuzz_failures;

void fuzz_check_failed(const char *file, int line, const char *expr)
{
	fuzz_failures++;
	fprintf(stderr, "fuzz: check failed at %s:%d: %s\n", file, line, expr);
	if (fuzz_abort_on_failure)
		abort();
}

int fuzz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += n;
	}
	return fd;
}

int fuzz_input_file(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);

	FUZZ_CHECK(fd >= 0);
	return fd;
}

char *fuzz_cstring(const uint8_t *data, size_t size)
{
	char *s = xmalloc(size + 1);

	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

uint64_t fuzz_take(const uint8_t **data, size_t *size, unsigned bytes)
{
	uint64_t v = 0;

	while (bytes-- && *size) {
		v = v << 8 | (*data)[*size - 1];
		(*size)--;
	}
	return v;
}

int fuzz_memory_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct fuzz_memory *m = ctx;

	if (addr < FUZZ_MEMORY_BASE || addr - FUZZ_MEMORY_BASE > m->size ||
	    len > m->size - (addr - FUZZ_MEMORY_BASE))
		return -EFAULT;
	memcpy(buf, m->data + (addr - FUZZ_MEMORY_BASE), len);
	return 0;
}

/* What readers return ------------------------------------------------------ */

bool fuzz_all_zero(const void *p, size_t len)
{
	const uint8_t *b = p;

	while (len--)
		if (*b++)
			return false;
	return true;
}

bool fuzz_has_control(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return true;
	return false;
}

bool fuzz_clean_text(const char *str)
{
	const uint8_t *s = (const uint8_t *)str;
	unsigned len, i;
	uint32_t cp;

	if (fuzz_has_control(str, strlen(str)))
		return false;
	while (*s) {
		if (*s < 0x80) {
			s++;
			continue;
		}
		if (*s < 0xc2 || *s > 0xf4)
			return false;
		len = *s < 0xe0 ? 2 : *s < 0xf0 ? 3 : 4;
		cp = *s & (0x7f >> len);
		for (i = 1; i < len; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		s += len;
	}
	return true;
}

/* Folded output ----------------------------------------------------------- */

static int bytes_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	return c ? c : (alen > blen) - (alen < blen);
}

const char *fuzz_folded_problem(const char *text, size_t len, uint64_t *total, size_t *lines)
{
	const char *p = text, *end = text + len, *prev = NULL;
	size_t prev_len = 0;

	*total = 0;
	*lines = 0;
	if (len && end[-1] != '\n')
		return "no newline at the end";
	while (p < end) {
		const char *eol = memchr(p, '\n', end - p), *d;
		size_t stack_len;
		uint64_t count = 0;

		if (fuzz_has_control(p, eol - p))
			return "control character";
		for (d = eol; d > p && d[-1] >= '0' && d[-1] <= '9'; d--)
			;
		if (d == eol || d == p || d[-1] != ' ')
			return "no ' COUNT' at the end";
		if (*d == '0')
			return "count is not a positive integer";
		stack_len = d - 1 - p;
		for (; d < eol; d++)
			count = count * 10 + (*d - '0');
		if (!stack_len || p[0] == ';' || p[stack_len - 1] == ';' ||
		    memmem(p, stack_len, ";;", 2))
			return "empty frame";
		if (p[stack_len - 1] == ' ')
			return "more than one space before the count";
		if (prev) {
			int c = bytes_cmp(prev, prev_len, p, stack_len);

			if (!c)
				return "stack repeated";
			if (c > 0)
				return "not sorted";
		}
		prev = p;
		prev_len = stack_len;
		*total += count;
		(*lines)++;
		p = eol + 1;
	}
	return NULL;
}

/* Frames in the stack part of one line. */
static size_t line_frames(const char *line, size_t len)
{
	const char *space = line + len;
	size_t n = 1;

	while (space > line && space[-1] != ' ')
		space--;
	for (; line < space - 1; line++)
		n += *line == ';';
	return n;
}

/* As the symbolizer names a frame: readable name, the symbol as it is (kernel's: as it is). */
static uint32_t function_of(struct profile *p, const char *name, enum frame_kind kind)
{
	uint32_t system_name = profile_string(p, name), id = system_name;
	char *readable = kind == FRAME_KERNEL ? NULL : demangle(name);

	if (readable) {
		id = profile_string(p, readable);
		free(readable);
	}
	return profile_function(p, id, system_name, 0);
}

static char *write_to_string(const struct profile *p, bool per_pid, size_t *len)
{
	struct write_options o = { .per_pid = per_pid };
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	FUZZ_CHECK(f);
	if (!f)
		return NULL;
	FUZZ_CHECK(write_folded(f, p, &o) == 0);
	fclose(f);
	return buf;
}

void fuzz_fold(const char *comm, const char *map_path, const struct fuzz_loc *all, size_t n_all)
{
	struct prof_mapping pm = { .start = 0x10000, .offset = 0x2000, .pid = 42 };
	/* At most FUZZ_FOLD_MAX of them, spread: the output grows as the square of the depth. */
	struct fuzz_loc locs[FUZZ_FOLD_MAX];
	uint32_t ids[FUZZ_FOLD_MAX], comm_id, mapping;
	size_t frames[FUZZ_FOLD_MAX + 1], n = 0, i, k;
	bool seen[FUZZ_FOLD_MAX + 1];
	struct profile p;
	int per_pid;

	for (i = 0; i < n_all && n < FUZZ_FOLD_MAX; i += n_all / FUZZ_FOLD_MAX + 1)
		locs[n++] = all[i];
	profile_init(&p);
	pm.limit = pm.start + 16 * (n + 1);
	pm.file = profile_string(&p, *map_path ? map_path : "[anon]");
	mapping = profile_mapping(&p, &pm);
	comm_id = profile_string(&p, comm);
	for (i = 0; i < n; i++) {
		struct prof_line lines[FUZZ_MAX_CHAIN];
		unsigned j, nl = locs[i].n < FUZZ_MAX_CHAIN ? locs[i].n : FUZZ_MAX_CHAIN;

		for (j = 0; j < nl; j++) {
			lines[j].function = function_of(&p, locs[i].names[j], locs[i].kind);
			lines[j].line = j;
		}
		ids[i] = profile_location_add(&p, mapping, pm.start + 16 * i, locs[i].kind, lines, nl);
	}
	/*
	 * Depth k: the k outermost locations; frames[k], what its line must
	 * hold. Not depth 0: an empty stack first in a profile is undefined
	 * behaviour in profile_stack() (memcpy from NULL).
	 */
	frames[0] = *comm ? 1 : 0;
	for (k = 1; k <= n; k++) {
		const struct fuzz_loc *l = &locs[n - k];
		struct prof_sample s = { .pid = 42, .tid = 43, .comm = comm_id, .count = 1 };

		frames[k] = frames[k - 1] + (l->n ? (l->n < FUZZ_MAX_CHAIN ? l->n : FUZZ_MAX_CHAIN) : 1);
		s.stack = profile_stack(&p, ids + n - k, k);
		profile_add_sample(&p, &s);
	}
	for (per_pid = 0; per_pid < 2; per_pid++) {
		size_t len = 0, lines = 0;
		uint64_t total = 0;
		char *text = write_to_string(&p, per_pid, &len);
		const char *problem, *line;

		if (!text)
			continue;
		problem = fuzz_folded_problem(text, len, &total, &lines);
		if (problem)
			fprintf(stderr, "fuzz: folded output: %s\n", problem);
		FUZZ_CHECK(!problem);
		FUZZ_CHECK(total == n && lines == n);
		/* Each line has exactly the frames of one depth: no name split, no frames merged. */
		memset(seen, 0, sizeof(seen));
		for (line = text; !problem && line < text + len;) {
			const char *eol = memchr(line, '\n', text + len - line);
			size_t f = line_frames(line, eol - line);

			for (k = 1; k <= n && (frames[k] != f || seen[k]); k++)
				;
			FUZZ_CHECK(k <= n);
			if (k <= n)
				seen[k] = true;
			line = eol + 1;
		}
		free(text);
	}
	profile_release(&p);
}
