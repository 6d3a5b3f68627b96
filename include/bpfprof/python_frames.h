/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the BPF program's CPython frame walk (bpf/python.bpf.h) and
 * userspace (src/runtime/) agree on: where an interpreter keeps its thread
 * states and frames (one py_offsets per CPython version), which files are
 * interpreters, and the Python frames of a sample. Compiled by both sides.
 */
#ifndef BPFPROF_PYTHON_FRAMES_H
#define BPFPROF_PYTHON_FRAMES_H

#include "bpfprof/interp.h"
#include "bpfprof/unwind_row.h"

/* Python's id among the runtimes (interp.h), and its counters in their stats block. */
#define RUNTIME_PYTHON 0
enum py_stat {
	PY_STAT_SAMPLES,	/* recorded samples of Python processes */
	PY_STAT_UNSUPPORTED,	/* an interpreter version whose frames are not read */
	PY_STAT_NO_THREAD,	/* the thread has no thread state (a thread Python did not start) */
	PY_STAT_NO_FRAME,	/* the thread runs no Python code (before the first, or done) */
	PY_STAT_END,		/* walks that found frames, by how they ended (enum interp_walk_end) */
	PY_STAT_MAX = PY_STAT_END + INTERP_WALK_END_MAX
};
#define STAT_PY(what) RUNTIME_STAT(RUNTIME_PYTHON, PY_STAT_##what)
_Static_assert(PY_STAT_MAX <= RUNTIME_STATS, "its counters fit its block");

/* How a version keeps its frames: py_offsets.frames. */
enum py_frame_layout {
	PY_FRAMES_NONE = 0,	/* a version bpfprof cannot read: native frames only */
	PY_FRAMES_310,		/* PyFrameObjects linked by f_back; f_lasti counts code units */
	PY_FRAMES_311,		/* _PyInterpreterFrames by previous; is_entry marks an eval call's first */
	PY_FRAMES_312,		/* as 3.11, but an eval call starts with a frame owned by the C stack */
	PY_FRAMES_314,		/* as 3.12, but f_executable is a tagged _PyStackRef (PY_STACKREF_TAGS) */
	PY_FRAMES_38,		/* 3.8, 3.9: as 3.10, but f_lasti counts bytes (lines: co_lnotab) */
};

/* _PyInterpreterFrame.owner of the frame an eval call pushes first (3.12, 3.13). */
#define PY_FRAME_OWNED_BY_CSTACK 3

/*
 * 3.14 (Include/internal/pycore_interpframe_structs.h): the enum grew
 * FRAME_OWNED_BY_INTERPRETER at 3, which an eval call's first frame now
 * has (Python/ceval.c: entry.frame.owner), and moved FRAME_OWNED_BY_CSTACK
 * to 4, which no frame is given. Neither holds a code object: both are
 * skipped, 3 marking the eval call.
 */
#define PY_FRAME_OWNED_BY_INTERPRETER_314 3
#define PY_FRAME_OWNED_BY_CSTACK_314 4
/*
 * A _PyStackRef's tag bits (3.14's pycore_stackref.h, the build with the
 * GIL: Py_TAG_REFCNT 1, and 3 for a tagged int, never a code object):
 * cleared, f_executable is the code object's address (8-aligned).
 */
#define PY_STACKREF_TAGS 3ull

/*
 * Byte offsets of the members the walk and the naming read, for one
 * version. 0xffff: the version has no such member.
 */
