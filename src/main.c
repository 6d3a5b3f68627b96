// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <malloc.h>
#include <string.h>

#include "bpfprof/cli.h"
#include "bpfprof/diff.h"
#include "bpfprof/record.h"
#include "bpfprof/runtime_info.h"

/* No subcommand: the profiler, its options the whole command line. */
static int profile_main(int argc, char **argv)
{
	struct options o;
	int rc = options_parse(&o, argc, argv);

	if (rc == 0)
		rc = record(&o);
	else if (rc < 0)
		rc = 0;		/* --help, --version */
	options_release(&o);
	return rc;
}

/*
 * The subcommands, as bpftool's cmds[]: one named by argv[1] gets the
 * command line from its name on; adding one is a line here. The last
 * entry, nameless, is the default: anything else is the profiler's.
 */
static const struct cmd {
	const char *name;
	int (*func)(int argc, char **argv);
} cmds[] = {
	{ "diff", diff_main },
	{ "runtimes", runtimes_main },
	{ NULL, profile_main },
};

int main(int argc, char **argv)
{
	const struct cmd *c;

	/*
	 * Big buffers (inflated debug sections) get mappings of their own and
	 * go back to the kernel when freed. A fixed threshold: glibc would
	 * raise it after the first such free and keep the next ones in the heap.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	for (c = cmds; c->name; c++)
		if (argc > 1 && !strcmp(argv[1], c->name))
			return c->func(argc - 1, argv + 1);
	return c->func(argc, argv);
}
