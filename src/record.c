// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * One profiling session: check the machine, attach, drain every interval
 * until the duration ends, a signal arrives or every target has exited;
 * then detach, write the profile and summarize on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpfprof/cli.h"
#include "bpfprof/collect.h"
#include "bpfprof/machine.h"
#include "bpfprof/metrics.h"
#include "bpfprof/otlp.h"
#include "bpfprof/outputs.h"
#include "bpfprof/push.h"
#include "bpfprof/record.h"
#include "bpfprof/rotate.h"
#include "bpfprof/runtime.h"
#include "bpfprof/sampler.h"
#include "bpfprof/serve.h"
#include "bpfprof/settings.h"
#include "bpfprof/sideband.h"
#include "bpfprof/stop.h"
#include "bpfprof/summary.h"
#include "bpfprof/symbolize.h"
#include "bpfprof/unwind_tables.h"

/* libbpf speaks only under -v (its debug chatter under -vv); our errors say the rest. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose || (level == LIBBPF_DEBUG && verbose < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void show_progress(double elapsed, const struct sampler_stats *st)
{
	fprintf(stderr, "\rbpfprof: %.0f s, %llu samples ", elapsed,
		(unsigned long long)recorded_samples(st));
}

/* Everything one run holds while it samples. */
struct session {
	const struct options *o;
	int cgroup_fd;			/* --cgroup, else -1 */
	struct sampler *sampler;
	struct sideband *sideband;	/* NULL if the kernel refused one: /proc only */
	struct symbolizer sym;
	struct collector coll;
	struct unwind_tables tables;	/* --unwind auto */
	struct runtimes runtimes;	/* runtimes on: none when off */
	struct sink *sinks;		/* --rotate, --push, --listen: windows of the profile */
	struct server *server;		/* --listen (one of the sinks, for /metrics), else NULL */
	struct pushing pushers[2];	/* --push, --otlp (sinks too), for /metrics */
	unsigned npushers;
	bool samples_seen;		/* -v: a drain has handed out samples */
	bool write_failed;		/* a sink could not write a window (--rotate) */
	int news_fd;			/* epoll set: the sampler's rings, the side-band; -1: none */
	bool quiet;			/* the side-band's last read found nothing new */
	uint64_t start_ns;		/* now_ns() at the profile's start_wall_ns */
};

/*
 * Side-band records are read this often while they come, so files are
 * opened while their processes live. Once a read finds none, the loop
 * sleeps until its next drain or the next record (news_fd): an agent on
 * a machine where nothing starts wakes once a drain, not 50 times a second.
 */
#define SIDEBAND_POLL_MS 20

static int read_sideband(struct session *ss)
{
	return ss->sideband ? sideband_read(ss->sideband, symbolizer_track, &ss->sym) : 0;
}

static void catch_up(void *ctx)
{
	read_sideband(ctx);
}

static void on_sample(void *ctx, const struct raw_sample *rs)
{
	struct session *ss = ctx;

	/*
	 * A sample read between drains (--unwind dwarf's, or one the maps could
	 * not take, sent whole) is newer than the side-band last read: a process
	 * not known yet (just forked, or exec'd) is learnt of first.
	 */
	if ((rs->user || rs->ustack.n) && !procs_known(&ss->sym.procs, rs->tgid, rs->gen))
		read_sideband(ss);
	collector_add(&ss->coll, rs);
}

/*
 * A drain flipped the sets: learn every mapping made before, and what the
 * runtimes sent (their code objects: the namer may not have come to the
 * last), then name their samples.
 */
static void before_read(void *ctx)
{
	struct session *ss = ctx;

	symbolizer_new_generation(&ss->sym);
	read_sideband(ss);
	runtimes_take_notices(&ss->runtimes);
}

static uint32_t process_gen(void *ctx, uint32_t tgid)
{
	return sampler_process_gen(((struct session *)ctx)->sampler, tgid);
}

/* -v: when the first samples reach userspace (drains come every --interval). */
static void note_first_samples(struct session *ss)
{
	struct sampler_stats st;

	if (ss->samples_seen || !verbose)
		return;
	sampler_stats(ss->sampler, &st);
	if (st.drained[0] + st.drained[1] + st.received) {
		ss->samples_seen = true;
		debug("timing: first samples drained %.0f ms after exec", ms_since_exec());
	}
	sampler_stats_release(&st);
}

