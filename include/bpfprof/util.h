/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Small things every module uses: allocation that cannot fail (it exits
 * with a message), growing arrays, a string builder, hashing, and the one
 * place messages reach stderr.
 */
#ifndef BPFPROF_UTIL_H
#define BPFPROF_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* Grow array p (of *alloc elements) to hold at least n elements. */
#define ALLOC_GROW(p, n, alloc)						\
	do {								\
		if ((size_t)(n) > (size_t)(alloc)) {			\
			size_t new_alloc_ = (alloc) ? (alloc) * 2 : 16;	\
			while (new_alloc_ < (size_t)(n))		\
				new_alloc_ *= 2;			\
			(p) = xrealloc((p), new_alloc_ * sizeof(*(p)));	\
			(alloc) = new_alloc_;				\
		}							\
	} while (0)

/* A growable NUL-terminated string; buf is never NULL after strbuf_init. */
struct strbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
/* Cuts sb back to its first len (<= sb->len) bytes. */
void strbuf_setlen(struct strbuf *sb, size_t len);
void strbuf_add(struct strbuf *sb, const void *data, size_t n);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Returns the buffer, now the caller's to free; sb is left empty. */
char *strbuf_detach(struct strbuf *sb);

uint64_t hash_bytes(const void *data, size_t n, uint64_t seed);

/* An unsigned integer of size bytes (up to 8) at p, big-endian if msb, else little-endian. */
uint64_t get_uint(const unsigned char *p, size_t size, bool msb);
void put_uint(unsigned char *p, size_t size, uint64_t v, bool msb);

/* How many distinct values v[n] holds; sorts v. */
uint64_t count_distinct_u32(uint32_t *v, size_t n);

/*
 * In an array sorted by a uint64_t key (at offset in each element of size
 * bytes): how many elements have their key at or below key. The last of
 * them, if any, is the one whose range may hold key.
 */
size_t count_at_or_below(const void *base, size_t n, size_t size, size_t offset, uint64_t key);
#define COUNT_AT_OR_BELOW(array, n, field, key)                                           \
	count_at_or_below((array), (n), sizeof(*(array)), offsetof(__typeof__(*(array)), field), \
			  (key))
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}
static inline uint64_t hash_mix(uint64_t h, uint64_t x)
{
	return hash_u64(h ^ (x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

/* "bpfprof: <message>" on stderr; returns -1 so callers can `return error(...)`. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed only when verbose is set (-v). */
extern int verbose;
void debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Read a whole file (or /proc file) into *out (NUL-terminated); 0 or -errno. */
int read_file(const char *path, char **out, size_t *len);

/*
 * Opens path as a process whose root directory is rootfd sees it: absolute
 * paths, "..", and symlinks resolve inside that root, never out of it
 * (openat2 RESOLVE_IN_ROOT). rootfd < 0: our own root. An fd or -errno.
 */
int open_in_root(int rootfd, const char *path, int flags);

/* A process or thread that exists and is not a zombie. */
bool task_alive(uint32_t id);

/* Monotonic and wall clocks, in nanoseconds. */
uint64_t now_ns(void);
uint64_t wall_ns(void);

#endif
