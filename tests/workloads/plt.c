// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Hot calls through the PLT: plt_loop() calls libc's strlen() on a short
 * string, each call through the binary's PLT stub (strlen@plt), whose CFI is
 * the PLT's expression (the CFA depends on where in the stub the pc is).
 * Built without frame pointers too (plt-nofp), so only CFI finds main.
 *
 * usage: plt SECONDS   (default 5)
 */
#include <stdlib.h>
#include <string.h>

#include "work.h"

volatile size_t sink;
const char *volatile word = "x";

__attribute__((noinline)) void plt_loop(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			sink += strlen(word);
}

int main(int argc, char **argv)
{
	plt_loop(argc > 1 ? atof(argv[1]) : 5);
	return 0;
}
