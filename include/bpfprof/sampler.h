/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The BPF side seen from userspace: open, configure, load and attach the
 * program on one CPU-clock perf event per CPU; drain its maps; detach.
 * Hands out raw samples (ids and instruction pointers); knows nothing of
 * symbols or output.
 *
 * Draining: the program writes into map set active_set. sampler_drain()
 * flips it, waits until no program can still be writing the old set (an
 * RCU grace period via membarrier), then reads and clears the old set. So a
 * sample is read exactly once, and the per-CPU statistics say how many
 * each set took, which every drain checks.
 */
#ifndef BPFPROF_SAMPLER_H
#define BPFPROF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "bpfprof/bpf_settings.h"
#include "bpfprof/procs.h"
#include "bpfprof/sample.h"
#include "bpfprof/unwind.h"

struct raw_stack {
	const uint64_t *ips;	/* leaf first; borrowed for the callback's duration */
	uint32_t n;
	/*
	 * Equal keys mean the same stack, from one drain to the next (kernel
	 * stacks: for any process; user stacks: within one process). A key is
	 * never used again for another stack. 0: no key.
	 */
	uint64_t cache_key;
};

/* --unwind dwarf: what a user stack is unwound from. */
struct raw_user_state {
	uint64_t ip, sp, bp;
	const uint8_t *stack;	/* stack_bytes copied from sp up; borrowed */
	uint32_t stack_bytes;
};

/* A sample's interpreter frames, newest first (interp.h). */
struct raw_interp {
	const struct interp_frame *frames;	/* borrowed */
	uint32_t n;			/* 0: none */
	uint32_t end;			/* enum interp_walk_end */
	uint32_t runtime;		/* enum runtime_kind: whose frames */
	uint32_t state;			/* the runtime's state at the sample (interp_stack.state) */
};

struct raw_sample {
	uint32_t tgid, pid;
	uint32_t gen;		/* the process's generation: which of its images */
	uint64_t cgroup_id;
	char comm[BPFPROF_COMM_LEN];
	struct raw_stack kstack, ustack;
	const struct raw_user_state *user;	/* non-NULL: unwind this, ustack is empty */
	uint32_t walk;		/* --unwind auto: how ustack was walked (unwind_row.h's WALK_*) */
	struct raw_interp interp;
	uint32_t state;		/* enum thread_state: STATE_RUNNING, a sample; else off-CPU */
	uint64_t count;		/* samples; off-CPU: nanoseconds */
};

typedef void sample_fn(void *ctx, const struct raw_sample *s);

struct sampler_config {
	/*
	 * The program's settings as the options ask (settings.c): the sampler
	 * adds the filters' flags and what this kernel allows (the walk may be
	 * off where it cannot load).
	 */
	struct bpf_settings bpf;
	uint32_t frequency;
	const int *cpus;
	size_t ncpus;
	const uint32_t *tgids;	/* -p */
	size_t ntgids;
	const uint32_t *pids;	/* -t */
	size_t npids;
	int cgroup_fd;		/* --cgroup directory, or -1 */
	bool cpu_samples;	/* a CPU-clock event per CPU at frequency */
	bool off_cpu;		/* follow threads as they leave the CPU and come back */
	uint32_t stack_storage_size, max_stacks;
	uint32_t ring_buffer_bytes;	/* a power of two, at least a page */
	const char *btf_path;	/* NULL: the kernel's own */
	sample_fn *on_sample;	/* receives every sample, from drains and the ring buffer */
	/* Called when a drain has flipped the sets, before their samples are handed out. */
	void (*before_read)(void *ctx);
	/* --unwind auto: the walk met a file with no table. */
	void (*on_table_request)(void *ctx, const struct table_request *r);
	void *ctx;
};

