/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the BPF program's HotSpot frame walk (bpf/java.bpf.h) and userspace
 * (src/runtime/java*.c) agree on: which files hold a HotSpot JVM
 * (libjvm.so), the layout the walk reads, taken from the JVM's own
 * description of itself (vmStructs, java_file.c), and how a sample's Java
 * frames are recorded. Compiled by both sides.
 *
 * HotSpot's frames lie on the thread's native stack, between the C++
 * frames that called Java (JavaCalls::call_helper, through the call stub)
 * and those Java called (JNI, the VM's runtime). The native walk stops at
 * a pc in the JVM's code cache it has no table row for, and the Java walk
 * goes on from there: each frame's code blob found from the code cache's
 * segment map, left by its frame size (compiled code, stubs) or its frame
 * pointer (the interpreter); back in native code, the native walk goes on.
 * Each Java frame's return address stays in the native stack, and its
 * record says which native frame it stands for.
 *
 * A sample's Java frames travel as every runtime's do (struct interp_stack,
 * interp.h), with stack.runtime RUNTIME_JAVA, in these terms:
 *   frame.code        an interpreted frame's Method*; a compiled frame's
 *                     nmethod (its CodeBlob); a stub's CodeBlob;
 *   frame.instr       JAVA_FRAME_KIND(kind) | JAVA_FRAME_AT(i), i the index of
 *                     the native frame it stands for, | the bytecode index
 *                     (interpreted; JAVA_BCI_NONE if none) or the pc's
 *                     offset from the blob's code (compiled);
 *   frame.firstlineno what tells the code apart from code later at the same
 *                     address: an nmethod's compile id, a Method's
 *                     ConstMethod >> 3, 0 for a stub.
 *   stack.state       0.
 */
#ifndef BPFPROF_JAVA_FRAMES_H
#define BPFPROF_JAVA_FRAMES_H

#include "bpfprof/interp.h"
#include "bpfprof/unwind_row.h"

/* Java's id among the runtimes (interp.h), and its counters in their stats block. */
#define RUNTIME_JAVA 3
enum java_stat {
	JAVA_STAT_SAMPLES,	/* samples whose native walk reached a JVM's code cache */
	JAVA_STAT_NOT_READY,	/* a JVM whose code cache was not set up yet: native frames only */
	JAVA_STAT_UNKNOWN_VERSION,	/* a JVM whose layout bpfprof could not read */
	JAVA_STAT_NO_BLOB,	/* a pc in the code cache in no code blob: the walk cut there */
	JAVA_STAT_BAD_FRAME,	/* a frame's registers led nowhere: the walk cut there */
	JAVA_STAT_FRAMES,	/* Java frames walked */
	JAVA_STAT_END,		/* walks, by their end */
	JAVA_STAT_MAX = JAVA_STAT_END + INTERP_WALK_END_MAX
};
#define STAT_JAVA(what) RUNTIME_STAT(RUNTIME_JAVA, JAVA_STAT_##what)
_Static_assert(JAVA_STAT_MAX <= RUNTIME_STATS, "its counters fit its block");

/* A frame's kind, in frame.instr's top bits. */
enum java_frame_kind {
	JAVA_INTERPRETED = 1,	/* the template interpreter running a Method */
	JAVA_COMPILED = 2,	/* an nmethod: C1, C2, or a native method's wrapper */
	JAVA_STUB = 3,		/* other code of the VM's: the call stub, adapters, runtime stubs */
};
#define JAVA_FRAME_KIND(k) ((__u32)(k) << 29)
#define JAVA_FRAME_KIND_OF(instr) (((instr) >> 29) & 3)
#define JAVA_FRAME_AT(i) ((__u32)(i) << 22)
#define JAVA_FRAME_AT_OF(instr) (((instr) >> 22) & 0x7f)
#define JAVA_FRAME_POS_MASK 0x3fffffu
#define JAVA_BCI_NONE JAVA_FRAME_POS_MASK

/*
 * Where the walk finds what it reads: offsets into HotSpot's classes, and
 * static variables as file offsets (an address is the file's load address
 * + it, as runtime_elf's code segment maps it). From vmStructs; 0 where
 * the JVM has no such field.
 */
struct java_layout {
	__u64 code_heaps;		/* CodeCache::_heaps: GrowableArray<CodeHeap*>* */
	__u64 low_bound, high_bound;	/* CodeCache::_low_bound, _high_bound: address */
	__u16 array_len, array_data;	/* GrowableArrayBase::_len, GrowableArray<int>::_data */
	__u16 heap_memory, heap_segmap;	/* CodeHeap::_memory, _segmap (VirtualSpace) */
	__u16 heap_log2_segment;	/* CodeHeap::_log2_segment_size (int) */
	__u16 vs_low_boundary, vs_high_boundary;	/* VirtualSpace::_low_boundary, _high_boundary */
	__u16 heap_block_size;		/* sizeof(HeapBlock): a blob follows its block's header */
	__u16 blob_name;		/* CodeBlob::_name: const char * */
	__u16 blob_frame_complete;	/* CodeBlob::_frame_complete_offset (int, or int16 at 25) */
	__u16 blob_frame_size;		/* CodeBlob::_frame_size: int, in words */
	__u16 blob_code_begin;		/* CodeBlob::_code_begin (a pointer), or _code_offset (int) */
	__u16 nmethod_compile_id;	/* nmethod::_compile_id (int) */
	__u16 nmethod_orig_pc;		/* nmethod::_orig_pc_offset (int): from the frame's sp */
	__u16 nmethod_deopt;		/* nmethod's deopt handler: a pointer, or an offset (int) */
	__u16 method_const_method;	/* Method::_constMethod */
	__u16 const_method_size;	/* sizeof(ConstMethod): its bytecodes follow it */
	__u8 code_offsets;		/* 1: code begin and the deopt handler are offsets from the blob */
	__u8 known;			/* 1: every field the walk needs was found */
	__u16 reserved;
};

/* Bytes of a code blob's header the walk reads at once: every offset above lies in them. */
#define JAVA_BLOB_READ 512

/* A file holding a HotSpot JVM (libjvm.so). */
struct java_file {
	struct java_layout l;
	__u32 version;			/* the JDK's feature version: 17, 21, 25 */
	__u32 vm;			/* userspace's number for the file (what names its frames) */
	struct unwind_file_key file;	/* its own identity: where its processes look it up again */
};

/* The code cache's heaps a JVM may have: non-nmethods, profiled, non-profiled. */
#define JAVA_MAX_HEAPS 4

struct java_heap {
	__u64 lo, hi;			/* its memory */
	__u64 segmap;			/* its segment map: a byte per segment */
	__u32 shift;			/* log2 of its segments' size */
	__u32 reserved;
};

/*
 * A JVM process, by tgid (java_procs). Its file's layout is known once
 * userspace has read the offsets from a process running it (vmStructs'
 * constructor computes them as the library loads: java_file.h): until
 * then its samples ask for it now and then with an empty notice.
 */
struct java_process {
	__u32 gen;
	__u8 known;			/* its file's layout was read */
	__u8 nr_heaps;			/* heaps read; 0: its code cache not read yet */
	__u16 version;
	__u32 vm;			/* its file's java_file.vm */
	__u32 asked;			/* samples that found the layout not known yet */
	struct unwind_file_key file;	/* its libjvm.so */
	__u64 base;			/* libjvm's load address, as java_layout's offsets take it */
	__u64 lo, hi;			/* the code cache's bounds, once read */
	struct java_heap heaps[JAVA_MAX_HEAPS];
	struct java_layout l;
};

#endif
