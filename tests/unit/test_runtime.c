// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The symbolizer's file listeners and the runtimes set, on a fake /proc: a
 * file is told to every listener once, in the order registered, however
 * many processes map it; the set gives a runtime's file_opened the file and
 * process_maps the mapping, only for files it claims; merges run in turn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/cli.h"
#include "bpfprof/runtime.h"
#include "bpfprof/symbolize.h"
#include "unit.h"

struct heard {
	char order[8];			/* which listener heard, in turn: "ab" */
	uint32_t opened, tgid;
	char path[256];
	bool fd_ok;
};

static void heard_a(void *ctx, const struct opened_file *f)
{
	struct heard *h = ctx;

	strcat(h->order, "a");
	h->opened++;
	h->tgid = f->tgid;
	snprintf(h->path, sizeof(h->path), "%s", f->path);
	h->fd_ok = f->fd >= 0 && f->st && S_ISREG(f->st->st_mode);
}

static void heard_b(void *ctx, const struct opened_file *f)
{
	(void)f;
	strcat(((struct heard *)ctx)->order, "b");
}

/* A runtime that claims files named "*claimed" and adds one frame per sample. */
struct fake_rt {
	uint32_t files_seen, maps, tgid;
	uint64_t start, offset;
	uint32_t frame;		/* what merge adds */
};

static bool fake_file_opened(void *rt, const struct unwind_file_key *key, int fd, const char *path,
			     const char *root)
{
	size_t n = strlen(path);

	(void)key;
	(void)root;
	((struct fake_rt *)rt)->files_seen++;
	return fd >= 0 && n >= 7 && !strcmp(path + n - 7, "claimed");
}

static void fake_process_maps(void *rt, uint32_t tgid, const struct unwind_file_key *key,
			      uint64_t start, uint64_t offset)
{
	struct fake_rt *f = rt;

	(void)key;
	f->maps++;
	f->tgid = tgid;
	f->start = start;
	f->offset = offset;
}

static uint32_t fake_merge(void *rt, struct profile *p, const struct raw_sample *rs,
			   uint32_t *frames, uint32_t n, uint32_t max)
{
	(void)p;
	(void)rs;
	if (n < max)
		frames[n++] = ((struct fake_rt *)rt)->frame;
	return n;
}

static const struct runtime_info fake_info = { .name = "fake", .kind = RUNTIME_KINDS - 1 };

static const struct runtime_ops fake_ops = {
	.info = &fake_info,
	.file_opened = fake_file_opened,
	.process_maps = fake_process_maps,
	.merge = fake_merge,
};

static void write_maps(const char *dir, uint32_t tgid, const char *line)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", dir, tgid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/root", dir, tgid);
	if (symlink("/", path))
		return;
	snprintf(path, sizeof(path), "%s/%u/maps", dir, tgid);
	if ((f = fopen(path, "w"))) {
		fputs(line, f);
		fclose(f);
	}
}

