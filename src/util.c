// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpfprof/util.h"

int verbose;

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bpfprof: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		die("out of memory allocating %zu bytes", size);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		die("out of memory allocating %zu bytes", size);
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void strbuf_init(struct strbuf *sb)
{
	sb->alloc = 64;
	sb->len = 0;
	sb->buf = xmalloc(sb->alloc);
	sb->buf[0] = '\0';
}

void strbuf_release(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
}

void strbuf_reset(struct strbuf *sb)
{
	strbuf_setlen(sb, 0);
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	sb->len = len;
	sb->buf[len] = '\0';
}

static void strbuf_grow(struct strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 > sb->alloc) {
		while (sb->len + extra + 1 > sb->alloc)
			sb->alloc *= 2;
		sb->buf = xrealloc(sb->buf, sb->alloc);
	}
}

void strbuf_add(struct strbuf *sb, const void *data, size_t n)
{
	strbuf_grow(sb, n);
	memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, char c)
{
	strbuf_grow(sb, 1);
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n >= sb->alloc - sb->len) {
		strbuf_grow(sb, n);
		vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	sb->len += n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

char *strbuf_detach(struct strbuf *sb)
{
	char *s = sb->buf;

	sb->buf = NULL;
	sb->len = sb->alloc = 0;
	return s;
}

size_t count_at_or_below(const void *base, size_t n, size_t size, size_t offset, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size + offset, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t get_uint(const unsigned char *p, size_t size, bool msb)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < size; i++)
		v |= (uint64_t)p[msb ? size - 1 - i : i] << (8 * i);
	return v;
}

void put_uint(unsigned char *p, size_t size, uint64_t v, bool msb)
{
	size_t i;

	for (i = 0; i < size; i++)
		p[msb ? size - 1 - i : i] = v >> (8 * i);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t count_distinct_u32(uint32_t *v, size_t n)
{
	uint64_t distinct = 0;
	size_t i;

	if (n)
		qsort(v, n, sizeof(*v), u32_cmp);
	for (i = 0; i < n; i++)
		distinct += !i || v[i] != v[i - 1];
	return distinct;
}

/* A fast 64-bit hash over bytes: eight at a time, multiply and rotate. */
uint64_t hash_bytes(const void *data, size_t n, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL);

	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		h = (h ^ hash_u64(w)) * 0xff51afd7ed558ccdULL;
		h = (h << 31) | (h >> 33);
		p += 8;
		n -= 8;
	}
	if (n) {
		uint64_t w = 0;

		memcpy(&w, p, n);
		h = (h ^ hash_u64(w ^ n)) * 0xc4ceb9fe1a85ec53ULL;
	}
	return hash_u64(h);
}

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("bpfprof: ", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("bpfprof: warning: ", fmt, ap);
	va_end(ap);
}

void debug(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vmessage("bpfprof: ", fmt, ap);
	va_end(ap);
}

int read_file(const char *path, char **out, size_t *len)
{
	size_t alloc = 4096, n = 0;
	char *buf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = xmalloc(alloc);
	for (;;) {
		ssize_t r;

		if (n + 1 >= alloc)
			buf = xrealloc(buf, alloc *= 2);
		r = read(fd, buf + n, alloc - n - 1);
		if (r < 0) {
			int err = -errno;

			if (errno == EINTR)
				continue;
			free(buf);
			close(fd);
			return err;
		}
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int open_in_root(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	const char *rel = path + strspn(path, "/");
	int fd;

	if (rootfd < 0)
		fd = open(path, flags);
	else
		fd = syscall(SYS_openat2, rootfd, *rel ? rel : ".", &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

bool task_alive(uint32_t id)
{
	char path[64], *text, *state;
	bool alive;

	/* /proc/TID works for threads too; a zombie has stopped running. */
	snprintf(path, sizeof(path), "/proc/%u/stat", id);
	if (read_file(path, &text, NULL))
		return false;
	state = strrchr(text, ')');
	alive = state && state[1] == ' ' && state[2] != 'Z' && state[2] != 'X';
	free(text);
	return alive;
}
