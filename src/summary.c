// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* The run's summary on stderr: what was sampled, where the CPUs were, what was lost and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/runtime.h"
#include "bpfprof/summary.h"
#include "bpfprof/util.h"

/* --unwind auto: how the program walked user stacks, and what its tables cost. */
static void summarize_walks(const struct sampler_stats *st, const struct run_figures *f)
{
	const uint64_t *t = st->total, *end = &st->total[STAT_WALK_END];
	uint64_t walked = t[STAT_WALKED_CFI] + t[STAT_WALKED_FP] + t[STAT_WALKED_MIXED];

	fprintf(stderr, "bpfprof: walked %llu user stacks in the kernel: %llu by CFI, %llu by frame "
		"pointers, %llu both; whole to the outermost frame %llu, to a frame pointer's end "
		"%llu; cut ([truncated] root): %llu at the depth limit, %llu at an unreadable stack, "
		"%llu at a wrong turn\n",
		(unsigned long long)walked, (unsigned long long)t[STAT_WALKED_CFI],
		(unsigned long long)t[STAT_WALKED_FP], (unsigned long long)t[STAT_WALKED_MIXED],
		(unsigned long long)end[WALK_OUTERMOST], (unsigned long long)end[WALK_FP_END],
		(unsigned long long)end[WALK_DEPTH], (unsigned long long)end[WALK_FAULT],
		(unsigned long long)end[WALK_BAD]);
	debug("unwind tables: %u files built (%u more shared by build ID, %u without CFI, %u "
	      "without room), %llu rows, %.1f ms of CPU; BPF maps: %.1f MiB of tables, %.1f MiB of "
	      "process mappings (%llu reads of a process's mappings, %llu put off: their lock "
	      "was taken)",
	      f->tables.built, f->tables.shared, f->tables.empty, f->tables.no_room,
	      (unsigned long long)f->tables.rows, f->tables.build_ns / 1e6,
	      f->tables.bytes / 1048576.0, f->tables.proc_bytes / 1048576.0,
	      (unsigned long long)t[STAT_PROC_SCANS], (unsigned long long)t[STAT_PROC_SCAN_BUSY]);
}

/* --push, --otlp: what became of the intervals. */
static void summarize_push(const char *what, const char *url, const struct push_stats *s)
{
	fprintf(stderr, "bpfprof: %s %llu intervals to %s (%llu attempts again, %llu perhaps "
		"twice); refused %llu, dropped %llu (more than %d waited), not sent at the stop %llu\n",
		what, (unsigned long long)s->sent, url, (unsigned long long)s->retries,
		(unsigned long long)s->maybe_twice, (unsigned long long)s->rejected,
		(unsigned long long)s->dropped, PUSH_QUEUE, (unsigned long long)s->unsent);
}

uint64_t recorded_samples(const struct sampler_stats *st)
{
	return st->total[STAT_USER_MODE] + st->total[STAT_KERNEL_MODE];
}

/*
 * Where the CPUs were, as top's us/sy/hi/si/id. Each sample stands for 1/F
 * of a CPU's second: machine-wide, idle is the CPU time no thread's sample
 * covers (an idle CPU's clock may not fire at all, as on 6.18); with a
 * filter, the shares are of the followed threads' samples.
 */
static void summarize_cpu_states(const struct options *o, const struct sampler_stats *st,
				 double seconds)
{
	static const char *const names[CPU_STATE_MAX] = {
		[CPU_STATE_USER] = "user", [CPU_STATE_KERNEL] = "kernel", [CPU_STATE_IRQ] = "irq",
		[CPU_STATE_SOFTIRQ] = "softirq", [CPU_STATE_IDLE] = "idle",
	};
	const uint64_t *n = st->total + STAT_CPU_STATE;
	bool machine = !o->ntgids && !o->npids && !o->cgroup_path;
	double busy = 0, all;
	int i, shown = machine ? CPU_STATE_MAX : CPU_STATE_IDLE;

	for (i = 0; i < CPU_STATE_IDLE; i++)
		busy += n[i];
	all = machine ? seconds * o->frequency * o->ncpus : busy;
	if (all < busy)
		all = busy;
	if (machine)
		fprintf(stderr, "bpfprof: CPU time of %zu CPU%s x %.1f s:", o->ncpus,
			o->ncpus == 1 ? "" : "s", seconds);
	else
		fprintf(stderr, "bpfprof: CPU states of the %.0f samples:", busy);
	for (i = 0; i < shown; i++)
		fprintf(stderr, "%s %s %.1f%%", i ? "," : "", names[i],
			all ? 100 * (i == CPU_STATE_IDLE ? all - busy : n[i]) / all : 0);
	fputc('\n', stderr);
}

