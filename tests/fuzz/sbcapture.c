// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Seeds for the side-band fuzz target: real perf side-band records, with
 * the attributes src/sideband.c asks for, of a fork, an exec, the
 * mappings of the program exec'd, its exit, an executable mapping of a
 * file and a thread name with ';' and a newline in it. Each record is
 * written to DIR/NN-TYPE, and all of them, as the ring held them, to
 * DIR/all. Needs root (a CPU-wide perf event).
 *
 * usage: sbcapture DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DATA_PAGES 64

static int open_event(int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.size = sizeof(attr),
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.ksymbol = 1,
		.build_id = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
	};
	int fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0 && errno == EINVAL) {
		attr.build_id = 0;	/* before Linux 5.12 */
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	return fd;
}

/* What a process does that the side-band reports. */
static void activity(void)
{
	pid_t child = fork();
	int fd;
	void *p;

	if (child == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (child > 0)
		waitpid(child, NULL, 0);
	fd = open("/bin/true", O_RDONLY);
	if (fd >= 0) {
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED)
			munmap(p, 4096);
		close(fd);
	}
	prctl(PR_SET_NAME, "seed;name\nx");
}

static int write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");
	int ok = f && fwrite(data, 1, len, f) == len;

	if (f && fclose(f))
		ok = 0;
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {
		[PERF_RECORD_MMAP] = "mmap", [PERF_RECORD_LOST] = "lost", [PERF_RECORD_COMM] = "comm",
		[PERF_RECORD_EXIT] = "exit", [PERF_RECORD_FORK] = "fork", [PERF_RECORD_MMAP2] = "mmap2",
		[PERF_RECORD_KSYMBOL] = "ksymbol",
	};
	size_t page = getpagesize(), size = DATA_PAGES * page, n = 0;
	struct perf_event_mmap_page *meta;
	uint64_t head, tail;
	uint8_t *data, *all;
	char path[4096];
	cpu_set_t cpus;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: sbcapture DIR\n");
		return 2;
	}
	/* One CPU: ours, so every record of our activity lands in this ring. */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
		perror("sbcapture: sched_setaffinity");
		return 1;
	}
	fd = open_event(0);
	if (fd < 0) {
		perror("sbcapture: perf_event_open (run as root)");
		return 1;
	}
	meta = mmap(NULL, page + size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (meta == MAP_FAILED) {
		perror("sbcapture: mmap");
		return 1;
	}
	data = (uint8_t *)meta + page;
	activity();
	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	tail = meta->data_tail;
	if (head - tail > (uint64_t)size) {
		fprintf(stderr, "sbcapture: the ring overflowed\n");
		return 1;
	}
	all = malloc(head - tail + 1);
	if (!all)
		return 1;
	/* Unwrapped copy; the records are then one after another. */
	for (uint64_t i = tail; i < head; i++)
		all[i - tail] = data[i % size];
	snprintf(path, sizeof(path), "%s/all", argv[1]);
	if (write_file(path, all, head - tail))
		goto fail;
	for (uint64_t off = 0; off + sizeof(struct perf_event_header) <= (size_t)(head - tail);) {
		struct perf_event_header h;
		const char *name;

		memcpy(&h, all + off, sizeof(h));
		if (h.size < sizeof(h) || off + h.size > head - tail)
			break;
		name = h.type < sizeof(names) / sizeof(names[0]) && names[h.type] ? names[h.type] :
		       "other";
		snprintf(path, sizeof(path), "%s/%02zu-%s", argv[1], n++, name);
		if (write_file(path, all + off, h.size))
			goto fail;
		off += h.size;
	}
	printf("sbcapture: %zu records in %s\n", n, argv[1]);
	free(all);
	return 0;
fail:
	perror(path);
	return 1;
}
