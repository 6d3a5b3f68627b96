/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * perf side-band records: what processes map, exec, fork and exit while we
 * profile, as perf record follows them, and kernel code that comes and goes. One dummy software event per CPU
 * with mmap2, comm and task set writes PERF_RECORD_MMAP2, COMM, FORK and
 * EXIT into a ring buffer per CPU; sideband_read() drains them all, sorts
 * them by time (a task moves between CPUs) and hands them out decoded.
 */
#ifndef BPFPROF_SIDEBAND_H
#define BPFPROF_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sb_type {
	SB_MMAP,		/* an executable file or anonymous mapping appeared */
	SB_COMM,		/* a thread's name changed; exec set when a program was exec'd */
	SB_FORK,		/* a new process (pid == tid) or thread */
	SB_EXIT,		/* a thread (and with pid == tid, its process) ended */
	SB_LOST,		/* the kernel dropped records: the buffer was full */
	SB_KSYMBOL,		/* kernel code appeared or went: a BPF program, a trampoline */
};

struct sb_event {
	enum sb_type type;
	uint32_t pid, tid;	/* the process and thread the record is about */
	uint64_t time;		/* CLOCK_MONOTONIC ns */
	union {
		struct {
			uint64_t addr, len, pgoff;
			uint32_t maj, min;	/* 0 when the record carries a build ID instead */
			uint64_t ino;
			uint32_t prot, flags;
			uint8_t build_id[20];
			uint8_t build_id_size;	/* 0: none */
			const char *filename;	/* borrowed: valid during the callback */
		} mmap;
		struct {
			bool exec;
			const char *comm;	/* borrowed */
		} comm;
		struct {
			uint32_t ppid, ptid;
		} fork;
		uint64_t lost;
		struct {
			uint64_t addr;
			uint32_t len;
			uint16_t type;		/* PERF_RECORD_KSYMBOL_TYPE_* */
			bool unregister;
			const char *name;	/* borrowed */
		} ksymbol;
	};
};

typedef void sideband_fn(void *ctx, const struct sb_event *ev);

struct sideband;

/* Opens a side-band event on every given CPU (every online CPU: a process may run anywhere). */
int sideband_open(struct sideband **out, const int *cpus, size_t ncpus);
/* Hands out every record written so far, oldest first; returns how many. */
int sideband_read(struct sideband *sb, sideband_fn *fn, void *ctx);
/* Adds the buffers to an epoll set: each new record makes it readable. 0 or -errno. */
int sideband_watch(struct sideband *sb, int epoll_fd);
/* Records the kernel dropped because a buffer was full. */
uint64_t sideband_lost(const struct sideband *sb);
void sideband_free(struct sideband *sb);

/*
 * Decodes one record (perf_event_header first) written with sample_id_all
 * and sample_type TID|TIME. 0, 1 for a record of no interest, or -EINVAL
 * when it is malformed. Strings point into rec.
 */
int sideband_decode(const void *rec, size_t size, struct sb_event *ev);

#endif
