/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The sampler's parts, shared by its files and no one else: sampler.c opens,
 * configures, loads and attaches the program; sampler_walks.c loads each
 * runtime's walk when it is first wanted; sampler_drain.c reads and
 * empties a map set and checks the accounting; sampler_ring.c reads the ring
 * buffer's records. The public interface is bpfprof/sampler.h.
 */
#ifndef BPFPROF_SAMPLER_INTERNAL_H
#define BPFPROF_SAMPLER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfprof/bpf_settings.h"	/* before the skeleton: its .rodata is one */
#include "bpfprof/sampler.h"
#include "bpfprof/util.h"
#include "profile.skel.h"

#define BATCH 1024

/* Where a stack id's IPs were copied, in its set's current epoch. */
struct stack_slot {
	uint32_t epoch;		/* the set's epoch when it was read; stale otherwise */
	uint32_t first;		/* into the set's ips */
	uint32_t n;
};

/*
 * One map set's stacks as read so far. They stay in the set's stack map from
 * one read to the next: a stack seen again keeps its id there, so it is
 * neither read nor named again. Only when the map fills up is it cleared,
 * and the epoch (part of every cache key) starts anew. A set that fills up
 * at every read (many new stacks a second) is churning: its stacks are
 * taken out of the map as they are read, and it starts anew every time.
 */
struct set_stacks {
	struct stack_slot *slots;	/* indexed by stack id */
	/*
	 * --unwind auto: the walked user stacks of the set's last drain, by
	 * hash, their frames in walked_ips. Apart from the stack map's epochs:
	 * they take no room there.
	 */
	struct walked_slot {
		uint64_t hash;
		struct stack_slot slot;
	} *walked;
	uint32_t nr_walked, walked_alloc;
	struct itab walked_index;
	uint64_t *walked_ips;
	size_t nr_walked_ips, walked_ips_alloc;
	/* The interpreter stacks of the set's last drain, by hash, their frames in interp_frames. */
	struct interp_slot {
		uint64_t hash;
		uint32_t first, n;
		uint8_t end, runtime;
		uint16_t state;
	} *interp;
	uint32_t nr_interp, interp_alloc;
	struct itab interp_index;
	struct interp_frame *interp_frames;
	size_t nr_interp_frames, interp_frames_alloc;
	uint32_t epoch;
	uint32_t known;			/* stacks read in this epoch */
	bool churning;
	uint64_t collisions, counted;	/* the set's collisions and counts at its last read */
	uint64_t *ips;
	size_t nr_ips, ips_alloc;
};

struct sampler {
	struct profile_bpf *skel;
	struct bpf_link **links;
	size_t nr_links;
	struct ring_buffer *rb;
	sample_fn *on_sample;
	void (*before_read)(void *ctx);
	void (*on_table_request)(void *ctx, const struct table_request *r);
	void *ctx;
	unsigned active;	/* the set the program writes to */
	uint32_t flips;		/* drains begun: active_set, whose lowest bit is active */
	bool off_cpu;		/* on_switch attached at the start */
	bool walking;		/* --unwind auto */
	uint32_t runtimes_on;	/* and these runtimes' frames (bit 1 << id) */
	const int *cpus;	/* the config's: perf events on these, at this frequency */
	size_t ncpus;
	uint32_t frequency;
	int *event_fds;		/* [ncpus], opened disabled; -1 once a link owns it */
	const char *btf_path;	/* the config's: each runtime's walk is loaded with it too */
	/* The runtimes' walks (sampler_walks.c), by mask of runtime ids: loaded, asked for. */
	struct profile_bpf *walks[RUNTIME_KINDS];	/* the objects that loaded them */
	uint32_t nr_walks, walks_loaded, walks_wanted;
	bool walks_started;	/* the perf events are attached, or about to be */
	bool stopped;
	bool drain_soon;	/* the program asked for a drain: a counts map is filling */

	/* Reading a set. */
	struct set_stacks stacks[2];
	uint32_t nr_slots;
	uint32_t epochs;		/* epochs begun so far, over both sets */
	struct sample_key *keys;
	__u64 *values;
	__u64 *walk_keys;	/* --unwind auto: a batch of walked stacks, hashes and frames */
	__u64 *walk_ips;	/* (or of interpreter stacks) */

	/* Accounting. */
	int nr_cpus;
	struct sample_stats *percpu;
	struct sampler_stats stats;
};

/*
 * sampler_walks.c, called by sampler.c: the runtimes' walks left out of
 * the load of skel (loaded later, by sampler_runtime_walk); those asked
 * for so far loaded, before the perf events are attached; freed.
 */
void sampler_walks_held(struct profile_bpf *skel);
void sampler_walks_start(struct sampler *s);
void sampler_walks_release(struct sampler *s);

/*
 * sampler_drain.c, called by sampler.c and calling nothing of it: the map
 * sets' tables of stacks read, from the first epoch; freed.
 */
void sampler_stacks_init(struct sampler *s);
void sampler_stacks_release(struct sampler *s);
/*
 * The last drain, once the programs are detached (sampler_stop): both sets
 * read and checked after the programs still running end. 0 or -errno.
 */
int sampler_drain_last(struct sampler *s);

/* sampler_ring.c: ring buffer callbacks (ctx: the sampler). */
int sampler_on_record(void *ctx, void *data, size_t size);
int sampler_on_table_request(void *ctx, void *data, size_t size);

/* Frames in a stack of at most max: up to the first zero. */
static inline uint32_t stack_depth(const uint64_t *ips, uint32_t max)
{
	uint32_t n = 0;

	while (n < max && ips[n])
		n++;
	return n;
}

#endif
