// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfprof/perfmap.h"

/* Read size; a line longer than this is cut (its name is cut far earlier). */
#define CHUNK (64 * 1024)
#define HEAD (4 * 1024)

void perfmap_init(struct perfmap *m)
{
	memset(m, 0, sizeof(*m));
	strtab_init(&m->names);
}

void perfmap_release(struct perfmap *m)
{
	free(m->entries);
	free(m->pending);
	strtab_release(&m->names);
	memset(m, 0, sizeof(*m));
}

static void perfmap_clear(struct perfmap *m)
{
	perfmap_release(m);
	perfmap_init(m);
}

/* Merging ---------------------------------------------------------------- */

/* A range being merged; seq orders the lines: the highest covering wins. */
struct seg {
	uint64_t start, end;
	uint32_t name;
	uint32_t seq;
};

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A max-heap of indices into segs, by seq. */
static void heap_push(uint32_t *heap, uint32_t *n, const struct seg *segs, uint32_t idx)
{
	uint32_t i = (*n)++;

	while (i && segs[heap[(i - 1) / 2]].seq < segs[idx].seq) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = idx;
}

static void heap_pop(uint32_t *heap, uint32_t *n, const struct seg *segs)
{
	uint32_t last = heap[--(*n)], i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && segs[heap[c + 1]].seq > segs[heap[c]].seq)
			c++;
		if (segs[heap[c]].seq <= segs[last].seq)
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (*n)
		heap[i] = last;
}

/*
 * Folds the pending lines into the entries: a sweep over every range
 * boundary, the latest range still open at each one naming the stretch up
 * to the next. The old entries are disjoint and older than every pending
 * line; O(n log n) in all the ranges.
 */
static void merge_pending(struct perfmap *m)
{
	uint32_t n = m->nr + m->nr_pending, nb = 0, nheap = 0, next = 0, i, out = 0;
	struct seg *segs;
	uint64_t *bounds;
	uint32_t *heap, *src;
	struct perfmap_entry *entries;

	if (!m->nr_pending)
		return;
	segs = xmalloc(n * sizeof(*segs));
	bounds = xmalloc(2 * (size_t)n * sizeof(*bounds));
	heap = xmalloc(n * sizeof(*heap));
	for (i = 0; i < m->nr; i++)
		segs[i] = (struct seg){ m->entries[i].start, m->entries[i].end, m->entries[i].name, 0 };
	for (i = 0; i < m->nr_pending; i++)
		segs[m->nr + i] = (struct seg){ m->pending[i].start, m->pending[i].end,
						m->pending[i].name, i + 1 };
	qsort(segs, n, sizeof(*segs), seg_cmp);
	for (i = 0; i < n; i++) {
		bounds[nb++] = segs[i].start;
		bounds[nb++] = segs[i].end;
	}
	qsort(bounds, nb, sizeof(*bounds), u64_cmp);

	/* At most one output range per boundary; src[k]: the seg it came from. */
	entries = xmalloc(nb * sizeof(*entries));
	src = xmalloc(nb * sizeof(*src));
	for (i = 0; i < nb; i++) {
		uint64_t b = bounds[i];
		uint32_t top;

		if (i + 1 < nb && bounds[i + 1] == b)
			continue;
		while (next < n && segs[next].start <= b)
			heap_push(heap, &nheap, segs, next++);
		while (nheap && segs[heap[0]].end <= b)
			heap_pop(heap, &nheap, segs);
		if (!nheap || i + 1 == nb)
			continue;
		top = heap[0];
		/* bounds[i + 1] is the next distinct boundary: duplicates are skipped above. */
		if (out && src[out - 1] == top && entries[out - 1].end == b) {
			entries[out - 1].end = bounds[i + 1];
		} else {
			entries[out] = (struct perfmap_entry){ b, bounds[i + 1], segs[top].name };
			src[out++] = top;
		}
	}
	free(segs);
	free(bounds);
	free(heap);
	free(src);
	free(m->entries);
	m->entries = entries;
	m->nr = m->alloc = out;
	m->nr_pending = 0;
}

/* Parsing ---------------------------------------------------------------- */

