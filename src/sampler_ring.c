// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The ring buffer's records: samples the maps could not take, sent whole;
 * off-CPU waits whose set was drained meanwhile; --unwind dwarf's samples
 * (registers and a copy of the stack); the walk's requests for a file's
 * unwind table. Each is handed out as it is read.
 */
#include <errno.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "sampler_internal.h"

/* A stack's bytes in a record as a count of frames, within 0..BPFPROF_MAX_DEPTH. */
static uint32_t frames_in(int32_t bytes)
{
	uint32_t n = bytes > 0 ? (uint32_t)bytes / 8 : 0;

	return n < BPFPROF_MAX_DEPTH ? n : BPFPROF_MAX_DEPTH;
}

/* A record's sample, stacks apart. */
static void head_sample(const struct record_head *h, struct raw_sample *rs)
{
	rs->tgid = h->tgid;
	rs->pid = h->pid;
	rs->gen = h->gen;
	rs->cgroup_id = h->cgroup_id;
	memcpy(rs->comm, h->comm, sizeof(rs->comm));
	rs->count = 1;
}

static void on_dwarf_record(struct sampler *s, const struct dwarf_record *r, size_t size)
{
	struct raw_user_state user = { r->ip, r->sp, r->bp, r->stack, r->stack_bytes };
	struct raw_sample rs = { 0 };

	if (size < offsetof(struct dwarf_record, stack) + r->stack_bytes)
		return;
	s->stats.received++;
	head_sample(&r->head, &rs);
	rs.kstack.ips = (const uint64_t *)r->kstack;
	rs.kstack.n = r->head.kstack_bytes > 0
		? stack_depth(rs.kstack.ips, r->head.kstack_bytes / 8) : 0;
	rs.user = r->ip ? &user : NULL;
	s->on_sample(s->ctx, &rs);
}

int sampler_on_record(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;
	const struct fallback_record *r = data;
	struct raw_sample rs = { 0 };

	if (size >= sizeof(struct drain_soon) && r->head.kind == RECORD_DRAIN_SOON) {
		s->drain_soon = true;
		return 0;
	}
	if (size >= sizeof(uint32_t) && r->head.kind == RECORD_DWARF) {
		if (size >= offsetof(struct dwarf_record, stack))
			on_dwarf_record(s, data, size);
		return 0;
	}
	if (size < offsetof(struct fallback_record, ips) || r->state >= STATE_MAX)
		return 0;
	/* __u64 and uint64_t are the same width but distinct types. */
	rs.kstack.ips = (const uint64_t *)r->ips;
	rs.kstack.n = frames_in(r->head.kstack_bytes);
	rs.ustack.ips = rs.kstack.ips + rs.kstack.n;
	rs.ustack.n = frames_in(r->ustack_bytes);
	if (size < offsetof(struct fallback_record, ips) + (rs.kstack.n + rs.ustack.n) * 8)
		return 0;
	rs.kstack.n = stack_depth(rs.kstack.ips, rs.kstack.n);
	rs.ustack.n = stack_depth(rs.ustack.ips, rs.ustack.n);
	head_sample(&r->head, &rs);
	if (r->head.kind == RECORD_OFF_CPU) {
		rs.state = r->state;
		rs.count = r->value;
		s->stats.received_off_ns += r->value;
	} else {
		s->stats.received++;
	}
	rs.walk = r->unwind;
	rs.interp.frames = r->interp.frames;
	rs.interp.n = r->interp.n < INTERP_MAX_FRAMES ? r->interp.n : INTERP_MAX_FRAMES;
	rs.interp.end = r->interp.end;
	rs.interp.runtime = r->interp.runtime;
	rs.interp.state = r->interp.state;
	s->on_sample(s->ctx, &rs);
	return 0;
}

int sampler_on_table_request(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;

	if (size >= sizeof(struct table_request) && s->on_table_request)
		s->on_table_request(s->ctx, data);
	return 0;
}

int sampler_poll(struct sampler *s, int timeout_ms)
{
	int n = ring_buffer__poll(s->rb, timeout_ms);

	/* --unwind dwarf's records wake us only in bulk: take what came meanwhile. */
	if (n == 0)
		n = ring_buffer__consume(s->rb);
	return n == -EINTR ? 0 : n;
}

int sampler_epoll_fd(const struct sampler *s)
{
	return ring_buffer__epoll_fd(s->rb);
}
