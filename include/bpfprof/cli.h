/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The command line -> struct options. Every bad value gets one line naming
 * the problem and the fix, and exit code 2.
 *
 * One table (options_table[] in src/cli.c, cli_options() below) says
 * everything about each option: its spellings, how its value is read and
 * checked, its default, where it goes, its --help line. Usage, getopt's
 * long options and short string, and the dispatch all come from it; what
 * the options mean for a run is settings_from_options()'s (settings.h).
 * Adding an option takes:
 *   1. its field here in struct options, and its row in options_table[]
 *      (src/cli.c), with a line in check_combinations() or
 *      check_agent_options() if it only makes sense with other options;
 *   2. if it changes what the run does, its line in settings_from_options()
 *      (src/settings.c); if the BPF program reads it, that line fills a
 *      field of struct bpf_settings (include/bpfprof/bpf_settings.h), the
 *      program's rodata, which bpf/ reads as settings.NAME;
 *   3. its entry in the man page's OPTIONS (src/bpfprof.8), the option
 *      reference;
 *   4. its checks in tests/unit/test_options.c: the values it takes and
 *      refuses (each message word for word), what settings makes of it.
 * test_option_spellings fails until the table, --help and the man page
 * name the same options.
 */
#ifndef BPFPROF_CLI_H
#define BPFPROF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpfprof/interp.h"

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
	const char *cpu_list;		/* -C as given */
	int *cpus;			/* ... parsed, else every online CPU */
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
	double interval;		/* --interval, seconds; at most -d */
	bool interval_stretches;	/* --interval not given: longer while nothing is new */
	uint32_t stack_storage_size;	/* --stack-storage-size */
	uint32_t max_stacks;		/* --max-stacks */
	uint32_t ring_buffer_kib;	/* --ring-buffer-size; 0: by --unwind (settings.c) */
	bool dwarf_unwind;		/* --unwind dwarf */
	bool cfi_unwind;		/* --unwind auto (the default): tables in the kernel */
	bool no_runtime[RUNTIME_KINDS];	/* --no-OPTION: no frames of that runtime (by its id) */
	bool off_cpu;			/* --off-cpu: off-CPU time, no CPU samples */
	bool wall;			/* --wall: CPU samples and off-CPU time in one unit */
	uint32_t min_block_us;		/* --min-block */
	const char *listen;		/* --listen HOST:PORT */
	const char *push;		/* --push URL */
	const char *otlp;		/* --otlp URL */
	double push_interval;		/* --push-interval SECONDS (--push, --otlp) */
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
 * CPUs, cgroup, the kernel's maximum sample rate). May be called again
 * (getopt is started over); the strings in o point into argv.
 */
int options_parse(struct options *o, int argc, char **argv);
void options_release(struct options *o);

/* How an option's value is read (struct cli_option's kind). */
enum option_kind {
	OPTION_FLAG,		/* no value: sets the bool */
	OPTION_COUNT,		/* no value: counts in the int how often it is given */
	OPTION_U32,		/* a whole number from min to max */
	OPTION_SECONDS,		/* a number of seconds from min to max (a double) */
	OPTION_IDS,		/* ID[,ID...] of running tasks, appended to the array */
	OPTION_STRING,		/* the value as given (a const char *) */
	OPTION_CHOICE,		/* one of choices; choose() gets its index */
	OPTION_CUSTOM,		/* set() reads it */
	OPTION_PRINT,		/* no value: print() says something, and the run stops (exit 0) */
};

/* A row of the option table. */
struct cli_option {
	const char *name;	/* --name */
	char letter;		/* -letter, or 0 */
	const char *arg;	/* the value's name in --help; NULL: takes none */
	const char *help;	/* --help's text; "\n" starts a continuation line */
	enum option_kind kind;
	size_t field;		/* offsetof(struct options, the value's field) */
	size_t count_field;	/* OPTION_IDS: the size_t count beside the array */
	double min, max;	/* OPTION_U32, OPTION_SECONDS: the range */
	double def;		/* ...: the default; OPTION_CHOICE: its index */
	uint32_t (*machine_max)(void);	/* OPTION_U32: the max is this machine's */
	/*
	 * OPTION_U32: "a rate in Hz" (and why_max after the range); OPTION_IDS:
	 * "process"; OPTION_CHOICE: the choices as the error names them.
	 */
	const char *what, *why_max;
	const char *const *choices;	/* OPTION_CHOICE: NULL-terminated */
	void (*choose)(struct options *o, int choice);
	int (*set)(struct options *o, const char *arg);	/* OPTION_CUSTOM; EXIT_USAGE on error */
	int (*check)(struct options *o, const char *arg);	/* after the value is stored */
	void (*print)(void);	/* OPTION_PRINT */
};

/* The option table, in --help's order. */
const struct cli_option *cli_options(size_t *n);
/* --help's text. */
void options_usage(FILE *out);

/* The sysfs list format "0-3,6": parsed into a sorted array. */
int parse_cpu_list(const char *s, int **cpus, size_t *n);
/* Every online CPU; 0 or -errno. */
int online_cpus(int **cpus, size_t *n);

#endif
