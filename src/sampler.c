// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The sampler's lifetime: open the program, give it its settings and map
 * sizes, load it (without the walk if this kernel cannot), fill its
 * filters, attach the trackers, then the perf events; detach and free.
 * Draining is sampler_drain.c's (the last one too, after sampler_stop's detach),
 * the ring buffer sampler_ring.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpfprof/kernel_btf.h"
#include "bpfprof/runtime_info.h"
#include "sampler_internal.h"

/*
 * A runtime's ring of new stacks, read every 5 ms (runtime_shared.c's
 * namer): some 250 stacks of 1 KiB between two reads; more are counted
 * as not sent and named at the next drain. Mapped by us twice over (the
 * ring's data is), so its size counts twice in our RSS.
 */
#define NOTICES_BYTES (256u << 10)

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
			    unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group, flags);
}

/* The file at path mapped read-only, its size in *len; MAP_FAILED if it cannot be. */
static char *map_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *m = MAP_FAILED;

	if (fd < 0)
		return MAP_FAILED;
	if (!fstat(fd, &st) && st.st_size > 0) {
		*len = st.st_size;
		m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	}
	close(fd);
	return m;
}

/*
 * The distance from a CPU's run queue to its preempt count, both per-CPU
 * variables: their offsets in the kernel BTF's per-CPU section, read in
 * one pass over its bytes (kernel_btf.h); a --btf file that is not raw BTF
 * (an ELF's .BTF) is parsed by libbpf. 0 if unknown.
 */
static int64_t preempt_count_from_rq(const char *btf_path)
{
	static const char *const names[] = { "runqueues", "__preempt_count" };
	int64_t off[2] = { -1, -1 };
	const struct btf_var_secinfo *v;
	const struct btf_type *sec;
	struct btf *btf;
	size_t len;
	char *raw;
	int id, i;

	/* Mapped where the kernel allows it (vmlinux's since 6.16): no copy, no memory of ours. */
	if ((raw = map_file(btf_path ? btf_path : "/sys/kernel/btf/vmlinux", &len)) != MAP_FAILED) {
		i = kernel_btf_percpu_offsets(raw, len, names, off, 2);
		munmap(raw, len);
		if (!i)
			return off[0] >= 0 && off[1] >= 0 ? off[1] - off[0] : 0;
	} else if (!read_file(btf_path ? btf_path : "/sys/kernel/btf/vmlinux", &raw, &len)) {
		i = kernel_btf_percpu_offsets(raw, len, names, off, 2);
		free(raw);
		if (!i)
			return off[0] >= 0 && off[1] >= 0 ? off[1] - off[0] : 0;
	}
	if (!btf_path || !(btf = btf__parse(btf_path, NULL)))
		return 0;
	id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	sec = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (i = 0, v = sec ? btf_var_secinfos(sec) : NULL; sec && i < btf_vlen(sec); i++, v++) {
		const char *name = btf__name_by_offset(btf, btf__type_by_id(btf, v->type)->name_off);

		if (!strcmp(name, names[0]))
			off[0] = v->offset;
		else if (!strcmp(name, names[1]))
			off[1] = v->offset;
	}
	btf__free(btf);
	return off[0] >= 0 && off[1] >= 0 ? off[1] - off[0] : 0;
}

/* Settings ---------------------------------------------------------------- */

static uint32_t round_pow2(uint32_t n)
{
	uint32_t r = 1;

	while (r < n)
		r <<= 1;
	return r;
}

/*
 * The program's settings (bpf_settings.h): those the options ask for as
 * settings.c derived them, and what only the sampler knows, here alone.
 * cfg->bpf.cfi_unwind is the walk as loaded (off where this kernel cannot).
 */
static struct bpf_settings bpf_settings_of(const struct sampler_config *cfg)
{
	struct bpf_settings b = cfg->bpf;

	b.filter_tgids = cfg->ntgids > 0;
	b.filter_pids = cfg->npids > 0;
	b.filter_cgroup = cfg->cgroup_fd >= 0;
	/* A runtime's processes are found by their mappings, which only the walk reads. */
	if (!b.cfi_unwind)
		b.runtime_frames = 0;
	b.preempt_count_from_rq = preempt_count_from_rq(cfg->btf_path);
	return b;
}

