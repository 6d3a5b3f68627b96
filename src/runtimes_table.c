// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * `bpfprof runtimes`: the runtimes' descriptors (runtime_info.h) as the
 * Markdown table docs/runtimes.md holds word for word (e2e/docs checks it).
 */
#include <stdio.h>
#include <string.h>

#include "bpfprof/cli.h"
#include "bpfprof/runtime_info.h"

const char runtimes_synopsis[] = "bpfprof runtimes";

int runtimes_main(int argc, char **argv)
{
	uint32_t i;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("Usage: %s\n"
		       "Prints what bpfprof reads of each runtime (versions, builds, what is not\n"
		       "read, how the layout is found, what tests it), as a Markdown table.\n",
		       runtimes_synopsis);
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "bpfprof: runtimes takes no arguments; give bpfprof runtimes\n");
		return EXIT_USAGE;
	}
	printf("| runtime | read | builds read | not read | layout found by | tested by |\n"
	       "|---|---|---|---|---|---|\n");
	for (i = 0; i < runtime_info_count(); i++) {
		const struct runtime_info *r = runtime_info_at(i);

		printf("| %s (`--no-%s`) | %s | %s | %s | %s | %s |\n", r->what, r->option,
		       r->versions, r->builds, r->not_read, r->layout, r->tested);
	}
	return ferror(stdout) || fflush(stdout) ? EXIT_RUNTIME : 0;
}
