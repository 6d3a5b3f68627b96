/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What a run does, derived from the options alone: the sampler's
 * configuration, the profile's kind and unit, what the collector keeps.
 * Every rule that turns options into behaviour is here, in one pure
 * function (no I/O: the checks against this machine are cli.c's), so a
 * unit test covers each (tests/unit/test_options.c).
 */
#ifndef BPFPROF_SETTINGS_H
#define BPFPROF_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/cli.h"
#include "bpfprof/profile.h"
#include "bpfprof/sampler.h"

/*
 * The most unwind table rows the chunks may hold (8 bytes each, 32 MiB),
 * made as files need them: every file the test machine maps at start takes
 * some 90,000, an interpreter alone 65,000.
 */
#define UNWIND_ROWS (4u << 20)

struct settings {
	/*
	 * Everything but the callbacks and their ctx, which are the caller's.
	 * Borrows the options' arrays (cpus, tgids, pids): they must outlive it.
	 */
	struct sampler_config sampler;
	enum profile_kind kind;		/* CPU samples, off-CPU time or both */
	uint32_t frequency;		/* samples per second per CPU */
	uint64_t period_ns;		/* the CPU time one sample stands for */
	/* An agent writing no whole-run profile keeps only what its windows need. */
	bool trim_only;
};

/*
 * s from o (as options_parse left it), the --cgroup directory open as
 * cgroup_fd (or -1), and the machine's page size (the smallest ring buffer
 * the kernel takes).
 */
void settings_from_options(struct settings *s, const struct options *o, int cgroup_fd,
			   uint32_t page_size);

#endif
