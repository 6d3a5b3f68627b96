// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The command line: one table of options (options_table below) that --help,
 * getopt and the dispatch read; then the checks of options together and
 * against this machine. What the options mean for a run is settings.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "bpfprof/cgroups.h"
#include "bpfprof/cli.h"
#include "bpfprof/diff.h"
#include "bpfprof/output.h"
#include "bpfprof/runtime_info.h"
#include "bpfprof/util.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define MAX_STACK_STORAGE (1u << 18)
#define MAX_COUNTS (1u << 22)

/* The option as messages name it: its letter if it has one. */
static const char *option_name(const struct cli_option *opt)
{
	static char buf[32];

	if (opt->letter)
		snprintf(buf, sizeof(buf), "-%c", opt->letter);
	else
		snprintf(buf, sizeof(buf), "--%s", opt->name);
	return buf;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	struct strbuf sb;
	va_list ap;

	strbuf_init(&sb);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	error("%s", sb.buf);
	strbuf_release(&sb);
	return EXIT_USAGE;
}

/* The kernel's limit on -F. */
static uint32_t max_sample_rate(void)
{
	char *text;
	unsigned long v = 100000;

	if (!read_file("/proc/sys/kernel/perf_event_max_sample_rate", &text, NULL)) {
		v = strtoul(text, NULL, 10);
		free(text);
	}
	return v ? v : 1;
}

/* --listen HOST:PORT (an IPv6 address in brackets): its form; the address itself is tried later. */
static int check_listen(struct options *o, const char *arg)
{
	const char *colon = strrchr(arg, ':');
	char *end;
	long port;

	(void)o;
	if (!colon || colon == arg)
		return usage_error("--listen %s: give HOST:PORT, e.g. 127.0.0.1:6060 or [::1]:6060", arg);
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port < 0 || port > 65535)
		return usage_error("--listen %s: the port is not a number from 0 to 65535 (0: any free "
				   "one); give e.g. 127.0.0.1:6060", arg);
	if (strchr(arg, ':') != colon && (arg[0] != '[' || colon[-1] != ']'))
		return usage_error("--listen %s: put an IPv6 address in brackets, e.g. [::1]:6060", arg);
	return 0;
}

static int check_push_url(struct options *o, const char *arg)
{
	(void)o;
	if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8))
		return usage_error("--push %s: give the server's URL, e.g. http://pyroscope:4040", arg);
	return 0;
}

static int check_otlp_url(struct options *o, const char *arg)
{
	(void)o;
	if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8))
		return usage_error("--otlp %s: give the OTLP/HTTP receiver's URL, e.g. "
				   "http://otelcol:4318", arg);
	return 0;
}

static int check_app_name(struct options *o, const char *arg)
{
	(void)o;
	if (!*arg)
		return usage_error("--app-name: empty; give the name to file profiles under");
	return 0;
}

static int check_ring_buffer_size(struct options *o, const char *arg)
{
	if (o->ring_buffer_kib & (o->ring_buffer_kib - 1))
		return usage_error("--ring-buffer-size %s is not a power of two; give e.g. 4096", arg);
	return 0;
}

static int check_stack_size(struct options *o, const char *arg)
{
	if (o->stack_size % 1024)
		return usage_error("--stack-size %s is not a multiple of 1024; give e.g. 16384", arg);
	return 0;
}

/* -o FILE, or - for stdout: one more output, its format settled by resolve_formats(). */
static int add_output(struct options *o, const char *arg)
{
	int err = 0;

	if (!*arg)
		err = usage_error("-o: empty file name; give a path, or - for stdout");
	o->outputs = xrealloc(o->outputs, (o->noutputs + 1) * sizeof(*o->outputs));
	o->outputs[o->noutputs].path = strcmp(arg, "-") ? arg : NULL;
	o->outputs[o->noutputs++].format = -1;
	return err;
}

static void choose_unwind(struct options *o, int choice)
{
	o->cfi_unwind = choice == 0;
	o->dwarf_unwind = choice == 2;
}

static void print_usage(void)
{
	options_usage(stdout);
}