/* Hex digits (an optional 0x first) into *v; the bytes taken, 0 if none or too many. */
static size_t parse_hex(const char *s, size_t len, uint64_t *v)
{
	size_t i = 0, digits = 0;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		i = 2;
	for (*v = 0; i < len && isxdigit((unsigned char)s[i]); i++) {
		if (++digits > 16)
			return 0;
		*v = *v << 4 | (uint64_t)(isdigit((unsigned char)s[i]) ? s[i] - '0' :
					  (tolower((unsigned char)s[i]) - 'a' + 10));
	}
	return digits ? i : 0;
}

static size_t skip_blanks(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/* Room for one more range: merging first may free some (later lines overwrite). */
static bool make_room(struct perfmap *m)
{
	if (m->nr + m->nr_pending < PERFMAP_MAX_ENTRIES)
		return true;
	merge_pending(m);
	/* Nearly full even so: stop merging on every line, keep what we have. */
	return m->nr < PERFMAP_MAX_ENTRIES - PERFMAP_MAX_ENTRIES / 8;
}

/* One line, without its '\n'; cut: only its head, the line was longer. */
static void add_line(struct perfmap *m, const char *s, size_t len, bool cut)
{
	uint64_t start, size;
	size_t i, n, name_len;
	const char *name;

	while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (!(n = parse_hex(s, len, &start)) || n >= len || (s[n] != ' ' && s[n] != '\t'))
		goto skip;
	i = skip_blanks(s, len, n);
	if (!(n = parse_hex(s + i, len - i, &size)) || i + n >= len ||
	    (s[i + n] != ' ' && s[i + n] != '\t'))
		goto skip;
	i = skip_blanks(s, len, i + n);
	/* A name is needed; an empty or wrapping range covers nothing. */
	if (i >= len || !size || start + size < start)
		goto skip;
	name = s + i;
	/* A NUL ends the name: nothing after it could be shown. */
	name_len = strnlen(name, len - i);
	if (!name_len)
		goto skip;
	if (name_len > PERFMAP_MAX_NAME) {
		name_len = PERFMAP_MAX_NAME;
		/* Not inside a UTF-8 sequence: name[name_len] is the first byte left out. */
		while (name_len && ((unsigned char)name[name_len] & 0xc0) == 0x80)
			name_len--;
		cut = true;
	}
	if (cut)
		m->truncated++;
	if (!make_room(m) || m->names.len + name_len + 1 > PERFMAP_MAX_NAME_BYTES) {
		m->dropped++;
		return;
	}
	ALLOC_GROW(m->pending, m->nr_pending + 1, m->pending_alloc);
	m->pending[m->nr_pending++] = (struct perfmap_entry){
		start, start + size, strtab_intern_n(&m->names, name, name_len)
	};
	m->lines++;
	return;
skip:
	m->skipped++;
}

/* The whole lines of text, unmerged; the bytes they took. */
static size_t parse_lines(struct perfmap *m, const char *text, size_t len)
{
	size_t used = 0;

	while (used < len) {
		const char *eol = memchr(text + used, '\n', len - used);

		if (!eol)
			break;
		if (eol > text + used)
			add_line(m, text + used, eol - (text + used), false);
		used = eol - text + 1;
	}
	return used;
}

size_t perfmap_parse(struct perfmap *m, const char *text, size_t len)
{
	size_t used = parse_lines(m, text, len);

	merge_pending(m);
	m->pos += used;
	return used;
}

int perfmap_read_fd(struct perfmap *m, int fd)
{
	size_t have = 0, used;
	uint64_t off, long_len = 0;
	struct stat st;
	char *buf;
	int err = 0;

	if (fstat(fd, &st))
		return -errno;
	if ((uint64_t)st.st_size < m->pos)
		perfmap_clear(m);
	if ((uint64_t)st.st_size == m->pos)
		return 0;
	buf = xmalloc(CHUNK);
	off = m->pos;		/* file offset of buf[0] */
	/* What a file of its owner's making may cost one call: the rest is read next time. */
	while (off - m->pos < PERFMAP_MAX_READ) {
		ssize_t r = pread(fd, buf + have, CHUNK - have, off + long_len + have);
		char *eol;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		if (long_len) {
			/*
			 * In a line longer than the buffer: its head stays in
			 * buf[0, HEAD), what follows is read after it and
			 * dropped until the line ends.
			 */
			eol = memchr(buf + have, '\n', r);
			if (!eol && long_len + r > PERFMAP_MAX_LINE) {
				/*
				 * No end in sight (a sparse file has none): the
				 * head is the line, what follows a new one.
				 */
				add_line(m, buf, have, true);
				off += have + long_len + r;
				have = long_len = 0;
				continue;
			}
			if (!eol) {
				long_len += r;
				continue;
			}
			add_line(m, buf, have, true);
			used = eol - (buf + have) + 1;
			off += have + long_len + used;
			long_len = 0;
			memmove(buf, eol + 1, r - used);
			have = r - used;
		} else {
			have += r;
		}
		used = parse_lines(m, buf, have);
		off += used;
		memmove(buf, buf + used, have - used);
		have -= used;
		if (have == CHUNK) {
			/* No end of line in a whole buffer: keep a head far longer than any name. */
			have = HEAD;
			long_len = CHUNK - HEAD;
		}
	}
	free(buf);
	merge_pending(m);
	/* An unfinished last line (the JIT is writing it) is read next time. */
	m->pos = off;
	return err;
}

const struct perfmap_entry *perfmap_lookup(const struct perfmap *m, uint64_t addr)
{
	size_t i = COUNT_AT_OR_BELOW(m->entries, m->nr, start, addr);

	return i && addr < m->entries[i - 1].end ? &m->entries[i - 1] : NULL;
}

/* Finding the file -------------------------------------------------------- */

int perfmap_open(const char *root, uint32_t pid, uid_t owner)
{
	/* Symlinks resolve inside the process's root, as the process sees them. */
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char path[64];
	struct stat st;
	int dir, fd;

	snprintf(path, sizeof(path), "tmp/perf-%u.map", pid);
	dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	fd = syscall(SYS_openat2, dir, path, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		fd = openat(dir, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0) {
		fd = -errno;
		close(dir);
		return fd;
	}
	close(dir);
	/* A FIFO would block every read; someone else's file could name frames at will. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && owner != (uid_t)-1 && st.st_uid != owner)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int perfmap_status_nspid(const char *status, uint32_t *nspid)
{
	const char *line = status;

	while (line && *line) {
		if (!strncmp(line, "NSpid:", 6)) {
			const char *p = line + 6, *last = NULL;
			unsigned long v;
			char *end;

			/* The last number on the line: the innermost namespace. */
			for (;;) {
				while (*p == ' ' || *p == '\t')
					p++;
				if (!isdigit((unsigned char)*p))
					break;
				last = p;
				while (isdigit((unsigned char)*p))
					p++;
			}
			if (!last)
				return -ENOENT;
			v = strtoul(last, &end, 10);
			if (!v || v > UINT32_MAX)
				return -ENOENT;
			*nspid = v;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

/* V8 names ---------------------------------------------------------------- */

/* "path:LINE" or "path:LINE:COL" at the end of s[0..len): the path's length, else 0. */
static size_t script_len(const char *s, size_t len)
{
	size_t end = len;
	int parts;

	for (parts = 0; parts < 2; parts++) {
		size_t d = end;

		while (d && isdigit((unsigned char)s[d - 1]))
			d--;
		if (d == end || !d || s[d - 1] != ':')
			break;
		end = d - 1;
	}
	return parts ? end : 0;
}

bool perfmap_v8_name(const char *name, struct strbuf *function, struct strbuf *script)
{
	/* The kinds of code with a JS function behind them (V8 before 11: LazyCompile, Function). */
	static const char *const kinds[] = { "JS:", "LazyCompile:", "Function:", "Script:", "Eval:" };
	const char *fn = NULL, *space;
	size_t i, len;

	strbuf_reset(function);
	strbuf_reset(script);
	for (i = 0; i < ARRAY_SIZE(kinds) && !fn; i++)
		if (!strncmp(name, kinds[i], strlen(kinds[i])))
			fn = name + strlen(kinds[i]);
	if (!fn)
		return false;
	/* The tier: ~ interpreted, ^ baseline, + Maglev, * TurboFan; the same function in each. */
	if (*fn == '~' || *fn == '^' || *fn == '+' || *fn == '*')
		fn++;
	/* The script follows the last space: names have spaces ("get x"), paths rarely do. */
	space = strrchr(fn, ' ');
	len = strlen(fn);
	if (space && script_len(space + 1, strlen(space + 1))) {
		strbuf_add(script, space + 1, script_len(space + 1, strlen(space + 1)));
		len = space - fn;
	}
	if (len)
		strbuf_add(function, fn, len);
	else
		strbuf_addstr(function, "(anonymous)");
	return true;
}