void test_file_listeners(void)
{
	char dir[] = "/tmp/bpfprof-unit-listen.XXXXXX", file[300], line[600], cmd[400];
	struct fake_rt rt1 = { .frame = 11 }, rt2 = { .frame = 22 };
	struct runtimes rs = { .on = { { &fake_ops, &rt1 }, { &fake_ops, &rt2 } }, .nr = 2 };
	struct file_listener a, b, set;
	struct heard h = { "" };
	uint64_t ip = 0x400100;
	uint32_t frames[4] = { 1 }, n, loc;
	struct raw_sample sample = { 0 };
	struct symbolizer s;
	struct profile p;

	if (!mkdtemp(dir)) {
		CHECK(false, "listeners: a temporary folder");
		return;
	}
	/* Any regular file: listeners are told of files, not of ELF. */
	snprintf(file, sizeof(file), "%s/claimed", dir);
	snprintf(cmd, sizeof(cmd), "cp /bin/true '%s'", file);
	if (system(cmd)) {
		CHECK(false, "listeners: a file to map");
		return;
	}
	snprintf(line, sizeof(line), "00400000-00401000 r-xp 00002000 00:00 0 %s\n", file);
	write_maps(dir, 4243, line);
	write_maps(dir, 4244, line);

	symbolizer_init(&s);
	free(s.procs.proc_root);
	s.procs.proc_root = xstrdup(dir);
	profile_init(&p);
	a = (struct file_listener){ heard_a, NULL, &h };
	b = (struct file_listener){ heard_b, NULL, &h };
	set = runtimes_file_listener(&rs);
	symbolizer_on_file(&s, &a);
	symbolizer_on_file(&s, &b);
	symbolizer_on_file(&s, &set);
	symbolize_user_stack(&s, &p, 4243, 0, &ip, 1, &loc);
	CHECK(!strcmp(h.order, "ab") && h.opened == 1 && h.tgid == 4243 && !strcmp(h.path, file) &&
	      h.fd_ok, "listeners: a file opened is told to each, in order (%s), with its fd, "
	      "stat and the process's path ('%s')", h.order, h.path);
	CHECK(rt1.files_seen == 1 && rt2.files_seen == 1 && rt1.maps == 1 && rt2.maps == 1 &&
	      rt1.tgid == 4243 && rt1.start == 0x400000 && rt1.offset == 0x2000,
	      "runtimes: each runtime detects the file and learns the mapping that claims it "
	      "(%u %u, %#llx+%#llx)", rt1.files_seen, rt1.maps, (unsigned long long)rt1.start,
	      (unsigned long long)rt1.offset);
	symbolize_user_stack(&s, &p, 4244, 0, &ip, 1, &loc);
	CHECK(h.opened == 1 && rt1.files_seen == 1,
	      "listeners: a file another process maps too is not told again (%u)", h.opened);

	/* A process running at start: each mapping to process_maps, the kernel's dev_t. */
	{
		struct proc_map m = { .start = 0x1000, .offset = 0x40, .inode = 7, .dev_major = 8,
				      .dev_minor = 1, .path = file };

		runtimes_process_image(&rs, 99, &m, 1);
		CHECK(rt1.maps == 2 && rt2.maps == 2 && rt1.tgid == 99 && rt1.start == 0x1000 &&
		      rt1.offset == 0x40, "runtimes: a process's image told to every runtime");
	}
	n = runtimes_merge(&rs, &p, &sample, frames, 1, 4);
	CHECK(n == 3 && frames[0] == 1 && frames[1] == 11 && frames[2] == 22,
	      "runtimes: each merges in turn (%u frames: %u %u %u)", n, frames[0], frames[1],
	      frames[2]);
	CHECK(runtimes_merge(NULL, &p, &sample, frames, 1, 4) == 1,
	      "runtimes: no set, the stack as it is");

	profile_release(&p);
	symbolizer_release(&s);
	snprintf(cmd, sizeof(cmd), "rm -r '%s'", dir);
	CHECK(system(cmd) == 0, "listeners: the fake /proc removed");
}

/* The table of runtimes: each id its own, each --no-OPTION an option of the command line. */
void test_runtime_table(void)
{
	const struct cli_option *opts;
	uint32_t i, j, seen = 0;
	size_t n, k;

	opts = cli_options(&n);
	CHECK(runtime_info_count() >= 3, "runtime table: %u runtimes", runtime_info_count());
	for (i = 0; i < runtime_info_count(); i++) {
		const struct runtime_info *r = runtime_info_at(i);
		char name[40];
		bool found = false;

		CHECK(r->kind < RUNTIME_KINDS && !(seen & 1u << r->kind),
		      "runtime table: %s's id %u is below RUNTIME_KINDS and its own", r->name, r->kind);
		seen |= 1u << r->kind;
		CHECK(runtime_info_of(r->kind) == r, "runtime table: %s found by its id", r->name);
		for (j = 0; j < i; j++)
			CHECK(strcmp(runtime_info_at(j)->option, r->option),
			      "runtime table: --no-%s is one runtime's", r->option);
		snprintf(name, sizeof(name), "no-%s", r->option);
		for (k = 0; k < n; k++)
			found |= !strcmp(opts[k].name, name) && strstr(opts[k].help, r->versions);
		CHECK(found, "runtime table: --%s is an option, with its help", name);
		CHECK(!r->state_label || r->nr_states, "runtime table: %s's label has values", r->name);
		CHECK(r->versions && strchr(r->versions, ' ') && r->builds && *r->builds &&
		      r->not_read && *r->not_read && r->layout && *r->layout && r->tested &&
		      *r->tested, "runtime table: %s says what it reads (%s)", r->name,
		      r->versions ? r->versions : "no versions");
	}
	CHECK(!runtime_info_of(RUNTIME_KINDS), "runtime table: no runtime past RUNTIME_KINDS");
}