static void print_version(void)
{
	printf("bpfprof %s\n", BPFPROF_VERSION);
}

/* offsetof(struct options, member), which must be of type type. */
#define FIELD(member, type)                                                                        \
	(offsetof(struct options, member) +                                                        \
	 0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((struct options *)0)->member),     \
							type) ? 1 : -1]))
#define FLAG(m) .kind = OPTION_FLAG, .field = FIELD(m, bool)
#define STRING(m) .kind = OPTION_STRING, .field = FIELD(m, const char *)
#define U32(m, lo, hi, d, w)                                                                       \
	.kind = OPTION_U32, .field = FIELD(m, uint32_t), .min = (lo), .max = (hi), .def = (d), .what = (w)
#define SECONDS(m, lo, hi, d)                                                                      \
	.kind = OPTION_SECONDS, .field = FIELD(m, double), .min = (lo), .max = (hi), .def = (d)
#define IDS(m, n, w)                                                                               \
	.kind = OPTION_IDS, .field = FIELD(m, uint32_t *), .count_field = FIELD(n, size_t), .what = (w)

/* Every option but the runtimes' (all_options adds them), in --help's order (the man page's). */
static const struct cli_option options_table[] = {
	{ "frequency", 'F', "HZ", "samples per second per CPU (default 99)",
	  U32(frequency, 1, 0 /* machine_max */, 99, "a rate in Hz"), .machine_max = max_sample_rate,
	  .why_max = " (the kernel's perf_event_max_sample_rate)" },
	{ "duration", 'd', "SECONDS", "stop after SECONDS (default: at Ctrl-C or SIGTERM)",
	  SECONDS(duration, 0.001, 365 * 86400.0, -1) },
	{ "pid", 'p', "PID[,PID...]", "only these processes, all their threads",
	  IDS(tgids, ntgids, "process") },
	{ "tid", 't', "TID[,TID...]", "only these threads", IDS(pids, npids, "thread") },
	{ "cgroup", 0, "PATH", "only tasks in this cgroup v2 directory or below it", STRING(cgroup) },
	{ "cpu", 'C', "CPUS", "only these CPUs, e.g. 0,2-3 (default: every online CPU)",
	  STRING(cpu_list) },
	{ "user-only", 'U', NULL, "user stacks only, no kernel frames", FLAG(user_only) },
	{ "kernel-only", 'K', NULL, "kernel stacks only, no user frames", FLAG(kernel_only) },
	{ "idle", 'I', NULL, "include the idle task (pid 0)", FLAG(idle) },
	{ "per-pid", 0, NULL, "root frame \"comm-PID\" instead of \"comm\"", FLAG(per_pid) },
	{ "off-cpu", 0, NULL,
	  "time threads spend off the CPU (waiting, sleeping, preempted),\n"
	  "by the stack they left with, in microseconds; no CPU samples",
	  FLAG(off_cpu) },
	{ "wall", 0, NULL,
	  "each thread's wall time: CPU samples at -F and its time off the\n"
	  "CPU in the same unit (needs -p, -t or --cgroup)",
	  FLAG(wall) },
	{ "min-block", 0, "USECS", "off-CPU times shorter than USECS are not counted (default 0)",
	  U32(min_block_us, 0, 3600.0 * 1000000, 0, "a time in microseconds") },
	{ "listen", 0, "HOST:PORT",
	  "serve profiles over HTTP while sampling, as Go's net/http/pprof:\n"
	  "/debug/pprof/profile?seconds=N, /metrics (Prometheus), /; until\n"
	  "a signal or -d; the whole run is written only with -o",
	  STRING(listen), .check = check_listen },
	{ "push", 0, "URL",
	  "every --push-interval, the interval's pprof POSTed to a\n"
	  "Pyroscope server's ingest API at URL (e.g. http://host:4040)",
	  STRING(push), .check = check_push_url },
	{ "otlp", 0, "URL",
	  "every --push-interval, the interval's profiles POSTed as OTLP\n"
	  "to an OpenTelemetry Collector at URL (e.g. http://host:4318;\n"
	  "the path /v1development/profiles if URL has none)",
	  STRING(otlp), .check = check_otlp_url },
	{ "push-interval", 0, "SECONDS", "with --push or --otlp: the interval (default 10)",
	  SECONDS(push_interval, 1, 3600, 10) },
	{ "app-name", 0, "NAME",
	  "with --push, --otlp or -o FILE.otlp.pb: the application's\n"
	  "name (default the host name)",
	  STRING(app_name), .check = check_app_name },
	{ "rotate", 0, "SECONDS",
	  "with -o FILE: a complete FILE per interval, ending at multiples\n"
	  "of SECONDS of the clock, named by its start: out.20261124T101500Z.pb.gz",
	  SECONDS(rotate, 1, 86400, 0) },
	{ "keep", 0, "N", "with --rotate: keep the N newest files of each -o",
	  U32(keep, 1, 1000000, 0, "a number of files") },
	{ "format", 'f', "FORMAT",
	  "folded, pprof, callgrind, svg or otlp (default: from -o's name, else folded)", STRING(format) },
	{ "output", 'o', "FILE", "write to FILE instead of stdout; may be given several times",
	  .kind = OPTION_CUSTOM, .set = add_output },
	{ "interval", 0, "SECONDS",
	  "drain the BPF maps this often (default 1, up to 8 while\n"
	  "nothing new is sampled)",
	  SECONDS(interval, 0.01, 3600, 0) },
	{ "stack-storage-size", 0, "N", "stacks each BPF stack map holds (default 16384)",
	  U32(stack_storage_size, 1, MAX_STACK_STORAGE, 16384, "a number of stacks") },
	{ "max-stacks", 0, "N", "distinct keys each BPF counts map holds (default 16384)",
	  U32(max_stacks, 1, MAX_COUNTS, 16384, "a number of keys") },
	{ "ring-buffer-size", 0, "KIB",
	  "ring buffer for samples the maps cannot take (default 1024;\n"
	  "65536 with --unwind dwarf)",
	  U32(ring_buffer_kib, 4, 1 << 20, 0, "a power of two of KiB"),
	  .check = check_ring_buffer_size },
	{ "unwind", 0, "auto|fp|dwarf",
	  "user stacks walked in the kernel with the binaries' CFI,\n"
	  "frame pointers where code has none (auto, the default); by\n"
	  "frame pointers only (fp); or unwound in userspace from each\n"
	  "sample's stack copy (dwarf)",
	  .kind = OPTION_CHOICE, .choices = (const char *const[]){ "auto", "fp", "dwarf", NULL },
	  .choose = choose_unwind, .def = 0,
	  .what = "auto (CFI in the kernel), fp (frame pointers) or dwarf" },
	{ "stack-size", 0, "BYTES", "user stack copied per sample with --unwind dwarf (default 16384)",
	  U32(stack_size, 1024, 65536, 16384, "a number of bytes"), .check = check_stack_size },
	/* Here: --no-OPTION for each runtime (runtime_info.h), made by all_options. */
	{ "btf", 0, "FILE", "kernel BTF (default /sys/kernel/btf/vmlinux)", STRING(btf) },
	{ "verbose", 'v', NULL, "say more on stderr, libbpf's messages included",
	  .kind = OPTION_COUNT, .field = FIELD(verbose, int) },
	{ "help", 'h', NULL, "show this help", .kind = OPTION_PRINT, .print = print_usage },
	{ "version", 'V', NULL, "show the version", .kind = OPTION_PRINT, .print = print_version },
};