#define PY_NO_MEMBER 0xffff
struct py_offsets {
	__u16 version;			/* major << 8 | minor, e.g. 0x030b */
	__u16 frames;			/* enum py_frame_layout */
	/* Walk: _PyRuntime -> main interpreter -> its threads -> each one's newest frame. */
	__u16 runtime_interpreters_head; /* _PyRuntimeState.interpreters.head */
	__u16 interp_threads_head;	/* PyInterpreterState.threads.head (3.8-3.10: tstate_head) */
	__u16 tstate_next;		/* PyThreadState.next */
	__u16 tstate_thread_id;		/* PyThreadState.thread_id: the thread's pthread_self() */
	__u16 tstate_frame;		/* 3.8-3.10: .frame; 3.11, 3.12: .cframe; 3.13: .current_frame */
	__u16 cframe_current_frame;	/* 3.11, 3.12: _PyCFrame.current_frame; else PY_NO_MEMBER */
	__u16 frame_code;		/* f_code (3.13: f_executable) */
	__u16 frame_previous;		/* 3.8-3.10: f_back; else previous */
	__u16 frame_instr;		/* 3.8-3.10: int f_lasti; 3.11, 3.12: prev_instr; 3.13: instr_ptr */
	__u16 frame_entry;		/* 3.11: bool is_entry; 3.12, 3.13: char owner; 3.8-3.10: none */
	/* Naming: a code object and the strings and bytes it points to. */
	__u16 code_filename;		/* PyCodeObject.co_filename (a str) */
	__u16 code_name;		/* co_name */
	__u16 code_qualname;		/* co_qualname; 3.8-3.10: none (co_name then) */
	__u16 code_firstlineno;		/* int co_firstlineno */
	__u16 code_linetable;		/* a bytes: co_lnotab (3.8, 3.9), co_linetable (3.10's, 3.11's form) */
	__u16 code_code_adaptive;	/* 3.11+: where the bytecode starts in the code object */
	__u16 unicode_state;		/* PyASCIIObject.state: a 32-bit word of bit fields */
	__u16 unicode_length;		/* PyASCIIObject.length (code points) */
	__u16 unicode_ascii_data;	/* sizeof(PyASCIIObject): a compact ASCII string's bytes */
	__u16 unicode_compact_data;	/* sizeof(PyCompactUnicodeObject): other compact strings' */
	__u16 bytes_size;		/* PyVarObject.ob_size of a bytes */
	__u16 bytes_data;		/* PyBytesObject.ob_sval */
	__u16 object_type;		/* PyObject.ob_type */
	__u16 reserved;
};

/*
 * Where the eval loop's code lies: _PyEval_EvalFrameDefault's own bytes,
 * then the blocks of code with no symbol of their own its direct jumps
 * lead to (GCC's hot/cold split puts most of the loop in one such block,
 * _PyEval_EvalFrameDefault.cold, whose name a stripped file drops). A
 * native frame in any of them is an eval call. [lo, hi); unused: 0, 0.
 */
#define PY_EVAL_RANGES 3

struct py_eval_code {
	__u64 lo[PY_EVAL_RANGES], hi[PY_EVAL_RANGES];
};

/*
 * A file holding a CPython interpreter (the python binary, or libpython),
 * by its identity as the kernel knows it. A process mapping its code at
 * start - offset has _PyRuntime at start - offset + runtime_rel.
 */
struct python_file {
	__u64 runtime_rel;		/* _PyRuntime's address less the code's (vaddr - offset) */
	__u64 code_type_rel;		/* PyCode_Type's, the same way */
	struct py_eval_code eval_rel;	/* the eval loop's code, the same way (lo 0: none) */
	struct py_offsets off;		/* off.frames PY_FRAMES_NONE: a version not read */
	__u32 unread;			/* why not (python_offsets.h: enum py_unread); userspace's */
	__u32 reserved;
};

/* A Python process: where its interpreter's state is (the BPF program's, by tgid). */
struct python_process {
	__u64 runtime;			/* _PyRuntime's address in the process */
	__u64 code_type;		/* PyCode_Type's: what a code object's ob_type points at */
	__u32 gen;			/* the process's generation it holds for */
	__u32 reserved;
	struct py_offsets off;
	struct py_eval_code eval;	/* the eval loop's code in the process (lo 0: none) */
};

/*
 * A Python frame (interp.h's interp_frame): its code object, and in instr
 * where in it (with INTERP_FRAME_ENTRY on an eval call's first): 3.8,
 * 3.9, f_lasti (bytes); 3.10, f_lasti (code units); later, the
 * instruction pointer less the code object's address (bytes).
 */

#endif
