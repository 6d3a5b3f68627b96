/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A CPython code object named from another process's memory: its
 * qualified name, file, first line and line table, and the line of an
 * instruction in it. Memory is read through one callback, so the same
 * code names a live process and a test's hand-made bytes. Everything read
 * is bounded and checked: a freed or scribbled address gives an error, not
 * a name. Never prints.
 */
#ifndef BPFPROF_PYTHON_CODE_H
#define BPFPROF_PYTHON_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "bpfprof/interp_names.h"
#include "bpfprof/python_frames.h"


/* At most this many code points of a name are read; a line table of at most this many bytes. */
#define PY_NAME_MAX 1024
#define PY_LINETABLE_MAX (1u << 20)

struct py_code_info {
	char *qualname;		/* UTF-8; 3.8-3.10: co_name */
	char *filename;		/* UTF-8 */
	uint32_t firstlineno;
	uint8_t *linetable;	/* co_linetable's bytes (3.8, 3.9: co_lnotab's) */
	uint32_t linetable_len;
};

/*
 * The code object at code, whose ob_type must be code_type: 0 with *out
 * filled (release it), or a negative errno (-EINVAL: not a code object,
 * or a string or table that cannot be one; -EFAULT etc.: unreadable).
 */
int python_code_read(const struct py_offsets *o, uint64_t code_type, interp_read_fn *read,
		     void *ctx, uint64_t code, struct py_code_info *out);
void python_code_release(struct py_code_info *c);

/*
 * The source line of the instruction a frame was at (struct interp_frame's
 * instr, without INTERP_FRAME_ENTRY); the first line when the table does not
 * say.
 */
uint32_t python_code_line(const struct py_offsets *o, const struct py_code_info *c, uint32_t instr);

/*
 * The line of byte offset addr in the bytecode, from a line table of the
 * layout frames (enum py_frame_layout) starting at firstlineno; -1 when it
 * has none there. Exposed for the fuzz target.
 */
int python_linetable_line(int frames, const uint8_t *table, size_t len, int firstlineno,
			  uint64_t addr);


#endif
