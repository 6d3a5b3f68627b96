/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Profiles read back, for bpfprof diff: folded lines ("comm;frame;... N",
 * frames root first, "_[k]" kernel, "_[j]" JIT, "_[i]" inlined), or pprof
 * (profile.proto, gzipped or not). What a diff needs is kept: each
 * sample's frames by name and kind, its thread name, pid and count (of the
 * "samples" type if the profile has one, else of its first). A pprof's
 * frames are named as the folded writer names them (a runtime's function
 * "name (file:first)", a frame nothing named "[file+0xoffset]"), so one
 * profile reads alike from either. Readers of
 * untrusted input: bounds checked, they never print; a bad file gives
 * -EINVAL and what is wrong in why.
 */
#ifndef BPFPROF_PROFILE_READ_H
#define BPFPROF_PROFILE_READ_H

#include <stddef.h>

#include "bpfprof/profile.h"

#define READ_WHY 160

int profile_read_folded(struct profile *p, const char *buf, size_t len, char why[READ_WHY]);
int profile_read_pprof(struct profile *p, const void *buf, size_t len, char why[READ_WHY]);
/* Either, by its first bytes (gzip or protobuf: pprof; text: folded). */
int profile_read(struct profile *p, const void *buf, size_t len, char why[READ_WHY]);

#endif