/* --off-cpu, --wall: what the switches gave, and what could not be counted. */
static void summarize_off_cpu(const struct sampler_stats *st)
{
	const uint64_t *t = st->total;

	fprintf(stderr, "bpfprof: off-CPU: threads left the CPU %llu times; %llu waits counted "
		"(%.3f s), %llu of them across a drain (sent whole), %llu shorter than --min-block; "
		"lost %llu (%.3f s: the ring buffer was full), %llu not followed (no task storage); "
		"%llu user stacks as at the thread's last wait (the same registers and stack words)\n",
		(unsigned long long)t[STAT_OFF_SWITCHES],
		(unsigned long long)(t[STAT_OFF_COUNTED_SET0] + t[STAT_OFF_COUNTED_SET1] +
				     t[STAT_OFF_SENT]),
		(t[STAT_OFF_NS_SET0] + t[STAT_OFF_NS_SET1] + t[STAT_OFF_SENT_NS]) / 1e9,
		(unsigned long long)t[STAT_OFF_SENT], (unsigned long long)t[STAT_OFF_SHORT],
		(unsigned long long)t[STAT_OFF_LOST], t[STAT_OFF_LOST_NS] / 1e9,
		(unsigned long long)t[STAT_OFF_NO_ROOM], (unsigned long long)t[STAT_OFF_WALKED_AGAIN]);
}

/* A process's samples: all of them, and those whose code no perf map named in anonymous memory. */
struct anon_share {
	uint32_t pid, comm;	/* comm: its main thread's name if sampled, else its busiest stack's */
	bool main;		/* comm is the main thread's */
	uint64_t all, anon, top;	/* top: the count of the sample comm is from */
};

#define ANON_MIN 10		/* samples a process needs before its share is spoken of */
#define ANON_SHOWN 5		/* processes spoken of, the heaviest first */

/* Whether sample s's innermost user frame is in anonymous memory and unnamed ([anon+0x...]). */
static bool in_unnamed_anon(const struct profile *p, const struct prof_sample *s)
{
	uint32_t depth, i;
	const uint32_t *frames = profile_stack_frames(p, s->stack, &depth);

	for (i = 0; i < depth; i++) {
		const struct prof_location *l = &p->locations[frames[i]];
		const char *file;

		if (l->kind == FRAME_KERNEL)
			continue;
		if (l->nlines || l->label || !l->mapping)
			return false;
		file = profile_str(p, p->mappings[l->mapping].file);
		return !strncmp(file, "[anon", 5) || !strncmp(file, "//anon", 6);
	}
	return false;
}

/* The runtime whose JIT made process pid's code (a library it maps in p, or its name), or NULL. */
static const struct runtime_info *jit_runtime(const struct profile *p, uint32_t pid, const char *comm)
{
	uint32_t k, i;

	for (k = 0; k < runtime_info_count(); k++) {
		const struct runtime_info *r = runtime_info_at(k);

		if (!r->jit_hint)
			continue;
		if (r->jit_comm && !strcmp(comm, r->jit_comm))
			return r;
		for (i = 1; i < p->nr_mappings; i++) {
			const char *file = profile_str(p, p->mappings[i].file), *base = strrchr(file, '/');

			if (p->mappings[i].pid == pid && base && r->jit_library &&
			    !strcmp(base + 1, r->jit_library))
				return r;
		}
	}
	return NULL;
}

/* text to stderr, each "PID" in it as pid. */
static void put_with_pid(const char *text, uint32_t pid)
{
	const char *at;

	while ((at = strstr(text, "PID"))) {
		fprintf(stderr, "%.*s%u", (int)(at - text), text, pid);
		text = at + 3;
	}
	fputs(text, stderr);
}

