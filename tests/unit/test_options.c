// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The command line: options_parse on argv arrays (every kind of value, the
 * ranges, each message word for word, options that exclude each other),
 * settings_from_options' derived values, and the option table, --help and
 * the man page naming the same options. Needs no root: the checks against
 * this machine use this process's own ids and the online CPUs.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfprof/cgroups.h"
#include "bpfprof/cli.h"
#include "bpfprof/output.h"
#include "bpfprof/luajit_frames.h"
#include "bpfprof/python_frames.h"
#include "bpfprof/ruby_frames.h"
#include "bpfprof/settings.h"
#include "bpfprof/util.h"
#include "unit.h"

/* Whether settings c read runtime kind's frames. */
#define FRAMES_READ(c, kind) ((c)->bpf.runtime_frames >> (kind) & 1)

/* argv for options_parse: "bpfprof" and the arguments (getopt permutes it, so not const). */
#define ARGV(...) ((char *[]){ "bpfprof", __VA_ARGS__, NULL })

/* A temporary file in place of fd, until restore_fd(). */
static int redirect_fd(int fd, int *saved)
{
	char path[] = "/tmp/bpfprof-unit-options.XXXXXX";
	int tmp = mkstemp(path);

	unlink(path);
	*saved = dup(fd);
	dup2(tmp, fd);
	return tmp;
}

/* What was written to the temporary file; fd back as it was. */
static char *restore_fd(int fd, int saved, int tmp)
{
	struct strbuf sb;
	char buf[4096];
	ssize_t n;

	dup2(saved, fd);
	close(saved);
	strbuf_init(&sb);
	lseek(tmp, 0, SEEK_SET);
	while ((n = read(tmp, buf, sizeof(buf))) > 0)
		strbuf_add(&sb, buf, n);
	close(tmp);
	return strbuf_detach(&sb);
}

/* options_parse(o, argv), with what it writes to stdout and stderr (the caller frees them). */
static int parse(struct options *o, char **argv, char **out, char **err)
{
	int argc = 0, rc, saved_out, saved_err, tmp_out, tmp_err;

	while (argv[argc])
		argc++;
	fflush(stdout);
	fflush(stderr);
	tmp_out = redirect_fd(STDOUT_FILENO, &saved_out);
	tmp_err = redirect_fd(STDERR_FILENO, &saved_err);
	rc = options_parse(o, argc, argv);
	fflush(stdout);
	fflush(stderr);
	*out = restore_fd(STDOUT_FILENO, saved_out, tmp_out);
	*err = restore_fd(STDERR_FILENO, saved_err, tmp_err);
	return rc;
}

static char *joined(char **argv)
{
	struct strbuf sb;

	strbuf_init(&sb);
	for (; *argv; argv++)
		strbuf_addf(&sb, "%s%s", sb.len ? " " : "", **argv ? *argv : "''");
	return strbuf_detach(&sb);
}

/* argv parses (exit 0) with nothing said; o holds the options (the caller releases them). */
static bool parse_ok(struct options *o, char **argv)
{
	char *out, *err, *args = joined(argv);
	int rc = parse(o, argv, &out, &err);
	bool ok = CHECK(rc == 0 && !*out && !*err, "%s: parses", args);

	if (!ok)
		printf("#   exit %d, stderr: %s", rc, err);
	free(out);
	free(err);
	free(args);
	return ok;
}

/* argv is refused with exit 2 and exactly the line "bpfprof: message". */
static void expect_usage(char **argv, const char *message)
{
	struct options o;
	char *out, *err, *want, *args = joined(argv);
	int rc = parse(&o, argv, &out, &err);

	CHECK(rc == EXIT_USAGE && !*out, "%s: exit 2 (got %d), nothing on stdout", args, rc);
	if (asprintf(&want, "bpfprof: %s\n", message) < 0)
		abort();
	expect_text(err, want, args);
	options_release(&o);
	free(want);
	free(out);
	free(err);
	free(args);
}

static uint32_t max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	unsigned long v = 100000;

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 100000;
		fclose(f);
	}
	return v ? v : 1;
}

/* A process id nothing has now: a child that has exited and been waited for. */
static pid_t gone_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

