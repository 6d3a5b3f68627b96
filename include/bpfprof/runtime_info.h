/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the rest of bpfprof knows of a runtime: its descriptor, given by its
 * module (src/runtime/NAME.c) and listed once, in runtime.c's table. The
 * command line makes its --no-OPTION from it, the writers its frames'
 * colour and its samples' label, the sampler its BPF maps' names; none of
 * them names a runtime.
 */
#ifndef BPFPROF_RUNTIME_INFO_H
#define BPFPROF_RUNTIME_INFO_H

#include <stdint.h>

#include "bpfprof/interp.h"

/* One channel of a frame's colour: base + span * the name's hash value number v (0-2). */
struct runtime_hue {
	uint8_t base, span, v;
};

struct runtime_info {
	const char *name;		/* its module's NAME, its BPF maps' prefix (NAME_files) */
	uint32_t kind;			/* its id (interp.h): interp_stack.runtime, its stats block */
	const char *option;		/* --no-OPTION leaves its frames out; the SVG's class */
	const char *what;		/* its frames in messages, capitalised */
	const char *frame_type;		/* OTLP's profile.frame.type, as OpenTelemetry names it */
	/*
	 * What is read, in the words --no-OPTION's help, `bpfprof runtimes`
	 * and the docs use (e2e/docs checks README.md, the man page and
	 * docs/ against them): the versions ("PRODUCT 1.0 to 1.2", the
	 * product's name first), the builds read and those not, how the
	 * layout is found, and what tests it.
	 */
	const char *versions, *builds, *not_read, *layout, *tested;
	struct runtime_hue colour[3];	/* its frames' red, green and blue in the SVG */
	/* Files its frames show with their folder's name (a package's), NULL-ended; or NULL. */
	const char *const *folder_files;
	/* A label its samples carry in pprof (what its VM was doing), by interp_stack.state; or NULL. */
	const char *state_label;
	const char *const *state_names;
	uint32_t nr_states;
	/*
	 * A process of it whose samples are mostly in code its JIT made that no
	 * perf map names: known by a library it maps (a base name) or by its
	 * name, and told what would name them ("PID" stands for its id); or NULL.
	 */
	const char *jit_library, *jit_comm, *jit_hint;
};

/* Runtimes known, in the table's order. */
uint32_t runtime_info_count(void);
const struct runtime_info *runtime_info_at(uint32_t i);
/* The runtime whose id is kind, or NULL. */
const struct runtime_info *runtime_info_of(uint32_t kind);

/*
 * `bpfprof runtimes`: what each runtime's frames are read in, as the
 * Markdown table docs/limits.md holds (src/runtimes_table.c). Exit code.
 */
int runtimes_main(int argc, char **argv);
extern const char runtimes_synopsis[];

#endif
