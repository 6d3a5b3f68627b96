// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * One profiling session: check the machine, attach, drain every interval
 * until the duration ends, a signal arrives or every target has exited;
 * then detach, write the profile and summarize on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpfprof/cli.h"
#include "bpfprof/collect.h"
#include "bpfprof/metrics.h"
#include "bpfprof/output.h"
#include "bpfprof/push.h"
#include "bpfprof/record.h"
#include "bpfprof/rotate.h"
#include "bpfprof/runtime.h"
#include "bpfprof/sampler.h"
#include "bpfprof/serve.h"
#include "bpfprof/sideband.h"
#include "bpfprof/symbolize.h"
#include "bpfprof/unwind_tables.h"

#define DEFAULT_BTF "/sys/kernel/btf/vmlinux"

static volatile sig_atomic_t stop_signal;
/* When sampling was told to stop (first signal, or the loop's end): -v's end latency. */
static volatile uint64_t stop_ns;
/* From the end of sampling until every output is in place: a signal now stops the writing. */
static volatile sig_atomic_t writing;

static void say(const char *s)
{
	ssize_t unused __attribute__((unused)) = write(STDERR_FILENO, s, strlen(s));
}

/*
 * A signal once sampling is over asks to stop now, profile or not: the
 * files not yet in place are removed (those in place stay whole) and we
 * die of the signal, so the shell sees it. Async-signal-safe calls only.
 */
static void abandon_writing(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	output_remove_temps();
	say("bpfprof: ");
	say(sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP");
	say(" while writing the profile: outputs not yet complete were removed; let it finish "
	    "(no signal after sampling ends) to keep them\n");
	sigaction(sig, &dfl, NULL);
	raise(sig);	/* blocked in its handler: delivered as we return */
}

static void on_stop_signal(int sig)
{
	if (writing)
		abandon_writing(sig);
	/* clock_gettime is async-signal-safe; an aligned 64-bit store is whole on 64-bit CPUs. */
	if (!stop_signal)
		stop_ns = now_ns();
	stop_signal = sig;
}

/*
 * Milliseconds since this process was exec'd, for -v's timing lines. The
 * kernel gives the start only in clock ticks (/proc/self/stat, field 22),
 * so this reads up to one tick (10 ms at USER_HZ 100) long; -1 if unknown.
 */
static double ms_since_exec(void)
{
	char buf[1024], *p;
	unsigned long long start;
	struct timespec ts;
	ssize_t n = -1;
	int fd, i;

	if ((fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* comm may hold spaces: count fields from its closing parenthesis (field 2). */
	p = strrchr(buf, ')');
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, "%llu", &start) != 1 || clock_gettime(CLOCK_BOOTTIME, &ts))
		return -1;
	return (ts.tv_sec + ts.tv_nsec / 1e9 - (double)start / sysconf(_SC_CLK_TCK)) * 1e3;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	/* No SA_RESTART: a signal must cut the ring buffer poll short. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* libbpf speaks only under -v (its debug chatter under -vv); our errors say the rest. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose || (level == LIBBPF_DEBUG && verbose < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN, in the effective set. */
static bool can_profile(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { 0 };
	uint64_t eff;

	if (syscall(SYS_capget, &hdr, data))
		return geteuid() == 0;
	eff = (uint64_t)data[1].effective << 32 | data[0].effective;
#define HAS(cap) (eff >> (cap) & 1)
	return HAS(21 /* CAP_SYS_ADMIN */) || (HAS(39 /* CAP_BPF */) && HAS(38 /* CAP_PERFMON */));
#undef HAS
}

/*
 * The file starts like BTF (raw, or an ELF file with a .BTF section, as
 * libbpf reads both). libbpf parses it at load; parsing it here as well
 * would cost some 15 ms and 10 MB for the kernel's 5 MB of BTF.
 */
static int check_btf(const char *path)
{
	static const uint8_t raw_magic[2] = { 0x9f, 0xeb }, elf_magic[4] = { 0x7f, 'E', 'L', 'F' };
	uint8_t head[4] = { 0 };
	ssize_t n = -1;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error("kernel BTF not found at '%s' (%s): bpfprof needs a kernel built with "
			     "CONFIG_DEBUG_INFO_BTF=y, or --btf FILE", path, strerror(errno));
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n < (ssize_t)sizeof(head) ||
	    (memcmp(head, raw_magic, sizeof(raw_magic)) && memcmp(head, elf_magic, sizeof(elf_magic))))
		return error("'%s' holds no usable BTF (%s): bpfprof needs a kernel built with "
			     "CONFIG_DEBUG_INFO_BTF=y, or --btf FILE", path,
			     n < 0 ? strerror(errno) : n == 0 ? "empty file" : "not BTF data");
	return 0;
}

/* The --cgroup directory was removed (or another took its name): nothing will run in it. */
static bool cgroup_gone(const char *path, int fd)
{
	struct stat a, b;

	return fstat(fd, &a) || stat(path, &b) || a.st_ino != b.st_ino || a.st_dev != b.st_dev;
}

/* With -p/-t or --cgroup, profiling ends once nothing is left to profile. */
static bool targets_gone(const struct options *o, int cgroup_fd)
{
	size_t i;

	if (cgroup_fd >= 0 && cgroup_gone(o->cgroup_path, cgroup_fd))
		return true;
	if (!o->ntgids && !o->npids)
		return false;
	for (i = 0; i < o->ntgids; i++)
		if (task_alive(o->tgids[i]))
			return false;
	for (i = 0; i < o->npids; i++)
		if (task_alive(o->pids[i]))
			return false;
	return true;
}

/* --unwind auto: how the program walked user stacks, and what its tables cost. */
static void summarize_walks(const struct sampler_stats *st)
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
	      st->tables.built, st->tables.shared, st->tables.empty, st->tables.no_room,
	      (unsigned long long)st->tables.rows, st->tables.build_ns / 1e6,
	      st->tables.bytes / 1048576.0, st->tables.proc_bytes / 1048576.0,
	      (unsigned long long)t[STAT_PROC_SCANS], (unsigned long long)t[STAT_PROC_SCAN_BUSY]);
}

