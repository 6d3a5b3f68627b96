// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bpfprof/cli.h"
#include "bpfprof/record.h"

int main(int argc, char **argv)
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
