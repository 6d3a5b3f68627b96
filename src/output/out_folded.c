// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/intern.h"
#include "bpfprof/output.h"

/* Frame names must not break the format: ';' separates, '\n' ends lines. */
static void add_frame(struct strbuf *line, const char *name, size_t len)
{
	size_t i, from = 0;

	for (i = 0; i < len; i++) {
		unsigned char ch = name[i];

		if (ch != ';' && ch >= 0x20 && ch != 0x7f)
			continue;
		strbuf_add(line, name + from, i - from);
		strbuf_addch(line, ch == ';' ? ':' : '?');
		from = i + 1;
	}
	strbuf_add(line, name + from, len - from);
}

/* Appends ";frame" for every frame of stack, root first. */
static void add_stack(struct strbuf *line, const struct profile *p, uint32_t stack,
		      struct strbuf *name)
{
	uint32_t depth, i, j;
	const uint32_t *frames = profile_stack_frames(p, stack, &depth);

	for (i = depth; i-- > 0;) {
		const struct prof_location *loc = &p->locations[frames[i]];
		uint32_t nlines = loc->nlines ? loc->nlines : 1;

		/*
		 * Lines are innermost first: print the outermost first. Every
		 * line but the outermost is an inlined call, marked as
		 * flamegraph.pl marks them; the kind's mark goes on the function.
		 */
		for (j = nlines; j-- > 0;) {
			strbuf_reset(name);
			profile_frame_name(p, frames[i], j, name);
			if (line->len)
				strbuf_addch(line, ';');
			add_frame(line, name->buf, name->len);
			strbuf_addstr(line, j + 1 < nlines ? "_[i]" : frame_kind_suffix(loc->kind));
		}
	}
}

static const struct strtab *sort_lines;

static int line_cmp(const void *a, const void *b)
{
	return strcmp(strtab_get(sort_lines, *(const uint32_t *)a),
		      strtab_get(sort_lines, *(const uint32_t *)b));
}

/*
 * p's samples as folded lines into lines (id 0 is "", never a line), their
 * counts added to (*counts)[column] of each line's pair (column 0 or 1).
 */
static void fold(const struct profile *p, bool per_pid, struct strtab *lines,
		 uint64_t (**counts)[2], uint32_t *counts_alloc, int column)
{
	struct strbuf line, name;
	uint32_t i, id, before;

	strbuf_init(&line);
	strbuf_init(&name);
	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i];
		const char *comm = profile_str(p, s->comm);

		if (!s->count)
			continue;
		strbuf_reset(&line);
		add_frame(&line, comm, strlen(comm));
		if (per_pid && *comm)
			strbuf_addf(&line, "-%u", s->pid);
		add_stack(&line, p, s->stack, &name);
		if (!line.len)
			strbuf_addstr(&line, "[unknown]");
		before = lines->nr;
		id = strtab_intern_n(lines, line.buf, line.len);
		ALLOC_GROW(*counts, lines->nr, *counts_alloc);
		if (lines->nr != before)
			(*counts)[id][0] = (*counts)[id][1] = 0;
		(*counts)[id][column] += s->count;
	}
	strbuf_release(&line);
	strbuf_release(&name);
}

/* Writes every line, sorted, with its count, or (both) its two counts. */
static int write_lines(FILE *out, struct strtab *lines, uint64_t (*counts)[2], bool both)
{
	uint32_t *order = xmalloc(lines->nr * sizeof(*order)), i;
	int err = 0;

	for (i = 1; i < lines->nr; i++)
		order[i - 1] = i;
	sort_lines = lines;
	qsort(order, lines->nr - 1, sizeof(*order), line_cmp);
	for (i = 0; i + 1 < lines->nr; i++) {
		if (both)
			fprintf(out, "%s %llu %llu\n", strtab_get(lines, order[i]),
				(unsigned long long)counts[order[i]][0],
				(unsigned long long)counts[order[i]][1]);
		else
			fprintf(out, "%s %llu\n", strtab_get(lines, order[i]),
				(unsigned long long)counts[order[i]][0]);
	}
	if (fflush(out) || ferror(out))
		err = -(errno ? errno : EIO);
	free(order);
	return err;
}

int write_folded(FILE *out, const struct profile *p, const struct write_options *o)
{
	uint64_t (*counts)[2] = NULL;
	uint32_t alloc = 0;
	struct strtab lines;
	int err;

	strtab_init(&lines);
	fold(p, o->per_pid, &lines, &counts, &alloc, 0);
	err = write_lines(out, &lines, counts, false);
	free(counts);
	strtab_release(&lines);
	return err;
}

int write_difffolded(FILE *out, const struct profile *before, const struct profile *after)
{
	uint64_t (*counts)[2] = NULL;
	uint32_t alloc = 0;
	struct strtab lines;
	int err;

	strtab_init(&lines);
	fold(before, false, &lines, &counts, &alloc, 0);
	fold(after, false, &lines, &counts, &alloc, 1);
	err = write_lines(out, &lines, counts, true);
	free(counts);
	strtab_release(&lines);
	return err;
}
