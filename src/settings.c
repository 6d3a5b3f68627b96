// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <string.h>

#include "bpfprof/settings.h"

/* Whole stacks through the ring buffer need more room than the fallback alone. */
#define RING_BUFFER_KIB 1024
#define RING_BUFFER_KIB_DWARF 65536

static void sampler_settings(struct sampler_config *cfg, const struct options *o, int cgroup_fd,
			     uint32_t page_size)
{
	uint32_t ring_kib = o->ring_buffer_kib ? o->ring_buffer_kib
			  : o->dwarf_unwind   ? RING_BUFFER_KIB_DWARF
					      : RING_BUFFER_KIB;
	uint32_t k;

	memset(cfg, 0, sizeof(*cfg));
	cfg->frequency = o->frequency;
	cfg->cpus = o->cpus;
	cfg->ncpus = o->ncpus;
	cfg->tgids = o->tgids;
	cfg->ntgids = o->ntgids;
	cfg->pids = o->pids;
	cfg->npids = o->npids;
	cfg->cgroup_fd = cgroup_fd;
	cfg->bpf.include_idle = o->idle;
	cfg->cpu_samples = !o->off_cpu;
	cfg->off_cpu = o->off_cpu || o->wall;
	cfg->bpf.min_block_ns = (uint64_t)o->min_block_us * 1000;
	cfg->bpf.kernel_stacks = !o->user_only;
	cfg->bpf.user_stacks = !o->kernel_only;
	cfg->stack_storage_size = o->stack_storage_size;
	cfg->max_stacks = o->max_stacks;
	/* The kernel wants at least a page. */
	cfg->ring_buffer_bytes = ring_kib << 10;
	if (cfg->ring_buffer_bytes < page_size)
		cfg->ring_buffer_bytes = page_size;
	cfg->btf_path = o->btf;
	cfg->bpf.dwarf_unwind = o->dwarf_unwind;
	/* No user stacks, nothing to walk. */
	cfg->bpf.cfi_unwind = o->cfi_unwind && !o->kernel_only;
	/* A runtime's frames are read by the CFI walk only. */
	for (k = 0; k < RUNTIME_KINDS; k++)
		if (cfg->bpf.cfi_unwind && !o->no_runtime[k])
			cfg->bpf.runtime_frames |= 1u << k;
	cfg->bpf.stack_copy_bytes = o->stack_size;
}

void settings_from_options(struct settings *s, const struct options *o, int cgroup_fd,
			   uint32_t page_size)
{
	memset(s, 0, sizeof(*s));
	sampler_settings(&s->sampler, o, cgroup_fd, page_size);
	/* The collector converts off-CPU time to the profile's unit as it goes. */
	s->kind = o->off_cpu ? PROFILE_OFF_CPU : o->wall ? PROFILE_WALL : PROFILE_CPU;
	s->frequency = o->frequency;
	s->period_ns = 1000000000ULL / o->frequency;
	s->trim_only = (o->listen || o->push || o->otlp || o->rotate) && (!o->noutputs || o->rotate);
}