static void test_defaults(void)
{
	struct options o;
	size_t nonline;
	int *online;

	if (!parse_ok(&o, ARGV(NULL)))
		return;
	CHECK(o.frequency == 99 && o.duration < 0 && o.interval == 1 && o.push_interval == 10,
	      "defaults: 99 Hz, until a signal, drains every second, pushes every 10 s");
	CHECK(o.stack_storage_size == 16384 && o.max_stacks == 16384 && o.stack_size == 16384 &&
		      o.ring_buffer_kib == 0,
	      "defaults: 16384 stacks, keys and stack bytes; the ring buffer by --unwind (0)");
	CHECK(o.cfi_unwind && !o.dwarf_unwind && !o.no_runtime[RUNTIME_PYTHON] && !o.off_cpu && !o.wall &&
		      !o.min_block_us && !o.rotate && !o.keep && !o.verbose,
	      "defaults: --unwind auto with Python frames, CPU samples, no rotation");
	CHECK(o.noutputs == 1 && !o.outputs[0].path && o.outputs[0].format == FORMAT_FOLDED,
	      "defaults: folded to stdout");
	CHECK(!o.listen && !o.push && !o.app_name && !o.cgroup && !o.ntgids && !o.npids,
	      "defaults: no agent, no filter");
	CHECK(!online_cpus(&online, &nonline) && o.ncpus == nonline &&
		      !memcmp(o.cpus, online, nonline * sizeof(*online)),
	      "defaults: every online CPU (%zu)", o.ncpus);
	expect_text(o.command_line, "bpfprof", "the command line, for the record");
	free(online);
	options_release(&o);
}

static void test_numbers(void)
{
	struct options o;

	if (parse_ok(&o, ARGV("-F", "999", "--max-stacks", "100", "--stack-storage-size", "262144")))
		CHECK(o.frequency == 999 && o.max_stacks == 100 && o.stack_storage_size == 262144,
		      "u32: -F 999, --max-stacks 100, --stack-storage-size at its maximum");
	options_release(&o);
	if (parse_ok(&o, ARGV("--frequency=250", "--ring-buffer-size", "4")))
		CHECK(o.frequency == 250 && o.ring_buffer_kib == 4, "u32: --frequency=250, the smallest ring");
	options_release(&o);
	if (parse_ok(&o, ARGV("--unwind", "dwarf", "--stack-size", "1024")))
		CHECK(o.stack_size == 1024, "u32: --stack-size at its minimum");
	options_release(&o);
	if (parse_ok(&o, ARGV("-d", "2.5", "--interval", "0.01")))
		CHECK(o.duration == 2.5 && o.interval == 0.01, "seconds: -d 2.5, --interval 0.01");
	options_release(&o);
	if (parse_ok(&o, ARGV("-d", "0.5")))
		CHECK(o.interval == 0.5, "seconds: the drain interval is at most -d (0.5)");
	options_release(&o);
	if (parse_ok(&o, ARGV("--off-cpu", "--min-block", "3600000000")))
		CHECK(o.min_block_us == 3600000000u, "u32: --min-block at its maximum (an hour)");
	options_release(&o);
}

static void test_ids_flags_strings(void)
{
	char pid[16], tid[16], pids[48];
	struct options o;

	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(tid, sizeof(tid), "%d", gettid());
	snprintf(pids, sizeof(pids), "%d,%d", getpid(), getpid());
	if (parse_ok(&o, ARGV("-p", pids, "-p", pid, "-t", tid)))
		CHECK(o.ntgids == 3 && o.tgids[0] == (uint32_t)getpid() && o.tgids[2] == (uint32_t)getpid() &&
			      o.npids == 1 && o.pids[0] == (uint32_t)gettid(),
		      "ids: -p PID,PID -p PID appended, -t TID");
	options_release(&o);
	if (parse_ok(&o, ARGV("-U", "-I", "--per-pid", "--no-python", "-v", "-vv", "--btf", "/x")))
		CHECK(o.user_only && !o.kernel_only && o.idle && o.per_pid && o.no_runtime[RUNTIME_PYTHON] &&
			      o.verbose == 3 && !strcmp(o.btf, "/x"),
		      "flags: -U -I --per-pid --no-python; -v counted (3); --btf as given");
	options_release(&o);
	if (parse_ok(&o, ARGV("-C", "0")))
		CHECK(o.ncpus == 1 && o.cpus[0] == 0 && !strcmp(o.cpu_list, "0"), "-C 0: CPU 0 only");
	options_release(&o);
	if (parse_ok(&o, ARGV("--listen", "[::1]:6060")))
		CHECK(!strcmp(o.listen, "[::1]:6060") && o.noutputs == 0,
		      "--listen [::1]:6060: no whole-run output without -o");
	options_release(&o);
	if (parse_ok(&o, ARGV("--push", "http://host:4040"))) {
		char host[256] = "";

		gethostname(host, sizeof(host) - 1);
		CHECK(o.app_name && !strcmp(o.app_name, *host ? host : "bpfprof") && o.push_interval == 10,
		      "--push: the application's name is the host name (%s)", o.app_name);
	}
	options_release(&o);
	if (parse_ok(&o, ARGV("--push", "https://h", "--app-name", "me", "--push-interval", "5")))
		CHECK(!strcmp(o.app_name, "me") && o.push_interval == 5,
		      "--push with --app-name and --push-interval");
	options_release(&o);
}