/* A runtime's map NAME_WHAT in the program (its module's: NAME_files...), or NULL. */
static struct bpf_map *runtime_map(const struct sampler *s, const struct runtime_info *r,
				   const char *what)
{
	char name[64];

	snprintf(name, sizeof(name), "%s_%s", r->name, what);
	return bpf_object__find_map_by_name(s->skel->obj, name);
}

/* Each runtime's ring of notices: its size if its frames are read, else a page. */
static int size_notices(struct sampler *s)
{
	struct bpf_map *m;
	uint32_t i;
	int err;

	for (i = 0; i < runtime_info_count(); i++) {
		const struct runtime_info *r = runtime_info_at(i);

		if (!(m = runtime_map(s, r, "notices")))
			return -ENOENT;
		err = bpf_map__set_max_entries(m, s->runtimes_on & 1u << r->kind
						   ? NOTICES_BYTES : (uint32_t)getpagesize());
		if (err)
			return err;
	}
	return 0;
}

static int configure(struct sampler *s, const struct sampler_config *cfg)
{
	struct profile_bpf *skel = s->skel;
	struct bpf_map *stacks[] = { skel->maps.stacks0, skel->maps.stacks1 };
	struct bpf_map *counts[] = { skel->maps.counts0, skel->maps.counts1 };
	size_t i;
	int err;

	skel->rodata->settings = bpf_settings_of(cfg);
	bpf_program__set_autoload(skel->progs.on_switch, cfg->off_cpu);
	sampler_walks_held(skel);
	s->walking = skel->rodata->settings.cfi_unwind;
	s->runtimes_on = skel->rodata->settings.runtime_frames;
	/* Without the walk, its maps are left at their smallest. */
	if ((err = bpf_map__set_max_entries(skel->maps.ustacks0,
					    cfg->bpf.cfi_unwind ? cfg->stack_storage_size : 1)) ||
	    (err = bpf_map__set_max_entries(skel->maps.ustacks1,
					    cfg->bpf.cfi_unwind ? cfg->stack_storage_size : 1)) ||
	    (err = bpf_map__set_max_entries(skel->maps.interp_stacks0,
					    s->runtimes_on ? cfg->stack_storage_size : 1)) ||
	    (err = bpf_map__set_max_entries(skel->maps.interp_stacks1,
					    s->runtimes_on ? cfg->stack_storage_size : 1)) ||
	    (err = size_notices(s)))
		return err;
	for (i = 0; i < 2; i++) {
		if ((err = bpf_map__set_max_entries(stacks[i], cfg->stack_storage_size)) ||
		    (err = bpf_map__set_max_entries(counts[i], cfg->max_stacks)))
			return err;
	}
	if ((err = bpf_map__set_max_entries(skel->maps.fallback, cfg->ring_buffer_bytes)))
		return err;
	if ((err = bpf_map__set_max_entries(skel->maps.tgid_filter, cfg->ntgids ? cfg->ntgids : 1)) ||
	    (err = bpf_map__set_max_entries(skel->maps.pid_filter, cfg->npids ? cfg->npids : 1)))
		return err;
	/* Stack ids are bucket indices: at most the power of two above the size. */
	s->nr_slots = round_pow2(cfg->stack_storage_size);
	return 0;
}

static int fill_filters(struct sampler *s, const struct sampler_config *cfg)
{
	__u8 one = 1;
	__u32 zero = 0;
	size_t i;
	int err;

	for (i = 0; i < cfg->ntgids; i++)
		if ((err = bpf_map__update_elem(s->skel->maps.tgid_filter, &cfg->tgids[i],
						sizeof(__u32), &one, 1, BPF_ANY)))
			return err;
	for (i = 0; i < cfg->npids; i++)
		if ((err = bpf_map__update_elem(s->skel->maps.pid_filter, &cfg->pids[i],
						sizeof(__u32), &one, 1, BPF_ANY)))
			return err;
	if (cfg->cgroup_fd >= 0) {
		__u32 fd = cfg->cgroup_fd;

		if ((err = bpf_map__update_elem(s->skel->maps.cgroup_filter, &zero, sizeof(zero), &fd,
						sizeof(fd), BPF_ANY)))
			return err;
	}
	return 0;
}

/*
 * First the generation counters (and with the walk, what reads new
 * processes' mappings): whoever tracks processes after us must not miss one.
 */
