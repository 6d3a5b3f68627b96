/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The command line -> struct options. Every bad value gets one line naming
 * the problem and the fix, and exit code 2.
 */
#ifndef BPFPROF_CLI_H
#define BPFPROF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXIT_USAGE 2
#define EXIT_RUNTIME 1

struct options {
	uint32_t frequency;		/* -F, Hz per CPU */
	double duration;		/* -d, seconds; < 0 until a signal */
	uint32_t *tgids;		/* -p */
	size_t ntgids;
	uint32_t *pids;			/* -t */
	size_t npids;
	const char *cgroup;		/* --cgroup as given */
	char *cgroup_path;		/* ... resolved to a cgroup v2 directory */
	int *cpus;			/* -C, else every online CPU */
	size_t ncpus;
	bool user_only;			/* -U */
	bool kernel_only;		/* -K */
	bool idle;			/* -I */
	bool per_pid;			/* --per-pid */
	struct output_spec {
		const char *path;	/* NULL for stdout */
		int format;		/* enum output_format */
	} *outputs;			/* -o (several), or stdout; never empty */
	size_t noutputs;
	const char *format;		/* -f as given */
	double interval;		/* --interval, seconds */
	uint32_t stack_storage_size;	/* --stack-storage-size */
	uint32_t max_stacks;		/* --max-stacks */
	uint32_t ring_buffer_kib;	/* --ring-buffer-size */
	bool dwarf_unwind;		/* --unwind dwarf */
	bool cfi_unwind;		/* --unwind auto (the default): tables in the kernel */
	bool no_python;			/* --no-python: no Python frames */
	bool off_cpu;			/* --off-cpu: off-CPU time, no CPU samples */
	bool wall;			/* --wall: CPU samples and off-CPU time in one unit */
	uint32_t min_block_us;		/* --min-block */
	const char *listen;		/* --listen HOST:PORT */
	const char *push;		/* --push URL */
	double push_interval;		/* --push-interval SECONDS */
	const char *app_name;		/* --app-name, else the host name */
	double rotate;			/* --rotate SECONDS; 0: one file for the run */
	uint32_t keep;			/* --keep N; 0: all */
	uint32_t stack_size;		/* --stack-size: user stack bytes copied per sample */
	const char *btf;		/* --btf */
	int verbose;			/* -v */
	char *command_line;		/* argv joined, for the record */
};

/*
 * 0: go on and sample. -1: help or version printed, exit 0. EXIT_USAGE:
 * a message was printed. Also checks values against this machine (pids,
 * CPUs, cgroup, the kernel's maximum sample rate).
 */
int options_parse(struct options *o, int argc, char **argv);
void options_release(struct options *o);

/* The sysfs list format "0-3,6": parsed into a sorted array. */
int parse_cpu_list(const char *s, int **cpus, size_t *n);
/* Every online CPU; 0 or -errno. */
int online_cpus(int **cpus, size_t *n);

#endif