static void test_choices_outputs(void)
{
	struct options o;

	if (parse_ok(&o, ARGV("--unwind", "fp")))
		CHECK(!o.cfi_unwind && !o.dwarf_unwind, "choice: --unwind fp");
	options_release(&o);
	if (parse_ok(&o, ARGV("--unwind", "dwarf")))
		CHECK(!o.cfi_unwind && o.dwarf_unwind, "choice: --unwind dwarf");
	options_release(&o);
	if (parse_ok(&o, ARGV("--unwind", "fp", "--unwind", "auto")))
		CHECK(o.cfi_unwind && !o.dwarf_unwind, "choice: the last --unwind counts (auto)");
	options_release(&o);
	if (parse_ok(&o, ARGV("-o", "a.pb.gz", "-o", "b.svg", "--output", "callgrind.out.1", "-o", "-",
			      "-o", "d")))
		CHECK(o.noutputs == 5 && o.outputs[0].format == FORMAT_PPROF &&
			      o.outputs[1].format == FORMAT_SVG &&
			      o.outputs[2].format == FORMAT_CALLGRIND && !o.outputs[3].path &&
			      o.outputs[3].format == FORMAT_FOLDED && o.outputs[4].format == FORMAT_FOLDED,
		      "-o five times: each format from its name, stdout and a plain name folded");
	options_release(&o);
	if (parse_ok(&o, ARGV("-f", "svg", "-o", "x", "-o", "y.svg")))
		CHECK(o.outputs[0].format == FORMAT_SVG && o.outputs[1].format == FORMAT_SVG,
		      "-f svg: every output");
	options_release(&o);
	if (parse_ok(&o, ARGV("--rotate", "60", "--keep", "3", "-o", "r.pb.gz")))
		CHECK(o.rotate == 60 && o.keep == 3, "--rotate 60 --keep 3 -o FILE");
	options_release(&o);
}

static void test_help_version(void)
{
	struct options o;
	char *out, *err, *usage = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&usage, &len);

	options_usage(f);
	fclose(f);
	CHECK(parse(&o, ARGV("-h"), &out, &err) == -1 && !*err, "-h: exit 0, nothing on stderr");
	expect_text(out, usage, "-h: the usage on stdout");
	CHECK(strstr(usage, "\n  -F, --frequency HZ          samples per second per CPU (default 99)\n") &&
		      strstr(usage, "\n      --push-interval SECONDS with --push or --otlp: the interval (default 10)\n") &&
		      strstr(usage, "(waiting, sleeping, preempted),\n"
				    "                              by the stack"),
	      "--help: letters, long-only options and continuation lines in their columns");
	options_release(&o);
	free(out);
	free(err);
	CHECK(parse(&o, ARGV("--version"), &out, &err) == -1, "--version: exit 0");
	expect_text(out, "bpfprof " BPFPROF_VERSION "\n", "--version: the version");
	options_release(&o);
	free(out);
	free(err);
	free(usage);
}

struct refusal {
	char *args[7];
	const char *message;
};