/* --listen: what /metrics says, as of this drain. */
static void publish_metrics(struct session *ss, const struct sampler_stats *st)
{
	struct session_figures f = { 0 };
	char *text;

	f.processes = ss->sym.procs.nr;
	f.stacks = ss->coll.profile->nr_stacks;
	f.profile_bytes = profile_bytes(ss->coll.profile);
	f.sideband_lost = ss->sideband ? sideband_lost(ss->sideband) : 0;
	f.start_wall_ns = ss->coll.profile->start_wall_ns;
	f.pushers = ss->pushers;
	f.npushers = ss->npushers;
	text = metrics_text(st, &f);
	server_set_metrics(ss->server, text);
	free(text);
}

/*
 * The wall clock at now_ns() time ns, on the profile's one clock: its start's wall time plus
 * the time since. A window due at a whole second (set_due) ends on or after it; a wall clock
 * read after now_ns() may say a little before (a pause between the two reads), and a window
 * of a microsecond would follow, named for the same second as the one before.
 */
static uint64_t wall_at(const struct session *ss, uint64_t ns)
{
	return ss->coll.profile->start_wall_ns + (ns - ss->start_ns);
}

/*
 * Reads the maps: every sample taken so far in the profile, the time of the
 * flip that ended them in *flip_ns (*flip_wall_ns on the wall clock). 0 or -errno.
 */
static int drain(struct session *ss, uint64_t *flip_ns, uint64_t *flip_wall_ns)
{
	uint64_t flip = now_ns(), trim_ns;
	struct sampler_stats st;
	int err;

	*flip_ns = flip;
	*flip_wall_ns = wall_at(ss, flip);
	if ((err = sampler_drain(ss->sampler)))
		return err;
	sampler_stats(ss->sampler, &st);
	collector_add_lost_since(&ss->coll, st.total);
	/*
	 * Every sample of a process that exited before the flip is named now;
	 * one that exited during the drain may have samples in the next set.
	 */
	collector_after_drain(&ss->coll, flip);
	note_first_samples(ss);
	/*
	 * What was let go (a profile folded, symbols and debug sections of files
	 * no process maps, processes gone) leaves free pages among the heap's
	 * live ones, which free() keeps: given back, or an agent's RSS climbs.
	 */
	trim_ns = now_ns();
	malloc_trim(0);
	trim_ns = now_ns() - trim_ns;
	/* -vv: what the profile holds, for telling its growth from a leak (make soak). */
	if (verbose >= 2) {
		struct mallinfo2 mi = mallinfo2();

		debug("drain: profile %zu KiB (indexes %zu KiB): %u samples, %u stacks, "
		      "%u locations, %u mappings; heap %zu KiB in use of %zu KiB, %zu KiB mmapped; "
		      "trimmed in %.2f ms",
		      profile_bytes(ss->coll.profile) >> 10,
		      profile_index_bytes(ss->coll.profile) >> 10, ss->coll.profile->nr_samples,
		      ss->coll.profile->nr_stacks, ss->coll.profile->nr_locations,
		      ss->coll.profile->nr_mappings, (mi.uordblks + mi.hblkhd) >> 10,
		      (mi.arena + mi.hblkhd) >> 10, mi.hblkhd >> 10, trim_ns / 1e6);
	}
	if (ss->server)
		publish_metrics(ss, &st);
	sampler_stats_release(&st);
	return 0;
}

static void add_sink(struct session *ss, struct sink *k)
{
	struct sink **end = &ss->sinks;

	while (*end)
		end = &(*end)->next;
	*end = k;
}

/* Every sink is told where a drain flipped the maps: the windows due end there. */
static void tell_sinks(struct session *ss, uint64_t flip_ns, uint64_t flip_wall_ns, bool last)
{
	struct sink *k;

	for (k = ss->sinks; k; k = k->next)
		if (k->ops->drained(k, flip_ns, flip_wall_ns, last))
			ss->write_failed = true;
}

