// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* What every runtime keeps the same way (runtime_shared.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <stdio.h>

#include "bpfprof/profile.h"
#include "bpfprof/runtime_shared.h"
#include "bpfprof/sampler.h"

/* The namer ------------------------------------------------------------------------ */

void namer_take(struct namer *n)
{
	if (!n->ring)
		return;
	pthread_mutex_lock(n->lock);
	ring_buffer__consume(n->ring);
	pthread_mutex_unlock(n->lock);
}

/*
 * Asleep until the program sends a notice (the first since the last read
 * wakes the ring's epoll) or namer_stop writes its eventfd; then what came
 * is named, and NAMER_MS pass before the next wait, so that a burst of new
 * stacks is read in batches. A run with nothing new costs no wakeups.
 */
static void *namer_loop(void *arg)
{
	struct namer *n = arg;
	struct timespec nap = { 0, NAMER_MS * 1000000L };
	struct epoll_event ev;

	while (!__atomic_load_n(&n->stopping, __ATOMIC_ACQUIRE)) {
		if (epoll_wait(n->epoll_fd, &ev, 1, -1) < 0 && errno != EINTR)
			break;
		if (__atomic_load_n(&n->stopping, __ATOMIC_ACQUIRE))
			break;
		namer_take(n);
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* An epoll set of the ring's own and the eventfd namer_stop wakes it with: 0 or -errno. */
static int namer_wakeups(struct namer *n)
{
	struct epoll_event ev = { .events = EPOLLIN };

	n->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	n->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (n->epoll_fd < 0 || n->stop_fd < 0)
		return -errno;
	ev.data.fd = ring_buffer__epoll_fd(n->ring);
	if (epoll_ctl(n->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return -errno;
	ev.data.fd = n->stop_fd;
	return epoll_ctl(n->epoll_fd, EPOLL_CTL_ADD, n->stop_fd, &ev) ? -errno : 0;
}

void namer_start(struct namer *n, int notices_fd, ring_buffer_sample_fn on_notice, void *ctx,
		 pthread_mutex_t *lock, const char *what)
{
	sigset_t all, old;
	int err;

	memset(n, 0, sizeof(*n));
	n->lock = lock;
	n->epoll_fd = n->stop_fd = -1;
	n->ring = ring_buffer__new(notices_fd, on_notice, ctx, NULL);
	if (n->ring && (err = namer_wakeups(n))) {
		ring_buffer__free(n->ring);
		n->ring = NULL;
		errno = -err;
	}
	if (!n->ring) {
		warning("cannot read the program's %s stacks (%s): %s frames named at each drain "
			"only, those of short processes may stay unnamed", what, strerror(errno), what);
		return;
	}
	/* Signals stay the main thread's: they end its wait for the next drain. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&n->thread, NULL, namer_loop, n);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		warning("cannot start the thread naming %s frames (%s): they are named at each "
			"drain only, those of short processes may stay unnamed", what, strerror(err));
	n->running = !err;
}

void namer_stop(struct namer *n)
{
	uint64_t one = 1;

	__atomic_store_n(&n->stopping, true, __ATOMIC_RELEASE);
	if (n->running) {
		/* An eventfd's counter takes the write: the thread wakes, sees stopping. */
		if (write(n->stop_fd, &one, sizeof(one)) != sizeof(one))
			warning("cannot wake the naming thread: %s", strerror(errno));
		pthread_join(n->thread, NULL);
	}
	n->running = false;
	ring_buffer__free(n->ring);
	n->ring = NULL;
	if (n->epoll_fd >= 0)
		close(n->epoll_fd);
	if (n->stop_fd >= 0)
		close(n->stop_fd);
	n->epoll_fd = n->stop_fd = -1;
}

/* Files ---------------------------------------------------------------------------- */

static uint64_t file_hash(const struct unwind_file_key *k)
{
	return hash_mix(k->ino, k->dev);
}

static bool file_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct unwind_file_key *a = &((const struct runtime_files *)owner)->keys[idx], *b = key;

	return a->ino == b->ino && a->dev == b->dev;
}

void *runtime_files_find(const struct runtime_files *t, const struct unwind_file_key *key)
{
	uint32_t idx = itab_find(&t->index, file_hash(key), file_eq, t, key);

	return idx == ITAB_NONE ? NULL : t->values + (size_t)idx * t->size;
}

void *runtime_files_add(struct runtime_files *t, const struct unwind_file_key *key,
		       const void *value)
{
	void *v;

	ALLOC_GROW(t->keys, t->nr + 1, t->keys_alloc);
	ALLOC_GROW(t->values, (size_t)(t->nr + 1) * t->size, t->values_alloc);
	t->keys[t->nr] = *key;
	v = t->values + (size_t)t->nr * t->size;
	memcpy(v, value, t->size);
	itab_insert(&t->index, file_hash(key), t->nr++);
	return v;
}

void runtime_files_release(struct runtime_files *t)
{
	free(t->keys);
	free(t->values);
	itab_release(&t->index);
	t->keys = NULL;
	t->values = NULL;
	t->nr = t->keys_alloc = 0;
	t->values_alloc = 0;
}

/* Claims ---------------------------------------------------------------------------- */

void runtime_claim(int procs_fd, uint32_t tgid, const void *file, uint64_t start,
		   uint64_t offset, uint32_t gen, runtime_proc_fn *make, size_t proc_size)
{
	uint8_t proc[RUNTIME_PROC_MAX] = { 0 };

	if (proc_size > sizeof(proc))
		die("a runtime's process value of %zu bytes: RUNTIME_PROC_MAX is %d", proc_size,
		    RUNTIME_PROC_MAX);
	make(file, start, offset, gen, proc);
	bpf_map_update_elem(procs_fd, &tgid, proc, BPF_NOEXIST);
}

void runtime_claim_mapped(int maps_fd, int procs_fd, const struct unwind_file_key *key,
			  const void *file, runtime_proc_fn *make, size_t proc_size)
{
	struct proc_mappings *m = xmalloc(sizeof(*m));
	__u32 tgid, next;
	uint32_t i;
	int err;

	for (err = bpf_map_get_next_key(maps_fd, NULL, &next); !err;
	     err = bpf_map_get_next_key(maps_fd, &tgid, &next)) {
		tgid = next;
		if (bpf_map_lookup_elem(maps_fd, &tgid, m))
			continue;
		for (i = 0; i < m->nr && i < UNWIND_MAX_MAPPINGS; i++) {
			const struct exec_mapping *x = &m->maps[i];

			if (x->file.ino == key->ino && x->file.dev == key->dev) {
				runtime_claim(procs_fd, tgid, file, x->start, x->offset, m->gen, make,
					      proc_size);
				break;
			}
		}
	}
	free(m);
}

/* Processes ------------------------------------------------------------------------- */

int runtime_proc_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct runtime_proc *p = ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(p->tgid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static bool proc_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct runtime_procs *)owner)->procs[idx]->tgid == *(const uint32_t *)key;
}