static const struct refusal refusals[] = {
	{ { "--bogus" }, "unknown option '--bogus'; see bpfprof --help" },
	{ { "-Z" }, "unknown option '-Z'; see bpfprof --help" },
	{ { "-F" }, "option '-F' needs a value; see bpfprof --help" },
	{ { "--frequency" }, "option '-F' needs a value; see bpfprof --help" },
	{ { "--btf" }, "option '--btf' needs a value; see bpfprof --help" },
	{ { "ls" }, "unexpected argument 'ls'; bpfprof takes options only (a process: -p PID)" },
	{ { "--stack-storage-size", "0" },
	  "--stack-storage-size 0 is out of range; give a number of stacks from 1 to 262144" },
	{ { "--stack-storage-size", "262145" },
	  "--stack-storage-size 262145 is out of range; give a number of stacks from 1 to 262144" },
	{ { "--max-stacks", "many" },
	  "--max-stacks 'many': not a whole number; give a number of keys from 1 to 4194304" },
	{ { "--max-stacks", "+5" },
	  "--max-stacks '+5': not a whole number; give a number of keys from 1 to 4194304" },
	{ { "--min-block", "3600000001", "--off-cpu" },
	  "--min-block 3600000001 is out of range; give a time in microseconds from 0 to 3600000000" },
	{ { "--keep", "0" }, "--keep 0 is out of range; give a number of files from 1 to 1000000" },
	{ { "--ring-buffer-size", "2" },
	  "--ring-buffer-size 2 is out of range; give a power of two of KiB from 4 to 1048576" },
	{ { "--ring-buffer-size", "12" }, "--ring-buffer-size 12 is not a power of two; give e.g. 4096" },
	{ { "--stack-size", "1000" }, "--stack-size 1000 is out of range; give a number of bytes from 1024 to 65536" },
	{ { "--stack-size", "5000" }, "--stack-size 5000 is not a multiple of 1024; give e.g. 16384" },
	{ { "-d", "0" }, "-d 0 is out of range; give from 0.001 to 31536000 seconds" },
	{ { "-d", "nan" }, "-d 'nan': not a number of seconds; give e.g. -d 10" },
	{ { "-d", "soon" }, "-d 'soon': not a number of seconds; give e.g. -d 10" },
	{ { "--interval", "0" }, "--interval 0 is out of range; give from 0.01 to 3600 seconds" },
	{ { "--push-interval", "0.5" }, "--push-interval 0.5 is out of range; give from 1 to 3600 seconds" },
	{ { "--rotate", "86401" }, "--rotate 86401 is out of range; give from 1 to 86400 seconds" },
	{ { "-p", "x1" }, "-p 'x1': not a whole number; give a process id from 1 to 2147483647" },
	{ { "-p", "," }, "-p ',': no process id given" },
	{ { "-t", "0" }, "-t 0 is out of range; give a thread id from 1 to 2147483647" },
	{ { "--unwind", "lbr" }, "--unwind 'lbr': unknown; give auto (CFI in the kernel), fp (frame pointers) or dwarf" },
	{ { "-o", "" }, "-o: empty file name; give a path, or - for stdout" },
	{ { "--listen", "6060" }, "--listen 6060: give HOST:PORT, e.g. 127.0.0.1:6060 or [::1]:6060" },
	{ { "--listen", "h:99999" },
	  "--listen h:99999: the port is not a number from 0 to 65535 (0: any free one); give e.g. 127.0.0.1:6060" },
	{ { "--listen", "::1:6060" }, "--listen ::1:6060: put an IPv6 address in brackets, e.g. [::1]:6060" },
	{ { "--push", "ftp://h" }, "--push ftp://h: give the server's URL, e.g. http://pyroscope:4040" },
	{ { "--push", "http://h", "--app-name", "" }, "--app-name: empty; give the name to file profiles under" },
	{ { "-f", "flame" }, "-f 'flame': unknown format; give folded, pprof, callgrind, svg or otlp" },
	{ { "-f", "pprof", "-o", "x.svg" },
	  "-o x.svg is named like svg output but -f says pprof; rename it or drop -f" },
	{ { "-o", "a.folded", "-o", "a.folded" }, "-o a.folded is given twice; give each output once" },
	{ { "-o", "-", "-o", "-" }, "-o - is given twice; give each output once" },
	{ { "-C", "x" }, NULL },	/* below: names the online CPUs */
	{ { "-C", "4096" }, NULL },
	/* Options that would do nothing together. */
	{ { "-U", "-K" }, "-U and -K exclude each other; give one, or neither for both stacks" },
	{ { "--unwind", "dwarf", "-K" },
	  "--unwind dwarf unwinds user stacks, which -K leaves out; drop one of them" },
	{ { "--stack-size", "4096" },
	  "--stack-size 4096: the stack is copied only with --unwind dwarf; add it, or drop --stack-size" },
	{ { "--off-cpu", "--wall" },
	  "--off-cpu and --wall exclude each other: --wall holds the off-CPU time too; give one" },
	{ { "--wall" },
	  "--wall profiles chosen threads: add -p PID, -t TID or --cgroup PATH (--off-cpu is for the whole machine)" },
	{ { "--off-cpu", "--unwind", "dwarf" },
	  "--unwind dwarf copies stacks at CPU samples only; with --off-cpu give --unwind auto or fp" },
	{ { "--off-cpu", "-I" }, "-I records the idle task, which is never off the CPU; drop -I" },
	{ { "--min-block", "5" },
	  "--min-block 5: off-CPU time is counted only with --off-cpu or --wall; add one, or drop --min-block" },
	{ { "--push-interval", "5" },
	  "--push-interval: it says how to push; add --push URL or --otlp URL, or drop it" },
	{ { "--app-name", "me" },
	  "--app-name: it names what is pushed; add --push URL, --otlp URL or -o FILE.otlp.pb, or drop it" },
	{ { "--otlp", "otelcol:4318" },
	  "--otlp otelcol:4318: give the OTLP/HTTP receiver's URL, e.g. http://otelcol:4318" },
	{ { "--keep", "3" }, "--keep 3: it keeps rotated files; add --rotate SECONDS, or drop --keep" },
	{ { "--rotate", "60" }, "--rotate writes files: add -o FILE (its name gets each interval's start)" },
	{ { "--rotate", "60", "-o", "-" }, "--rotate writes files, not stdout: give -o FILE instead of -o -" },
};