/* Every sink freed, in the order they began, each saying its figures in f (NULL: none). */
static void free_sinks(struct session *ss, struct run_figures *f)
{
	struct sink *k;

	while ((k = ss->sinks)) {
		ss->sinks = k->next;
		k->ops->free(k, f);
	}
	ss->server = NULL;
	ss->npushers = 0;
}

/* The earliest time a sink next needs a drain (now_ns() clock); 0: none. */
static uint64_t sinks_due(struct session *ss)
{
	uint64_t next = 0, due;
	struct sink *k;

	for (k = ss->sinks; k; k = k->next)
		if ((due = k->ops->due(k)) && (!next || due < next))
			next = due;
	return next;
}

/*
 * One drain for all that need one by now: the periodic drain (periodic)
 * and every sink due (a window ending or opening); then the sinks are told.
 */
static int drain_due(struct session *ss, uint64_t now, bool periodic)
{
	uint64_t due = sinks_due(ss), flip, wall;
	int err;

	if (!periodic && (!due || due > now))
		return 0;
	if ((err = drain(ss, &flip, &wall)))
		return err;
	tell_sinks(ss, flip, wall, false);
	return 0;
}

/*
 * What wakes the loop early once the side-band is quiet: a ring's record
 * (a sample sent whole, a table request, a counts map half full) or a
 * side-band record. Not under --unwind dwarf, whose samples wake their
 * reader only in bulk: read every SIDEBAND_POLL_MS, they stay fresh.
 */
