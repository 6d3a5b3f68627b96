// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
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
#include "bpfprof/output.h"
#include "bpfprof/util.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define MAX_STACK_STORAGE (1u << 18)
#define MAX_COUNTS (1u << 22)

static const char usage_text[] =
	"Usage: bpfprof [options]\n"
	"Samples every CPU with BPF and writes collapsed stacks (flamegraph.pl input).\n"
	"\n"
	"  -F, --frequency HZ          samples per second per CPU (default 99)\n"
	"  -d, --duration SECONDS      stop after SECONDS (default: at Ctrl-C or SIGTERM)\n"
	"  -p, --pid PID[,PID...]      only these processes, all their threads\n"
	"  -t, --tid TID[,TID...]      only these threads\n"
	"      --cgroup PATH           only tasks in this cgroup v2 directory or below it\n"
	"  -C, --cpu CPUS              only these CPUs, e.g. 0,2-3 (default: every online CPU)\n"
	"  -U, --user-only             user stacks only, no kernel frames\n"
	"  -K, --kernel-only           kernel stacks only, no user frames\n"
	"  -I, --idle                  include the idle task (pid 0)\n"
	"      --per-pid               root frame \"comm-PID\" instead of \"comm\"\n"
	"      --off-cpu               time threads spend off the CPU (waiting, sleeping, preempted),\n"
	"                              by the stack they left with, in microseconds; no CPU samples\n"
	"      --wall                  each thread's wall time: CPU samples at -F and its time off the\n"
	"                              CPU in the same unit (needs -p, -t or --cgroup)\n"
	"      --min-block USECS       off-CPU times shorter than USECS are not counted (default 0)\n"
	"      --listen HOST:PORT      serve profiles over HTTP while sampling, as Go's net/http/pprof:\n"
	"                              /debug/pprof/profile?seconds=N, /metrics (Prometheus), /; until\n"
	"                              a signal or -d; the whole run is written only with -o\n"
	"      --push URL              every --push-interval, the interval's pprof POSTed to a\n"
	"                              Pyroscope server's ingest API at URL (e.g. http://host:4040)\n"
	"      --push-interval SECONDS with --push: the interval (default 10)\n"
	"      --app-name NAME         with --push: the application's name (default the host name)\n"
	"      --rotate SECONDS        with -o FILE: a complete FILE per interval, ending at multiples\n"
	"                              of SECONDS of the clock, named by its start: out.20261124T101500Z.pb.gz\n"
	"      --keep N                with --rotate: keep the N newest files of each -o\n"
	"  -f, --format FORMAT         folded, pprof, callgrind or svg (default: from -o's name, else folded)\n"
	"  -o, --output FILE           write to FILE instead of stdout; may be given several times\n"
	"      --interval SECONDS      drain the BPF maps this often (default 1)\n"
	"      --stack-storage-size N  stacks each BPF stack map holds (default 16384)\n"
	"      --max-stacks N          distinct keys each BPF counts map holds (default 16384)\n"
	"      --ring-buffer-size KIB  ring buffer for samples the maps cannot take (default 2048;\n"
	"                              65536 with --unwind dwarf)\n"
	"      --unwind auto|fp|dwarf  user stacks walked in the kernel with the binaries' CFI,\n"
	"                              frame pointers where code has none (auto, the default); by\n"
	"                              frame pointers only (fp); or unwound in userspace from each\n"
	"                              sample's stack copy (dwarf)\n"
	"      --stack-size BYTES      user stack copied per sample with --unwind dwarf (default 16384)\n"
	"      --no-python             leave Python processes' own frames out (read with --unwind\n"
	"                              auto: CPython 3.10 to 3.13); native frames only\n"
	"      --btf FILE              kernel BTF (default /sys/kernel/btf/vmlinux)\n"
	"  -v, --verbose               say more on stderr, libbpf's messages included\n"
	"  -h, --help                  show this help\n"
	"  -V, --version               show the version\n";

