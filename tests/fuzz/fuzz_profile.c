// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A profile read back as bpfprof diff reads its BEFORE and AFTER: folded
 * text or pprof, told apart by the bytes. What reads must write as folded
 * and as pprof, and each of those read again must give the same folded
 * text: the readers and writers agree on whatever they accept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/output.h"
#include "bpfprof/profile_read.h"
#include "fuzz.h"

/* p as folded text (malloc'd), or NULL if it cannot be written. */
static char *as_folded(const struct profile *p, size_t *len)
{
	struct write_options wo = { 0 };
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	FUZZ_CHECK(write_folded(f, p, &wo) == 0);
	fclose(f);
	return buf;
}

int fuzz_profile(const uint8_t *data, size_t size)
{
	struct write_options wo = { 0 };
	struct profile p, again, via_pprof;
	char why[READ_WHY], *text, *text2, *text3, *pb = NULL;
	size_t len, len2, len3, pb_len = 0;
	FILE *f;

	profile_init(&p);
	why[0] = '\0';
	if (profile_read(&p, data, size, why)) {
		FUZZ_CHECK(why[0]);	/* a refusal says why */
		profile_release(&p);
		return 0;
	}
	text = as_folded(&p, &len);
	FUZZ_CHECK(text != NULL);

	/* The folded text reads back to itself. */
	profile_init(&again);
	FUZZ_CHECK(profile_read_folded(&again, text, len, why) == 0);
	text2 = as_folded(&again, &len2);
	FUZZ_CHECK(text2 && len2 == len && !memcmp(text, text2, len));

	/* So does the pprof of it. */
	f = open_memstream(&pb, &pb_len);
	FUZZ_CHECK(f && write_pprof(f, &p, &wo) == 0);
	if (f)
		fclose(f);
	profile_init(&via_pprof);
	FUZZ_CHECK(profile_read_pprof(&via_pprof, pb, pb_len, why) == 0);
	text3 = as_folded(&via_pprof, &len3);
	FUZZ_CHECK(text3 && len3 == len && !memcmp(text, text3, len));

	free(text);
	free(text2);
	free(text3);
	free(pb);
	profile_release(&p);
	profile_release(&again);
	profile_release(&via_pprof);
	return 0;
}
