// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Benchmark of symbolization: names, files, lines and inline chains for a
 * list of addresses in a large binary with a separate debug file (libc with
 * Debian's libc6-dbg by default), by bpfprof's readers (ELF symbols and the
 * libdw index, read once per file as the symbolizer does), then by
 * eu-addr2line and binutils' addr2line on the same addresses, in the same
 * run. Prints addresses per second for each and the ratios.
 *
 * usage: bench-symbols [BINARY [ADDRESSES]]
 *        (default /lib/x86_64-linux-gnu/libc.so.6, 20000 addresses)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpfprof/debuginfo.h"
#include "bpfprof/dwarf.h"
#include "bpfprof/elf.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds that a shell command takes, its output thrown away; < 0 if it failed. */
static double time_command(const char *cmd)
{
	double t0 = now_s();
	int rc = system(cmd);

	return rc == 0 ? now_s() - t0 : -1;
}

/* Spreads n addresses over the functions: for each, its start and points inside it. */
static uint64_t *pick_addresses(const struct elf_symtab *t, size_t n)
{
	uint64_t *addrs = calloc(n ? n : 1, sizeof(*addrs));
	size_t i, funcs = 0;

	for (i = 0; i < t->nr; i++)
		funcs += t->syms[i].size > 0;
	for (i = 0; i < n && funcs; i++) {
		const struct elf_sym *s;
		size_t k = (i * 2654435761u) % t->nr;

		while (!t->syms[k].size)
			k = (k + 1) % t->nr;
		s = &t->syms[k];
		addrs[i] = s->addr + (i / t->nr * 7 + i) % s->size;
	}
	return addrs;
}

/* One pass of bpfprof's lookups over every address; returns frames found. */
static size_t symbolize_all(const struct elf_symtab *t, struct dwarf_index *d,
			    const uint64_t *addrs, size_t n)
{
	struct dwarf_frame frames[16];
	size_t i, found = 0;

	for (i = 0; i < n; i++) {
		int k = d ? dwarf_index_frames(d, addrs[i], frames, 16) : 0;

		found += k > 0 ? (size_t)k : elf_symtab_lookup(t, addrs[i]) != NULL;
	}
	return found;
}

int main(int argc, char **argv)
{
	const char *binary = argc > 1 ? argv[1] : "/lib/x86_64-linux-gnu/libc.so.6";
	size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 20000;
	struct debuginfo_dirs dirs = { 0 };
	struct debuginfo_elf bin;
	struct elf_symtab syms;
	struct dwarf_index *dwarf = NULL;
	char *debug_path = NULL, list[] = "/tmp/bench-symbols.XXXXXX", cmd[8192];
	double t0, cold, warm, eu, bu;
	uint64_t *addrs = NULL;
	size_t i, found;
	FILE *f;
	int fd, dfd;

	fd = open(binary, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || debuginfo_elf_read(&bin, fd)) {
		fprintf(stderr, "bench-symbols: cannot read '%s'\n", binary);
		return 1;
	}
	dfd = debuginfo_find(&dirs, binary, &bin, &debug_path);
	if (dfd < 0) {
		fprintf(stderr, "bench-symbols: no debug file for '%s' (install its -dbg package): %s\n",
			binary, strerror(-dfd));
		return 1;
	}
	/* What the symbolizer does per file, first use included: symbols, then the DWARF index. */
	t0 = now_s();
	if (elf_symtab_read_fd(&syms, dfd) || dwarf_index_open(&dwarf, dfd)) {
		fprintf(stderr, "bench-symbols: cannot read '%s'\n", debug_path);
		return 1;
	}
	addrs = pick_addresses(&syms, n);
	found = symbolize_all(&syms, dwarf, addrs, n);
	cold = now_s() - t0;
	t0 = now_s();
	symbolize_all(&syms, dwarf, addrs, n);
	warm = now_s() - t0;

	fd = mkstemp(list);
	f = fdopen(fd, "w");
	for (i = 0; i < n; i++)
		fprintf(f, "0x%llx\n", (unsigned long long)addrs[i]);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "eu-addr2line -f -i -e '%s' < %s > /dev/null 2>&1", debug_path, list);
	eu = time_command(cmd);
	snprintf(cmd, sizeof(cmd), "addr2line -f -i -e '%s' < %s > /dev/null 2>&1", debug_path, list);
	bu = time_command(cmd);
	unlink(list);

	printf("symbolizing %zu addresses of %s (debug file %s, %zu symbols): %zu frames\n", n,
	       binary, debug_path, syms.nr, found);
	printf("%-30s %10s %14s %10s\n", "", "seconds", "addresses/s", "speedup");
	printf("%-30s %10.3f %14.0f %10s\n", "bpfprof, first use", cold, n / cold, "");
	printf("%-30s %10.3f %14.0f %10s\n", "bpfprof, indexed", warm, n / warm, "");
	if (eu > 0)
		printf("%-30s %10.3f %14.0f %9.1fx\n", "eu-addr2line -f -i", eu, n / eu, eu / cold);
	if (bu > 0)
		printf("%-30s %10.3f %14.0f %9.1fx\n", "addr2line -f -i (binutils)", bu, n / bu, bu / cold);
	printf("(speedup: the tool's time over bpfprof's first-use time, index building included)\n");
	dwarf_index_free(dwarf);
	elf_symtab_release(&syms);
	debuginfo_elf_release(&bin);
	free(debug_path);
	free(addrs);
	return 0;
}