enum {
	OPT_CGROUP = 256,
	OPT_PER_PID,
	OPT_INTERVAL,
	OPT_STACK_STORAGE,
	OPT_MAX_STACKS,
	OPT_RING_BUFFER,
	OPT_UNWIND,
	OPT_STACK_SIZE,
	OPT_BTF,
	OPT_NO_PYTHON,
	OPT_OFF_CPU,
	OPT_WALL,
	OPT_MIN_BLOCK,
	OPT_LISTEN,
	OPT_ROTATE,
	OPT_PUSH,
	OPT_PUSH_INTERVAL,
	OPT_APP_NAME,
	OPT_KEEP,
};

static const struct option long_options[] = {
	{ "frequency", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'd' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "cpu", required_argument, NULL, 'C' },
	{ "user-only", no_argument, NULL, 'U' },
	{ "kernel-only", no_argument, NULL, 'K' },
	{ "idle", no_argument, NULL, 'I' },
	{ "per-pid", no_argument, NULL, OPT_PER_PID },
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "stack-storage-size", required_argument, NULL, OPT_STACK_STORAGE },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "ring-buffer-size", required_argument, NULL, OPT_RING_BUFFER },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
	{ "btf", required_argument, NULL, OPT_BTF },
	{ "no-python", no_argument, NULL, OPT_NO_PYTHON },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "wall", no_argument, NULL, OPT_WALL },
	{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "rotate", required_argument, NULL, OPT_ROTATE },
	{ "push", required_argument, NULL, OPT_PUSH },
	{ "push-interval", required_argument, NULL, OPT_PUSH_INTERVAL },
	{ "app-name", required_argument, NULL, OPT_APP_NAME },
	{ "keep", required_argument, NULL, OPT_KEEP },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static const char short_options[] = ":F:d:p:t:C:UKIf:o:vhV";

/* The option as the user typed it, for messages. */
static const char *option_name(int c)
{
	static char buf[32];
	size_t i;

	for (i = 0; long_options[i].name; i++)
		if (long_options[i].val == c) {
			if (c < 256)
				snprintf(buf, sizeof(buf), "-%c", c);
			else
				snprintf(buf, sizeof(buf), "--%s", long_options[i].name);
			return buf;
		}
	snprintf(buf, sizeof(buf), "-%c", c);
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

/* A whole number in [min, max], or a usage error naming the option. */
static int parse_u32(int opt, const char *arg, uint32_t min, uint32_t max, const char *what,
		     const char *why_max, uint32_t *out)
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

static int parse_seconds(int opt, const char *arg, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!*arg || *end || errno || !isfinite(v))
		return usage_error("%s '%s': not a number of seconds; give e.g. %s 10", option_name(opt),
				   arg, option_name(opt));
	if (v < min || v > max)
		return usage_error("%s %s is out of range; give from %.10g to %.10g seconds", option_name(opt),
				   arg, min, max);
	*out = v;
	return 0;
}