static void test_refusals(void)
{
	char online[256] = "", msg[512];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	size_t i;

	if (!f || !fgets(online, sizeof(online), f))
		CHECK(false, "read /sys/devices/system/cpu/online");
	if (f)
		fclose(f);
	online[strcspn(online, "\n")] = '\0';
	for (i = 0; i < ARRAY_SIZE(refusals); i++) {
		char *argv[ARRAY_SIZE(refusals[i].args) + 2] = { "bpfprof" };
		const char *message = refusals[i].message;

		memcpy(argv + 1, refusals[i].args, sizeof(refusals[i].args));
		if (!message) {
			if (!strcmp(argv[2], "x"))
				snprintf(msg, sizeof(msg), "-C 'x': not a CPU list; give e.g. -C 0 or -C 0,2-3 (online: %s)",
					 online);
			else
				snprintf(msg, sizeof(msg), "-C %s: CPU %s is not online; give CPUs from %s", argv[2],
					 argv[2], online);
			message = msg;
		}
		expect_usage(argv, message);
	}
}

/* Refusals whose message names this machine: its sample rate limit, tasks, cgroups. */
static void test_machine_refusals(void)
{
	char arg[64], msg[256], pid[16], *mount = cgroup2_mount();
	uint32_t max = max_sample_rate();
	pid_t gone = gone_pid();

	snprintf(msg, sizeof(msg),
		 "-F 0 is out of range; give a rate in Hz from 1 to %u (the kernel's perf_event_max_sample_rate)", max);
	expect_usage(ARGV("-F", "0"), msg);
	snprintf(arg, sizeof(arg), "%u", max + 1);
	snprintf(msg, sizeof(msg),
		 "-F %u is out of range; give a rate in Hz from 1 to %u (the kernel's perf_event_max_sample_rate)",
		 max + 1, max);
	expect_usage(ARGV("-F", arg), msg);
	snprintf(msg, sizeof(msg),
		 "-F '-5': not a whole number; give a rate in Hz from 1 to %u (the kernel's perf_event_max_sample_rate)",
		 max);
	expect_usage(ARGV("-F", "-5"), msg);
	snprintf(arg, sizeof(arg), "%d", gone);
	snprintf(msg, sizeof(msg), "-p %d: no such process; give the id of a running process (see ps)", gone);
	expect_usage(ARGV("-p", arg), msg);
	snprintf(msg, sizeof(msg), "-t %d: no such thread; give the id of a running thread (see ps)", gone);
	expect_usage(ARGV("-t", arg), msg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	expect_usage(ARGV("-I", "-p", pid),
		     "-I records the idle task (pid 0), which -p and -t leave out; drop -I");
	if (!mount) {
		printf("# skip --cgroup: no cgroup v2 hierarchy is mounted\n");
		return;
	}
	snprintf(msg, sizeof(msg), "--cgroup '/nonexistent': no such cgroup directory; give a directory under %s",
		 mount);
	expect_usage(ARGV("--cgroup", "/nonexistent"), msg);
	snprintf(msg, sizeof(msg), "--cgroup '/tmp': not a cgroup v2 directory; give one under %s", mount);
	expect_usage(ARGV("--cgroup", "/tmp"), msg);
	free(mount);
}

static void test_cgroup(void)
{
	char *mount = cgroup2_mount();
	struct options o;

	if (!mount) {
		printf("# skip --cgroup: no cgroup v2 hierarchy is mounted\n");
		return;
	}
	if (parse_ok(&o, ARGV("--cgroup", mount, "--wall")))
		CHECK(o.cgroup_path && !strcmp(o.cgroup_path, mount) && o.wall,
		      "--cgroup %s: the cgroup v2 root, enough for --wall", mount);
	options_release(&o);
	if (parse_ok(&o, ARGV("--cgroup", ".")))
		CHECK(o.cgroup_path && !strncmp(o.cgroup_path, mount, strlen(mount)),
		      "--cgroup .: a relative path is taken inside the mount (%s)", o.cgroup_path);
	options_release(&o);
	free(mount);
}

void test_options(void)
{
	test_defaults();
	test_numbers();
	test_ids_flags_strings();
	test_choices_outputs();
	test_help_version();
	test_refusals();
	test_machine_refusals();
	test_cgroup();
}

/* settings_from_options on what argv parses to, with page_size. */
static bool settings_of(struct settings *s, struct options *o, char **argv, uint32_t page_size)
{
	if (!parse_ok(o, argv))
		return false;
	settings_from_options(s, o, 7, page_size);
	return true;
}

static void test_settings_sampler(void)
{
	struct options o;
	struct settings s;
	const struct sampler_config *c = &s.sampler;

	if (settings_of(&s, &o, ARGV(NULL), 4096))
		CHECK(s.kind == PROFILE_CPU && s.frequency == 99 && s.period_ns == 1000000000ULL / 99 &&
			      !s.trim_only && c->frequency == 99 && c->cpu_samples && !c->off_cpu &&
			      c->bpf.kernel_stacks && c->bpf.user_stacks && c->bpf.cfi_unwind && FRAMES_READ(c, RUNTIME_PYTHON) &&
			      !c->bpf.dwarf_unwind && !c->bpf.include_idle && c->cgroup_fd == 7 &&
			      c->ring_buffer_bytes == 1024u << 10 &&
			      c->bpf.stack_copy_bytes == 16384 && c->stack_storage_size == 16384 &&
			      c->max_stacks == 16384 && c->cpus == o.cpus && c->ncpus == o.ncpus &&
			      !c->btf_path && !c->on_sample && !c->ctx,
		      "settings, by default: CPU samples at 99 Hz, CFI walk with Python, 1 MiB ring, "
		      "no callbacks");
	options_release(&o);
	if (settings_of(&s, &o, ARGV("-F", "1000", "--off-cpu", "--min-block", "250"), 4096))
		CHECK(s.kind == PROFILE_OFF_CPU && s.period_ns == 1000000 && !c->cpu_samples && c->off_cpu &&
			      c->bpf.min_block_ns == 250000,
		      "settings, --off-cpu --min-block 250: no CPU samples, off-CPU time from 250 us");
	options_release(&o);
	if (settings_of(&s, &o, ARGV("--wall", "-p", "1"), 4096))
		CHECK(s.kind == PROFILE_WALL && c->cpu_samples && c->off_cpu && c->ntgids == 1 &&
			      c->tgids == o.tgids,
		      "settings, --wall -p 1: CPU samples and off-CPU time, the process filter");
	options_release(&o);
	if (settings_of(&s, &o, ARGV("-K"), 4096))
		CHECK(!c->bpf.user_stacks && c->bpf.kernel_stacks && !c->bpf.cfi_unwind && !FRAMES_READ(c, RUNTIME_PYTHON),
		      "settings, -K: no user stacks, so no CFI walk and no Python frames");
	options_release(&o);
	if (settings_of(&s, &o, ARGV("--no-python"), 4096))
		CHECK(c->bpf.cfi_unwind && !FRAMES_READ(c, RUNTIME_PYTHON) && FRAMES_READ(c, RUNTIME_LUAJIT),
		      "settings, --no-python: the CFI walk without Python, with LuaJIT");
	options_release(&o);
	if (settings_of(&s, &o, ARGV("--no-lua"), 4096))
		CHECK(c->bpf.cfi_unwind && FRAMES_READ(c, RUNTIME_PYTHON) && !FRAMES_READ(c, RUNTIME_LUAJIT),
		      "settings, --no-lua: the CFI walk with Python, without LuaJIT");
	options_release(&o);
	if (settings_of(&s, &o, ARGV("--no-ruby"), 4096))
		CHECK(c->bpf.cfi_unwind && FRAMES_READ(c, RUNTIME_PYTHON) && FRAMES_READ(c, RUNTIME_LUAJIT) &&
			      !FRAMES_READ(c, RUNTIME_RUBY),
		      "settings, --no-ruby: the CFI walk with Python and LuaJIT, without Ruby");
	options_release(&o);
	if (settings_of(&s, &o, ARGV("--unwind", "fp"), 4096))
		CHECK(!FRAMES_READ(c, RUNTIME_PYTHON) && !FRAMES_READ(c, RUNTIME_LUAJIT) && !FRAMES_READ(c, RUNTIME_RUBY),
		      "settings, --unwind fp: no interpreter frames (their processes are found by the walk)");
	options_release(&o);
	if (settings_of(&s, &o, ARGV("-U", "-I", "--btf", "/b"), 4096))
		CHECK(!c->bpf.kernel_stacks && c->bpf.user_stacks && c->bpf.include_idle && !strcmp(c->btf_path, "/b"),
		      "settings, -U -I --btf: user stacks only, the idle task, the BTF file");
	options_release(&o);
	if (settings_of(&s, &o, ARGV("--unwind", "dwarf", "--stack-size", "8192"), 4096))
		CHECK(c->bpf.dwarf_unwind && !c->bpf.cfi_unwind && c->ring_buffer_bytes == 65536u << 10 &&
			      c->bpf.stack_copy_bytes == 8192,
		      "settings, --unwind dwarf: stacks copied (8192 bytes), a 64 MiB ring");
	options_release(&o);
	if (settings_of(&s, &o, ARGV("--unwind", "dwarf", "--ring-buffer-size", "8"), 4096))
		CHECK(c->ring_buffer_bytes == 8192, "settings: --ring-buffer-size 8 wins over --unwind dwarf's");
	options_release(&o);
	if (settings_of(&s, &o, ARGV("--unwind", "fp"), 4096))
		CHECK(!c->bpf.cfi_unwind && !c->bpf.dwarf_unwind && !FRAMES_READ(c, RUNTIME_PYTHON),
		      "settings, --unwind fp: frame pointers only, so no Python frames");
	options_release(&o);
	if (settings_of(&s, &o, ARGV("--ring-buffer-size", "4"), 65536))
		CHECK(c->ring_buffer_bytes == 65536, "settings: the ring is at least a page (64 KiB pages)");
	options_release(&o);
	if (settings_of(&s, &o, ARGV("--ring-buffer-size", "4"), 4096))
		CHECK(c->ring_buffer_bytes == 4096, "settings: --ring-buffer-size 4 on 4 KiB pages");
	options_release(&o);
}

static void test_settings_trim(void)
{
	static const struct {
		char *args[6];
		bool trim_only;
	} cases[] = {
		{ { "--listen", "127.0.0.1:0" }, true },
		{ { "--listen", "127.0.0.1:0", "-o", "a.folded" }, false },
		{ { "--push", "http://h" }, true },
		{ { "--push", "http://h", "-o", "a.folded" }, false },
		{ { "--rotate", "60", "-o", "a.folded" }, true },
		{ { "--listen", "127.0.0.1:0", "--rotate", "60", "-o", "a.folded" }, true },
		{ { "-o", "a.folded" }, false },
		{ { "-d", "1" }, false },
	};
	struct options o;
	struct settings s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *argv[ARRAY_SIZE(cases[i].args) + 2] = { "bpfprof" }, *args;

		memcpy(argv + 1, cases[i].args, sizeof(cases[i].args));
		args = joined(argv);
		if (settings_of(&s, &o, argv, 4096))
			CHECK(s.trim_only == cases[i].trim_only, "settings, %s: %s", args,
			      cases[i].trim_only ? "only what windows need is kept" : "the whole run is kept");
		options_release(&o);
		free(args);
	}
}

