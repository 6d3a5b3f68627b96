// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The fuzz targets' runtimes' table: empty. The real one (runtime.c)
 * brings every runtime's module and the sampler with it; the readers
 * fuzzed here ask it only which files stand for their folder
 * (interp_names.c). Not in the unit tests, which link the real one.
 */
#include <stddef.h>

#include "bpfprof/runtime_info.h"

uint32_t runtime_info_count(void)
{
	return 0;
}

const struct runtime_info *runtime_info_at(uint32_t i)
{
	(void)i;
	return NULL;
}