/* Room for every option: the table's and one for each runtime. */
#define MAX_OPTIONS (ARRAY_SIZE(options_table) + RUNTIME_KINDS)
static struct cli_option all_rows[MAX_OPTIONS];
static size_t nr_all;

/*
 * A runtime's --no-OPTION: its frames left out (struct options' no_runtime),
 * its help in its descriptor's words.
 */
static struct cli_option runtime_option(const struct runtime_info *r)
{
	static char names[RUNTIME_KINDS][32], helps[RUNTIME_KINDS][160];

	snprintf(names[r->kind], sizeof(names[r->kind]), "no-%s", r->option);
	snprintf(helps[r->kind], sizeof(helps[r->kind]),
		 "leave %s frames out (read with --unwind auto:\n%s); native frames only",
		 r->what, r->versions);
	return (struct cli_option){ names[r->kind], 0, NULL, helps[r->kind], .kind = OPTION_FLAG,
				    .field = offsetof(struct options, no_runtime) + r->kind };
}

/* options_table with each runtime's option before --btf, made once. */
static const struct cli_option *all_options(void)
{
	size_t i;
	uint32_t k;

	if (nr_all)
		return all_rows;
	for (i = 0; i < ARRAY_SIZE(options_table); i++) {
		if (!strcmp(options_table[i].name, "btf"))
			for (k = 0; k < runtime_info_count(); k++)
				all_rows[nr_all++] = runtime_option(runtime_info_at(k));
		all_rows[nr_all++] = options_table[i];
	}
	return all_rows;
}