static int by_pid(const void *a, const void *b)
{
	const struct anon_share *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int by_anon(const void *a, const void *b)
{
	const struct anon_share *x = a, *y = b;

	return x->anon > y->anon ? -1 : x->anon < y->anon;
}

/*
 * A process whose samples are mostly in code a JIT made that no perf map
 * names ([anon+0x...]) gets a line: what would name its frames. One per
 * process, the heaviest first.
 */
static void summarize_anon_code(const struct profile *p)
{
	struct anon_share *v = xcalloc(p->nr_samples + 1, sizeof(*v));
	uint32_t i, n = 0, procs = 0, shown;

	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i];

		if (!s->comm || !s->pid || s->pid == PROF_PID_EXITED)
			continue;
		v[n].pid = s->pid;
		v[n].comm = s->comm;
		v[n].main = s->tid == s->pid;
		v[n].all = v[n].top = s->count;
		v[n++].anon = in_unnamed_anon(p, s) ? s->count : 0;
	}
	qsort(v, n, sizeof(*v), by_pid);
	for (i = 0; i < n; i++) {
		struct anon_share *to = &v[procs];

		if (procs && v[i].pid == to[-1].pid) {
			to--;
			to->all += v[i].all;
			to->anon += v[i].anon;
			if (!to->main && (v[i].main || v[i].top > to->top)) {
				to->comm = v[i].comm;
				to->main = v[i].main;
				to->top = v[i].top;
			}
			continue;
		}
		*to = v[i];
		procs++;
	}
	qsort(v, procs, sizeof(*v), by_anon);
	for (i = shown = 0; i < procs && shown < ANON_SHOWN; i++) {
		const struct anon_share *a = &v[i];
		const struct runtime_info *jit;

		if (a->anon < ANON_MIN || 2 * a->anon < a->all)
			continue;
		shown++;
		fprintf(stderr, "bpfprof: %s (pid %u): %.0f%% of its samples in anonymous executable "
			"memory no perf map names ([anon+0x...] frames): ",
			profile_str(p, a->comm), a->pid, 100.0 * a->anon / a->all);
		jit = jit_runtime(p, a->pid, profile_str(p, a->comm));
		put_with_pid(jit ? jit->jit_hint : "code a JIT made; have it write /tmp/perf-PID.map "
			     "(as node --perf-basic-prof does) for bpfprof to name its frames", a->pid);
		fputc('\n', stderr);
	}
	free(v);
}