struct runtime_proc *runtime_procs_find(const struct runtime_procs *t, uint32_t tgid)
{
	uint32_t idx = itab_find(&t->index, hash_u64(tgid), proc_eq, t, &tgid);

	return idx == ITAB_NONE ? NULL : t->procs[idx];
}

static void free_proc(struct runtime_procs *t, struct runtime_proc *p)
{
	t->release(p);
	free(p);
}

struct runtime_proc *runtime_procs_get(struct runtime_procs *t, uint32_t tgid, uint32_t gen,
				       bool *made)
{
	uint32_t idx = itab_find(&t->index, hash_u64(tgid), proc_eq, t, &tgid);
	struct runtime_proc *p;

	*made = false;
	if (idx != ITAB_NONE && t->procs[idx]->gen == gen)
		return t->procs[idx];
	p = xcalloc(1, t->size);
	p->tgid = tgid;
	p->gen = gen;
	*made = true;
	if (idx != ITAB_NONE) {
		free_proc(t, t->procs[idx]);
		t->procs[idx] = p;
		return p;
	}
	ALLOC_GROW(t->procs, t->nr + 1, t->alloc);
	t->procs[t->nr] = p;
	itab_insert(&t->index, hash_u64(tgid), t->nr++);
	return p;
}

void runtime_procs_after_drain(struct runtime_procs *t)
{
	uint32_t i, kept = 0;

	/* Its samples up to its exit were in this drain: a process found gone before is done. */
	for (i = 0; i < t->nr; i++) {
		struct runtime_proc *p = t->procs[i];

		if (p->gone) {
			free_proc(t, p);
			continue;
		}
		p->gone = kill(p->tgid, 0) && errno == ESRCH;
		t->procs[kept++] = p;
	}
	if (kept == t->nr)
		return;
	t->nr = kept;
	itab_release(&t->index);
	for (i = 0; i < t->nr; i++)
		itab_insert(&t->index, hash_u64(t->procs[i]->tgid), i);
}

void runtime_procs_release(struct runtime_procs *t)
{
	uint32_t i;

	for (i = 0; i < t->nr; i++)
		free_proc(t, t->procs[i]);
	free(t->procs);
	itab_release(&t->index);
	t->procs = NULL;
	t->nr = t->alloc = 0;
}

/* The base every runtime starts with ----------------------------------------------- */