static size_t nr_options(void)
{
	all_options();
	return nr_all;
}

const struct cli_option *cli_options(size_t *n)
{
	*n = nr_options();
	return all_options();
}

/* Where --help's text starts, and how wide the "  -F, " before the long name is. */
#define HELP_COLUMN 30
#define LETTER_WIDTH 6

void options_usage(FILE *out)
{
	size_t i;

	fprintf(out, "Usage: bpfprof [options]\n"
		"       %s\n"
		"       %s\n"
		"Samples every CPU with BPF and writes collapsed stacks (flamegraph.pl input).\n"
		"\n", diff_synopsis, runtimes_synopsis);
	for (i = 0; i < nr_options(); i++) {
		const struct cli_option *opt = &all_options()[i];
		const char *h;
		int n;

		if (opt->letter)
			fprintf(out, "  -%c, ", opt->letter);
		else
			fprintf(out, "%*s", LETTER_WIDTH, "");
		n = fprintf(out, "--%s%s%s", opt->name, opt->arg ? " " : "", opt->arg ? opt->arg : "");
		fprintf(out, "%*s", n < HELP_COLUMN - LETTER_WIDTH ? HELP_COLUMN - LETTER_WIDTH - n : 1, "");
		for (h = opt->help; *h; h++) {
			fputc(*h, out);
			if (*h == '\n')
				fprintf(out, "%*s", HELP_COLUMN, "");
		}
		fputc('\n', out);
	}
	/* The subcommands (main.c's cmds[]), each with its own --help. */
	fprintf(out, "\nSubcommands:\n  %s\n"
		"%*scompare two profiles, folded or pprof: a differential flame\n"
		"%*sgraph (-o FILE.svg) or difffolded lines; see bpfprof diff --help\n"
		"  %s\n"
		"%*swhat is read of each runtime's frames (versions, builds), as a\n"
		"%*sMarkdown table\n",
		diff_synopsis + strlen("bpfprof "), HELP_COLUMN, "", HELP_COLUMN, "",
		runtimes_synopsis + strlen("bpfprof "), HELP_COLUMN, "", HELP_COLUMN, "");
}

/* A whole number in [min, max], or a usage error naming the option. */
static int parse_u32(const struct cli_option *opt, const char *arg, uint32_t min, uint32_t max,
		     const char *what, const char *why_max, uint32_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (!*arg || *end || arg[0] == '-' || arg[0] == '+' || errno)
		return usage_error("%s '%s': not a whole number; give %s from %u to %u%s", option_name(opt),
				   arg, what, min, max, why_max ? why_max : "");
	if (v < min || v > max)
		return usage_error("%s %s is out of range; give %s from %u to %u%s", option_name(opt), arg,
				   what, min, max, why_max ? why_max : "");
	*out = v;
	return 0;
}

