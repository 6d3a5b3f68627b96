/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* -p, -t and --cgroup: which tasks are followed, at a sample and at a switch. */
#ifndef BPFPROF_FILTER_BPF_H
#define BPFPROF_FILTER_BPF_H

#include "common.bpf.h"
#include "settings.bpf.h"

/* -p and -t: the ids to keep (value unused). Sized by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1);
} tgid_filter SEC(".maps"), pid_filter SEC(".maps");

/* --cgroup: the cgroup v2 directory whose tasks (and descendants') we keep. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} cgroup_filter SEC(".maps");

/* Whether the current task (tgid, pid) is followed. */
static __always_inline bool wanted(__u32 tgid, __u32 pid)
{
	bool by_id = settings.filter_tgids || settings.filter_pids;
	bool keep = !by_id;

	if (settings.filter_tgids && bpf_map_lookup_elem(&tgid_filter, &tgid))
		keep = true;
	if (settings.filter_pids && bpf_map_lookup_elem(&pid_filter, &pid))
		keep = true;
	if (keep && settings.filter_cgroup)
		keep = bpf_current_task_under_cgroup(&cgroup_filter, 0) == 1;
	return keep;
}

#endif
