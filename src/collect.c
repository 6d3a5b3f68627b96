// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include "bpfprof/collect.h"
#include "bpfprof/runtime_info.h"

static void reset_cache(struct collector *c);

/* Stacks named before a fold name old location ids. */
static void after_fold(void *ctx, const struct profile_renumbering *r)
{
	struct collector *c = ctx;

	(void)r;
	reset_cache(c);
}

void collector_init(struct collector *c, struct profile *p, struct symbolizer *s)
{
	char *mount = cgroup2_mount();

	memset(c, 0, sizeof(*c));
	c->profile = p;
	c->symbolizer = s;
	cgroups_init(&c->cgroups, mount);
	free(mount);
	c->fold = (struct fold_listener){ .after = after_fold, .ctx = c };
	profile_on_fold(p, &c->fold);
	symbolizer_on_fold(s, p);
}

void collector_release(struct collector *c)
{
	if (c->profile) {
		profile_off_fold(c->profile, &c->fold);
		symbolizer_off_fold(c->symbolizer, c->profile);
	}
	free(c->cache);
	itab_release(&c->cache_index);
	free(c->locs);
	cgroups_release(&c->cgroups);
	memset(c, 0, sizeof(*c));
}

struct cache_key {
	uint64_t key;
	uint32_t tgid, gen;
};

static bool cache_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct cached_stack *e = &((const struct collector *)owner)->cache[idx];
	const struct cache_key *k = key;

	return e->key == k->key && e->tgid == k->tgid && e->gen == k->gen;
}

/*
 * Stacks named, by cache key: a drain names only stacks it had not seen.
 * Keys of stacks the sampler forgot are never seen again; starting afresh
 * when the cache is this full bounds what they hold.
 */
#define CACHE_MAX 16384

static void reset_cache(struct collector *c)
{
	c->nr_cache = 0;
	c->nr_locs = 0;
	itab_release(&c->cache_index);
}

/* Appends the stack's location ids to out (leaf first); returns how many. */
static uint32_t locations(struct collector *c, const struct raw_stack *st, uint32_t tgid,
			  uint32_t gen, bool kernel, uint32_t *out)
{
	struct cache_key k = { st->cache_key, kernel ? 0 : tgid, kernel ? 0 : gen };
	struct cached_stack *e;
	uint64_t h;
	uint32_t idx;

	if (!st->n)
		return 0;
	if (!st->cache_key) {
		if (kernel)
			symbolize_kernel_stack(c->symbolizer, c->profile, st->ips, st->n, out);
		else
			symbolize_user_stack(c->symbolizer, c->profile, tgid, gen, st->ips, st->n, out);
		return st->n;
	}
	h = hash_mix(hash_mix(k.key, k.tgid), k.gen);
	idx = itab_find(&c->cache_index, h, cache_eq, c, &k);
	if (idx == ITAB_NONE) {
		if (c->nr_cache >= CACHE_MAX)
			reset_cache(c);
		ALLOC_GROW(c->locs, c->nr_locs + st->n, c->locs_alloc);
		ALLOC_GROW(c->cache, c->nr_cache + 1, c->cache_alloc);
		if (kernel)
			symbolize_kernel_stack(c->symbolizer, c->profile, st->ips, st->n,
					       c->locs + c->nr_locs);
		else
			symbolize_user_stack(c->symbolizer, c->profile, tgid, gen, st->ips, st->n,
					     c->locs + c->nr_locs);
		idx = c->nr_cache++;
		c->cache[idx] = (struct cached_stack){ k.key, k.tgid, k.gen, c->nr_locs, st->n };
		c->nr_locs += st->n;
		itab_insert(&c->cache_index, h, idx);
	}
	e = &c->cache[idx];
	memcpy(out, c->locs + e->first, e->n * sizeof(*out));
	return e->n;
}

/* --unwind auto: a walk that stopped before the stack's first frame. */
static bool walk_cut(uint32_t walk)
{
	uint32_t end = walk & WALK_END_MASK;

	return end == WALK_DEPTH || end == WALK_FAULT || end == WALK_BAD;
}

_Static_assert(PROF_STATES == STATE_MAX, "profile.h's states are sample.h's");