static int parse_seconds(const struct cli_option *opt, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!*arg || *end || errno || !isfinite(v))
		return usage_error("%s '%s': not a number of seconds; give e.g. %s 10", option_name(opt),
				   arg, option_name(opt));
	if (v < opt->min || v > opt->max)
		return usage_error("%s %s is out of range; give from %.10g to %.10g seconds", option_name(opt),
				   arg, opt->min, opt->max);
	*out = v;
	return 0;
}

/* "1,2,3" appended to ids; each must name a live task. */
static int parse_ids(const struct cli_option *opt, const char *arg, uint32_t **ids, size_t *n)
{
	char *copy = xstrdup(arg), *tok, *save = NULL, what[32];
	int err = 0;

	snprintf(what, sizeof(what), "a %s id", opt->what);
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		uint32_t id;

		err = parse_u32(opt, tok, 1, INT_MAX, what, NULL, &id);
		if (err)
			break;
		if (!task_alive(id)) {
			err = usage_error("%s %u: no such %s; give the id of a running %s (see ps)",
					  option_name(opt), id, opt->what, opt->what);
			break;
		}
		*ids = xrealloc(*ids, (*n + 1) * sizeof(**ids));
		(*ids)[(*n)++] = id;
	}
	if (!err && !tok && *n == 0)
		err = usage_error("%s '%s': no %s id given", option_name(opt), arg, opt->what);
	free(copy);
	return err;
}

static int parse_choice(struct options *o, const struct cli_option *opt, const char *arg)
{
	int i;

	for (i = 0; opt->choices[i]; i++)
		if (!strcmp(arg, opt->choices[i])) {
			opt->choose(o, i);
			return 0;
		}
	return usage_error("%s '%s': unknown; give %s", option_name(opt), arg, opt->what);
}

/* One option's value into o; -1 if it printed something and the run stops. */
static int read_value(struct options *o, const struct cli_option *opt, const char *arg)
{
	void *field = (char *)o + opt->field;
	uint32_t max = opt->machine_max ? opt->machine_max() : opt->max;
	int err = 0;

	switch (opt->kind) {
	case OPTION_FLAG:
		*(bool *)field = true;
		break;
	case OPTION_COUNT:
		(*(int *)field)++;
		break;
	case OPTION_U32:
		err = parse_u32(opt, arg, opt->min, max, opt->what, opt->why_max, field);
		break;
	case OPTION_SECONDS:
		err = parse_seconds(opt, arg, field);
		break;
	case OPTION_IDS:
		err = parse_ids(opt, arg, field, (size_t *)((char *)o + opt->count_field));
		break;
	case OPTION_STRING:
		*(const char **)field = arg;
		break;
	case OPTION_CHOICE:
		err = parse_choice(o, opt, arg);
		break;
	case OPTION_CUSTOM:
		err = opt->set(o, arg);
		break;
	case OPTION_PRINT:
		opt->print();
		return -1;
	}
	if (!err && opt->check)
		err = opt->check(o, arg);
	return err;
}

static bool takes_value(const struct cli_option *opt)
{
	return opt->kind != OPTION_FLAG && opt->kind != OPTION_COUNT && opt->kind != OPTION_PRINT;
}

/* getopt's val for an option: its letter, else one past any character. */
static int option_val(size_t i)
{
	return all_options()[i].letter ? all_options()[i].letter : 256 + (int)i;
}

static const struct cli_option *option_of_val(int val)
{
	size_t i;

	for (i = 0; i < nr_options(); i++)
		if (option_val(i) == val)
			return &all_options()[i];
	return NULL;
}

static void getopt_tables(struct option *longopts, char *shortopts)
{
	size_t i;

	*shortopts++ = ':';	/* a missing value returns ':' */
	for (i = 0; i < nr_options(); i++) {
		const struct cli_option *opt = &all_options()[i];

		longopts[i] = (struct option){ opt->name, takes_value(opt) ? required_argument : no_argument,
					       NULL, option_val(i) };
		if (opt->letter) {
			*shortopts++ = opt->letter;
			if (takes_value(opt))
				*shortopts++ = ':';
		}
	}
	longopts[i] = (struct option){ NULL, 0, NULL, 0 };
	*shortopts = '\0';
}