/* stdout, one of the outputs, is a pipe nobody reads any more (bpfprof | head, head done). */
static bool stdout_gone(const struct options *o)
{
	struct pollfd p = { .fd = STDOUT_FILENO };
	size_t i;

	for (i = 0; i < o->noutputs && o->outputs[i].path; i++)
		;
	return i < o->noutputs && poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

static uint64_t recorded(const struct sampler_stats *st)
{
	return st->total[STAT_USER_MODE] + st->total[STAT_KERNEL_MODE];
}

static void show_progress(double elapsed, const struct sampler_stats *st)
{
	fprintf(stderr, "\rbpfprof: %.0f s, %llu samples ", elapsed,
		(unsigned long long)recorded(st));
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

static void summarize(const struct options *o, const struct profile *p,
		      const struct sampler_stats *st, double seconds)
{
	const uint64_t *t = st->total;
	uint64_t rec = recorded(st), lost, nproc, nthreads;
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
	if (st->pushed)
		fprintf(stderr, "bpfprof: pushed %llu intervals to %s (%llu attempts again); refused "
			"%llu, dropped %llu (more than %d waited), not sent at the stop %llu\n",
			(unsigned long long)st->push.sent, o->push,
			(unsigned long long)st->push.retries, (unsigned long long)st->push.rejected,
			(unsigned long long)st->push.dropped, PUSH_QUEUE,
			(unsigned long long)st->push.unsent);

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
	fprintf(stderr, "bpfprof: %llu processes, %llu threads, %u distinct stacks, %llu drains\n",
		(unsigned long long)nproc, (unsigned long long)nthreads, p->nr_stacks,
		(unsigned long long)st->drains);
	if (st->walking)
		summarize_walks(st);
	runtimes_summarize(st);
	if (o->dwarf_unwind) {
		uint64_t all = 0;

		for (i = 0; i < UNWIND_END_MAX; i++)
			all += st->unwinds[i];
		fprintf(stderr, "bpfprof: unwound %llu user stacks: %llu complete; truncated ([truncated] "
			"root): %llu no CFI, %llu beyond the copied stack, %llu at the depth limit, "
			"%llu unfollowable; %llu lost to a full ring buffer\n",
			(unsigned long long)all, (unsigned long long)st->unwinds[UNWIND_COMPLETE],
			(unsigned long long)st->unwinds[UNWIND_NO_CFI],
			(unsigned long long)st->unwinds[UNWIND_NO_STACK],
			(unsigned long long)st->unwinds[UNWIND_DEPTH],
			(unsigned long long)st->unwinds[UNWIND_BAD],
			(unsigned long long)t[STAT_LOST_DWARF]);
	}
	if (st->sideband_lost)
		warning("the kernel dropped %llu side-band records (mmap, exec, fork, exit): some "
			"short-lived processes may keep unnamed frames",
			(unsigned long long)st->sideband_lost);
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

/* Samples lost, by cause: the statistic, and the frame they get in the profile. */
static const struct {
	int stat;
	const char *label;
} lost_causes[] = {
	{ STAT_LOST_COLLISION, "[lost: stack collision]" },
	{ STAT_LOST_STACK_FULL, "[lost: stack map full]" },
	{ STAT_LOST_COUNTS_FULL, "[lost: counts map full]" },
	{ STAT_LOST_DWARF, "[lost: ring buffer full]" },
};
#define LOST_CAUSES (sizeof(lost_causes) / sizeof(lost_causes[0]))

/* Everything one run holds while it samples. */
struct session {
	const struct options *o;
	int cgroup_fd;			/* --cgroup, else -1 */
	struct sampler *sampler;
	struct sideband *sideband;	/* NULL if the kernel refused one: /proc only */
	struct symbolizer sym;
	struct collector coll;
	struct unwind_tables tables;	/* --unwind auto */
	struct runtimes runtimes;	/* runtimes on (Python): none when off */
	struct server *server;		/* --listen, else NULL */
	struct rotation *rotation;	/* --rotate, else NULL */
	struct pusher *pusher;		/* --push, else NULL */
	bool samples_seen;		/* -v: a drain has handed out samples */
	uint64_t lost_added[LOST_CAUSES];	/* lost samples already in the profile */
	bool write_failed;		/* --rotate: a file could not be written */
};

/* Samples lost since the last drain, into the profile: windows of it have theirs too. */
static void add_lost(struct session *ss, const struct sampler_stats *st)
{
	size_t i;

	for (i = 0; i < LOST_CAUSES; i++) {
		collector_add_lost(&ss->coll, lost_causes[i].label,
				   st->total[lost_causes[i].stat] - ss->lost_added[i]);
		ss->lost_added[i] = st->total[lost_causes[i].stat];
	}
}

/* Side-band records are read this often, so files are opened while their processes live. */
#define SIDEBAND_POLL_MS 20

static void read_sideband(struct session *ss)
{
	if (ss->sideband)
		sideband_read(ss->sideband, symbolizer_track, &ss->sym);
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
 * runtimes sent (Python's code objects: the namer may not have come to the
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
	text = metrics_text(st, &f);
	server_set_metrics(ss->server, text);
	free(text);
}

/* Reads the maps: every sample taken so far in the profile. 0 or -errno. */
static int drain(struct session *ss)
{
	uint64_t flip = now_ns(), trim_ns;
	struct sampler_stats st;
	int err;

	if ((err = sampler_drain(ss->sampler)))
		return err;
	sampler_stats(ss->sampler, &st);
	add_lost(ss, &st);
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

/* For the server: a window opens or closes now. */
static void drain_for_window(void *ctx)
{
	struct session *ss = ctx;
	int err = drain(ss);

	if (err)
		debug("cannot read the BPF maps for a window: %s", strerror(-err));
}

/* The profile is about to be folded, or was: the windows of it know. */
static void folding(void *ctx, bool done)
{
	struct session *ss = ctx;

	if (ss->server)
		server_folding(ss->server, done);
	if (ss->rotation)
		series_folding(&ss->rotation->series, done);
	if (ss->pusher)
		series_folding(pusher_series(ss->pusher), done);
}

/*
 * --rotate, --push: when an interval is over, a drain (its flip now), then
 * the interval's files written or its pprof queued, and the next begun.
 * Returns when the next is due in *due.
 */
static int end_intervals(struct session *ss, uint64_t *due)
{
	struct window_series *rotating = ss->rotation ? &ss->rotation->series : NULL;
	struct window_series *pushing = ss->pusher ? pusher_series(ss->pusher) : NULL;
	uint64_t now = now_ns(), wall = wall_ns();
	int err = 0;

	if (rotating && now < rotating->due_ns)
		rotating = NULL;
	if (pushing && now < pushing->due_ns)
		pushing = NULL;
	if (rotating || pushing)
		err = drain(ss);
	if (rotating && rotation_rotate(ss->rotation, now, wall, false))
		ss->write_failed = true;
	if (pushing)
		pusher_rotate(ss->pusher, now, wall, false);
	if (ss->rotation && ss->rotation->series.due_ns < *due)
		*due = ss->rotation->series.due_ns;
	if (ss->pusher && pusher_series(ss->pusher)->due_ns < *due)
		*due = pusher_series(ss->pusher)->due_ns;
	return err;
}

/* Samples until the duration ends, a signal arrives or the targets are gone. */
static int sample_loop(struct session *ss, uint64_t start)
{
	const struct options *o = ss->o;
	uint64_t interval = o->interval * 1e9, end = o->duration > 0 ? start + o->duration * 1e9 : 0;
	uint64_t next_drain = start + interval;
	bool progress = isatty(STDERR_FILENO) && (o->duration < 0 || o->duration > 2);
	struct sampler_stats st;
	int err = 0;

	while (!stop_signal) {
		uint64_t now = now_ns(), wake, deadline;

		if (end && now >= end)
			break;
		if (now >= next_drain) {
			if ((err = drain(ss)))
				break;
			while (next_drain <= now)
				next_drain += interval;
			if (progress) {
				sampler_stats(ss->sampler, &st);
				show_progress((now - start) / 1e9, &st);
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
		wake = end && end < next_drain ? end : next_drain;
		/* A window's end, when a request for a profile is answered; an interval's. */
		if (ss->server && (deadline = server_tick(ss->server)) && deadline < wake)
			wake = deadline;
		if ((err = end_intervals(ss, &wake)))
			break;
		if (wake > now + SIDEBAND_POLL_MS * 1000000ULL)
			wake = now + SIDEBAND_POLL_MS * 1000000ULL;
		now = now_ns();
		if (wake > now && (err = sampler_poll(ss->sampler, (wake - now + 999999) / 1000000)) < 0)
			break;
		err = 0;
		read_sideband(ss);
	}
	if (!stop_signal)
		stop_ns = now_ns();	/* the duration ended or the targets are gone */
	if (progress)
		fprintf(stderr, "\r%40s\r", "");
	if (stop_signal)
		debug("stopping on signal %d", (int)stop_signal);
	return err;
}

/* The machine can run us: capabilities and kernel BTF. */
static int check_machine(const struct options *o)
{
	struct rlimit nofile;

	/* Every file a process maps stays open until it is read: allow what root may. */
	if (!getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	if (!can_profile() && geteuid() == 0)
		return error("need CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to sample with BPF, which "
			     "this root process lacks; run it with them, e.g. not in a container that "
			     "drops them");
	if (!can_profile())
		return error("need CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to sample with BPF; "
			     "run as root, e.g. sudo bpfprof");
	return check_btf(o->btf ? o->btf : DEFAULT_BTF);
}

/* Opens every output now, so an unwritable one fails before sampling. */
static struct output_file *open_outputs(const struct options *o)
{
	struct output_file *out = xcalloc(o->noutputs + 1, sizeof(*out));	/* none with --listen */
	size_t i;
	char *path;
	int err;

	for (i = 0; i < o->noutputs; i++) {
		/* --rotate: each interval's file is opened as it is written; tried once now. */
		path = o->rotate ? rotated_name(o->outputs[i].path, wall_ns()) : NULL;
		err = output_open(&out[i], path ? path : o->outputs[i].path);
		if (!err && path)
			output_abort(&out[i]);
		free(path);
		if (err) {
			while (i-- > 0)
				output_abort(&out[i]);
			free(out);
			return NULL;
		}
	}
	return out;
}

/* Writes the profile in each format and puts each file in place; 0 or -1. */
static int write_outputs(const struct options *o, struct output_file *out, const struct profile *p)
{
	struct write_options wo = { .per_pid = o->per_pid };
	int rc = 0, err;
	size_t i;

	for (i = 0; i < o->noutputs; i++) {
		const struct output_spec *spec = &o->outputs[i];

		err = format_writer(spec->format)(out[i].f, p, &wo);
		if (!err)
			err = output_commit(&out[i]);
		if (err) {
			/* A file renamed into place only when whole is as it was; a pipe is not. */
			bool renamed = spec->path && !out[i].in_place;

			rc = error("cannot write %s output to %s%s%s: %s; %s", format_name(spec->format),
				   spec->path ? "'" : "stdout", spec->path ? spec->path : "",
				   !spec->path ? "" : renamed ? "' (left as it was)" : "'", strerror(-err),
				   err == -ENOSPC || err == -EDQUOT
					   ? "free some space, or give -o a file on another file system"
				   : err == -EPIPE ? "its reader exited first: let it read to the end"
						   : "check the device, or give -o another path");
			output_abort(&out[i]);
		}
	}
	return rc;
}

/* --unwind auto: a table the walk needs now, for a program started during the run. */
static void on_table_request(void *ctx, const struct table_request *r)
{
	struct session *ss = ctx;

	symbolizer_table_request(&ss->sym, r);
}

/*
 * Room for this many unwind table rows (8 bytes each, 32 MiB): every file
 * the test machine maps at start takes some 90,000, python3.11 alone 65,000.
 */
#define UNWIND_ROWS (4u << 20)

static void configure_sampler(struct sampler_config *cfg, const struct options *o, int cgroup_fd,
			      struct session *ss)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->frequency = o->frequency;
	cfg->cpus = o->cpus;
	cfg->ncpus = o->ncpus;
	cfg->tgids = o->tgids;
	cfg->ntgids = o->ntgids;
	cfg->pids = o->pids;
	cfg->npids = o->npids;
	cfg->cgroup_fd = cgroup_fd;
	cfg->include_idle = o->idle;
	cfg->cpu_samples = !o->off_cpu;
	cfg->off_cpu = o->off_cpu || o->wall;
	cfg->min_block_ns = (uint64_t)o->min_block_us * 1000;
	cfg->kernel_stacks = !o->user_only;
	cfg->user_stacks = !o->kernel_only;
	cfg->stack_storage_size = o->stack_storage_size;
	cfg->max_stacks = o->max_stacks;
	/* The kernel wants at least a page. */
	cfg->ring_buffer_bytes = (uint32_t)o->ring_buffer_kib << 10;
	if (cfg->ring_buffer_bytes < (uint32_t)getpagesize())
		cfg->ring_buffer_bytes = getpagesize();
	cfg->btf_path = o->btf;
	cfg->dwarf_unwind = o->dwarf_unwind;
	cfg->cfi_unwind = o->cfi_unwind && !o->kernel_only;
	cfg->python_frames = !o->no_python;
	cfg->unwind_rows = UNWIND_ROWS;
	cfg->stack_copy_bytes = o->stack_size;
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

/* Runtimes (Python), unless off: each told of the files opened from now on. */
static void use_runtimes(struct session *ss)
{
	struct file_listener l = runtimes_file_listener(&ss->runtimes);

	runtimes_start(&ss->runtimes, ss->sampler, process_gen, ss);
	symbolizer_on_file(&ss->sym, &l);
	ss->coll.runtimes = &ss->runtimes;
}

/* Attaches, samples, detaches: the profile holds every sample taken. */
static int profile_machine(const struct options *o, int cgroup_fd, struct profile *prof,
			   struct sampler_stats *st, bool *write_failed)
{
	struct sampler_config cfg;
	struct session ss = { .o = o, .cgroup_fd = cgroup_fd };
	struct rotation rotation;
	uint64_t end;
	uint64_t start;
	int err = -1;

	symbolizer_init(&ss.sym);
	ss.sym.unwinding = o->dwarf_unwind;
	/* The collector converts off-CPU time to the profile's unit as it goes. */
	prof->kind = o->off_cpu ? PROFILE_OFF_CPU : o->wall ? PROFILE_WALL : PROFILE_CPU;
	prof->frequency = o->frequency;
	prof->period_ns = 1000000000ULL / o->frequency;
	collector_init(&ss.coll, prof, &ss.sym);
	ss.coll.keep_pids = o->per_pid;
	configure_sampler(&cfg, o, cgroup_fd, &ss);
	if (sampler_open(&ss.sampler, &cfg) || use_unwind_tables(&ss))
		goto out;
	use_runtimes(&ss);
	/* Processes, their files and these files' unwind tables before the first sample. */
	track_processes(&ss);
	if (sampler_start(ss.sampler))
		goto out;
	/* The clock starts once every CPU samples. */
	prof->start_wall_ns = wall_ns();
	prof->command_line = xstrdup(o->command_line);
	start = now_ns();
	ss.coll.folding = folding;
	ss.coll.folding_ctx = &ss;
	/* An agent writing no whole-run profile keeps only what its windows need. */
	ss.coll.trim_only = (o->listen || o->push || o->rotate) && (!o->noutputs || o->rotate);
	if (o->rotate) {
		rotation_start(&rotation, o, prof, start, prof->start_wall_ns);
		ss.rotation = &rotation;
	}
	if (o->push && !(ss.pusher = pusher_start(o, prof, start, prof->start_wall_ns)))
		goto out;
	if (o->listen) {
		if (!(ss.server = server_start(o->listen, prof, drain_for_window, &ss)))
			goto out;
		sampler_stats(ss.sampler, st);
		publish_metrics(&ss, st);
		sampler_stats_release(st);
	}
	/* Wall clock too, so a benchmark can time from its own exec stamp, to the microsecond. */
	debug("timing: attached %.0f ms after exec, at %.6f s wall clock", ms_since_exec(),
	      prof->start_wall_ns / 1e9);
	debug("sampling %zu CPUs at %u Hz", o->ncpus, o->frequency);
	err = sample_loop(&ss, start);
	/* Requests still open are answered: bpfprof is stopping. */
	server_stop(ss.server);
	ss.server = NULL;
	writing = 1;
	/* Sampling ends at the detach, sampler_stop's first step: the last drain is not sampling time. */
	end = now_ns();
	prof->duration_ns = end - start;
	debug("timing: sampled %.3f s", prof->duration_ns / 1e9);
	if (sampler_stop(ss.sampler) || err) {
		err = -1;
		goto out;
	}
	debug("timing: last drain read %.1f ms after %s", (now_ns() - stop_ns) / 1e6,
	      stop_signal ? "the stop signal" : "sampling ended");
	symbolizer_name_late_jit(&ss.sym, prof);
	sampler_stats(ss.sampler, st);
	st->sideband_lost = ss.sideband ? sideband_lost(ss.sideband) : 0;
	add_lost(&ss, st);
	/* --push: the last interval, to the detach, and what is left sent (for a bounded time). */
	if (ss.pusher) {
		pusher_rotate(ss.pusher, end, prof->start_wall_ns + prof->duration_ns, true);
		pusher_stop(ss.pusher, &st->push);
		st->pushed = true;
		ss.pusher = NULL;
	}
	/* --rotate: the last interval, to the detach. */
	if (ss.rotation) {
		if (rotation_rotate(ss.rotation, end, prof->start_wall_ns + prof->duration_ns, true))
			ss.write_failed = true;
		ss.rotation = NULL;
	}
	memcpy(st->unwinds, ss.coll.unwinds, sizeof(st->unwinds));
	st->tables.built = ss.tables.built;
	st->tables.shared = ss.tables.shared;
	st->tables.empty = ss.tables.empty;
	st->tables.no_room = ss.tables.no_room;
	st->tables.rows = ss.tables.rows_used;
	st->tables.build_ns = ss.tables.build_ns;
	st->tables.bytes = unwind_tables_bytes(&ss.tables);
	st->tables.proc_bytes = sampler_proc_maps_bytes(ss.sampler);
	runtimes_stats(&ss.runtimes, st);
out:
	if (ss.rotation)
		series_release(&ss.rotation->series);
	if (ss.pusher)
		pusher_stop(ss.pusher, &st->push);
	*write_failed = ss.write_failed;
	server_stop(ss.server);
	/* Python's namer reads the program's ring: stopped before the program goes. */
	runtimes_free(&ss.runtimes);
	sampler_free(ss.sampler);
	sideband_free(ss.sideband);
	collector_release(&ss.coll);
	symbolizer_release(&ss.sym);
	unwind_tables_release(&ss.tables);
	if (!err)
		debug("timing: detached and symbols freed %.1f ms after %s", (now_ns() - stop_ns) / 1e6,
		      stop_signal ? "the stop signal" : "sampling ended");
	return err;
}

int record(const struct options *o)
{
	struct sampler_stats st = { 0 };
	struct output_file *out;
	struct profile prof;
	int cgroup_fd = -1, rc = EXIT_RUNTIME;
	bool write_failed = false;
	size_t i;

	verbose = o->verbose;
	if (check_machine(o) || !(out = open_outputs(o)))
		return EXIT_RUNTIME;
	if (o->cgroup_path) {
		cgroup_fd = open(o->cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgroup_fd < 0)
			error("cannot open cgroup '%s': %s; give an existing cgroup v2 directory",
			      o->cgroup_path, strerror(errno));
	}
	libbpf_set_print(libbpf_print);
	catch_signals();
	profile_init(&prof);
	if ((!o->cgroup_path || cgroup_fd >= 0) &&
	    !profile_machine(o, cgroup_fd, &prof, &st, &write_failed)) {
		/* --rotate: every file is written already. */
		rc = write_failed || (!o->rotate && write_outputs(o, out, &prof)) ? EXIT_RUNTIME : 0;
		writing = 0;
		debug("timing: outputs written %.1f ms after %s", (now_ns() - stop_ns) / 1e6,
		      stop_signal ? "the stop signal" : "sampling ended");
		summarize(o, &prof, &st, prof.duration_ns / 1e9);
	}
	/* Outputs already in place are untouched; the rest lose their temporary files. */
	for (i = 0; i < o->noutputs; i++)
		output_abort(&out[i]);
	free(out);
	sampler_stats_release(&st);
	profile_release(&prof);
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	return rc;
}