static int attach_trackers(struct sampler *s)
{
	struct bpf_program *trackers[] = { s->skel->progs.on_exec, s->skel->progs.on_fork };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(trackers); i++) {
		struct bpf_link *link = bpf_program__attach(trackers[i]);

		if (!link) {
			int err = -errno;

			error("cannot attach the BPF program %s: %s", bpf_program__name(trackers[i]),
			      strerror(-err));
			return err;
		}
		s->links[s->nr_links++] = link;
	}
	return 0;
}

/*
 * One CPU-clock event per CPU, opened disabled: a refusal shows before
 * anything else starts; sampler_start() attaches the program and enables them.
 */
static int open_events(struct sampler *s)
{
	size_t i;

	s->event_fds = xmalloc(s->ncpus * sizeof(*s->event_fds));
	for (i = 0; i < s->ncpus; i++)
		s->event_fds[i] = -1;
	for (i = 0; i < s->ncpus; i++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.size = sizeof(attr),
			.freq = 1,
			.sample_freq = s->frequency,
			.disabled = 1,
		};

		s->event_fds[i] = perf_event_open(&attr, -1, s->cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		if (s->event_fds[i] < 0) {
			int err = -errno;

			error("cannot open a cpu-clock perf event on CPU %d: %s%s", s->cpus[i],
			      strerror(errno),
			      errno == EACCES || errno == EPERM
				      ? "; the kernel refuses perf events to this process (a seccomp "
					"filter, a security module, a container): run bpfprof where they "
					"are allowed"
				      : "");
			return err;
		}
	}
	return 0;
}

int sampler_start(struct sampler *s)
{
	size_t i;

	sampler_walks_start(s);
	if (s->off_cpu) {
		struct bpf_link *link = bpf_program__attach(s->skel->progs.on_switch);

		if (!link) {
			int err = -errno;

			error("cannot attach the BPF program to the scheduler's switch: %s",
			      strerror(-err));
			return err;
		}
		s->links[s->nr_links++] = link;
	}
	for (i = 0; i < s->ncpus && s->event_fds; i++) {
		struct bpf_link *link;
		int err;

		/* Attaching enables the event. */
		link = bpf_program__attach_perf_event(s->skel->progs.on_sample, s->event_fds[i]);
		if (!link) {
			err = -errno;
			error("cannot attach the BPF program to CPU %d: %s", s->cpus[i], strerror(-err));
			return err;
		}
		/* The link owns the perf fd from here on. */
		s->links[s->nr_links++] = link;
		s->event_fds[i] = -1;
	}
	return 0;
}

/* Detaches every program (the perf events' links own their fds). */
static void sampler_detach(struct sampler *s)
{
	size_t i;

	for (i = 0; i < s->nr_links; i++)
		bpf_link__destroy(s->links[i]);
	s->nr_links = 0;
}

/* Stopping is the sampler's: detach here, then the drain module reads the sets a last time. */
int sampler_stop(struct sampler *s)
{
	if (s->stopped)
		return 0;
	s->stopped = true;
	sampler_detach(s);
	return sampler_drain_last(s);
}

/* Accessors --------------------------------------------------------------- */

void sampler_stats(const struct sampler *s, struct sampler_stats *out)
{
	*out = s->stats;
	out->walking = s->walking;
	out->runtimes_on = s->runtimes_on;
	out->recorded_per_cpu = xmalloc(s->nr_cpus * sizeof(uint64_t));
	memcpy(out->recorded_per_cpu, s->stats.recorded_per_cpu, s->nr_cpus * sizeof(uint64_t));
}

void sampler_table_maps(struct sampler *s, int *rows_fd, int *files_fd)
{
	*rows_fd = s->walking ? bpf_map__fd(s->skel->maps.unwind_rows) : -1;
	*files_fd = s->walking ? bpf_map__fd(s->skel->maps.unwind_files) : -1;
}

