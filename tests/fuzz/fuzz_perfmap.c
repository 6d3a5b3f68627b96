// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A perf map (/tmp/perf-PID.map, written by whoever runs the JIT), read
 * three ways: parsed in pieces as from a buffer, read from a file that
 * grows, and from a file rewritten shorter. All must agree with each other
 * and with a plain model of the format: the last line covering an address
 * names it. The names, as JIT frames, must make valid folded lines.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/perfmap.h"
#include "bpfprof/util.h"
#include "fuzz.h"

/* The model ------------------------------------------------------------ */

struct model_line {
	uint64_t start, end;
	const char *name;
	size_t name_len;
};

static size_t model_hex(const char *s, size_t len, uint64_t *v)
{
	size_t i = 0, digits = 0;

	*v = 0;
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		i = 2;
	for (; i < len; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			break;
		if (++digits > 16)
			return 0;
		*v = *v << 4 | d;
	}
	return digits ? i : 0;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* "START SIZE name": false for a line the format does not allow. */
static bool model_parse(const char *s, size_t len, struct model_line *l)
{
	uint64_t start, size;
	size_t i, n;

	while (len && (s[len - 1] == '\r' || blank(s[len - 1])))
		len--;
	if (!(n = model_hex(s, len, &start)) || n >= len || !blank(s[n]))
		return false;
	for (i = n; i < len && blank(s[i]); i++)
		;
	if (!(n = model_hex(s + i, len - i, &size)) || i + n >= len || !blank(s[i + n]))
		return false;
	for (i += n; i < len && blank(s[i]); i++)
		;
	if (i >= len || !size || start + size < start)
		return false;
	l->start = start;
	l->end = start + size;
	l->name = s + i;
	/* A name ends at a NUL byte; then at PERFMAP_MAX_NAME bytes, not inside a UTF-8 sequence. */
	l->name_len = strnlen(l->name, len - i);
	if (l->name_len > PERFMAP_MAX_NAME) {
		l->name_len = PERFMAP_MAX_NAME;
		while (l->name_len && ((unsigned char)l->name[l->name_len] & 0xc0) == 0x80)
			l->name_len--;
	}
	return l->name_len > 0;
}

/* The whole lines of text; *taken and *skipped as perfmap counts them. */
static struct model_line *model_lines(const char *text, size_t len, size_t *nr, uint64_t *skipped)
{
	struct model_line *lines = NULL;
	size_t alloc = 0, used = 0;

	*nr = 0;
	*skipped = 0;
	while (used < len) {
		const char *eol = memchr(text + used, '\n', len - used);
		struct model_line l;

		if (!eol)
			break;
		if (eol > text + used) {
			if (model_parse(text + used, eol - (text + used), &l)) {
				ALLOC_GROW(lines, *nr + 1, alloc);
				lines[(*nr)++] = l;
			} else {
				(*skipped)++;
			}
		}
		used = eol - text + 1;
	}
	return lines;
}

/* The latest line covering addr, or NULL. */
static const struct model_line *model_lookup(const struct model_line *lines, size_t nr,
					     uint64_t addr)
{
	while (nr--)
		if (lines[nr].start <= addr && addr < lines[nr].end)
			return &lines[nr];
	return NULL;
}

/* Checks ----------------------------------------------------------------- */

static void check_map(const struct perfmap *m)
{
	uint32_t i;

	FUZZ_CHECK(!m->nr_pending);
	for (i = 0; i < m->nr; i++) {
		const struct perfmap_entry *e = &m->entries[i];

		FUZZ_CHECK(e->start < e->end);
		FUZZ_CHECK(!i || m->entries[i - 1].end <= e->start);
		FUZZ_CHECK(e->name < m->names.nr);
		if (e->name < m->names.nr)
			FUZZ_CHECK(*perfmap_name(m, e));
	}
}

static void check_same(const struct perfmap *a, const struct perfmap *b)
{
	uint32_t i;

	FUZZ_CHECK(a->nr == b->nr && a->pos == b->pos && a->lines == b->lines &&
		   a->skipped == b->skipped && a->truncated == b->truncated);
	for (i = 0; i < a->nr && i < b->nr; i++)
		FUZZ_CHECK(a->entries[i].start == b->entries[i].start &&
			   a->entries[i].end == b->entries[i].end &&
			   !strcmp(perfmap_name(a, &a->entries[i]), perfmap_name(b, &b->entries[i])));
}

static void check_probe(const struct perfmap *m, const struct model_line *lines, size_t nr,
			uint64_t addr)
{
	const struct perfmap_entry *e = perfmap_lookup(m, addr);
	const struct model_line *want = model_lookup(lines, nr, addr);

	FUZZ_CHECK(!e == !want);
	if (e && want)
		FUZZ_CHECK(strlen(perfmap_name(m, e)) == want->name_len &&
			   !memcmp(perfmap_name(m, e), want->name, want->name_len));
}

/* Feeds text in three pieces, as perfmap_parse's caller keeps an unfinished line. */
static void parse_in_pieces(struct perfmap *m, const char *text, size_t len)
{
	size_t cuts[] = { len / 3, 2 * len / 3, len }, from = 0, i;

	for (i = 0; i < ARRAY_SIZE(cuts); i++) {
		from += perfmap_parse(m, text + from, cuts[i] - from);
		FUZZ_CHECK(from <= cuts[i]);
	}
	FUZZ_CHECK(from == m->pos);
}

static bool write_at(int fd, const uint8_t *data, size_t size, off_t off)
{
	return pwrite(fd, data, size, off) == (ssize_t)size;
}

/* The JIT's names as the symbolizer makes them: V8's split, others whole. */
static void fold_names(const struct perfmap *m)
{
	struct strbuf fn[FUZZ_FOLD_MAX], script;
	struct fuzz_loc locs[FUZZ_FOLD_MAX];
	uint32_t i, n = 0;

	strbuf_init(&script);
	for (i = 0; i < m->nr && n < FUZZ_FOLD_MAX; i += m->nr / FUZZ_FOLD_MAX + 1, n++) {
		const char *name = perfmap_name(m, &m->entries[i]);

		strbuf_init(&fn[n]);
		if (perfmap_v8_name(name, &fn[n], &script)) {
			FUZZ_CHECK(fn[n].len > 0);
			name = fn[n].buf;
		}
		locs[n] = (struct fuzz_loc){ { name }, 1, FRAME_JIT };
	}
	fuzz_fold("node", "", locs, n);
	for (i = 0; i < n; i++)
		strbuf_release(&fn[i]);
	strbuf_release(&script);
}

int fuzz_perfmap(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct perfmap pieces, file;
	struct model_line *lines;
	uint64_t skipped;
	size_t nr, i, half = size / 2;
	int fd = fuzz_memfd(NULL, 0);
	char *status;
	uint32_t nspid;

	if (fd < 0)
		return 0;
	perfmap_init(&pieces);
	perfmap_init(&file);
	parse_in_pieces(&pieces, text, size);
	check_map(&pieces);

	/* A file that grows: half of it, then the rest. */
	FUZZ_CHECK(write_at(fd, data, half, 0));
	FUZZ_CHECK(perfmap_read_fd(&file, fd) == 0);
	FUZZ_CHECK(write_at(fd, data + half, size - half, half));
	FUZZ_CHECK(perfmap_read_fd(&file, fd) == 0);
	check_map(&file);
	check_same(&pieces, &file);

	/* Rewritten shorter than what was read: read again from the start. */
	if (half < file.pos) {
		struct perfmap fresh;

		FUZZ_CHECK(ftruncate(fd, half) == 0);
		FUZZ_CHECK(perfmap_read_fd(&file, fd) == 0);
		perfmap_init(&fresh);
		perfmap_parse(&fresh, text, half);
		check_same(&file, &fresh);
		perfmap_release(&fresh);
	}

	lines = model_lines(text, size, &nr, &skipped);
	FUZZ_CHECK(pieces.lines == nr && pieces.skipped == skipped && !pieces.dropped);
	/* Every line's ends if they are few, else 64 lines spread over the map: each probe is O(nr). */
	for (i = 0; i < nr; i += nr / 64 + 1) {
		check_probe(&pieces, lines, nr, lines[i].start);
		check_probe(&pieces, lines, nr, lines[i].start - 1);
		check_probe(&pieces, lines, nr, lines[i].end - 1);
		check_probe(&pieces, lines, nr, lines[i].end);
		check_probe(&pieces, lines, nr, lines[i].start + (lines[i].end - lines[i].start) / 2);
	}
	fold_names(&pieces);

	/* The same text as /proc/PID/status: NSpid's last number, if any. */
	status = fuzz_cstring(data, size);
	if (!perfmap_status_nspid(status, &nspid))
		FUZZ_CHECK(nspid != 0);
	free(status);

	free(lines);
	perfmap_release(&pieces);
	perfmap_release(&file);
	close(fd);
	return 0;
}