/* "1,2,3" appended to ids; each must name a live task. */
static int parse_ids(int opt, const char *arg, uint32_t **ids, size_t *n)
{
	const char *what = opt == 'p' ? "process" : "thread";
	char *copy = xstrdup(arg), *tok, *save = NULL;
	int err = 0;

	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		uint32_t id;

		err = parse_u32(opt, tok, 1, INT_MAX, opt == 'p' ? "a process id" : "a thread id", NULL,
				&id);
		if (err)
			break;
		if (!task_alive(id)) {
			err = usage_error("%s %u: no such %s; give the id of a running %s (see ps)",
					  option_name(opt), id, what, what);
			break;
		}
		*ids = xrealloc(*ids, (*n + 1) * sizeof(**ids));
		(*ids)[(*n)++] = id;
	}
	if (!err && !tok && *n == 0)
		err = usage_error("%s '%s': no %s id given", option_name(opt), arg, what);
	free(copy);
	return err;
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
		return usage_error("-f '%s': unknown format; give folded, pprof, callgrind or svg",
				   o->format);
	/* Serving or pushing, the whole run is written only where -o says. */
	if (!o->noutputs && !o->listen && !o->push) {
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

/* --listen HOST:PORT (an IPv6 address in brackets): its form; the address itself is tried later. */
static int check_listen(const char *arg)
{
	const char *colon = strrchr(arg, ':');
	char *end;
	long port;

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
	const char *cpu_arg = NULL, *stack_size_arg = NULL, *min_block_arg = NULL;
	const char *push_interval_arg = NULL;
	uint32_t max_rate;
	int c, err = 0;

	memset(o, 0, sizeof(*o));
	o->frequency = 99;
	o->cfi_unwind = true;	/* --unwind auto */
	o->duration = -1;
	o->interval = 1;
	o->stack_storage_size = 16384;
	o->max_stacks = 16384;
	o->ring_buffer_kib = 0;	/* by --unwind, below */
	o->stack_size = 16384;
	o->push_interval = 10;
	o->command_line = join_args(argc, argv);
	max_rate = max_sample_rate();

	opterr = 0;
	while (!err && (c = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
		switch (c) {
		case 'F':
			err = parse_u32(c, optarg, 1, max_rate, "a rate in Hz",
					" (the kernel's perf_event_max_sample_rate)", &o->frequency);
			break;
		case 'd':
			err = parse_seconds(c, optarg, 0.001, 365 * 86400.0, &o->duration);
			break;
		case 'p':
			err = parse_ids(c, optarg, &o->tgids, &o->ntgids);
			break;
		case 't':
			err = parse_ids(c, optarg, &o->pids, &o->npids);
			break;
		case OPT_CGROUP:
			o->cgroup = optarg;
			break;
		case 'C':
			cpu_arg = optarg;
			break;
		case 'U':
			o->user_only = true;
			break;
		case 'K':
			o->kernel_only = true;
			break;
		case 'I':
			o->idle = true;
			break;
		case OPT_PER_PID:
			o->per_pid = true;
			break;
		case 'f':
			o->format = optarg;
			break;
		case 'o':
			if (!*optarg)
				err = usage_error("-o: empty file name; give a path, or - for stdout");
			o->outputs = xrealloc(o->outputs, (o->noutputs + 1) * sizeof(*o->outputs));
			o->outputs[o->noutputs].path = strcmp(optarg, "-") ? optarg : NULL;
			o->outputs[o->noutputs++].format = -1;
			break;
		case OPT_INTERVAL:
			err = parse_seconds(c, optarg, 0.01, 3600, &o->interval);
			break;
		case OPT_STACK_STORAGE:
			err = parse_u32(c, optarg, 1, MAX_STACK_STORAGE, "a number of stacks", NULL,
					&o->stack_storage_size);
			break;
		case OPT_MAX_STACKS:
			err = parse_u32(c, optarg, 1, MAX_COUNTS, "a number of keys", NULL, &o->max_stacks);
			break;
		case OPT_RING_BUFFER:
			err = parse_u32(c, optarg, 4, 1 << 20, "a power of two of KiB", NULL,
					&o->ring_buffer_kib);
			if (!err && (o->ring_buffer_kib & (o->ring_buffer_kib - 1)))
				err = usage_error("--ring-buffer-size %s is not a power of two; give e.g. 4096",
						  optarg);
			break;
		case OPT_UNWIND:
			o->cfi_unwind = !strcmp(optarg, "auto");
			o->dwarf_unwind = !strcmp(optarg, "dwarf");
			if (!o->cfi_unwind && !o->dwarf_unwind && strcmp(optarg, "fp"))
				err = usage_error("--unwind '%s': unknown; give auto (CFI in the kernel), fp "
						  "(frame pointers) or dwarf", optarg);
			break;
		case OPT_NO_PYTHON:
			o->no_python = true;
			break;
		case OPT_OFF_CPU:
			o->off_cpu = true;
			break;
		case OPT_WALL:
			o->wall = true;
			break;
		case OPT_MIN_BLOCK:
			min_block_arg = optarg;
			err = parse_u32(c, optarg, 0, 3600u * 1000000, "a time in microseconds", NULL,
					&o->min_block_us);
			break;
		case OPT_LISTEN:
			o->listen = optarg;
			err = check_listen(optarg);
			break;
		case OPT_PUSH:
			o->push = optarg;
			if (strncmp(optarg, "http://", 7) && strncmp(optarg, "https://", 8))
				err = usage_error("--push %s: give the server's URL, e.g. "
						  "http://pyroscope:4040", optarg);
			break;
		case OPT_PUSH_INTERVAL:
			push_interval_arg = optarg;
			err = parse_seconds(c, optarg, 1, 3600, &o->push_interval);
			break;
		case OPT_APP_NAME:
			o->app_name = optarg;
			if (!*optarg)
				err = usage_error("--app-name: empty; give the name to file profiles under");
			break;
		case OPT_ROTATE:
			err = parse_seconds(c, optarg, 1, 86400, &o->rotate);
			break;
		case OPT_KEEP:
			err = parse_u32(c, optarg, 1, 1000000, "a number of files", NULL, &o->keep);
			break;
		case OPT_STACK_SIZE:
			stack_size_arg = optarg;
			err = parse_u32(c, optarg, 1024, 65536, "a number of bytes", NULL, &o->stack_size);
			if (!err && o->stack_size % 1024)
				err = usage_error("--stack-size %s is not a multiple of 1024; give e.g. 16384",
						  optarg);
			break;
		case OPT_BTF:
			o->btf = optarg;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case 'V':
			printf("bpfprof %s\n", BPFPROF_VERSION);
			return -1;
		case ':':
			err = usage_error("option '%s' needs a value; see bpfprof --help",
					  optopt ? option_name(optopt) : argv[optind - 1]);
			break;
		default:
			if (optopt && optopt < 256)
				err = usage_error("unknown option '-%c'; see bpfprof --help", optopt);
			else
				err = usage_error("unknown option '%s'; see bpfprof --help", argv[optind - 1]);
			break;
		}
	}
	if (err)
		return err;
	if (optind < argc)
		return usage_error("unexpected argument '%s'; bpfprof takes options only (a process: -p PID)",
				   argv[optind]);
	if (o->user_only && o->kernel_only)
		return usage_error("-U and -K exclude each other; give one, or neither for both stacks");
	/* Options that would do nothing are refused, so nobody thinks they did. */
	if (o->dwarf_unwind && o->kernel_only)
		return usage_error("--unwind dwarf unwinds user stacks, which -K leaves out; drop one of "
				   "them");
	if (stack_size_arg && !o->dwarf_unwind)
		return usage_error("--stack-size %s: the stack is copied only with --unwind dwarf; add "
				   "it, or drop --stack-size", stack_size_arg);
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
	if (min_block_arg && !o->off_cpu && !o->wall)
		return usage_error("--min-block %s: off-CPU time is counted only with --off-cpu or "
				   "--wall; add one, or drop --min-block", min_block_arg);
	if ((push_interval_arg || o->app_name) && !o->push)
		return usage_error("%s: it says how to push; add --push URL, or drop it",
				   o->app_name ? "--app-name" : "--push-interval");
	if (o->push && !o->app_name) {
		static char host[256];

		if (gethostname(host, sizeof(host) - 1) || !host[0])
			strcpy(host, "bpfprof");
		o->app_name = host;
	}
	if (o->keep && !o->rotate)
		return usage_error("--keep %u: it keeps rotated files; add --rotate SECONDS, or drop "
				   "--keep", o->keep);
	if (o->rotate && !o->noutputs)
		return usage_error("--rotate writes files: add -o FILE (its name gets each interval's "
				   "start)");
	for (size_t i = 0; o->rotate && i < o->noutputs; i++)
		if (!o->outputs[i].path)
			return usage_error("--rotate writes files, not stdout: give -o FILE instead of -o -");
	if ((err = resolve_formats(o)))
		return err;
	/* Whole stacks through the ring buffer need more room than the fallback alone. */
	if (!o->ring_buffer_kib)
		o->ring_buffer_kib = o->dwarf_unwind ? 65536 : 2048;
	if (o->cgroup && (err = check_cgroup(o)))
		return err;
	if (o->duration > 0 && o->interval > o->duration)
		o->interval = o->duration;
	return check_cpus(o, cpu_arg);
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
