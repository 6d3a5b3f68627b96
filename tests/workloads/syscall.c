// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Spends nearly all its CPU time in the kernel: reads /dev/zero in 1 MiB
 * chunks, so the kernel zeroes user memory (read_zero, clear_user); with
 * small chunks, mostly entering and leaving read().
 *
 * usage: syscall [SECONDS [BYTES]]   (default 10 s, reads of 1 MiB)
 */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 20];
static size_t chunk = sizeof(buf);

__attribute__((noinline)) void syscall_read_zeros(int fd)
{
	if (read(fd, buf, chunk) < 0)
		exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10, end = now() + seconds;
	int fd = open("/dev/zero", O_RDONLY);

	if (argc > 2 && atol(argv[2]) > 0 && (size_t)atol(argv[2]) < sizeof(buf))
		chunk = atol(argv[2]);
	if (fd < 0)
		return 1;
	while (now() < end)
		syscall_read_zeros(fd);
	return 0;
}
