/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What every runtime (runtime.h) keeps the same way, whatever its frames:
 *
 *   namer      the BPF program's notices of new stacks, taken every
 *              NAMER_MS on a thread of the runtime's own, so that a process
 *              that lives 150 ms is named while it lives, even while the
 *              main thread spends a drain symbolizing
 *   files      the files holding the runtime (an interpreter, a library),
 *              by the kernel's identity of each, with what the runtime
 *              found in it
 *   claims     a process mapping such a file told to the program: at once
 *              for the processes whose mappings it read before the file
 *              was known, else when the symbolizer sees the mapping
 *   procs      per tgid, what the runtime keeps of a process (its names),
 *              made anew at an exec, forgotten one drain after it exits
 *
 * None locks: the runtime holds its own lock around each call, the lock
 * its namer takes too.
 */
#ifndef BPFPROF_RUNTIME_SHARED_H
#define BPFPROF_RUNTIME_SHARED_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpf/libbpf.h>

struct profile;
struct raw_interp;
struct raw_sample;

#include "bpfprof/intern.h"
#include "bpfprof/sampler.h"
#include "bpfprof/unwind_row.h"
#include "bpfprof/util.h"

/* New stacks are read at most this often, beside the drains (at once when they come alone). */
#define NAMER_MS 5

struct namer {
	struct ring_buffer *ring;	/* NULL: notices not read (named at each drain only) */
	pthread_t thread;
	bool running;
	bool stopping;			/* namer_stop to the thread: atomic loads and stores */
	pthread_mutex_t *lock;
	int epoll_fd, stop_fd;		/* the thread waits on the ring and on stop_fd (an eventfd) */
};

/*
 * Notices from the ring at notices_fd, each to on_notice(ctx, ...) under
 * lock, on a thread woken by them (NAMER_MS apart at most). what (its frames, capitalised) names the
 * frames in the warning when that cannot be (named at each drain then).
 */
void namer_start(struct namer *n, int notices_fd, ring_buffer_sample_fn on_notice, void *ctx,
		 pthread_mutex_t *lock, const char *what);
/* Every notice sent so far, taken now (before a drain); takes the lock. */
void namer_take(struct namer *n);
void namer_stop(struct namer *n);

/* A runtime's files: a value of size bytes each, by file identity. */
struct runtime_files {
	size_t size;
	struct unwind_file_key *keys;
	uint8_t *values;
	uint32_t nr, keys_alloc;
	size_t values_alloc;
	struct itab index;
};

/* The value kept for file key, or NULL. */
void *runtime_files_find(const struct runtime_files *t, const struct unwind_file_key *key);
/* value (t->size bytes) kept for file key, new: its copy. */
void *runtime_files_add(struct runtime_files *t, const struct unwind_file_key *key,
		       const void *value);
void runtime_files_release(struct runtime_files *t);

/*
 * What the program is told of a process that maps file (a value of a
 * runtime_files) at start, file offset offset, in generation gen: written
 * into proc (the runtime's BPF process value).
 */
typedef void runtime_proc_fn(const void *file, uint64_t start, uint64_t offset, uint32_t gen,
			     void *proc);

/* Largest BPF process value a runtime may have. */
#define RUNTIME_PROC_MAX 256

/*
 * A file just found to be the runtime's: every process whose mappings the
 * program read (maps_fd) and that maps it, told to procs_fd (what the
 * program read of the process since is newer: kept).
 */
void runtime_claim_mapped(int maps_fd, int procs_fd, const struct unwind_file_key *key,
			  const void *file, runtime_proc_fn *make, size_t proc_size);
/* Process tgid, generation gen, maps file at start: told to procs_fd (kept if there). */
void runtime_claim(int procs_fd, uint32_t tgid, const void *file, uint64_t start,
		   uint64_t offset, uint32_t gen, runtime_proc_fn *make, size_t proc_size);

/* The first member of a runtime's process state. */
struct runtime_proc {
	uint32_t tgid, gen;
	bool gone;		/* found exited at the last drain: forgotten at the next */
};

/* len bytes at addr of process ctx (a struct runtime_proc *): 0, or a negative errno. */
int runtime_proc_read(void *ctx, uint64_t addr, void *buf, size_t len);

struct runtime_procs {
	size_t size;		/* of the runtime's process state */
	void (*release)(struct runtime_proc *p);	/* what it holds, before it is freed */
	struct runtime_proc **procs;
	uint32_t nr, alloc;
	struct itab index;
};