/*
 * Off-CPU nanoseconds in the profile's unit, to the nearest: microseconds
 * (--off-cpu), or samples of period_ns (--wall).
 */
static uint64_t off_cpu_count(const struct profile *p, uint64_t ns)
{
	uint64_t unit = p->kind == PROFILE_WALL && p->period_ns ? p->period_ns : 1000;

	return (ns + unit / 2) / unit;
}

/* Whether kernel location loc is in the scheduler's own code (.sched.text: __sched functions). */
static bool in_scheduler(struct collector *c, uint32_t loc)
{
	uint64_t addr = c->profile->locations[loc].address;

	if (!c->sched_text_end) {
		const struct kallsyms *ks = &c->symbolizer->kernel.kallsyms;

		c->sched_text_start = kallsyms_address(ks, "__sched_text_start");
		c->sched_text_end = kallsyms_address(ks, "__sched_text_end");
		if (!c->sched_text_end)
			c->sched_text_end = 1;	/* not known: nothing is */
	}
	return addr >= c->sched_text_start && addr < c->sched_text_end;
}

/*
 * An off-CPU stack's leaf, given its nk kernel frames at frames[1..]: why
 * the thread waited at frames[0], then the kernel's frames that chose to
 * wait; returns how many frames there are now. The scheduler's own functions
 * (schedule, do_nanosleep, ...) go, and whatever ran the program before
 * them (the tracepoint): every off-CPU stack has them, and a block sent
 * whole, read from the sleeping task, has none (the kernel leaves them out).
 */
static uint32_t off_cpu_leaf(struct collector *c, unsigned state, uint32_t *frames, uint32_t nk)
{
	uint32_t i = 0, kept = 0;
	struct strbuf label;

	while (i < nk && !in_scheduler(c, frames[1 + i]))
		i++;
	if (i == nk)
		i = 0;	/* no scheduler frame: all the thread's */
	for (; i < nk; i++)
		if (!in_scheduler(c, frames[1 + i]))
			frames[1 + kept++] = frames[1 + i];
	strbuf_init(&label);
	strbuf_addf(&label, "[off-cpu: %s]", thread_state_name(state));
	frames[0] = profile_special_location(c->profile, label.buf);
	strbuf_release(&label);
	return kept + 1;
}

void collector_add(void *ctx, const struct raw_sample *rs)
{
	struct collector *c = ctx;
	/*
	 * Kernel and user frames, an interpreter's frames in place of the
	 * native frames that ran them, a [truncated] root; off the CPU, why at
	 * the leaf.
	 */
	uint32_t frames[2 * BPFPROF_MAX_DEPTH + INTERP_MAX_FRAMES + 2], n;
	const struct runtime_info *r = NULL;
	struct prof_sample s = { 0 };
	uint64_t count = rs->count;
	bool cut;

	if (rs->state != STATE_RUNNING && !(count = off_cpu_count(c->profile, count)))
		return;
	/* Leaf first: the kernel part sits below the user part. */
	if (rs->state == STATE_RUNNING)
		n = locations(c, &rs->kstack, rs->tgid, rs->gen, true, frames);
	else
		n = off_cpu_leaf(c, rs->state, frames,
				 locations(c, &rs->kstack, rs->tgid, rs->gen, true, frames + 1));
	if (rs->user) {
		const struct raw_user_state *u = rs->user;
		struct unwind_regs regs = { u->ip, u->sp, u->bp, rs->kstack.n > 0 };
		enum unwind_end end;

		n += symbolize_unwound_stack(c->symbolizer, c->profile, rs->tgid, rs->gen, &regs,
					     u->stack, u->stack_bytes, frames + n,
					     BPFPROF_MAX_DEPTH - 1, &end);
		c->unwinds[end]++;
		/* A stack that does not reach its first frame says so at its root. */
		cut = end != UNWIND_COMPLETE;
	} else {
		n += locations(c, &rs->ustack, rs->tgid, rs->gen, false, frames + n);
		/* At most this many frames are kept: a stack that long was cut. So was a walk
		 * that met an unreadable stack or a wrong turn. */
		cut = rs->ustack.n >= BPFPROF_MAX_DEPTH || (rs->ustack.n && walk_cut(rs->walk));
	}
	n = runtimes_merge(c->runtimes, c->profile, rs, frames, n,
			   sizeof(frames) / sizeof(frames[0]) - 1);
	if (cut)
		frames[n++] = profile_special_location(c->profile, "[truncated]");
	s.stack = profile_stack(c->profile, frames, n);
	s.pid = rs->tgid;
	s.tid = rs->pid;
	s.comm = strtab_intern_n(&c->profile->strings, rs->comm, strnlen(rs->comm, sizeof(rs->comm)));
	s.cgroup_id = rs->cgroup_id;
	s.count = count;
	s.state = rs->state;
	if (rs->interp.n && (r = runtime_info_of(rs->interp.runtime)))
		c->profile->runtimes[r->kind] = r;
	if (rs->interp.n && r && r->state_label && rs->interp.state < r->nr_states) {
		s.runtime = r->kind;
		s.runtime_state = 1 + rs->interp.state;
	}
	profile_add_sample(c->profile, &s);
	if (rs->cgroup_id && !profile_cgroup(c->profile, rs->cgroup_id)) {
		const char *path = cgroups_path(&c->cgroups, rs->cgroup_id);

		if (path)
			profile_set_cgroup_path(c->profile, rs->cgroup_id, path);
	}
}

