// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <malloc.h>
#include <string.h>

#include "bpfprof/cli.h"
#include "bpfprof/diff.h"
#include "bpfprof/record.h"

int main(int argc, char **argv)
{
	struct options o;
	int rc;

	/*
	 * Big buffers (inflated debug sections) get mappings of their own and
	 * go back to the kernel when freed. A fixed threshold: glibc would
	 * raise it after the first such free and keep the next ones in the heap.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	if (argc > 1 && !strcmp(argv[1], "diff"))
		return diff_main(argc - 1, argv + 1);
	rc = options_parse(&o, argc, argv);

	if (rc == 0)
		rc = record(&o);
	else if (rc < 0)
		rc = 0;		/* --help, --version */
	options_release(&o);
	return rc;
}