struct runtime_proc *runtime_procs_find(const struct runtime_procs *t, uint32_t tgid);
/*
 * The state of process tgid in generation gen; a new one (zeroed but for
 * tgid and gen, *made set) for a new process or a new generation, the
 * old one released.
 */
struct runtime_proc *runtime_procs_get(struct runtime_procs *t, uint32_t tgid, uint32_t gen,
				       bool *made);
/* After a drain: a process found gone at the drain before forgotten, the others checked. */
void runtime_procs_after_drain(struct runtime_procs *t);
void runtime_procs_release(struct runtime_procs *t);

/*
 * The state every runtime starts with (its struct's first member): the
 * program's maps for it, its namer and the lock it shares with it, its
 * files and processes. The ops below take the runtime's state as such.
 */
struct runtime_base {
	int files_fd, procs_fd, maps_fd;
	struct sampler *sampler;	/* whose walk of the runtime's frames is loaded at its first file */
	const struct runtime_info *info;
	bool walk_failed;		/* that load failed (and said so): its files are not told */
	struct namer namer;
	pthread_mutex_t lock;	/* guards the runtime's state: taken by each op and by the namer */
	uint32_t (*gen)(void *ctx, uint32_t tgid);
	void *ctx;
	struct runtime_files files;
	struct runtime_procs procs;
	runtime_proc_fn *process_of;	/* the program's view of a process mapping one of its files */
	size_t proc_value_size;		/* of that view */
	const struct runtime_desc *desc;
};

/* What a runtime is, for runtime_base_init. */
struct runtime_desc {
	const char *what;		/* its frames in warnings, capitalised */
	size_t file_size;		/* of what runtime_files keeps a file */
	size_t proc_size;		/* of its process state (struct runtime_proc first) */
	void (*release)(struct runtime_proc *p);
	runtime_proc_fn *process_of;
	size_t proc_value_size;		/* of the program's view of a process */
	ring_buffer_sample_fn on_notice;	/* ctx: the runtime's state */
	/* For the generic ops below: the runtime's own, called with its lock held. */
	bool (*file_opened)(void *rt, const struct unwind_file_key *key, int fd, const char *path,
			    const char *root);
	uint32_t runtime;		/* enum runtime_kind: the stacks merge takes */
	uint32_t (*merge)(void *rt, struct profile *p, uint32_t tgid, const struct raw_interp *rr,
			  uint32_t *frames, uint32_t n, uint32_t max);
};

/*
 * A runtime's state of state_size bytes, its runtime_base first, made for
 * the program's maps m; NULL if the program has none for it (m->files < 0).
 */
void *runtime_base_new(size_t state_size, const struct runtime_desc *k, const struct runtime_maps *m,
		       uint32_t (*gen)(void *ctx, uint32_t tgid), void *ctx);
/* b (the first member of the runtime's state) for the program's maps m. */
void runtime_base_init(struct runtime_base *b, const struct runtime_desc *k, const struct runtime_maps *m,
		       uint32_t (*gen)(void *ctx, uint32_t tgid), void *ctx);
void runtime_base_release(struct runtime_base *b);
/*
 * A file (at path) found to be the runtime's, value what runtime_files
 * keeps of it: told to the program, and the processes mapping it claimed.
 * The first loads the runtime's walk; if it cannot, none is told.
 */
void runtime_base_file_found(struct runtime_base *b, const struct unwind_file_key *key,
			     const void *value, const char *path);

/* runtime_ops (runtime.h) every runtime has alike; rt a state whose first member is a runtime_base. */
void runtime_process_maps(void *rt, uint32_t tgid, const struct unwind_file_key *key,
			  uint64_t start, uint64_t offset);
void runtime_take_notices(void *rt);
void runtime_after_drain(void *rt);
bool runtime_file_opened(void *rt, const struct unwind_file_key *key, int fd, const char *path,
			 const char *root);
uint32_t runtime_merge(void *rt, struct profile *p, const struct raw_sample *rs, uint32_t *frames,
		       uint32_t n, uint32_t max);
/* For a runtime whose locations are found again by address: nothing to renumber. */
void runtime_renumber_none(void *rt);
/* A state runtime_base_new made, whose runtime keeps nothing beyond its base: released, freed. */
void runtime_free(void *rt);

/* Merging: a native frame in no file (a JIT's code: a trace a runtime compiled). */
bool runtime_frame_anonymous(const struct profile *p, uint32_t loc);

#endif
