// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/pb.h"
#include "bpfprof/util.h"

void pb_reset(struct pb_msg *m)
{
	m->len = 0;
}

void pb_release(struct pb_msg *m)
{
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

static void put(struct pb_msg *m, const void *data, size_t n)
{
	ALLOC_GROW(m->buf, m->len + n, m->alloc);
	memcpy(m->buf + m->len, data, n);
	m->len += n;
}

void pb_varint(struct pb_msg *m, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n] = v & 0x7f;
		v >>= 7;
		b[n++] |= v ? 0x80 : 0;
	} while (v);
	put(m, b, n);
}

void pb_tag(struct pb_msg *m, uint32_t field, enum pb_wire wire)
{
	pb_varint(m, (uint64_t)field << 3 | wire);
}

void pb_uint64(struct pb_msg *m, uint32_t field, uint64_t v)
{
	pb_tag(m, field, PB_VARINT);
	pb_varint(m, v);
}

void pb_int64(struct pb_msg *m, uint32_t field, int64_t v)
{
	pb_uint64(m, field, (uint64_t)v);
}

void pb_bool(struct pb_msg *m, uint32_t field, int v)
{
	pb_uint64(m, field, v ? 1 : 0);
}

void pb_fixed64(struct pb_msg *m, uint32_t field, uint64_t v)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	pb_tag(m, field, PB_I64);
	put(m, b, sizeof(b));
}

void pb_bytes(struct pb_msg *m, uint32_t field, const void *data, size_t n)
{
	pb_tag(m, field, PB_LEN);
	pb_varint(m, n);
	put(m, data, n);
}

void pb_string(struct pb_msg *m, uint32_t field, const char *s)
{
	pb_bytes(m, field, s, strlen(s));
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >>= 7)
		n++;
	return n;
}

void pb_packed_uint64(struct pb_msg *m, uint32_t field, const uint64_t *v, size_t n)
{
	size_t len = 0, i;

	for (i = 0; i < n; i++)
		len += varint_size(v[i]);
	pb_tag(m, field, PB_LEN);
	pb_varint(m, len);
	for (i = 0; i < n; i++)
		pb_varint(m, v[i]);
}

void pb_packed_int64(struct pb_msg *m, uint32_t field, const int64_t *v, size_t n)
{
	pb_packed_uint64(m, field, (const uint64_t *)v, n);
}

void pb_message(struct pb_msg *m, uint32_t field, const struct pb_msg *sub)
{
	pb_bytes(m, field, sub->buf, sub->len);
}

int pb_gzip_open(struct pb_gzip *g, FILE *out)
{
	memset(&g->z, 0, sizeof(g->z));
	memset(&g->pending, 0, sizeof(g->pending));
	g->out = out;
	g->err = 0;
	/*
	 * 15 + 16: a gzip header and trailer rather than zlib's. Level 1, as
	 * Go's own profile writer: most of the time goes to compression.
	 */
	if (deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	return 0;
}

static void deflate_into_file(struct pb_gzip *g, int flush)
{
	int ret;

	do {
		size_t n;

		g->z.next_out = g->chunk;
		g->z.avail_out = sizeof(g->chunk);
		ret = deflate(&g->z, flush);
		if (ret == Z_STREAM_ERROR) {
			g->err = -EIO;
			return;
		}
		n = sizeof(g->chunk) - g->z.avail_out;
		if (n && fwrite(g->chunk, 1, n, g->out) != n && !g->err)
			g->err = -(errno ? errno : EIO);
	} while (g->z.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
}

static void deflate_pending(struct pb_gzip *g, int flush)
{
	g->z.next_in = g->pending.buf;
	g->z.avail_in = g->pending.len;
	deflate_into_file(g, flush);
	g->pending.len = 0;
}

void pb_gzip_write(struct pb_gzip *g, const struct pb_msg *m)
{
	if (g->err || !m->len)
		return;
	/* deflate() has a cost per call: feed it 64 KiB at a time. */
	put(&g->pending, m->buf, m->len);
	if (g->pending.len >= sizeof(g->chunk))
		deflate_pending(g, Z_NO_FLUSH);
}

int pb_gzip_close(struct pb_gzip *g)
{
	if (!g->err)
		deflate_pending(g, Z_FINISH);
	deflateEnd(&g->z);
	pb_release(&g->pending);
	if (!g->err && (fflush(g->out) || ferror(g->out)))
		g->err = -(errno ? errno : EIO);
	return g->err;
}
