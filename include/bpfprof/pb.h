/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A tiny protobuf writer. A message under construction is bytes in memory
 * (struct pb_msg); a top-level message is never built whole: its fields are
 * encoded one at a time and streamed through gzip (struct pb_gzip), which is
 * valid protobuf because a message is just its fields in sequence.
 */
#ifndef BPFPROF_PB_H
#define BPFPROF_PB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

enum pb_wire {
	PB_VARINT = 0,
	PB_I64 = 1,
	PB_LEN = 2,
	PB_I32 = 5,
};

struct pb_msg {
	uint8_t *buf;
	size_t len, alloc;
};

void pb_reset(struct pb_msg *m);
void pb_release(struct pb_msg *m);

/* Raw pieces. */
void pb_varint(struct pb_msg *m, uint64_t v);
void pb_tag(struct pb_msg *m, uint32_t field, enum pb_wire wire);

/* Fields. int64 values are two's complement in ten bytes when negative, as protobuf says. */
void pb_uint64(struct pb_msg *m, uint32_t field, uint64_t v);
void pb_int64(struct pb_msg *m, uint32_t field, int64_t v);
void pb_bool(struct pb_msg *m, uint32_t field, int v);
/* fixed64: eight bytes, little-endian (OTLP's times). */
void pb_fixed64(struct pb_msg *m, uint32_t field, uint64_t v);
void pb_bytes(struct pb_msg *m, uint32_t field, const void *data, size_t n);
void pb_string(struct pb_msg *m, uint32_t field, const char *s);
void pb_packed_uint64(struct pb_msg *m, uint32_t field, const uint64_t *v, size_t n);
void pb_packed_int64(struct pb_msg *m, uint32_t field, const int64_t *v, size_t n);
/* An embedded message: field, length, bytes. */
void pb_message(struct pb_msg *m, uint32_t field, const struct pb_msg *sub);

/* A gzip stream to a FILE (RFC 1952, what pprof reads). */
struct pb_gzip {
	z_stream z;
	FILE *out;
	int err;		/* first error, negative errno */
	struct pb_msg pending;	/* small writes gathered for one deflate call */
	uint8_t chunk[1 << 16];
};

int pb_gzip_open(struct pb_gzip *g, FILE *out);
/* Compresses the message's bytes into the stream. */
void pb_gzip_write(struct pb_gzip *g, const struct pb_msg *m);
/* Finishes the stream; 0 or the first error. */
int pb_gzip_close(struct pb_gzip *g);

#endif