void test_settings(void)
{
	test_settings_sampler();
	test_settings_trim();
}

/* A sorted set of option spellings ("-F", "--frequency"). */
struct spellings {
	char **s;
	size_t n, alloc;
};

static void add_spelling(struct spellings *set, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (strlen(set->s[i]) == len && !strncmp(set->s[i], s, len))
			return;
	ALLOC_GROW(set->s, set->n + 1, set->alloc);
	set->s[set->n++] = xstrndup(s, len);
}

/* Every match of --?[A-Za-z][a-z-]* in text[0..len), as grep -o finds them. */
static void add_spellings(struct spellings *set, const char *text, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t j = i;

		if (text[j] == '-') {
			j++;
			if (j < len && text[j] == '-')
				j++;
			if (j < len && ((text[j] >= 'A' && text[j] <= 'Z') || (text[j] >= 'a' && text[j] <= 'z'))) {
				for (j++; j < len && ((text[j] >= 'a' && text[j] <= 'z') || text[j] == '-'); j++)
					;
				add_spelling(set, text + i, j - i);
				i = j;
				continue;
			}
		}
		i++;
	}
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The set, sorted, a line each; frees it. */
static char *spelling_list(struct spellings *set)
{
	struct strbuf sb;
	size_t i;

	qsort(set->s, set->n, sizeof(*set->s), compare_strings);
	strbuf_init(&sb);
	for (i = 0; i < set->n; i++) {
		strbuf_addf(&sb, "%s\n", set->s[i]);
		free(set->s[i]);
	}
	free(set->s);
	return strbuf_detach(&sb);
}

