// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Benchmark of unwind tables (cfi_rows.h): the CPU time to build each
 * file's table from its CFI, median of ROUNDS builds (the file read from the
 * page cache each time, as bpfprof reads it once per file), with its rows
 * and their bytes in the BPF map.
 *
 * usage: bench-tables [ROUNDS] FILE...
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bpfprof/cfi_rows.h"

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 0, i, r;

	if (rounds <= 0 || argc < 3) {
		fprintf(stderr, "usage: bench-tables ROUNDS FILE...\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	printf("| file | rows | MB in the map | build, ms of CPU (median of %d) |\n|---|---|---|---|\n",
	       rounds);
	for (i = 2; i < argc; i++) {
		double *ms = calloc(rounds, sizeof(*ms));
		size_t rows = 0;

		for (r = 0; r < rounds; r++) {
			struct cfi_rows t = { 0 };
			double start = cpu_ms();
			int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
			Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;

			if (!elf || cfi_rows_build(elf, NULL, &t)) {
				fprintf(stderr, "bench-tables: cannot build the table of '%s'\n", argv[i]);
				return 1;
			}
			rows = t.nr;
			cfi_rows_free(&t);
			elf_end(elf);
			close(fd);
			ms[r] = cpu_ms() - start;
		}
		qsort(ms, rounds, sizeof(*ms), cmp);
		printf("| %s | %zu | %.2f | %.2f |\n", argv[i], rows, rows * sizeof(struct unwind_row) / 1e6,
		       ms[rounds / 2]);
		free(ms);
	}
	return 0;
}
