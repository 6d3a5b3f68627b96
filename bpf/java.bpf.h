/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * HotSpot's processes as the native walk sees them (java_frames.h says
 * how its frames are walked): which processes are JVMs, from the files
 * they map, and whether a pc is in a JVM's code cache, where the native
 * walk has no table rows and hands over to Java's walk (java_walk.bpf.h).
 */
#ifndef BPFPROF_JAVA_BPF_H
#define BPFPROF_JAVA_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "interp.bpf.h"
#include "settings.bpf.h"
#include "bpfprof/java_frames.h"

/* Files that hold a HotSpot JVM, by identity; written by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct unwind_file_key);
	__type(value, struct java_file);
	__uint(max_entries, 64);
} java_files SEC(".maps");

/* JVM processes by tgid: from their mappings as read (scan_mappings), or by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct java_process);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} java_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} java_notices SEC(".maps");

/* A process maps code of file at e: if the file holds a JVM, the process is Java's. */
static __always_inline void java_mapping_seen(__u32 tgid, __u32 gen, const struct exec_mapping *e)
{
	struct java_process p = {};
	struct java_file *f;

	if (!runtime_on(RUNTIME_JAVA) || !(f = bpf_map_lookup_elem(&java_files, &e->file)))
		return;
	p.gen = gen;
	p.known = f->l.known;
	p.version = f->version;
	p.vm = f->vm;
	p.file = f->file;
	p.base = e->start - e->offset;
	p.l = f->l;
	bpf_map_update_elem(&java_procs, &tgid, &p, BPF_ANY);
}

/*
 * Whether pc is in the code cache of JVM process tgid, once its Java walk
 * has read where that lies: the native walk stops there for it.
 */
static __always_inline bool java_code_at(__u32 tgid, __u32 gen, __u64 pc)
{
	struct java_process *p;

	if (!runtime_on(RUNTIME_JAVA) || !(p = bpf_map_lookup_elem(&java_procs, &tgid)))
		return false;
	return p->gen == gen && pc >= p->lo && pc < p->hi;
}

#endif