/* --help's option column (its first 30 characters) on lines that start with spaces and a dash. */
static char *help_spellings(void)
{
	struct spellings set = { 0 };
	char *usage = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&usage, &len);

	options_usage(f);
	fclose(f);
	for (line = strtok_r(usage, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t spaces = strspn(line, " ");

		if (spaces && line[spaces] == '-')
			add_spellings(&set, line, strnlen(line, 30));
	}
	free(usage);
	return spelling_list(&set);
}

/* The man page's OPTIONS: the .BR line after each .TP, up to its fourth quote, unescaped. */
static char *man_spellings(const char *path)
{
	struct spellings set = { 0 };
	char line[1024], prev[1024] = "";
	bool in_options = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, ".SH ", 4))
			in_options = !strncmp(line, ".SH OPTIONS", 11);
		if (in_options && !strncmp(prev, ".TP", 3) && !strncmp(line, ".BR", 3)) {
			char plain[1024];
			size_t i, n = 0;
			int quotes = 0;

			for (i = 0; line[i] && line[i] != '\n'; i++) {
				if (line[i] == '\\' && line[i + 1] == '-') {
					plain[n++] = '-';
					i++;
				} else if (line[i] == '\\' && line[i + 1] == 'f' && line[i + 2] >= 'A' && line[i + 2] <= 'Z') {
					i += 2;
				} else if (line[i] == '"' && ++quotes == 4) {
					break;
				} else {
					plain[n++] = line[i];
				}
			}
			add_spellings(&set, plain, n);
		}
		strcpy(prev, line);
	}
	fclose(f);
	return spelling_list(&set);
}

