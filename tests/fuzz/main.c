// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* libFuzzer's entry point for one target, named at build time: -DFUZZ_TARGET=fuzz_NAME. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FUZZ_TARGET(data, size);
	return 0;
}