int sampler_set_mappings(struct sampler *s, uint32_t tgid, uint32_t gen,
			 const struct proc_map *maps, size_t nr)
{
	struct proc_mappings *m;
	size_t i;
	int err;

	if (!s->walking)
		return 0;
	m = xcalloc(1, sizeof(*m));
	m->gen = gen;
	for (i = 0; i < nr && m->nr < UNWIND_MAX_MAPPINGS; i++) {
		struct exec_mapping *e = &m->maps[m->nr++];

		e->start = maps[i].start;
		e->end = maps[i].end;
		/* As the kernel counts exec_vm, so the program need not read them again. */
		m->exec_pages += (e->end - e->start) >> 12;
		if (maps[i].path[0] == '/') {
			e->offset = maps[i].offset;
			e->file.ino = maps[i].inode;
			e->file.dev = maps[i].dev_major << 20 | maps[i].dev_minor;
		} else {
			/* The vDSO's table is under (0, 0); other code with no file has none. */
			e->file.dev = strcmp(maps[i].path, "[vdso]") ? UNWIND_ANON_DEV : 0;
		}
	}
	/* What the program read since it started is newer than /proc's: kept. */
	err = bpf_map_update_elem(bpf_map__fd(s->skel->maps.proc_maps), &tgid, m, BPF_NOEXIST);
	free(m);
	return err == -EEXIST ? 0 : err;
}

int sampler_runtime_maps(struct sampler *s, const struct runtime_info *r, struct runtime_maps *out)
{
	struct bpf_map *files = runtime_map(s, r, "files"), *procs = runtime_map(s, r, "procs");
	struct bpf_map *notices = runtime_map(s, r, "notices");
	bool on = s->runtimes_on & 1u << r->kind;

	*out = (struct runtime_maps){ -1, -1, -1, -1, NULL, r };
	if (!files || !procs || !notices)
		return -ENOENT;
	if (on) {
		out->files = bpf_map__fd(files);
		out->procs = bpf_map__fd(procs);
		out->mappings = bpf_map__fd(s->skel->maps.proc_maps);
		out->notices = bpf_map__fd(notices);
		out->sampler = s;
	}
	return 0;
}

uint64_t sampler_proc_maps_bytes(struct sampler *s)
{
	int fd = bpf_map__fd(s->skel->maps.proc_maps);
	__u32 key, next;
	uint64_t n = 0;
	int err;

	if (!s->walking)
		return 0;
	for (err = bpf_map_get_next_key(fd, NULL, &next); !err;
	     err = bpf_map_get_next_key(fd, &key, &next)) {
		n++;
		key = next;
	}
	return n * sizeof(struct proc_mappings);
}

uint32_t sampler_process_gen(struct sampler *s, uint32_t tgid)
{
	__u32 gen = 0;

	if (bpf_map__lookup_elem(s->skel->maps.proc_gen, &tgid, sizeof(tgid), &gen, sizeof(gen), 0))
		return 0;
	return gen;
}

void sampler_stats_release(struct sampler_stats *st)
{
	free(st->recorded_per_cpu);
	st->recorded_per_cpu = NULL;
}

/* Lifetime ---------------------------------------------------------------- */

/* Opens, sizes and loads the program, walking stacks or not. */
static int load(struct sampler *s, const struct sampler_config *cfg,
		const struct bpf_object_open_opts *opts, bool walk)
{
	struct sampler_config c = *cfg;
	int err;

	c.bpf.cfi_unwind = walk;
	s->skel = profile_bpf__open_opts(opts);
	if (!s->skel) {
		err = -errno;
		error("cannot open the BPF program: %s", strerror(-err));
		return err;
	}
	if ((err = configure(s, &c))) {
		error("cannot size the BPF maps: %s", strerror(-err));
		return err;
	}
	sampler_stacks_init(s);
	return profile_bpf__load(s->skel);
}

/*
 * The verifier gives up (EAGAIN) whenever a signal is pending, SIGSTOP too
 * (Ctrl-Z, a debugger, a stream of stops and continues): libbpf tries a
 * program 5 times, then the object is spent, so it is opened again, a tenth
 * of a second later, for up to LOAD_RETRY_S seconds.
 */
#define LOAD_RETRY_S 5
static int load_retrying(struct sampler *s, const struct sampler_config *cfg,
			 const struct bpf_object_open_opts *opts, bool walk)
{
	uint64_t start = now_ns();
	const struct timespec pause = { .tv_nsec = 100 * 1000 * 1000 };
	int err;

	while ((err = load(s, cfg, opts, walk)) == -EAGAIN &&
	       now_ns() - start < LOAD_RETRY_S * 1000000000ULL) {
		debug("loading the BPF program: the verifier was cut short by a signal; again");
		profile_bpf__destroy(s->skel);
		s->skel = NULL;
		nanosleep(&pause, NULL);
	}
	return err;
}

bool sampler_walks(const struct sampler *s)
{
	return s->walking;
}

