// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Runs a program from an anonymous file: copies PROGRAM into a memfd and
 * execs that, so the process maps "/memfd:NAME (deleted)", a file no path
 * leads to. Its frames can only be named through /proc/PID/map_files.
 *
 * usage: memfd_exec PROGRAM [ARGS...]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	struct stat st;
	int in, mem;

	if (argc < 2)
		return 2;
	in = open(argv[1], O_RDONLY);
	mem = memfd_create("bpfprof-test", MFD_CLOEXEC);
	if (in < 0 || mem < 0 || fstat(in, &st) ||
	    sendfile(mem, in, NULL, st.st_size) != st.st_size) {
		perror("memfd_exec");
		return 1;
	}
	close(in);
	fexecve(mem, argv + 1, environ);
	perror("fexecve");
	return 1;
}