void summarize(const struct options *o, const struct profile *p, const struct sampler_stats *st,
	       const struct run_figures *f, double seconds)
{
	const uint64_t *t = st->total;
	uint64_t rec = recorded_samples(st), lost, nproc, nthreads;
	uint32_t *pids = xmalloc((p->nr_samples + 1) * sizeof(*pids));
	uint32_t *tids = xmalloc((p->nr_samples + 1) * sizeof(*tids));
	size_t i, n = 0;
	struct strbuf sb;

	strbuf_init(&sb);
	for (i = 0; i < o->ncpus; i++)
		strbuf_addf(&sb, "%scpu%d %llu", i ? ", " : "", o->cpus[i],
			    o->cpus[i] < st->nr_cpus
				    ? (unsigned long long)st->recorded_per_cpu[o->cpus[i]]
				    : 0ULL);
	if (o->off_cpu) {
		fprintf(stderr, "bpfprof: %.1f s of threads leaving the CPU and coming back\n",
			seconds);
	} else {
		fprintf(stderr, "bpfprof: %.1f s at %u Hz on %zu CPU%s: %llu samples (%s)\n",
			seconds, o->frequency, o->ncpus, o->ncpus == 1 ? "" : "s",
			(unsigned long long)rec, sb.buf);
		summarize_cpu_states(o, st, seconds);
		fprintf(stderr, "bpfprof: idle %llu %s, filtered out %llu\n",
			(unsigned long long)t[STAT_IDLE],
			o->idle ? "recorded" : "skipped (-I records them)",
			(unsigned long long)t[STAT_FILTERED]);
	}
	if (o->off_cpu || o->wall)
		summarize_off_cpu(st);
	if (f->pushed)
		summarize_push("pushed", o->push, &f->push);
	if (f->otlp_sent)
		summarize_push("sent over OTLP", o->otlp, &f->otlp);

	lost = t[STAT_LOST_COLLISION] + t[STAT_LOST_STACK_FULL] + t[STAT_LOST_COUNTS_FULL] +
	       t[STAT_LOST_DWARF];
	strbuf_reset(&sb);
	/* What fills the ring: the maps' overflow, or with --unwind dwarf every sample. */
	if (lost && t[STAT_LOST_DWARF])
		strbuf_addf(&sb, " (the ring buffer was full; raise --ring-buffer-size, or lower "
				 "--stack-size or -F)");
	else if (lost)
		strbuf_addf(&sb, " (stack collision %llu, stack map full %llu, counts map full %llu;"
				 " raise --stack-storage-size or --max-stacks, or lower --interval)",
			    (unsigned long long)t[STAT_LOST_COLLISION],
			    (unsigned long long)t[STAT_LOST_STACK_FULL],
			    (unsigned long long)t[STAT_LOST_COUNTS_FULL]);
	fprintf(stderr, "bpfprof: lost %llu samples%s; %llu saved through the ring buffer "
		"(stack collisions %llu, stack map full %llu, counts map full %llu)\n",
		(unsigned long long)lost, sb.buf, (unsigned long long)t[STAT_FALLBACK],
		(unsigned long long)(t[STAT_KSTACK_COLLISION] + t[STAT_USTACK_COLLISION]),
		(unsigned long long)(t[STAT_KSTACK_FULL] + t[STAT_USTACK_FULL]),
		(unsigned long long)t[STAT_COUNTS_FULL]);

	for (i = 0; i < p->nr_samples; i++) {
		/* Lost samples belong to nobody; exited ones folded are counted apart. */
		if (!p->samples[i].comm || p->samples[i].pid == PROF_PID_EXITED)
			continue;
		pids[n] = p->samples[i].pid;
		tids[n++] = p->samples[i].tid;
	}
	nproc = count_distinct_u32(pids, n) + p->exited_pids;
	nthreads = count_distinct_u32(tids, n) + p->exited_tids;
	fprintf(stderr, "bpfprof: %llu processes, %llu threads, %u distinct stacks, %llu drains "
		"(%llu early: a counts map was half full)\n",
		(unsigned long long)nproc, (unsigned long long)nthreads, p->nr_stacks,
		(unsigned long long)st->drains, (unsigned long long)st->early_drains);
	if (st->walking)
		summarize_walks(st, f);
	runtimes_summarize(st, f);
	summarize_anon_code(p);
	if (o->dwarf_unwind) {
		uint64_t all = 0;

		for (i = 0; i < UNWIND_END_MAX; i++)
			all += f->unwinds[i];
		fprintf(stderr, "bpfprof: unwound %llu user stacks: %llu complete; truncated ([truncated] "
			"root): %llu no CFI, %llu beyond the copied stack, %llu at the depth limit, "
			"%llu unfollowable; %llu lost to a full ring buffer\n",
			(unsigned long long)all, (unsigned long long)f->unwinds[UNWIND_COMPLETE],
			(unsigned long long)f->unwinds[UNWIND_NO_CFI],
			(unsigned long long)f->unwinds[UNWIND_NO_STACK],
			(unsigned long long)f->unwinds[UNWIND_DEPTH],
			(unsigned long long)f->unwinds[UNWIND_BAD],
			(unsigned long long)t[STAT_LOST_DWARF]);
	}
	if (f->sideband_lost)
		warning("the kernel dropped %llu side-band records (mmap, exec, fork, exit): some "
			"short-lived processes may keep unnamed frames",
			(unsigned long long)f->sideband_lost);
	if (st->mismatches || st->drained[0] + st->drained[1] !=
				      t[STAT_COUNTED_SET0] + t[STAT_COUNTED_SET1] ||
	    st->received != t[STAT_FALLBACK] + t[STAT_DWARF_SENT])
		warning("accounting does not add up: the program counted %llu + %llu through the ring "
			"buffer, the drains read %llu + %llu; please report this",
			(unsigned long long)(t[STAT_COUNTED_SET0] + t[STAT_COUNTED_SET1]),
			(unsigned long long)t[STAT_FALLBACK],
			(unsigned long long)(st->drained[0] + st->drained[1]),
			(unsigned long long)st->received);
	else
		debug("accounting: the program counted %llu + %llu through the ring buffer = the "
		      "drains read %llu + %llu, over %llu drains",
		      (unsigned long long)(t[STAT_COUNTED_SET0] + t[STAT_COUNTED_SET1]),
		      (unsigned long long)t[STAT_FALLBACK],
		      (unsigned long long)(st->drained[0] + st->drained[1]),
		      (unsigned long long)st->received, (unsigned long long)st->drains);
	free(pids);
	free(tids);
	strbuf_release(&sb);
}