int sampler_open(struct sampler **out, const struct sampler_config *cfg)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = cfg->btf_path);
	struct sampler *s = xcalloc(1, sizeof(*s));
	int err;

	*out = s;
	s->on_sample = cfg->on_sample;
	s->before_read = cfg->before_read;
	s->on_table_request = cfg->on_table_request;
	s->ctx = cfg->ctx;
	s->btf_path = cfg->btf_path;
	s->nr_cpus = libbpf_num_possible_cpus();
	if (s->nr_cpus <= 0) {
		error("cannot count the possible CPUs: %s", strerror(-s->nr_cpus));
		return s->nr_cpus ? s->nr_cpus : -EINVAL;
	}
	s->percpu = xcalloc(s->nr_cpus, sizeof(*s->percpu));
	s->stats.recorded_per_cpu = xcalloc(s->nr_cpus, sizeof(uint64_t));
	s->stats.nr_cpus = s->nr_cpus;
	s->keys = xmalloc(BATCH * sizeof(*s->keys));
	s->values = xmalloc(BATCH * sizeof(*s->values));
	if (cfg->bpf.cfi_unwind) {
		s->walk_keys = xmalloc(BATCH * sizeof(*s->walk_keys));
		/* Room for a batch of walked stacks, or of the larger interpreter stacks. */
		s->walk_ips = xmalloc(BATCH * sizeof(struct interp_stack));
	}

	err = load_retrying(s, cfg, &opts, cfg->bpf.cfi_unwind);
	if (err && err != -EAGAIN && cfg->bpf.cfi_unwind) {
		/* Without the walk it may load: then the walk is what this kernel lacks. */
		profile_bpf__destroy(s->skel);
		s->skel = NULL;
		if (!(err = load_retrying(s, cfg, &opts, false)))
			warning("this kernel cannot walk stacks with unwind tables (it needs BPF "
				"iterators over a task's VMAs and BPF task work, Linux 6.18): user "
				"stacks by frame pointers (--unwind fp); -v shows why");
	}
	if (err) {
		if (cfg->btf_path && err != -EPERM)
			error("cannot load the BPF program with the BTF in '%s': %s; give this "
			      "kernel's BTF (-v shows libbpf's log)", cfg->btf_path, strerror(-err));
		else if (err == -EAGAIN)
			error("cannot load the BPF program: signals cut the verifier short for %d s "
			      "(stopped and continued while loading?); run bpfprof again", LOAD_RETRY_S);
		else
			error("cannot load the BPF program: %s%s", strerror(-err),
			      err == -EPERM ? "; the kernel refuses bpf() to this process (a seccomp filter, a "
				      "security module, a container): run bpfprof where BPF is allowed"
				    : "; -v shows the verifier's log");
		return err;
	}
	if ((err = fill_filters(s, cfg))) {
		error("cannot fill the BPF filter maps: %s", strerror(-err));
		return err;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.fallback), sampler_on_record, s, NULL);
	if (!s->rb || (s->walking && ring_buffer__add(s->rb, bpf_map__fd(s->skel->maps.table_requests),
						    sampler_on_table_request, s))) {
		err = -errno;
		error("cannot open the BPF ring buffer: %s", strerror(-err));
		return err;
	}
	s->cpus = cfg->cpus;
	s->ncpus = cfg->ncpus;
	s->frequency = cfg->frequency;
	s->off_cpu = cfg->off_cpu;
	/* A perf event per CPU, the two trackers, the switch. */
	s->links = xcalloc(cfg->ncpus + 3, sizeof(*s->links));
	if (cfg->cpu_samples && (err = open_events(s)))
		return err;
	return attach_trackers(s);
}

void sampler_free(struct sampler *s)
{
	unsigned i;

	if (!s)
		return;
	sampler_detach(s);
	for (i = 0; s->event_fds && i < s->ncpus; i++)
		if (s->event_fds[i] >= 0)
			close(s->event_fds[i]);
	free(s->event_fds);
	free(s->links);
	ring_buffer__free(s->rb);
	sampler_walks_release(s);
	profile_bpf__destroy(s->skel);
	sampler_stacks_release(s);
	free(s->keys);
	free(s->values);
	free(s->walk_keys);
	free(s->walk_ips);
	free(s->percpu);
	free(s->stats.recorded_per_cpu);
	free(s);
}