static void watch_news(struct session *ss)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd;

	ss->news_fd = -1;
	if (!ss->sideband || ss->o->dwarf_unwind)
		return;
	fd = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = sampler_epoll_fd(ss->sampler);
	if (fd < 0 || epoll_ctl(fd, EPOLL_CTL_ADD, ev.data.fd, &ev) ||
	    sideband_watch(ss->sideband, fd)) {
		debug("the loop reads the side-band every %d ms: %s", SIDEBAND_POLL_MS,
		      strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	ss->news_fd = fd;
}

/* Up to timeout_ms for the rings' records (and, once the side-band is quiet, its next one). */
static int wait_for_news(struct session *ss, int timeout_ms)
{
	struct epoll_event ev;

	if (!ss->quiet)
		return sampler_poll(ss->sampler, timeout_ms);
	if (epoll_wait(ss->news_fd, &ev, 1, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	return sampler_poll(ss->sampler, 0);
}

/*
 * Without --interval, a drain that added fewer than FEW_NEW_STACKS stacks
 * to the profile doubles the wait for the next, up to MAX_STRETCH
 * intervals; one that added more brings it back to one. An agent where
 * little changes drains every 8 s, not every second: most of a drain's
 * cost is the same however few samples it reads. A counts map half full,
 * or a window's end, drains sooner.
 */
#define MAX_STRETCH 8
#define FEW_NEW_STACKS 32

/* Samples until the duration ends, a signal arrives or the targets are gone. */
static int sample_loop(struct session *ss, uint64_t start)
{
	const struct options *o = ss->o;
	uint64_t interval = o->interval * 1e9, end = o->duration > 0 ? start + o->duration * 1e9 : 0;
	uint64_t next_tick = start + interval, next_drain = next_tick;
	bool progress = isatty(STDERR_FILENO) && (o->duration < 0 || o->duration > 2);
	struct sampler_stats st;
	uint32_t stretch = 1;
	int err = 0;

	while (!stop_signal) {
		uint64_t now = now_ns(), wake, due;
		bool tick = now >= next_tick, periodic = now >= next_drain;
		const struct profile *before = ss->coll.profile;
		uint32_t stacks = before->nr_stacks;

		if (end && now >= end)
			break;
		if ((err = drain_due(ss, now, periodic || sampler_drain_soon(ss->sampler))))
			break;
		/* Progress and the checks every interval; the drains as stretched. */
		if (tick) {
			while (next_tick <= now)
				next_tick += interval;
			if (periodic) {
				bool little_new = ss->coll.profile == before &&
						  before->nr_stacks < stacks + FEW_NEW_STACKS;

				stretch = o->interval_stretches && little_new
						  ? (stretch * 2 < MAX_STRETCH ? stretch * 2 : MAX_STRETCH)
						  : 1;
				next_drain = next_tick + (stretch - 1) * interval;
			}
			/*
			 * Progress and --listen's /metrics: the counters move every
			 * interval, however stretched the drains.
			 */
			bool metrics = ss->server && !periodic;	/* unless a drain just did */

			if (progress || metrics) {
				if (!periodic)
					sampler_read_stats(ss->sampler);
				sampler_stats(ss->sampler, &st);
				if (progress)
					show_progress((now - start) / 1e9, &st);
				if (metrics)
					publish_metrics(ss, &st);
				sampler_stats_release(&st);
			}
			if (targets_gone(o, ss->cgroup_fd)) {
				debug("every target has exited; stopping");
				break;
			}
			if (stdout_gone(o)) {
				debug("stdout's reader has gone; stopping");
				break;
			}
		}
		/* The next tick, the end, a window's end or an interval's, or the side-band's turn. */
		wake = end && end < next_tick ? end : next_tick;
		if ((due = sinks_due(ss)) && due < wake)
			wake = due;
		if (!ss->quiet && wake > now + SIDEBAND_POLL_MS * 1000000ULL)
			wake = now + SIDEBAND_POLL_MS * 1000000ULL;
		now = now_ns();
		if (wake > now && (err = wait_for_news(ss, (wake - now + 999999) / 1000000)) < 0)
			break;
		err = 0;
		ss->quiet = !read_sideband(ss) && ss->news_fd >= 0;
	}
	stop_now();	/* unless a signal did: the duration ended or the targets are gone */
	if (progress)
		fprintf(stderr, "\r%40s\r", "");
	if (stop_signal)
		debug("stopping on signal %d", (int)stop_signal);
	return err;
}

/* --unwind auto: a table the walk needs now, for a program started during the run. */
static void on_table_request(void *ctx, const struct table_request *r)
{
	struct session *ss = ctx;

	symbolizer_table_request(&ss->sym, r);
}

/* The sampler as the settings say, its callbacks into this session. */
static void configure_sampler(struct sampler_config *cfg, const struct settings *set,
			      struct session *ss)
{
	*cfg = set->sampler;
	cfg->on_sample = on_sample;
	cfg->before_read = before_read;
	cfg->on_table_request = on_table_request;
	cfg->ctx = ss;
}

/* --unwind auto: the program reads mappings as processes change; those running now, from /proc. */
static void give_mappings(struct session *ss)
{
	uint32_t i;
	int err;

	for (i = 0; i < ss->sym.procs.nr; i++) {
		const struct proc *p = ss->sym.procs.procs[i];
		const struct proc_image *img = p->nr_images ? &p->images[p->nr_images - 1] : NULL;

		if (img && (err = sampler_set_mappings(ss->sampler, p->tgid, img->gen, img->maps,
							img->nr_maps)))
			debug("cannot give the program the mappings of process %u: %s", p->tgid,
			      strerror(-err));
		if (img)
			runtimes_process_image(&ss->runtimes, p->tgid, img->maps, img->nr_maps);
	}
}

/*
 * Follows every process from now on: side-band records on every online CPU
 * (a process may run anywhere, whatever -C says), then what /proc shows of
 * the processes already running. The BPF program counts generations from
 * before this, so no exec can slip between the two.
 */
static void track_processes(struct session *ss)
{
	size_t ncpus;
	int *cpus, err;

	if ((err = online_cpus(&cpus, &ncpus)) || (err = sideband_open(&ss->sideband, cpus, ncpus))) {
		warning("cannot follow processes through perf side-band records (%s); processes that "
			"exit between drains keep unnamed frames", strerror(-err));
		sideband_free(ss->sideband);
		ss->sideband = NULL;
	}
	if (!err) {
		free(cpus);
		/* A /proc read for a missing mapping is checked against the records after it. */
		ss->sym.procs.catch_up = catch_up;
		ss->sym.procs.catch_up_ctx = ss;
	}
	symbolizer_scan(&ss->sym, process_gen, ss);
	give_mappings(ss);
}

/* --unwind auto: the symbolizer builds each file's table as it opens the file. */
static int use_unwind_tables(struct session *ss)
{
	int rows_fd, files_fd, err;

	sampler_table_maps(ss->sampler, &rows_fd, &files_fd);
	if ((err = unwind_tables_init(&ss->tables, rows_fd, files_fd, UNWIND_ROWS))) {
		error("cannot set up the unwind tables: %s", strerror(-err));
		return err;
	}
	if (rows_fd >= 0)
		symbolizer_use_tables(&ss->sym, &ss->tables);
	return 0;
}

/* Runtimes, unless off: each told of the files opened from now on, and of the profile's folds. */
static void use_runtimes(struct session *ss)
{
	struct file_listener l = runtimes_file_listener(&ss->runtimes);

	runtimes_start(&ss->runtimes, ss->sampler, process_gen, ss);
	runtimes_on_fold(&ss->runtimes, ss->coll.profile);
	symbolizer_on_file(&ss->sym, &l);
	ss->coll.runtimes = &ss->runtimes;
}

/* --rotate, --push, --listen: each a sink of windows of the profile, from start_ns. */
static int start_sinks(struct session *ss, struct profile *prof, uint64_t start_ns)
{
	const struct options *o = ss->o;
	struct sink *k;

	if (o->rotate)
		add_sink(ss, rotation_start(o, prof, start_ns, prof->start_wall_ns));
	if (o->push) {
		if (!(k = pusher_start(o, prof, start_ns, prof->start_wall_ns)))
			return -1;
		add_sink(ss, k);
		ss->pushers[ss->npushers++] = (struct pushing){ "push", k };
	}
	if (o->otlp) {
		if (!(k = otlp_start(o, prof, start_ns, prof->start_wall_ns)))
			return -1;
		add_sink(ss, k);
		ss->pushers[ss->npushers++] = (struct pushing){ "otlp", k };
	}
	if (o->listen) {
		struct sampler_stats st;

		if (!(ss->server = server_start(o->listen, prof)))
			return -1;
		add_sink(ss, server_sink(ss->server));
		sampler_stats(ss->sampler, &st);
		publish_metrics(ss, &st);
		sampler_stats_release(&st);
	}
	return 0;
}

/* What the session's parts say of themselves at the end, for the summary. */
static void gather_figures(struct session *ss, struct run_figures *f)
{
	f->sideband_lost = ss->sideband ? sideband_lost(ss->sideband) : 0;
	memcpy(f->unwinds, ss->coll.unwinds, sizeof(f->unwinds));
	f->tables.built = ss->tables.built;
	f->tables.shared = ss->tables.shared;
	f->tables.empty = ss->tables.empty;
	f->tables.no_room = ss->tables.no_room;
	f->tables.rows = ss->tables.rows_used;
	f->tables.build_ns = ss->tables.build_ns;
	f->tables.bytes = unwind_tables_bytes(&ss->tables);
	f->tables.proc_bytes = sampler_proc_maps_bytes(ss->sampler);
	runtimes_stats(&ss->runtimes, f);
}

/*
 * Sampling is over: the program detached and its last samples read, then
 * the sinks' last windows end at the detach (end_ns) and the sinks go.
 */
static int finish_sampling(struct session *ss, struct profile *prof, uint64_t end_ns,
			   struct sampler_stats *st, struct run_figures *f)
{
	if (sampler_stop(ss->sampler))
		return -1;
	debug("timing: last drain read %.1f ms after %s", (now_ns() - stop_ns) / 1e6, stop_cause());
	symbolizer_name_late_jit(&ss->sym, prof);
	sampler_stats(ss->sampler, st);
	collector_add_lost_since(&ss->coll, st->total);
	tell_sinks(ss, end_ns, wall_at(ss, end_ns), true);
	/* --push: what is left sent, for a bounded time. */
	free_sinks(ss, f);
	gather_figures(ss, f);
	return 0;
}

/* Attaches, samples, detaches: the profile holds every sample taken. */
static int profile_machine(const struct options *o, int cgroup_fd, struct profile *prof,
			   struct sampler_stats *st, struct run_figures *f, bool *write_failed)
{
	struct sampler_config cfg;
	struct settings set;
	struct session ss = { .o = o, .cgroup_fd = cgroup_fd, .news_fd = -1 };
	uint64_t end;
	uint64_t start;
	int err = -1;

	symbolizer_init(&ss.sym);
	ss.sym.unwinding = o->dwarf_unwind;
	settings_from_options(&set, o, cgroup_fd, getpagesize());
	prof->kind = set.kind;
	prof->frequency = set.frequency;
	prof->period_ns = set.period_ns;
	collector_init(&ss.coll, prof, &ss.sym);
	ss.coll.keep_pids = o->per_pid;
	configure_sampler(&cfg, &set, &ss);
	if (sampler_open(&ss.sampler, &cfg) || use_unwind_tables(&ss))
		goto out;
	use_runtimes(&ss);
	/* Processes, their files and these files' unwind tables before the first sample. */
	track_processes(&ss);
	watch_news(&ss);
	if (sampler_start(ss.sampler))
		goto out;
	/* The clock starts once every CPU samples. */
	prof->start_wall_ns = wall_ns();
	prof->command_line = xstrdup(o->command_line);
	start = ss.start_ns = now_ns();
	ss.coll.trim_only = set.trim_only;
	if (start_sinks(&ss, prof, start))
		goto out;
	/* Wall clock too, so a benchmark can time from its own exec stamp, to the microsecond. */
	debug("timing: attached %.0f ms after exec, at %.6f s wall clock", ms_since_exec(),
	      prof->start_wall_ns / 1e9);
	debug("sampling %zu CPUs at %u Hz", o->ncpus, o->frequency);
	err = sample_loop(&ss, start);
	stop_writing_on_signal(1);
	/* Sampling ends at the detach, sampler_stop's first step: the last drain is not sampling time. */
	end = now_ns();
	prof->duration_ns = end - start;
	debug("timing: sampled %.3f s", prof->duration_ns / 1e9);
	if (err || finish_sampling(&ss, prof, end, st, f))
		err = -1;
out:
	free_sinks(&ss, NULL);
	*write_failed = ss.write_failed;
	/* The runtimes' namers read the program's rings: stopped before the program goes. */
	runtimes_free(&ss.runtimes);
	sampler_free(ss.sampler);
	if (ss.news_fd >= 0)
		close(ss.news_fd);
	sideband_free(ss.sideband);
	collector_release(&ss.coll);
	symbolizer_release(&ss.sym);
	unwind_tables_release(&ss.tables);
	if (!err)
		debug("timing: detached and symbols freed %.1f ms after %s", (now_ns() - stop_ns) / 1e6,
		      stop_cause());
	return err;
}

int record(const struct options *o)
{
	struct sampler_stats st = { 0 };
	struct run_figures figures = { 0 };
	struct output_file *out;
	struct profile prof;
	int cgroup_fd = -1, rc = EXIT_RUNTIME;
	bool write_failed = false;

	verbose = o->verbose;
	if (check_machine(o->btf) || !(out = outputs_open(o)))
		return EXIT_RUNTIME;
	if (o->cgroup_path) {
		cgroup_fd = open(o->cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgroup_fd < 0)
			error("cannot open cgroup '%s': %s; give an existing cgroup v2 directory",
			      o->cgroup_path, strerror(errno));
	}
	libbpf_set_print(libbpf_print);
	catch_stop_signals();
	profile_init(&prof);
	if ((!o->cgroup_path || cgroup_fd >= 0) &&
	    !profile_machine(o, cgroup_fd, &prof, &st, &figures, &write_failed)) {
		/* --rotate: every file is written already. */
		rc = write_failed || (!o->rotate && outputs_write(o, out, &prof)) ? EXIT_RUNTIME : 0;
		stop_writing_on_signal(0);
		debug("timing: outputs written %.1f ms after %s", (now_ns() - stop_ns) / 1e6,
		      stop_cause());
		summarize(o, &prof, &st, &figures, prof.duration_ns / 1e9);
	}
	outputs_release(o, out);
	sampler_stats_release(&st);
	profile_release(&prof);
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	return rc;
}
