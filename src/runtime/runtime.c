// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* The set of runtimes on in a session: each op fanned out over them (runtime.h). */
#include <string.h>

#include "bpfprof/runtime.h"
#include "bpfprof/unwind_tables.h"

/*
 * Every runtime bpfprof knows, its module's descriptor (src/runtime/NAME.c):
 * adding one is a line here (runtime.h says what else).
 */
extern const struct runtime_ops python_runtime, luajit_runtime, ruby_runtime, java_runtime,
	php_runtime;

static const struct runtime_ops *const runtime_list[] = {
	&python_runtime,
	&luajit_runtime,
	&ruby_runtime,
	&java_runtime,
	&php_runtime,
};
#define NR_KNOWN (sizeof(runtime_list) / sizeof(runtime_list[0]))

_Static_assert(NR_KNOWN <= MAX_RUNTIMES, "struct runtimes has room for every runtime known");

uint32_t runtime_info_count(void)
{
	return NR_KNOWN;
}

const struct runtime_info *runtime_info_at(uint32_t i)
{
	return i < NR_KNOWN ? runtime_list[i]->info : NULL;
}

const struct runtime_info *runtime_info_of(uint32_t kind)
{
	uint32_t i;

	for (i = 0; i < NR_KNOWN; i++)
		if (runtime_list[i]->info->kind == kind)
			return runtime_list[i]->info;
	return NULL;
}

void runtimes_start(struct runtimes *rs, struct sampler *sampler,
		    uint32_t (*gen)(void *ctx, uint32_t tgid), void *ctx)
{
	uint32_t i;
	void *rt;

	memset(rs, 0, sizeof(*rs));
	for (i = 0; i < NR_KNOWN; i++)
		if ((rt = runtime_list[i]->start(sampler, gen, ctx))) {
			rs->on[rs->nr].ops = runtime_list[i];
			rs->on[rs->nr++].rt = rt;
			debug("runtime %s: on", runtime_list[i]->info->name);
		}
}

void runtimes_free(struct runtimes *rs)
{
	uint32_t i;

	if (!rs)
		return;
	if (rs->folding)
		profile_off_fold(rs->folding, &rs->fold);
	rs->folding = NULL;
	for (i = 0; i < rs->nr; i++)
		rs->on[i].ops->free(rs->on[i].rt);
	rs->nr = 0;
}

/* A file just opened: each runtime that claims it learns that the process maps it. */
static void file_opened(void *ctx, const struct opened_file *f)
{
	struct runtimes *rs = ctx;
	struct unwind_file_key key;
	uint32_t i;

	if (!rs->nr)
		return;
	key = unwind_file_key_of(f->st);
	for (i = 0; i < rs->nr; i++)
		if (rs->on[i].ops->file_opened(rs->on[i].rt, &key, f->fd, f->path, f->root))
			rs->on[i].ops->process_maps(rs->on[i].rt, f->tgid, &key, f->m->start,
						    f->m->offset);
}

struct file_listener runtimes_file_listener(struct runtimes *rs)
{
	return (struct file_listener){ file_opened, NULL, rs };
}

void runtimes_process_image(struct runtimes *rs, uint32_t tgid, const struct proc_map *maps,
			    size_t nr)
{
	uint32_t i;
	size_t j;

	for (i = 0; rs && i < rs->nr; i++)
		for (j = 0; j < nr; j++) {
			const struct proc_map *m = &maps[j];
			struct unwind_file_key key = { m->inode, m->dev_major << 20 | m->dev_minor, 0 };

			rs->on[i].ops->process_maps(rs->on[i].rt, tgid, &key, m->start, m->offset);
		}
}

void runtimes_take_notices(struct runtimes *rs)
{
	uint32_t i;

	for (i = 0; rs && i < rs->nr; i++)
		rs->on[i].ops->take_notices(rs->on[i].rt);
}

uint32_t runtimes_merge(struct runtimes *rs, struct profile *p, const struct raw_sample *sample,
			uint32_t *frames, uint32_t n, uint32_t max)
{
	uint32_t i;

	for (i = 0; rs && i < rs->nr; i++)
		n = rs->on[i].ops->merge(rs->on[i].rt, p, sample, frames, n, max);
	return n;
}

void runtimes_after_drain(struct runtimes *rs)
{
	uint32_t i;

	for (i = 0; rs && i < rs->nr; i++)
		rs->on[i].ops->after_drain(rs->on[i].rt);
}

static void renumber(void *ctx, const struct profile_renumbering *r)
{
	struct runtimes *rs = ctx;
	uint32_t i;

	(void)r;
	for (i = 0; i < rs->nr; i++)
		rs->on[i].ops->renumber(rs->on[i].rt);
}

void runtimes_on_fold(struct runtimes *rs, struct profile *p)
{
	rs->fold = (struct fold_listener){ .after = renumber, .ctx = rs };
	rs->folding = p;
	profile_on_fold(p, &rs->fold);
}

void runtimes_stats(struct runtimes *rs, struct run_figures *f)
{
	uint32_t i;

	for (i = 0; rs && i < rs->nr; i++)
		rs->on[i].ops->stats(rs->on[i].rt, f);
}

void runtimes_summarize(const struct sampler_stats *st, const struct run_figures *f)
{
	uint32_t i;

	for (i = 0; i < NR_KNOWN; i++)
		if (runtime_list[i]->summarize)
			runtime_list[i]->summarize(st, f);
}
