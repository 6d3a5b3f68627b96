// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * php_file_identify on Debian 12's PHP 8.2 (php8.2-cli's /usr/bin/php8.2,
 * php8.2-fpm's /usr/sbin/php-fpm8.2, both stripped) and trixie's php8.4
 * in the newer root: the version, read; executor_globals, execute_ex and
 * zend_call_function where binutils say they are (nm -D, less the code
 * segment's vaddr - offset, as readelf -l gives it), and the pc the native
 * walk goes on at from JIT code on execute_ex's body row (the row of its
 * CFI, as readelf gives it, covering the most of it). Then copies of
 * php8.2 altered where the reader looks: a version not in the table, a
 * thread-safe build (each a PHP, not read, with the reason); and files
 * holding no PHP (not PHP, no crash).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpfprof/php_file.h"
#include "bpfprof/util.h"
#include "unit.h"

#define PHP82 "/usr/bin/php8.2"
#define FPM82 "/usr/sbin/php-fpm8.2"

static int identify_fd(int fd, const char *path, struct php_file *f, const char **why)
{
	memset(f, 0xa5, sizeof(*f));
	*why = "(not set)";
	return php_file_identify(fd, path, f, why);
}

/* php_file_identify on the file at path; -1 if it cannot be opened. */
static int identify(const char *path, struct php_file *f, const char **why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	ret = identify_fd(fd, path, f, why);
	close(fd);
	return ret;
}

/* A line of cmd's output as n hex numbers into v; false if it has not n. */
static bool hex_numbers(const char *cmd, unsigned long long *v, int n)
{
	char *out = unit_pipe(cmd, "", 0);
	bool ok = out && (n == 1 ? sscanf(out, "%llx", v) == 1 :
				   sscanf(out, "%llx %llx", v, v + 1) == 2);

	free(out);
	return ok;
}

/* What binutils say of a file: its code's bias, three exported symbols, execute_ex's body row. */
struct binutils {
	unsigned long long bias;		/* the executable segment's vaddr - offset */
	unsigned long long eg, ex[2], call[2];	/* executor_globals; execute_ex, zend_call_function: value, size */
	unsigned long long body_lo, body_hi;	/* execute_ex's longest CFI row */
	unsigned long long ra_off;		/* its return address above rsp there; 0: rbp's row */
};

/* The largest row of the FDE beginning at lo in readelf's table of path's CFI; false if none. */
static bool body_row(const char *path, unsigned long long lo, struct binutils *b)
{
	unsigned long long fde_lo = 0, fde_hi = 0, at, prev = 0, best = 0, off, prev_ra = 0;
	char cmd[512], *out, *line, *save = NULL, cfa[16];
	bool in_fde = false, have_prev = false;

	snprintf(cmd, sizeof(cmd), "readelf -W --debug-dump=frames-interp '%s' 2> /dev/null | "
		 "awk '/ FDE .*pc=0*%llx\\.\\./, /^$/'", path, lo);
	out = unit_pipe(cmd, "", 0);
	if (!out)
		return false;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *pc = strstr(line, " pc=");

		if (pc && strstr(line, " FDE ")) {
			in_fde = sscanf(pc, " pc=%llx..%llx", &fde_lo, &fde_hi) == 2 && fde_lo == lo;
			continue;
		}
		/* A row: its address, then the CFA's rule (the header's LOC is no number). */
		if (!in_fde || sscanf(line, "%llx %15s", &at, cfa) != 2)
			continue;
		if (have_prev && at - prev > best)
			best = at - prev, b->body_lo = prev, b->body_hi = at, b->ra_off = prev_ra;
		prev = at;
		prev_ra = sscanf(cfa, "rsp+%llu", &off) == 1 ? off - 8 : 0;
		have_prev = true;
	}
	if (have_prev && fde_hi - prev > best)
		best = fde_hi - prev, b->body_lo = prev, b->body_hi = fde_hi, b->ra_off = prev_ra;
	free(out);
	return best > 0;
}

static bool binutils_of(const char *path, struct binutils *b)
{
	unsigned long long seg[2];
	char cmd[512];

	memset(b, 0, sizeof(*b));
	snprintf(cmd, sizeof(cmd),
		 "readelf -W -l '%s' | awk '$1 == \"LOAD\" && / R E / { print $2, $3; exit }'", path);
	if (!hex_numbers(cmd, seg, 2))
		return false;
	b->bias = seg[1] - seg[0];
#define NM(sym, v, n)                                                                              \
	(snprintf(cmd, sizeof(cmd), "nm -D -S --defined-only '%s' | awk '$4 == \"%s\" { print $1, $2 }'", \
		  path, sym),                                                                      \
	 hex_numbers(cmd, v, n))
	if (!NM("executor_globals", &b->eg, 1) || !NM("execute_ex", b->ex, 2) ||
	    !NM("zend_call_function", b->call, 2))
		return false;
#undef NM
	return body_row(path, b->ex[0], b);
}