static void set_defaults(struct options *o)
{
	size_t i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < nr_options(); i++) {
		const struct cli_option *opt = &all_options()[i];
		void *field = (char *)o + opt->field;

		if (opt->kind == OPTION_U32)
			*(uint32_t *)field = opt->def;
		else if (opt->kind == OPTION_SECONDS)
			*(double *)field = opt->def;
		else if (opt->kind == OPTION_CHOICE)
			opt->choose(o, opt->def);
	}
}

/*
 * The options in argv into o; given[i]: the value option i was last given
 * ("" for one that takes none), NULL if not given.
 */
static int read_options(struct options *o, int argc, char **argv, const char **given)
{
	struct option longopts[MAX_OPTIONS + 1];
	char shortopts[2 + 2 * MAX_OPTIONS];
	const struct cli_option *opt;
	int c, err = 0;

	getopt_tables(longopts, shortopts);
	optind = 0;	/* getopt starts over */
	opterr = 0;
	while (!err && (c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == ':') {
			opt = option_of_val(optopt);
			err = usage_error("option '%s' needs a value; see bpfprof --help",
					  opt ? option_name(opt) : argv[optind - 1]);
		} else if (c == '?' || !(opt = option_of_val(c))) {
			if (optopt && optopt < 256)
				err = usage_error("unknown option '-%c'; see bpfprof --help", optopt);
			else
				err = usage_error("unknown option '%s'; see bpfprof --help", argv[optind - 1]);
		} else {
			given[opt - all_options()] = optarg ? optarg : "";
			err = read_value(o, opt, optarg);
		}
	}
	return err;
}

static const char *given_value(const char *const *given, const char *name)
{
	size_t i;

	for (i = 0; i < nr_options(); i++)
		if (!strcmp(all_options()[i].name, name))
			return given[i];
	return NULL;
}

/* Options that would do nothing are refused, so nobody thinks they did. */
static int check_combinations(const struct options *o, const char *const *given)
{
	const char *stack_size = given_value(given, "stack-size");
	const char *min_block = given_value(given, "min-block");

	if (o->user_only && o->kernel_only)
		return usage_error("-U and -K exclude each other; give one, or neither for both stacks");
	if (o->dwarf_unwind && o->kernel_only)
		return usage_error("--unwind dwarf unwinds user stacks, which -K leaves out; drop one of "
				   "them");
	if (stack_size && !o->dwarf_unwind)
		return usage_error("--stack-size %s: the stack is copied only with --unwind dwarf; add "
				   "it, or drop --stack-size", stack_size);
	if (o->idle && (o->ntgids || o->npids))
		return usage_error("-I records the idle task (pid 0), which -p and -t leave out; drop "
				   "-I");
	if (o->off_cpu && o->wall)
		return usage_error("--off-cpu and --wall exclude each other: --wall holds the off-CPU "
				   "time too; give one");
	if (o->wall && !o->ntgids && !o->npids && !o->cgroup)
		return usage_error("--wall profiles chosen threads: add -p PID, -t TID or --cgroup PATH "
				   "(--off-cpu is for the whole machine)");
	if ((o->off_cpu || o->wall) && o->dwarf_unwind)
		return usage_error("--unwind dwarf copies stacks at CPU samples only; with %s give "
				   "--unwind auto or fp", o->off_cpu ? "--off-cpu" : "--wall");
	if ((o->off_cpu || o->wall) && o->idle)
		return usage_error("-I records the idle task, which is never off the CPU; drop -I");
	if (min_block && !o->off_cpu && !o->wall)
		return usage_error("--min-block %s: off-CPU time is counted only with --off-cpu or "
				   "--wall; add one, or drop --min-block", min_block);
	return 0;
}

/* Whether an -o writes OTLP (by -f or its name: formats are resolved later). */
static bool otlp_output(const struct options *o)
{
	size_t i;

	if (o->format)
		return !strcmp(o->format, "otlp");
	for (i = 0; i < o->noutputs; i++)
		if (o->outputs[i].path && format_of_path(o->outputs[i].path) == FORMAT_OTLP)
			return true;
	return false;
}

