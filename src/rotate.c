// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpfprof/output.h"
#include "bpfprof/rotate.h"
#include "bpfprof/util.h"

/* "20261124T101500Z": what an interval's start looks like in a name. */
#define STAMP_LEN 16

/* Where the stamp goes: before the format's extension, or at the end. */
static size_t stamp_at(const char *path)
{
	static const char *const exts[] = { ".pb.gz", ".pprof", ".otlp.pb", ".folded", ".collapsed", ".svg" };
	const char *base = strrchr(path, '/');
	size_t n = strlen(path), e, i;

	base = base ? base + 1 : path;
	for (i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		e = strlen(exts[i]);
		if (n - (base - path) > e && !strcmp(path + n - e, exts[i]))
			return n - e;
	}
	return n;	/* callgrind.out.NAME and the rest: the stamp at the end */
}

char *rotated_name(const char *path, uint64_t wall_ns)
{
	time_t t = wall_ns / 1000000000ULL;
	size_t at = stamp_at(path);
	char stamp[STAMP_LEN + 1];
	struct tm tm;
	struct strbuf sb;

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	strbuf_init(&sb);
	strbuf_addf(&sb, "%.*s.%s%s", (int)at, path, stamp, path + at);
	return strbuf_detach(&sb);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether name is path's rotated name for some interval (the stamp's digits aside). */
static bool is_rotated(const char *name, const char *base, size_t at)
{
	size_t i, n = strlen(base);

	if (strlen(name) != n + 1 + STAMP_LEN || strncmp(name, base, at) || name[at] != '.' ||
	    strcmp(name + at + 1 + STAMP_LEN, base + at))
		return false;
	for (i = 0; i < STAMP_LEN; i++) {
		char c = name[at + 1 + i];

		if (i == 8 ? c != 'T' : i == STAMP_LEN - 1 ? c != 'Z' : (c < '0' || c > '9'))
			return false;
	}
	return true;
}

/* Their names sort by time: all but the last keep go. */
void keep_newest(const char *path, uint32_t keep)
{
	const char *slash = strrchr(path, '/');
	size_t dir_len = slash ? (size_t)(slash - path + 1) : 0;
	const char *base = path + dir_len;
	size_t at = stamp_at(base), n = 0, alloc = 0, i;
	char **names = NULL;
	struct strbuf victim;
	struct dirent *de;
	DIR *d;

	strbuf_init(&victim);
	if (dir_len)
		strbuf_add(&victim, path, dir_len);
	else
		strbuf_addstr(&victim, "./");
	if ((d = opendir(victim.buf))) {
		while ((de = readdir(d))) {
			if (!is_rotated(de->d_name, base, at))
				continue;
			ALLOC_GROW(names, n + 1, alloc);
			names[n++] = xstrdup(de->d_name);
		}
		closedir(d);
	}
	qsort(names, n, sizeof(*names), by_name);
	dir_len = victim.len;
	for (i = 0; i + keep < n; i++) {
		strbuf_setlen(&victim, dir_len);
		strbuf_addstr(&victim, names[i]);
		if (unlink(victim.buf) && errno != ENOENT)
			warning("--keep: cannot remove '%s': %s", victim.buf, strerror(errno));
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	strbuf_release(&victim);
}

/* Every -o's files, each interval's under its own name, the oldest let go past --keep. */
struct rotation {
	struct sink sink;
	const struct options *o;
	struct window_series series;
};

/* The interval's profile in each -o's format, under its rotated name. */
static int write_interval(struct rotation *r)
{
	struct write_options wo = { .per_pid = r->o->per_pid, .app_name = r->o->app_name };
	struct profile *p = &r->series.window.profile;
	struct output_file out;
	int rc = 0;
	size_t i;
	char *path;

	p->command_line = p->command_line ? p->command_line : xstrdup(r->o->command_line);
	for (i = 0; i < r->o->noutputs; i++) {
		const struct output_spec *spec = &r->o->outputs[i];

		path = rotated_name(spec->path, p->start_wall_ns);
		/* output_open and output_write say why they cannot. */
		if (output_open(&out, path) || output_write(&out, path, p, spec->format, &wo))
			rc = -1;
		else if (r->o->keep)
			keep_newest(spec->path, r->o->keep);
		free(path);
	}
	return rc;
}

static uint64_t rotation_due(struct sink *k)
{
	return ((struct rotation *)k)->series.due_ns;
}

static int rotation_drained(struct sink *k, uint64_t flip_ns, uint64_t flip_wall_ns, bool last)
{
	struct rotation *r = (struct rotation *)k;
	int rc;

	if (!last && flip_ns < r->series.due_ns)
		return 0;
	series_close(&r->series, flip_ns);
	rc = write_interval(r);
	series_next(&r->series, flip_ns, flip_wall_ns, last);
	return rc;
}

static void rotation_free(struct sink *k, struct run_figures *f)
{
	struct rotation *r = (struct rotation *)k;

	(void)f;
	series_release(&r->series);
	free(r);
}

static const struct sink_ops rotation_ops = {
	.due = rotation_due, .drained = rotation_drained, .free = rotation_free,
};

struct sink *rotation_start(const struct options *o, struct profile *session, uint64_t start_ns,
			    uint64_t start_wall_ns)
{
	struct rotation *r = xcalloc(1, sizeof(*r));

	r->sink.ops = &rotation_ops;
	r->o = o;
	series_start(&r->series, session, o->rotate, start_ns, start_wall_ns);
	return &r->sink;
}