/* Each row makes sense: spellings once, a value's name iff it takes one, defaults in range. */
static void test_option_rows(const struct cli_option *t, size_t n)
{
	size_t i, j, bad = 0;

	for (i = 0; i < n; i++) {
		bool value = t[i].kind != OPTION_FLAG && t[i].kind != OPTION_COUNT && t[i].kind != OPTION_PRINT;
		bool ranged = t[i].kind == OPTION_U32 || t[i].kind == OPTION_SECONDS;

		for (j = 0; j < i; j++)
			if (!strcmp(t[i].name, t[j].name) || (t[i].letter && t[i].letter == t[j].letter))
				bad += !CHECK(false, "--%s: its spelling is another option's (--%s)", t[i].name, t[j].name);
		if (value != !!t[i].arg || !*t[i].help || t[i].help[strlen(t[i].help) - 1] == '\n')
			bad += !CHECK(false, "--%s: a value's name iff it takes one, and a help line", t[i].name);
		if (ranged && !t[i].machine_max && t[i].min > t[i].max)
			bad += !CHECK(false, "--%s: its range %g to %g is empty", t[i].name, t[i].min, t[i].max);
		/* 0 and -1 say "not given"; any other default must be a value the option takes. */
		if (ranged && t[i].def > 0 && (t[i].def < t[i].min || (!t[i].machine_max && t[i].def > t[i].max)))
			bad += !CHECK(false, "--%s: its default %g is out of its range", t[i].name, t[i].def);
	}
	CHECK(!bad && n > 30, "the option table: %zu rows, each spelled once, with a help line, a value's "
	      "name iff it takes one, its default in its range", n);
}

/* The lines of a that b lacks, joined by spaces ("" if none); the caller frees it. */
static char *lines_not_in(const char *a, const char *b)
{
	struct strbuf sb, hay, needle;
	const char *line, *end;

	strbuf_init(&sb);
	strbuf_init(&hay);
	strbuf_init(&needle);
	strbuf_addf(&hay, "\n%s", b);
	for (line = a; (end = strchr(line, '\n')); line = end + 1) {
		strbuf_reset(&needle);
		strbuf_addf(&needle, "\n%.*s\n", (int)(end - line), line);
		if (!strstr(hay.buf, needle.buf))
			strbuf_addf(&sb, "%s%.*s", sb.len ? " " : "", (int)(end - line), line);
	}
	strbuf_release(&hay);
	strbuf_release(&needle);
	return strbuf_detach(&sb);
}

/* The same options in both lists, or which are missing where. */
static void expect_same_options(const char *got, const char *table, const char *where)
{
	char *missing = lines_not_in(table, got), *extra = lines_not_in(got, table);

	CHECK(!*missing && !*extra, "%s names the options of the table%s%s%s%s", where,
	      *missing ? "; lacks: " : "", missing, *extra ? "; names too: " : "", extra);
	free(missing);
	free(extra);
}

void test_option_spellings(void)
{
	struct spellings set = { 0 };
	const struct cli_option *t;
	char *table, *help, *man;
	size_t n, i;

	t = cli_options(&n);
	test_option_rows(t, n);
	for (i = 0; i < n; i++) {
		char s[64];

		if (t[i].letter) {
			snprintf(s, sizeof(s), "-%c", t[i].letter);
			add_spelling(&set, s, strlen(s));
		}
		snprintf(s, sizeof(s), "--%s", t[i].name);
		add_spelling(&set, s, strlen(s));
	}
	table = spelling_list(&set);
	help = help_spellings();
	man = man_spellings("src/bpfprof.8");
	expect_same_options(help, table, "--help");
	if (CHECK(man, "src/bpfprof.8 is readable (the unit tests run from the repository's root)"))
		expect_same_options(man, table, "the man page's OPTIONS");
	free(table);
	free(help);
	free(man);
}