/* A PHP engine read: each value where binutils put it. */
static void check_read(const char *what, const char *path, unsigned version)
{
	struct php_file f;
	struct binutils b;
	const char *why;
	int ret = identify(path, &f, &why);

	CHECK(ret == 1 && f.known && f.version == version && !why,
	      "php: %s is PHP %u.%u, read (ret %d, known %u, version %#x, why %s)", what,
	      version >> 8, version & 0xff, ret, f.known, f.version, why ? why : "none");
	if (!CHECK(binutils_of(path, &b), "php: %s: nm -D and readelf read it", what))
		return;
	CHECK(f.eg_rel == b.eg - b.bias,
	      "php: %s: executor_globals at %#llx, nm -D's less the code's bias %#llx (%#llx)", what,
	      b.eg - b.bias, b.bias, (unsigned long long)f.eg_rel);
	CHECK(f.execute_ex_lo_rel == b.ex[0] - b.bias &&
		      f.execute_ex_hi_rel == b.ex[0] + b.ex[1] - b.bias,
	      "php: %s: execute_ex %#llx..%#llx as nm -D says (%#llx..%#llx)", what,
	      b.ex[0] - b.bias, b.ex[0] + b.ex[1] - b.bias, (unsigned long long)f.execute_ex_lo_rel,
	      (unsigned long long)f.execute_ex_hi_rel);
	CHECK(f.call_lo_rel == b.call[0] - b.bias && f.call_hi_rel == b.call[0] + b.call[1] - b.bias,
	      "php: %s: zend_call_function %#llx..%#llx as nm -D says (%#llx..%#llx)", what,
	      b.call[0] - b.bias, b.call[0] + b.call[1] - b.bias, (unsigned long long)f.call_lo_rel,
	      (unsigned long long)f.call_hi_rel);
	/* Where the walk goes on from JIT code: in execute_ex's body, past its prologue. */
	CHECK(f.jit_vm_pc_rel > f.execute_ex_lo_rel && f.jit_vm_pc_rel < f.execute_ex_hi_rel &&
		      f.jit_vm_pc_rel >= b.body_lo - b.bias && f.jit_vm_pc_rel < b.body_hi - b.bias,
	      "php: %s: JIT code's way back at %#llx, on execute_ex's body row %#llx..%#llx", what,
	      (unsigned long long)f.jit_vm_pc_rel, b.body_lo - b.bias, b.body_hi - b.bias);
	CHECK(php_layout_of(version >> 8, version & 0xff) &&
		      !memcmp(&f.l, php_layout_of(version >> 8, version & 0xff), sizeof(f.l)),
	      "php: %s: the table's row for %u.%u", what, version >> 8, version & 0xff);
	CHECK(f.jit_ra_off == b.ra_off,
	      "php: %s: execute_ex's return address %llu above its body's rsp, as readelf's row says "
	      "(%u; 0: a row on rbp)", what, b.ra_off, f.jit_ra_off);
}

/*
 * php_file_identify on a copy of data (len bytes) in a memfd with the
 * first from (a string in it) made to, as long: -1 if from is not there.
 */
static int identify_altered(const char *data, size_t len, const char *from, const char *to,
			    size_t n, struct php_file *f, const char **why)
{
	const char *at = memmem(data, len, from, n);
	int fd, ret = -1;

	if (!at || (fd = memfd_create("php8.2", MFD_CLOEXEC)) < 0)
		return -1;
	if (write(fd, data, at - data) == at - data && write(fd, to, n) == (ssize_t)n &&
	    write(fd, at + n, len - (at - data) - n) == (ssize_t)(len - (at - data) - n))
		ret = identify_fd(fd, "/fuzz/php8.2", f, why);
	close(fd);
	return ret;
}