void runtime_base_init(struct runtime_base *b, const struct runtime_desc *k, const struct runtime_maps *m,
		       uint32_t (*gen)(void *ctx, uint32_t tgid), void *ctx)
{
	b->files_fd = m->files;
	b->procs_fd = m->procs;
	b->maps_fd = m->mappings;
	b->sampler = m->sampler;
	b->info = m->info;
	b->gen = gen;
	b->ctx = ctx;
	b->files.size = k->file_size;
	b->procs.size = k->proc_size;
	b->procs.release = k->release;
	b->process_of = k->process_of;
	b->proc_value_size = k->proc_value_size;
	b->desc = k;
	pthread_mutex_init(&b->lock, NULL);
	namer_start(&b->namer, m->notices, k->on_notice, b, &b->lock, k->what);
}

void *runtime_base_new(size_t state_size, const struct runtime_desc *k, const struct runtime_maps *m,
		       uint32_t (*gen)(void *ctx, uint32_t tgid), void *ctx)
{
	struct runtime_base *b;

	if (m->files < 0)
		return NULL;
	b = xcalloc(1, state_size);
	runtime_base_init(b, k, m, gen, ctx);
	return b;
}

void runtime_base_release(struct runtime_base *b)
{
	namer_stop(&b->namer);
	pthread_mutex_destroy(&b->lock);
	runtime_procs_release(&b->procs);
	runtime_files_release(&b->files);
}

void runtime_base_file_found(struct runtime_base *b, const struct unwind_file_key *key,
			     const void *value, const char *path)
{
	int err;

	if (b->walk_failed)
		return;
	if (b->sampler && (err = sampler_runtime_walk(b->sampler, b->info))) {
		warning("cannot load the walk of %s frames: %s; they are left out (-v shows the "
			"verifier's log)", b->desc->what, strerror(-err));
		b->walk_failed = true;
		return;
	}
	if (bpf_map_update_elem(b->files_fd, key, value, BPF_ANY))
		debug("cannot tell the program of '%s': %s", path, strerror(errno));
	runtime_files_add(&b->files, key, value);
	/* The processes whose mappings the program read before. */
	runtime_claim_mapped(b->maps_fd, b->procs_fd, key, value, b->process_of, b->proc_value_size);
}

void runtime_process_maps(void *rt, uint32_t tgid, const struct unwind_file_key *key,
			  uint64_t start, uint64_t offset)
{
	struct runtime_base *b = rt;
	uint8_t file[RUNTIME_PROC_MAX];
	const void *e;

	if (b->files.size > sizeof(file))
		die("a runtime's file value of %zu bytes: RUNTIME_PROC_MAX is %d", b->files.size,
		    RUNTIME_PROC_MAX);
	pthread_mutex_lock(&b->lock);
	e = runtime_files_find(&b->files, key);
	if (e)
		memcpy(file, e, b->files.size);
	pthread_mutex_unlock(&b->lock);
	if (e)
		runtime_claim(b->procs_fd, tgid, file, start, offset, b->gen(b->ctx, tgid),
			      b->process_of, b->proc_value_size);
}

void runtime_take_notices(void *rt)
{
	namer_take(&((struct runtime_base *)rt)->namer);
}

void runtime_after_drain(void *rt)
{
	struct runtime_base *b = rt;

	pthread_mutex_lock(&b->lock);
	runtime_procs_after_drain(&b->procs);
	pthread_mutex_unlock(&b->lock);
}

bool runtime_frame_anonymous(const struct profile *p, uint32_t loc)
{
	const struct prof_location *l = &p->locations[loc];
	const char *file;

	if (l->kind != FRAME_USER || l->nlines)
		return false;
	if (!l->mapping)
		return true;
	file = profile_str(p, p->mappings[l->mapping].file);
	return !file[0] || !strncmp(file, "[anon", 5);
}

bool runtime_file_opened(void *rt, const struct unwind_file_key *key, int fd, const char *path,
			 const char *root)
{
	struct runtime_base *b = rt;
	bool is;

	pthread_mutex_lock(&b->lock);
	is = b->desc->file_opened(rt, key, fd, path, root);
	pthread_mutex_unlock(&b->lock);
	return is;
}

uint32_t runtime_merge(void *rt, struct profile *p, const struct raw_sample *rs, uint32_t *frames,
		       uint32_t n, uint32_t max)
{
	const struct runtime_base *b = rt;

	if (!rs->interp.n || rs->interp.runtime != b->desc->runtime)
		return n;
	return b->desc->merge(rt, p, rs->tgid, &rs->interp, frames, n, max);
}

void runtime_renumber_none(void *rt)
{
	(void)rt;
}

void runtime_free(void *rt)
{
	runtime_base_release(rt);
	free(rt);
}
