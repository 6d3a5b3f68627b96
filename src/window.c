// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include "bpfprof/util.h"
#include "bpfprof/window.h"

/* The counts the session's samples have now: what the next flush starts from. */
static void take_base(struct window *w)
{
	const struct profile *s = w->session;
	uint32_t i;

	if (w->nr_base < s->nr_samples)
		w->base = xrealloc(w->base, s->nr_samples * sizeof(*w->base));
	w->nr_base = s->nr_samples;
	for (i = 0; i < s->nr_samples; i++)
		w->base[i] = s->samples[i].count;
}

static void before_fold(void *ctx)
{
	window_flush(ctx);
}

/* The session's ids are new: so are the ids copied so far, and its counts are as they are now. */
static void after_fold(void *ctx, const struct profile_renumbering *r)
{
	struct window *w = ctx;

	(void)r;
	profile_copy_release(&w->copy);
	profile_copy_init(&w->copy, &w->profile, w->session);
	take_base(w);
}

void window_open(struct window *w, struct profile *session, uint64_t start_ns,
		 uint64_t start_wall_ns, const struct window_filter *filter)
{
	memset(w, 0, sizeof(*w));
	profile_init(&w->profile);
	w->profile.kind = session->kind;
	w->profile.frequency = session->frequency;
	w->profile.period_ns = session->period_ns;
	w->profile.start_wall_ns = start_wall_ns;
	if (session->command_line)
		w->profile.command_line = xstrdup(session->command_line);
	profile_copy_init(&w->copy, &w->profile, session);
	w->session = session;
	if (filter) {
		w->filter = *filter;
		w->filter.cgroup = filter->cgroup ? xstrdup(filter->cgroup) : NULL;
		w->filter.comm = filter->comm ? xstrdup(filter->comm) : NULL;
	}
	w->start_ns = start_ns;
	take_base(w);
	w->fold = (struct fold_listener){ .before = before_fold, .after = after_fold, .ctx = w };
	profile_on_fold(session, &w->fold);
}

/* Sample s is in the window's cgroup, or one below it. */
static bool in_cgroup(const struct window *w, const struct prof_sample *s)
{
	const char *want = w->filter.cgroup;
	uint32_t id = s->cgroup_id ? profile_cgroup(w->session, s->cgroup_id) : 0;
	const char *path = id ? profile_str(w->session, id) : NULL;
	size_t n = strlen(want);

	/* "/" is every cgroup; "/a/b" is itself and "/a/b/...". */
	if (n && want[n - 1] == '/')
		n--;
	return path && !strncmp(path, want, n) && (path[n] == '\0' || path[n] == '/');
}

/* Sample s is one the window's filter keeps. */
static bool kept(const struct window *w, const struct prof_sample *s)
{
	const struct window_filter *f = &w->filter;

	if ((f->tgid && s->pid != f->tgid) || (f->mode == WINDOW_CPU && s->state) ||
	    (f->mode == WINDOW_OFF_CPU && !s->state))
		return false;
	if (f->comm && strcmp(profile_str(w->session, s->comm), f->comm))
		return false;
	return !f->cgroup || in_cgroup(w, s);
}

void window_flush(struct window *w)
{
	const struct profile *s = w->session;
	const struct prof_sample *smp;
	uint64_t before;
	uint32_t i;

	for (i = 0; i < s->nr_samples; i++) {
		smp = &s->samples[i];
		before = i < w->nr_base ? w->base[i] : 0;
		if (smp->count <= before || !kept(w, smp))
			continue;
		profile_copy_sample(&w->copy, smp, smp->count - before);
	}
	take_base(w);
}

void window_close(struct window *w, uint64_t end_ns)
{
	window_flush(w);
	w->profile.duration_ns = end_ns > w->start_ns ? end_ns - w->start_ns : 0;
}

void window_release(struct window *w)
{
	if (w->session)
		profile_off_fold(w->session, &w->fold);
	profile_copy_release(&w->copy);
	profile_release(&w->profile);
	free(w->base);
	free((char *)w->filter.cgroup);
	free((char *)w->filter.comm);
	memset(w, 0, sizeof(*w));
}

/* The next end after wall (wall-clock ns): a multiple of the length, in now_ns() time. */
static void set_due(struct window_series *s, uint64_t now, uint64_t wall)
{
	s->due_ns = now + ((wall / s->every_ns + 1) * s->every_ns - wall);
}

void series_start(struct window_series *s, struct profile *session, double every_s,
		  uint64_t start_ns, uint64_t start_wall_ns)
{
	window_open(&s->window, session, start_ns, start_wall_ns, NULL);
	s->every_ns = every_s * 1e9;
	set_due(s, start_ns, start_wall_ns);
}

void series_close(struct window_series *s, uint64_t flip_ns)
{
	window_close(&s->window, flip_ns);
}

void series_next(struct window_series *s, uint64_t flip_ns, uint64_t flip_wall_ns, bool last)
{
	struct profile *session = s->window.session;

	window_release(&s->window);
	if (last)
		return;
	window_open(&s->window, session, flip_ns, flip_wall_ns, NULL);
	set_due(s, flip_ns, flip_wall_ns);
}

void series_release(struct window_series *s)
{
	if (s->window.session)
		window_release(&s->window);
}