/*
 * Folding waits for this many processes gone, and growth since the last
 * fold of 1 MiB or an eighth, whichever is more: a fold costs some 15 ms
 * per MB of profile.
 */
#define FOLD_EXITED 256
#define FOLD_GROWTH(bytes) ((bytes) / 8 > (1u << 20) ? (bytes) / 8 : (1u << 20))

/*
 * Folds the profile: whoever keeps its ids was told at init (windows at
 * open) and hears of it. trim: every count let go first (the windows have
 * theirs), so only what is distinct and still named stays.
 */
static void fold(struct collector *c, bool trim)
{
	struct fold_rule rule = { symbolizer_process_gone, c->symbolizer, c->keep_pids, trim };
	size_t before = profile_bytes(c->profile);
	uint64_t start = now_ns();

	profile_fold(c->profile, &rule);
	c->fold_bytes = profile_bytes(c->profile);
	debug("%s: profile %zu KiB to %zu KiB (indexes %zu KiB), %u stacks, in %.1f ms",
	      trim ? "trimmed what no window needs" : "folded what exited processes left",
	      before >> 10, c->fold_bytes >> 10, profile_index_bytes(c->profile) >> 10,
	      c->profile->nr_stacks, (now_ns() - start) / 1e6);
	c->exited = 0;
}

void collector_after_drain(struct collector *c, uint64_t now)
{
	size_t bytes = profile_bytes(c->profile);

	symbolizer_name_late_jit(c->symbolizer, c->profile);
	runtimes_after_drain(c->runtimes);
	c->exited += symbolizer_forget_before(c->symbolizer, now);
	if (c->trim_only && bytes >= c->fold_bytes + FOLD_GROWTH(c->fold_bytes))
		fold(c, true);
	else if (c->exited >= FOLD_EXITED && bytes >= c->fold_bytes + FOLD_GROWTH(c->fold_bytes))
		fold(c, false);
}

void collector_add_lost(struct collector *c, const char *label, uint64_t count)
{
	struct prof_sample s = { 0 };
	uint32_t loc;

	if (!count)
		return;
	loc = profile_special_location(c->profile, label);
	s.stack = profile_stack(c->profile, &loc, 1);
	s.count = count;
	profile_add_sample(c->profile, &s);
}

/* Samples lost, by cause: the statistic, and the frame they get in the profile. */
static const struct {
	int stat;
	const char *label;
} lost_causes[LOST_CAUSES] = {
	{ STAT_LOST_COLLISION, "[lost: stack collision]" },
	{ STAT_LOST_STACK_FULL, "[lost: stack map full]" },
	{ STAT_LOST_COUNTS_FULL, "[lost: counts map full]" },
	{ STAT_LOST_DWARF, "[lost: ring buffer full]" },
};

void collector_add_lost_since(struct collector *c, const uint64_t *total)
{
	size_t i;

	for (i = 0; i < LOST_CAUSES; i++) {
		collector_add_lost(c, lost_causes[i].label, total[lost_causes[i].stat] - c->lost_added[i]);
		c->lost_added[i] = total[lost_causes[i].stat];
	}
}