/* Copies of php8.2 changed where the reader looks: each a PHP, not read, said why. */
static void altered(void)
{
	struct php_file f;
	const char *why;
	char *data;
	size_t len;
	int ret;

	if (read_file(PHP82, &data, &len))
		return;
	/* PHP 8.9's header: a PHP, its version said, no layout. */
	ret = identify_altered(data, len, "X-Powered-By: PHP/8.2", "X-Powered-By: PHP/8.9", 21, &f,
			       &why);
	CHECK(ret == 1 && !f.known && f.version == 0x809 && why &&
		      !strcmp(why, "a version not in the table") && !f.eg_rel && !f.execute_ex_lo_rel,
	      "php: a php8.2 saying it is 8.9: PHP 8.9, not read: %s (ret %d, known %u, version "
	      "%#x)", why ? why : "no reason", ret, f.known, f.version);
	/* A thread-safe build's API string ends ",TS", as the engine's configure writes it. */
	ret = identify_altered(data, len, "API20220829,NTS", "API20220829,TS\0", 15, &f, &why);
	CHECK(ret == 1 && !f.known && f.version == 0x802 && why &&
		      !strcmp(why, "a thread-safe (ZTS) build") && !f.eg_rel,
	      "php: a php8.2 built thread-safe (API20220829,TS): not read: %s (ret %d, known %u)",
	      why ? why : "no reason", ret, f.known);
	/* No X-Powered-By header at all. */
	ret = identify_altered(data, len, "X-Powered-By: PHP/", "X-Powered-By: XYZ/", 18, &f, &why);
	CHECK(ret == 1 && !f.known && !f.version && why && strstr(why, "version not found"),
	      "php: a php8.2 with no X-Powered-By string: not read: %s (ret %d, known %u)",
	      why ? why : "no reason", ret, f.known);
	free(data);
}

/* Bytes that are no ELF file, and an ELF file cut short: not PHP, nothing said. */
static void garbage(void)
{
	static const size_t sizes[] = { 0, 3, 64, 4096, 1 << 20 };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct php_file f;
	const char *why;
	char *data, *buf;
	size_t len, i, j;
	int fd, ret;

	buf = xmalloc(1 << 20);
	for (i = 0; i < (1 << 20); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (char)x;
	}
	for (j = 0; j < ARRAY_SIZE(sizes); j++) {
		fd = memfd_create("garbage", MFD_CLOEXEC);
		ret = fd >= 0 && write(fd, buf, sizes[j]) == (ssize_t)sizes[j] ?
			      identify_fd(fd, "/fuzz/garbage", &f, &why) : -1;
		CHECK(ret == 0 && !why && !f.known && !f.version && !f.eg_rel,
		      "php: %zu random bytes: not PHP, nothing said (ret %d)", sizes[j], ret);
		if (fd >= 0)
			close(fd);
	}
	/* php8.2's first MiB: its section headers, at the end, are not there. */
	if (!read_file(PHP82, &data, &len)) {
		fd = memfd_create("php8.2-head", MFD_CLOEXEC);
		ret = fd >= 0 && write(fd, data, 1 << 20) == 1 << 20 ?
			      identify_fd(fd, "/fuzz/php8.2", &f, &why) : -1;
		CHECK(ret <= 0 && ret != -1 && !f.known,
		      "php: php8.2 cut to 1 MiB: not read (ret %d), no crash", ret);
		if (fd >= 0)
			close(fd);
		free(data);
	}
	free(buf);
}

void test_php_file(void)
{
	const char *cache = getenv("BPFPROF_TEST_CACHE");
	struct php_file f;
	const char *why;
	char php84[4096];

	if (access(PHP82, R_OK)) {
		unit_skip("no php8.2 (Debian's php8.2-cli)", "php: %s", PHP82);
	} else {
		check_read("php8.2", PHP82, 0x802);
		altered();
	}
	if (access(FPM82, R_OK))
		unit_skip("no php-fpm8.2 (Debian's php8.2-fpm)", "php: %s", FPM82);
	else
		check_read("php-fpm8.2", FPM82, 0x802);
	snprintf(php84, sizeof(php84), "%s/newer-root/usr/bin/php8.4",
		 cache && *cache ? cache : "/var/cache/bpfprof-test");
	if (access(php84, R_OK))
		unit_skip("no trixie root with php8.4 (tests/tools/newer_root.sh makes it)", "php: %s",
			  php84);
	else
		check_read("trixie's php8.4", php84, 0x804);
	CHECK(identify("/usr/lib/x86_64-linux-gnu/libc.so.6", &f, &why) == 0 && !why,
	      "php: libc is no PHP");
	CHECK(identify("/etc/passwd", &f, &why) == 0, "php: a text file is no PHP");
	garbage();
	CHECK(php_layout_of(8, 2) && php_layout_of(8, 4) && !php_layout_of(8, 3) &&
		      !php_layout_of(7, 4),
	      "php: the layout table has 8.2 and 8.4, not 8.3 or 7.4");
}
