// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The protobuf writer and the pprof writer, checked against independent
 * readers: protoc --decode_raw (field numbers and values as the wire has
 * them) and gzip -d.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/output.h"
#include "bpfprof/pb.h"
#include "bpfprof/profile.h"
#include "unit.h"

static bool bytes_are(const struct pb_msg *m, const char *hex)
{
	char got[256] = "";
	size_t i;

	for (i = 0; i < m->len && 2 * i + 2 < sizeof(got); i++)
		sprintf(got + 2 * i, "%02x", m->buf[i]);
	if (strcmp(got, hex))
		printf("#   got %s, want %s\n", got, hex);
	return !strcmp(got, hex);
}

void test_pb(void)
{
	struct pb_msg m = { 0 }, sub = { 0 };
	uint64_t packed[] = { 1, 300, 0 };
	int64_t neg[] = { -1 };
	char *text;

	pb_varint(&m, 0);
	CHECK(bytes_are(&m, "00"), "pb: varint 0");
	pb_reset(&m);
	pb_varint(&m, 300);
	CHECK(bytes_are(&m, "ac02"), "pb: varint 300 is ac 02");
	pb_reset(&m);
	pb_varint(&m, UINT64_MAX);
	CHECK(bytes_are(&m, "ffffffffffffffffff01"), "pb: varint 2^64-1 takes ten bytes");
	pb_reset(&m);
	pb_int64(&m, 1, -1);
	CHECK(bytes_are(&m, "08ffffffffffffffffff01"), "pb: int64 -1 is ten bytes of two's complement");
	pb_reset(&m);
	pb_string(&m, 2, "hi");
	CHECK(bytes_are(&m, "12026869"), "pb: string field 2: tag 0x12, length, bytes");
	pb_reset(&m);
	pb_uint64(&m, 16, 1);
	CHECK(bytes_are(&m, "800101"), "pb: field 16 needs a two-byte tag");

	/* A message as a reader sees it. */
	pb_reset(&m);
	pb_uint64(&m, 1, 150);
	pb_string(&m, 6, "name");
	pb_uint64(&sub, 1, 7);
	pb_packed_uint64(&sub, 2, packed, 3);
	pb_packed_int64(&sub, 3, neg, 1);
	pb_message(&m, 4, &sub);
	pb_message(&m, 4, &sub);
	pb_bool(&m, 7, 1);
	text = unit_pipe("protoc --decode_raw", m.buf, m.len);
	if (!CHECK(text != NULL, "pb: protoc --decode_raw reads it (package protobuf-compiler)"))
		return;
	expect_text(text,
		    "1: 150\n"
		    "6: \"name\"\n"
		    "4 {\n  1: 7\n  2: \"\\001\\254\\002\\000\"\n  3: \"\\377\\377\\377\\377\\377\\377\\377\\377\\377\\001\"\n}\n"
		    "4 {\n  1: 7\n  2: \"\\001\\254\\002\\000\"\n  3: \"\\377\\377\\377\\377\\377\\377\\377\\377\\377\\001\"\n}\n"
		    "7: 1\n",
		    "pb: fields, nested messages and packed values decode as written");
	free(text);
	pb_release(&m);
	pb_release(&sub);
}

void test_pprof(void)
{
	struct profile p;
	struct write_options o = { 0 };
	char *gz = NULL, *text;
	size_t gz_len = 0;
	FILE *f;
	int err;

	unit_build_profile(&p);
	p.start_wall_ns = 1700000000000000000ULL;
	p.duration_ns = 2000000000;
	p.frequency = 100;
	p.period_ns = 10000000;
	p.command_line = strdup("bpfprof -F 100");
	f = open_memstream(&gz, &gz_len);
	err = write_pprof(f, &p, &o);
	fclose(f);
	CHECK(err == 0 && gz_len > 20 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b,
	      "pprof: writes a gzip stream");
	text = unit_pipe("gzip -dc | protoc --decode_raw", gz, gz_len);
	if (!CHECK(text != NULL, "pprof: gzip -dc | protoc --decode_raw reads it")) {
		profile_release(&p);
		free(gz);
		return;
	}
	/* Samples: location ids leaf first, values (count, count x period), labels. */
	if (!CHECK(strstr(text, "2 {\n  1: \"\\004\\002\\001\"\n  2: \"\\005\\200\\341\\353\\027\"\n") != NULL,
		   "pprof: sample with locations 4 2 1 (leaf first) and values 5, 5 x 10 ms"))
		printf("#   decoded:\n%.600s\n", text);
	CHECK(strstr(text, "1: 1700000000000000000\n") || strstr(text, "9: 1700000000000000000\n"),
	      "pprof: time_nanos");
	CHECK(strstr(text, "10: 2000000000\n") && strstr(text, "12: 10000000\n"),
	      "pprof: duration_nanos and period");
	CHECK(strstr(text, "3 {\n  1: 1\n  2: 4096\n  3: 20480\n  4: 0\n  5: ") != NULL,
	      "pprof: mapping 1 with start, limit, offset, file name");
	CHECK(strstr(text, "6: \"[kernel.kallsyms]\"\n") && strstr(text, "6: \"samples\"\n") &&
	      strstr(text, "6: \"nanoseconds\"\n") && strstr(text, "6: \"bpfprof -F 100\"\n"),
	      "pprof: string table holds the profile's strings and ours");
	free(text);
	free(gz);
	profile_release(&p);

	/* The reference reader: go tool pprof. */
	unit_build_profile(&p);
	p.period_ns = 10000000;
	p.frequency = 100;
	p.duration_ns = 1000000000;
	{
		char path[] = "/tmp/bpfprof-unit-pprof.XXXXXX";
		int fd = mkstemp(path);
		char cmd[512];

		f = fdopen(fd, "w");
		write_pprof(f, &p, &o);
		fclose(f);
		snprintf(cmd, sizeof(cmd), "HOME=/tmp go tool pprof -raw %s 2>&1", path);
		text = unit_pipe(cmd, "", 0);
		CHECK(text && strstr(text, "Samples:\nsamples/count cpu/nanoseconds[dflt]\n") &&
		      strstr(text, "pid:[42 pid] tid:[43 tid]") && strstr(text, "comm:[app]"),
		      "pprof: go tool pprof -raw reads samples and labels");
		if (!CHECK(text && strstr(text, "do_syscall_64") && !strstr(text, "arning"),
			   "pprof: go tool pprof -raw names functions, no warning"))
			printf("#   pprof said:\n%.1500s\n", text ? text : "");
		free(text);
		snprintf(cmd, sizeof(cmd), "HOME=/tmp go tool pprof -top -sample_index=samples %s 2>&1", path);
		text = unit_pipe(cmd, "", 0);
		CHECK(text && strstr(text, "Showing nodes accounting for 11, 100% of 11 total"),
		      "pprof: go tool pprof -top totals 11 samples");
		free(text);
		unlink(path);
	}
	profile_release(&p);
}