/* --push, --otlp, --rotate and the options that say how. */
static int check_agent_options(const struct options *o, const char *const *given)
{
	if (given_value(given, "push-interval") && !o->push && !o->otlp)
		return usage_error("--push-interval: it says how to push; add --push URL or --otlp "
				   "URL, or drop it");
	if (o->app_name && !o->push && !o->otlp && !otlp_output(o))
		return usage_error("--app-name: it names what is pushed; add --push URL, --otlp "
				   "URL or -o FILE.otlp.pb, or drop it");
	if (o->keep && !o->rotate)
		return usage_error("--keep %u: it keeps rotated files; add --rotate SECONDS, or drop "
				   "--keep", o->keep);
	if (o->rotate && !o->noutputs)
		return usage_error("--rotate writes files: add -o FILE (its name gets each interval's "
				   "start)");
	for (size_t i = 0; o->rotate && i < o->noutputs; i++)
		if (!o->outputs[i].path)
			return usage_error("--rotate writes files, not stdout: give -o FILE instead of -o -");
	return 0;
}

int parse_cpu_list(const char *s, int **cpus, size_t *n)
{
	const char *p = s;
	int *out = NULL;
	size_t nr = 0, alloc = 0;

	while (*p && *p != '\n') {
		long lo, hi, i;
		char *end;

		if (*p < '0' || *p > '9')
			goto bad;
		lo = strtol(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				goto bad;
			hi = strtol(end + 1, &end, 10);
		}
		if (lo > hi || hi > 65535)
			goto bad;
		for (i = lo; i <= hi; i++) {
			size_t j;

			for (j = 0; j < nr && out[j] != i; j++)
				;
			if (j < nr)
				continue;
			ALLOC_GROW(out, nr + 1, alloc);
			out[nr++] = i;
		}
		p = end;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			goto bad;
	}
	if (!nr)
		goto bad;
	*cpus = out;
	*n = nr;
	return 0;
bad:
	free(out);
	return -EINVAL;
}

static int online_cpus_text(int **cpus, size_t *n, char **text)
{
	int err = read_file("/sys/devices/system/cpu/online", text, NULL);

	if (err)
		return err;
	return parse_cpu_list(*text, cpus, n);
}

int online_cpus(int **cpus, size_t *n)
{
	char *text = NULL;
	int err = online_cpus_text(cpus, n, &text);

	free(text);
	return err;
}

static int check_cpus(struct options *o, const char *arg)
{
	int *online;
	size_t nonline, i, j;
	char *text;
	int err = 0;

	if (online_cpus_text(&online, &nonline, &text))
		return error("cannot read the online CPUs from /sys/devices/system/cpu/online"), EXIT_RUNTIME;
	text[strcspn(text, "\n")] = '\0';
	if (!arg) {
		o->cpus = online;
		o->ncpus = nonline;
		free(text);
		return 0;
	}
	if (parse_cpu_list(arg, &o->cpus, &o->ncpus)) {
		err = usage_error("-C '%s': not a CPU list; give e.g. -C 0 or -C 0,2-3 (online: %s)", arg,
				  text);
		goto out;
	}
	for (i = 0; i < o->ncpus; i++) {
		for (j = 0; j < nonline && online[j] != o->cpus[i]; j++)
			;
		if (j == nonline) {
			err = usage_error("-C %s: CPU %d is not online; give CPUs from %s", arg,
					  o->cpus[i], text);
			goto out;
		}
	}
out:
	free(online);
	free(text);
	return err;
}