struct sampler_stats {
	uint64_t total[STAT_MAX];	/* summed over CPUs */
	uint64_t *recorded_per_cpu;	/* [possible CPUs]: user + kernel mode samples */
	int nr_cpus;			/* possible CPUs */
	uint64_t drained[2];		/* counts read from each set, all drains */
	uint64_t drained_off_ns[2];	/* off-CPU nanoseconds read from each set */
	uint64_t received;		/* ring buffer records read */
	uint64_t received_off_ns;	/* off-CPU nanoseconds sent whole and read */
	uint64_t drains;
	uint64_t early_drains;		/* of them, asked for by a counts map half full */
	uint64_t mismatches;		/* drains whose counts did not match the stats */
	bool walking;			/* user stacks were walked with unwind tables */
	uint32_t runtimes_on;		/* bit 1 << a runtime's id: its processes' frames were read */
};

struct sampler;
struct runtime_info;

/*
 * Open, load, and attach what counts processes' generations; sampling
 * starts with sampler_start(). cfg->cpus must outlive the sampler. On error
 * these return a negative errno, having said why.
 */
int sampler_open(struct sampler **out, const struct sampler_config *cfg);
int sampler_start(struct sampler *s);
/* Waits up to timeout_ms for ring buffer records and hands them out. */
int sampler_poll(struct sampler *s, int timeout_ms);
/* An epoll fd that is readable when sampler_poll() has records to hand out. */
int sampler_epoll_fd(const struct sampler *s);
/* Flips the map set and hands out what the old one holds. */
int sampler_drain(struct sampler *s);
/* A counts map is half full since its last drain: drain now, before the period ends. */
bool sampler_drain_soon(const struct sampler *s);
/* Detaches every perf event, then hands out everything left. */
int sampler_stop(struct sampler *s);
/* The program's counters read again between drains (progress, /metrics). 0 or -errno. */
int sampler_read_stats(struct sampler *s);
/* Statistics as of the last drain or read; out->recorded_per_cpu is a copy. */
void sampler_stats(const struct sampler *s, struct sampler_stats *out);
void sampler_stats_release(struct sampler_stats *st);
/* Whether the program walks user stacks with unwind tables (--unwind auto, if the kernel can). */
bool sampler_walks(const struct sampler *s);
/* --unwind auto: the maps the unwind tables go into (unwind_tables.h); -1s without it. */
void sampler_table_maps(struct sampler *s, int *rows_fd, int *files_fd);
/*
 * --unwind auto: a process running at start, its executable mappings as
 * /proc showed them (sorted), unless the program has read them since.
 */
int sampler_set_mappings(struct sampler *s, uint32_t tgid, uint32_t gen,
			 const struct proc_map *maps, size_t nr);
/* What a runtime's module is given of the program: its maps, and its walk to load. */
struct runtime_maps {
	int files, procs, mappings, notices;	/* fds; -1 when its frames are not read */
	struct sampler *sampler;		/* for sampler_runtime_walk; NULL likewise */
	const struct runtime_info *info;
};

/*
 * Runtime r's maps (its module's: NAME_files, NAME_procs, NAME_notices)
 * and the processes' mappings. -ENOENT: the program has no such maps (a
 * runtime without its BPF side).
 */
int sampler_runtime_maps(struct sampler *s, const struct runtime_info *r, struct runtime_maps *out);
/*
 * Runtime r's walk (NAME_at_sample, and NAME_at_switch with --off-cpu)
 * loaded and handed samples, if not yet: before the program is told of
 * the runtime's first file. Before sampler_start, only noted: the walks
 * asked for by then are loaded together as it starts (and a failure then
 * said there). Safe from any thread; 0 or a negative errno.
 */
int sampler_runtime_walk(struct sampler *s, const struct runtime_info *r);
/* --unwind auto: the bytes the processes' mappings take in the kernel now. */
uint64_t sampler_proc_maps_bytes(struct sampler *s);
/* A process's generation as the BPF program counts it (0 if it never forked or exec'd since). */
uint32_t sampler_process_gen(struct sampler *s, uint32_t tgid);

/* Detaches (if not stopped) and frees; NULL is fine. */
void sampler_free(struct sampler *s);

#endif
