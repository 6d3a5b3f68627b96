// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Benchmark of the writers: builds a synthetic profile shaped like a busy
 * system's (100 processes of 20 programs, the kernel; stacks 8 to 48 deep,
 * each a walk down a fixed call graph where every function calls one of
 * four others, so stacks share prefixes as real ones do) with N distinct
 * stacks, then writes it in
 * each format, timing each and measuring the memory each needs beyond the
 * profile itself (peak RSS reset through /proc/self/clear_refs before each).
 *
 * usage: bench-writers [STACKS] [ROUNDS] [FORMAT]
 *        (default 50000 stacks, 5 rounds, every format)
 * Prints one line per format: median and min-max milliseconds, output
 * bytes, extra peak memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpfprof/output.h"
#include "bpfprof/profile.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The k-th function f may call: a fixed pseudo-random graph. */
static uint32_t callee(uint32_t f, uint32_t k, uint32_t n)
{
	uint64_t x = (uint64_t)f * 4 + k + 1;

	x *= 0x9e3779b97f4a7c15ULL;
	return (x >> 33) % n;
}

static void build(struct profile *p, uint32_t nstacks)
{
	enum { PROCS = 100, FUNCS = 20000, KFUNCS = 3000 };
	uint32_t user_maps[PROCS], kernel_map, *funcs = malloc(FUNCS * sizeof(*funcs));
	uint32_t *kfuncs = malloc(KFUNCS * sizeof(*kfuncs)), comms[PROCS], i;
	struct prof_mapping m = { 0 };
	char name[128];

	profile_init(p);
	for (i = 0; i < FUNCS; i++) {
		snprintf(name, sizeof(name), "app::module%u::Function_%u_handler", i % 97, i);
		funcs[i] = profile_string(p, name);
	}
	for (i = 0; i < KFUNCS; i++) {
		snprintf(name, sizeof(name), "kernel_function_%u", i);
		kfuncs[i] = profile_string(p, name);
	}
	for (i = 0; i < PROCS; i++) {
		snprintf(name, sizeof(name), "/usr/bin/service%u", i % 20);
		m.start = 0x555500000000ULL + i * 0x100000000ULL;
		m.limit = m.start + 0x10000000;
		m.offset = 0x1000;
		m.file = profile_string(p, name);
		m.pid = 1000 + i;
		user_maps[i] = profile_mapping(p, &m);
		snprintf(name, sizeof(name), "service%u", i % 20);
		comms[i] = profile_string(p, name);
	}
	memset(&m, 0, sizeof(m));
	m.start = 0xffffffff81000000ULL;
	m.limit = 0xffffffff83000000ULL;
	m.file = profile_string(p, "[kernel.kallsyms]");
	kernel_map = profile_mapping(p, &m);

	while (p->nr_stacks < nstacks) {
		uint32_t proc = next_random() % PROCS, depth = 8 + next_random() % 41;
		uint32_t kdepth = next_random() % 3 ? 0 : 3 + next_random() % 10, frames[64], d;
		struct prof_sample s = { 0 };

		if (kdepth >= depth)
			kdepth = depth - 1;
		/* Built leaf first, so walk the call graph from the root down, then reverse. */
		uint32_t walk[64], kwalk[16], f = (proc % 20) * 997 % FUNCS, k = 0;

		for (d = 0; d < depth - kdepth; d++) {
			walk[d] = f;
			f = callee(f, next_random() % 4, FUNCS);
		}
		for (d = 0; d < kdepth; d++) {
			kwalk[d] = k;
			k = callee(k, next_random() % 4, KFUNCS);
		}
		for (d = 0; d < depth; d++) {
			bool kernel = d < kdepth;
			uint32_t f = kernel ? kfuncs[kwalk[kdepth - 1 - d]] : funcs[walk[depth - 1 - d]];
			uint32_t map = kernel ? kernel_map : user_maps[proc];
			/* A few call sites per function, as in real code. */
			uint64_t addr = p->mappings[map].start + (f % 65536) * 64 + (next_random() % 4) * 16;
			uint32_t loc = profile_location_find(p, map, addr);

			if (loc == ITAB_NONE) {
				struct prof_line line = { profile_function(p, f, f, 0), 0 };

				loc = profile_location_add(p, map, addr, kernel ? FRAME_KERNEL : FRAME_USER,
							   &line, 1);
			}
			frames[d] = loc;
		}
		s.stack = profile_stack(p, frames, depth);
		s.pid = 1000 + proc;
		s.tid = s.pid + next_random() % 4;
		s.comm = comms[proc];
		s.count = 1 + next_random() % 50;
		profile_add_sample(p, &s);
	}
	free(funcs);
	free(kfuncs);
	p->frequency = 999;
	p->period_ns = 1000000000 / 999;
	p->duration_ns = 30000000000ULL;
	p->command_line = strdup("bpfprof -F 999 -d 30");
}

static long status_kb(const char *field)
{
	char buf[4096], *at;
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	at = strstr(buf, field);
	return at ? strtol(at + strlen(field) + 1, NULL, 10) : -1;
}

static void reset_peak(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "5", 1) < 0)
			perror("clear_refs");
		close(fd);
	}
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint32_t nstacks = argc > 1 ? strtoul(argv[1], NULL, 10) : 50000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, f, r;
	struct write_options o = { 0 };
	struct timespec t0;
	struct profile p;
	double build_ms;

	if (rounds < 1 || rounds > 100)
		rounds = 5;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	build(&p, nstacks);
	build_ms = ms_since(&t0);
	printf("profile: %u distinct stacks, %u samples, %u locations, %u functions, built in %.0f ms, "
	       "RSS %ld KiB\n", p.nr_stacks, p.nr_samples, p.nr_locations, p.nr_functions, build_ms,
	       status_kb("VmRSS:"));
	printf("%-10s %12s %14s %12s %14s\n", "format", "median ms", "min-max ms", "output KiB",
	       "extra peak KiB");
	for (f = 0; f < FORMAT_COUNT; f++) {
		double ms[100];
		long bytes = 0, extra = 0;

		if (argc > 3 && strcmp(argv[3], format_name(f)))
			continue;
		for (r = 0; r < rounds; r++) {
			FILE *out = tmpfile();
			long before;

			reset_peak();
			before = status_kb("VmRSS:");
			clock_gettime(CLOCK_MONOTONIC, &t0);
			if (format_writer(f)(out, &p, &o)) {
				fprintf(stderr, "bench-writers: %s failed\n", format_name(f));
				return 1;
			}
			fflush(out);
			ms[r] = ms_since(&t0);
			if (status_kb("VmHWM:") - before > extra)
				extra = status_kb("VmHWM:") - before;
			bytes = ftell(out);
			fclose(out);
		}
		qsort(ms, rounds, sizeof(ms[0]), cmp_double);
		printf("%-10s %12.1f %7.1f-%-6.1f %12ld %14ld\n", format_name(f), ms[rounds / 2], ms[0],
		       ms[rounds - 1], bytes / 1024, extra);
	}
	profile_release(&p);
	return 0;
}