static int check_cgroup(struct options *o)
{
	char *mount = cgroup2_mount();
	struct strbuf path;
	struct statfs fs;
	struct stat st;
	int err = 0;

	strbuf_init(&path);
	/* A relative path is taken inside the cgroup v2 mount, as systemd names cgroups. */
	if (o->cgroup[0] != '/' && mount)
		strbuf_addf(&path, "%s/%s", mount, o->cgroup);
	else
		strbuf_addstr(&path, o->cgroup);
	if (stat(path.buf, &st) || !S_ISDIR(st.st_mode)) {
		err = usage_error("--cgroup '%s': no such cgroup directory; give a directory under %s",
				  o->cgroup, mount ? mount : "the cgroup v2 mount (none is mounted)");
	} else if (statfs(path.buf, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC) {
		err = usage_error("--cgroup '%s': not a cgroup v2 directory; give one under %s",
				  o->cgroup, mount ? mount : "a cgroup2 mount (none is mounted)");
	} else {
		o->cgroup_path = strbuf_detach(&path);
	}
	strbuf_release(&path);
	free(mount);
	return err;
}

/*
 * Each output's format: what -f says, else what the file name implies,
 * else folded. -f contradicting a file name is an error, as is a binary
 * format on a terminal.
 */
static int resolve_formats(struct options *o)
{
	int forced = -1;
	size_t i, j;

	if (o->format && (forced = format_parse(o->format)) < 0)
		return usage_error("-f '%s': unknown format; give folded, pprof, callgrind, svg or otlp",
				   o->format);
	/* Serving or pushing, the whole run is written only where -o says. */
	if (!o->noutputs && !o->listen && !o->push && !o->otlp) {
		o->outputs = xcalloc(1, sizeof(*o->outputs));
		o->noutputs = 1;
		o->outputs[0].format = -1;
	}
	for (i = 0; i < o->noutputs; i++) {
		struct output_spec *out = &o->outputs[i];
		int implied = out->path ? format_of_path(out->path) : -1;

		if (forced >= 0 && implied >= 0 && implied != forced)
			return usage_error("-o %s is named like %s output but -f says %s; rename it or "
					   "drop -f", out->path, format_name(implied), format_name(forced));
		out->format = forced >= 0 ? forced : implied >= 0 ? implied : FORMAT_FOLDED;
		for (j = 0; j < i; j++)
			if ((!out->path && !o->outputs[j].path) ||
			    (out->path && o->outputs[j].path && !strcmp(out->path, o->outputs[j].path)))
				return usage_error("-o %s is given twice; give each output once",
						   out->path ? out->path : "-");
		if (!out->path && format_is_binary(out->format) && isatty(STDOUT_FILENO))
			return usage_error("%s output is binary; give -o FILE.pb.gz or redirect stdout",
					   format_name(out->format));
	}
	return 0;
}

static char *join_args(int argc, char **argv)
{
	struct strbuf sb;
	int i;

	strbuf_init(&sb);
	for (i = 0; i < argc; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		strbuf_addstr(&sb, argv[i]);
	}
	return strbuf_detach(&sb);
}

int options_parse(struct options *o, int argc, char **argv)
{
	const char *given[MAX_OPTIONS] = { NULL };
	int err;

	set_defaults(o);
	o->command_line = join_args(argc, argv);
	if ((err = read_options(o, argc, argv, given)))
		return err;
	if (optind < argc)
		return usage_error("unexpected argument '%s'; bpfprof takes options only (a process: -p PID)",
				   argv[optind]);
	if ((err = check_combinations(o, given)) || (err = check_agent_options(o, given)))
		return err;
	if ((o->push || o->otlp) && !o->app_name) {
		static char host[256];

		if (gethostname(host, sizeof(host) - 1) || !host[0])
			strcpy(host, "bpfprof");
		o->app_name = host;
	}
	if ((err = resolve_formats(o)))
		return err;
	if (o->cgroup && (err = check_cgroup(o)))
		return err;
	/* Not given: 1 s, stretched while drains find nothing new (record.c). */
	o->interval_stretches = !o->interval;
	if (!o->interval)
		o->interval = 1;
	if (o->duration > 0 && o->interval > o->duration)
		o->interval = o->duration;
	return check_cpus(o, o->cpu_list);
}

void options_release(struct options *o)
{
	free(o->tgids);
	free(o->pids);
	free(o->cgroup_path);
	free(o->cpus);
	free(o->outputs);
	free(o->command_line);
	memset(o, 0, sizeof(*o));
}
