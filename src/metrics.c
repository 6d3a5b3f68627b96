// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bpfprof/metrics.h"
#include "bpfprof/push.h"
#include "bpfprof/util.h"

/* One metric without labels: its help, its type, its value. */
static void metric(struct strbuf *sb, const char *name, const char *type, const char *help,
		   double value)
{
	strbuf_addf(sb, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name, value);
}

/* bpfprof's resident memory, from /proc/self/statm (pages); 0 if unreadable. */
static double resident_bytes(void)
{
	unsigned long size, resident = 0;
	char *text;

	if (read_file("/proc/self/statm", &text, NULL))
		return 0;
	if (sscanf(text, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	free(text);
	return (double)resident * sysconf(_SC_PAGESIZE);
}

/* --push, --otlp: what each pushing sink did with its intervals, labelled sink="push" or "otlp". */
static void pushed(struct strbuf *sb, const struct session_figures *f)
{
	static const struct {
		const char *name, *type, *help;
	} m[] = {
		{ "bpfprof_intervals_sent_total", "counter", "Intervals sent and accepted, by sink." },
		{ "bpfprof_interval_retries_total", "counter",
		  "Attempts to send an interval again (no answer, or one that says try again)." },
		{ "bpfprof_intervals_refused_total", "counter",
		  "Intervals the server refused for good (not sent again), by sink." },
		{ "bpfprof_intervals_dropped_total", "counter",
		  "Intervals dropped unsent: the oldest waiting, beyond the queue's room." },
		{ "bpfprof_intervals_waiting", "gauge", "Intervals waiting to be sent, by sink." },
	};
	struct push_stats st[2];
	unsigned waiting[2], i, j;

	for (j = 0; j < f->npushers && j < 2; j++)
		push_sink_stats(f->pushers[j].sink, &st[j], &waiting[j]);
	for (i = 0; f->npushers && i < sizeof(m) / sizeof(m[0]); i++) {
		strbuf_addf(sb, "# HELP %s %s\n# TYPE %s %s\n", m[i].name, m[i].help, m[i].name,
			    m[i].type);
		for (j = 0; j < f->npushers && j < 2; j++) {
			uint64_t v[] = { st[j].sent, st[j].retries, st[j].rejected, st[j].dropped,
					 waiting[j] };

			strbuf_addf(sb, "%s{sink=\"%s\"} %llu\n", m[i].name, f->pushers[j].name,
				    (unsigned long long)v[i]);
		}
	}
}

char *metrics_text(const struct sampler_stats *st, const struct session_figures *f)
{
	static const struct {
		const char *cause;
		int stat;
	} lost[] = {
		{ "stack_collision", STAT_LOST_COLLISION },
		{ "stack_map_full", STAT_LOST_STACK_FULL },
		{ "counts_map_full", STAT_LOST_COUNTS_FULL },
		{ "ring_buffer_full", STAT_LOST_DWARF },
		{ "off_cpu_ring_buffer_full", STAT_OFF_LOST },
	};
	const uint64_t *t = st->total;
	struct rusage ru = { 0 };
	struct strbuf sb;
	size_t i;

	strbuf_init(&sb);
	metric(&sb, "bpfprof_samples_total", "counter",
	       "CPU samples recorded (of the threads followed).",
	       (double)(t[STAT_USER_MODE] + t[STAT_KERNEL_MODE]));
	metric(&sb, "bpfprof_off_cpu_waits_total", "counter",
	       "Times a followed thread came back to a CPU and its wait was counted (--off-cpu, --wall).",
	       (double)(t[STAT_OFF_COUNTED_SET0] + t[STAT_OFF_COUNTED_SET1] + t[STAT_OFF_SENT]));
	strbuf_addstr(&sb, "# HELP bpfprof_lost_samples_total Samples (or off-CPU waits) lost, by "
			   "cause.\n# TYPE bpfprof_lost_samples_total counter\n");
	for (i = 0; i < sizeof(lost) / sizeof(lost[0]); i++)
		strbuf_addf(&sb, "bpfprof_lost_samples_total{cause=\"%s\"} %llu\n", lost[i].cause,
			    (unsigned long long)t[lost[i].stat]);
	metric(&sb, "bpfprof_saved_samples_total", "counter",
	       "Samples the BPF maps could not take, carried whole through the ring buffer (not lost).",
	       (double)t[STAT_FALLBACK]);
	metric(&sb, "bpfprof_sideband_lost_records_total", "counter",
	       "Process events (mmap, exec, exit) the kernel dropped.", (double)f->sideband_lost);
	metric(&sb, "bpfprof_drains_total", "counter", "Reads of the BPF maps.", (double)st->drains);
	metric(&sb, "bpfprof_processes", "gauge", "Processes followed now.", f->processes);
	metric(&sb, "bpfprof_stacks", "gauge", "Distinct stacks in the session's profile.", f->stacks);
	metric(&sb, "bpfprof_profile_bytes", "gauge", "Memory the session's profile uses.",
	       (double)f->profile_bytes);
	getrusage(RUSAGE_SELF, &ru);
	strbuf_addf(&sb, "# HELP bpfprof_cpu_seconds_total CPU time bpfprof has used, by mode.\n"
			 "# TYPE bpfprof_cpu_seconds_total counter\n"
			 "bpfprof_cpu_seconds_total{mode=\"user\"} %.6f\n"
			 "bpfprof_cpu_seconds_total{mode=\"system\"} %.6f\n",
		    ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	metric(&sb, "bpfprof_resident_memory_bytes", "gauge", "bpfprof's resident memory.",
	       resident_bytes());
	metric(&sb, "bpfprof_start_time_seconds", "gauge",
	       "When sampling began, in seconds since the epoch.", f->start_wall_ns / 1e9);
	pushed(&sb, f);
	return strbuf_detach(&sb);
}
