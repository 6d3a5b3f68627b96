// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* What this machine lets a session do, checked before anything is loaded. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bpfprof/machine.h"
#include "bpfprof/util.h"

#define DEFAULT_BTF "/sys/kernel/btf/vmlinux"

/*
 * Milliseconds since this process was exec'd, for -v's timing lines. The
 * kernel gives the start only in clock ticks (/proc/self/stat, field 22),
 * so this reads up to one tick (10 ms at USER_HZ 100) long; -1 if unknown.
 */
double ms_since_exec(void)
{
	char buf[1024], *p;
	unsigned long long start;
	struct timespec ts;
	ssize_t n = -1;
	int fd, i;

	if ((fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* comm may hold spaces: count fields from its closing parenthesis (field 2). */
	p = strrchr(buf, ')');
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, "%llu", &start) != 1 || clock_gettime(CLOCK_BOOTTIME, &ts))
		return -1;
	return (ts.tv_sec + ts.tv_nsec / 1e9 - (double)start / sysconf(_SC_CLK_TCK)) * 1e3;
}

/* CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN, in the effective set. */
static bool can_profile(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { 0 };
	uint64_t eff;

	if (syscall(SYS_capget, &hdr, data))
		return geteuid() == 0;
	eff = (uint64_t)data[1].effective << 32 | data[0].effective;
#define HAS(cap) (eff >> (cap) & 1)
	return HAS(21 /* CAP_SYS_ADMIN */) || (HAS(39 /* CAP_BPF */) && HAS(38 /* CAP_PERFMON */));
#undef HAS
}

/*
 * The file starts like BTF (raw, or an ELF file with a .BTF section, as
 * libbpf reads both). libbpf parses it at load; parsing it here as well
 * would cost some 15 ms and 10 MB for the kernel's 5 MB of BTF.
 */
static int check_btf(const char *path)
{
	static const uint8_t raw_magic[2] = { 0x9f, 0xeb }, elf_magic[4] = { 0x7f, 'E', 'L', 'F' };
	uint8_t head[4] = { 0 };
	ssize_t n = -1;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error("kernel BTF not found at '%s' (%s): bpfprof needs a kernel built with "
			     "CONFIG_DEBUG_INFO_BTF=y, or --btf FILE", path, strerror(errno));
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n < (ssize_t)sizeof(head) ||
	    (memcmp(head, raw_magic, sizeof(raw_magic)) && memcmp(head, elf_magic, sizeof(elf_magic))))
		return error("'%s' holds no usable BTF (%s): bpfprof needs a kernel built with "
			     "CONFIG_DEBUG_INFO_BTF=y, or --btf FILE", path,
			     n < 0 ? strerror(errno) : n == 0 ? "empty file" : "not BTF data");
	return 0;
}

/* The machine can run us: capabilities and kernel BTF. */
int check_machine(const char *btf)
{
	struct rlimit nofile;

	/* Every file a process maps stays open until it is read: allow what root may. */
	if (!getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	if (!can_profile() && geteuid() == 0)
		return error("need CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to sample with BPF, which "
			     "this root process lacks; run it with them, e.g. not in a container that "
			     "drops them");
	if (!can_profile())
		return error("need CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to sample with BPF; "
			     "run as root, e.g. sudo bpfprof");
	return check_btf(btf ? btf : DEFAULT_BTF);
}
