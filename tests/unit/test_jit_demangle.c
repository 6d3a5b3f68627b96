// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* Demangling, the perf map reader, and JIT frames through the symbolizer. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/demangle.h"
#include "bpfprof/perfmap.h"
#include "bpfprof/symbolize.h"
#include "bpfprof/util.h"
#include "unit.h"

static void expect_demangled(const char *mangled, const char *want)
{
	char *got = demangle(mangled);

	if (!want)
		CHECK(!got, "demangle: '%s' is not mangled (got '%s')", mangled, got ? got : "");
	else
		CHECK(got && !strcmp(got, want), "demangle: '%s' -> '%s' (got '%s')", mangled, want,
		      got ? got : "NULL");
	free(got);
}

void test_demangle(void)
{
	/* C++: namespaces, const methods, templates (return type left out), operators. */
	expect_demangled("_ZNK6shapes6Circle4areaEv", "shapes::Circle::area() const");
	expect_demangled("_Z7computeIdET_S0_i", "compute<double>(double, int)");
	expect_demangled("_ZNSt6vectorIiSaIiEE9push_backERKi",
			 "std::vector<int, std::allocator<int> >::push_back(int const&)");
	expect_demangled("_ZN6shapesltERKNS_6CircleES2_",
			 "shapes::operator<(shapes::Circle const&, shapes::Circle const&)");
	expect_demangled("_ZNK6shapes6CircleclEv", "shapes::Circle::operator()() const");
	expect_demangled("_ZThn8_N1B1fEv", "non-virtual thunk to B::f()");
	expect_demangled("_ZN3foo3barEv.cold", "foo::bar() [clone .cold]");
	expect_demangled("_ZL3barv", "bar()");
	/* Rust legacy: Itanium-like, the hash left out as rustfilt does; $-escapes decoded. */
	expect_demangled("_ZN4core3fmt9Formatter3pad17h3c84c0d7b5dc2b8aE", "core::fmt::Formatter::pad");
	expect_demangled("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$.."
			 "$u7b$$u7b$closure$u7d$$u7d$$GT$17h8a2d1e0e2c1b3a4fE",
			 "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>");
	expect_demangled("_ZN3foo3bar17h0123456789abcdefE.llvm.12345", "foo::bar");
	/* Not a Rust hash (not 16 hex digits): plain C++, last component kept. */
	expect_demangled("_ZN3foo17hXXXXXXXXXXXXXXXXE", "foo::hXXXXXXXXXXXXXXXX");
	/* Rust v0. */
	expect_demangled("_RNvCs1234_7mycrate3foo", "mycrate::foo");
	expect_demangled("_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar");
	expect_demangled("_RINvNtCs9ltgdHTiPiY_4core3ptr13drop_in_placeNtCs1234_7mycrate3FooEB2_",
			 "core::ptr::drop_in_place::<mycrate::Foo>");
	expect_demangled("_RNvMsr_NtCs3ssYzQotkvD_3std4pathNtB5_7PathBuf3newCs15kBYyAo9fc_7mycrate",
			 "<std::path::PathBuf>::new");
	/* Not mangled, or not validly. */
	expect_demangled("main", NULL);
	expect_demangled("", NULL);
	expect_demangled("_Z", NULL);
	expect_demangled("_R", NULL);
	expect_demangled("_ZN", NULL);
	expect_demangled("_GLOBAL__sub_I_main", NULL);
	expect_demangled("_Rust_is_not_v0", NULL);
}

static const char *lookup(const struct perfmap *m, uint64_t addr)
{
	const struct perfmap_entry *e = perfmap_lookup(m, addr);

	return e ? perfmap_name(m, e) : "(none)";
}

static bool write_text(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);

	if (!f)
		return false;
	fputs(text, f);
	return !fclose(f);
}

static void test_perfmap_text(void)
{
	static const char sorted[] =
		"3000 100 JS:*third /app/x.js:30:5\n"
		"1000 10 first one\n"
		"0x2000 0x20 second\t(tab)\n";
	static const char overlaps[] =
		"1000 100 old\n"
		"1080 180 newer\n"	/* overlaps old's end: wins there */
		"2000 1000 big\n"
		"2400 100 small\n"	/* inside big: cuts it in three */
		"4000 100 first\n"
		"4000 100 second\n"	/* the same code re-used */
		"5000 100 narrow\n"
		"4f00 300 wide\n";	/* covers narrow completely */
	static const char garbage[] =
		"not a line\n"
		"1000\n"
		"1000 10\n"
		"1000 10 \n"
		"zz 10 name\n"
		"1000 zz name\n"
		"1000 0 empty\n"
		"ffffffffffffff00 1000 wraps\n"
		"12345678901234567 10 seventeen digits\n"
		"\n"
		"1000-10 dash\n"
		"6000 10 good one\r\n"
		"\t \n";
	static char text[PERFMAP_MAX_NAME + 64];
	struct perfmap m;
	size_t used;

	perfmap_init(&m);
	used = perfmap_parse(&m, sorted, strlen(sorted));
	CHECK(used == strlen(sorted) && m.nr == 3 && m.lines == 3 && !m.skipped,
	      "perfmap: three lines, three ranges (%u)", m.nr);
	CHECK(m.entries[0].start == 0x1000 && m.entries[1].start == 0x2000 &&
	      m.entries[2].start == 0x3000, "perfmap: ranges sorted by start");
	expect_text(lookup(&m, 0x1000), "first one", "perfmap: a name with a space, at its start");
	expect_text(lookup(&m, 0x100f), "first one", "perfmap: at its last byte");
	expect_text(lookup(&m, 0x1010), "(none)", "perfmap: the end is outside");
	expect_text(lookup(&m, 0xfff), "(none)", "perfmap: nothing below the first");
	expect_text(lookup(&m, 0x201f), "second\t(tab)", "perfmap: 0x prefixes, a tab in the name");
	expect_text(lookup(&m, 0x30ff), "JS:*third /app/x.js:30:5", "perfmap: V8's name kept whole");
	perfmap_release(&m);

	perfmap_init(&m);
	perfmap_parse(&m, overlaps, strlen(overlaps));
	expect_text(lookup(&m, 0x1000), "old", "perfmap: an older range where nothing newer is");
	expect_text(lookup(&m, 0x107f), "old", "perfmap: ... up to where the newer starts");
	expect_text(lookup(&m, 0x1080), "newer", "perfmap: the later line wins where they overlap");
	expect_text(lookup(&m, 0x11ff), "newer", "perfmap: ... and past the older one's end");
	expect_text(lookup(&m, 0x23ff), "big", "perfmap: a range cut by a later one inside it");
	expect_text(lookup(&m, 0x2400), "small", "perfmap: ... the later one inside");
	expect_text(lookup(&m, 0x2500), "big", "perfmap: ... and the older one after it");
	expect_text(lookup(&m, 0x4050), "second", "perfmap: the same range twice: the later");
	expect_text(lookup(&m, 0x5050), "wide", "perfmap: a later range covering an earlier one");
	CHECK(m.nr == 7, "perfmap: overlaps leave 7 disjoint ranges (got %u)", m.nr);
	/* Lines added later override what was merged before. */
	perfmap_parse(&m, "2450 10 later\n", 14);
	expect_text(lookup(&m, 0x2455), "later", "perfmap: a later read overrides earlier ones");
	expect_text(lookup(&m, 0x2445), "small", "perfmap: ... only where it covers");
	perfmap_release(&m);

	perfmap_init(&m);
	used = perfmap_parse(&m, garbage, strlen(garbage));
	CHECK(m.lines == 1 && m.skipped == 11, "perfmap: 11 garbage lines skipped (%llu), 1 taken",
	      (unsigned long long)m.skipped);
	expect_text(lookup(&m, 0x6000), "good one", "perfmap: CRLF line ends");
	/* The JIT is writing its last line: it waits for its newline. */
	used = perfmap_parse(&m, "7000 10 done\n8000 10 half", 25);
	CHECK(used == 13, "perfmap: an unfinished last line is not taken (used %zu)", used);
	expect_text(lookup(&m, 0x8000), "(none)", "perfmap: ... nor named");
	perfmap_parse(&m, "8000 10 half a line\n", 20);
	expect_text(lookup(&m, 0x8000), "half a line", "perfmap: ... until it is whole");
	perfmap_release(&m);

	/* Names are cut at PERFMAP_MAX_NAME, never inside a UTF-8 character. */
	strcpy(text, "9000 10 ");
	memset(text + 8, 'a', PERFMAP_MAX_NAME - 1);
	strcpy(text + 8 + PERFMAP_MAX_NAME - 1, "\xc3\xa9tail\n");
	perfmap_init(&m);
	perfmap_parse(&m, text, strlen(text));
	CHECK(strlen(lookup(&m, 0x9000)) == PERFMAP_MAX_NAME - 1 && m.truncated == 1,
	      "perfmap: a long name cut before a split character (%zu bytes)",
	      strlen(lookup(&m, 0x9000)));
	perfmap_release(&m);

	/* Past the cap: the first PERFMAP_MAX_ENTRIES kept, the rest counted. */
	{
		struct strbuf sb;
		uint32_t k;

		strbuf_init(&sb);
		for (k = 0; k < PERFMAP_MAX_ENTRIES + 100; k++)
			strbuf_addf(&sb, "%x 10 f\n", 0x10000 + k * 0x10);
		perfmap_init(&m);
		perfmap_parse(&m, sb.buf, sb.len);
		CHECK(m.nr == PERFMAP_MAX_ENTRIES && m.dropped == 100 &&
		      m.lines == PERFMAP_MAX_ENTRIES,
		      "perfmap: %u ranges kept, %llu lines over the cap dropped", m.nr,
		      (unsigned long long)m.dropped);
		perfmap_release(&m);
		strbuf_release(&sb);
	}
}

static void test_perfmap_file(void)
{
	char dir[] = "/tmp/bpfprof-unit-perfmap.XXXXXX", path[256], real[256];
	static char big[200000];
	struct perfmap m;
	int fd, err;
	size_t i;

	if (!mkdtemp(dir)) {
		CHECK(false, "perfmap: a temporary folder");
		return;
	}
	snprintf(path, sizeof(path), "%s/perf.map", dir);
	write_text(path, "w", "1000 10 one\n2000 10 two\n3000 10 thr");
	fd = open(path, O_RDONLY);
	perfmap_init(&m);
	err = perfmap_read_fd(&m, fd);
	CHECK(!err && m.nr == 2 && m.pos == 24, "perfmap: a file read to its last whole line (pos %llu)",
	      (unsigned long long)m.pos);
	/* The JIT goes on: the rest of the line, and more. */
	write_text(path, "a", "ee\n1500 10 one and a half\n");
	err = perfmap_read_fd(&m, fd);
	expect_text(lookup(&m, 0x3000), "three", "perfmap: a grown file: the line finished");
	expect_text(lookup(&m, 0x1500), "one and a half", "perfmap: ... and new lines");
	expect_text(lookup(&m, 0x1000), "one", "perfmap: ... next to the old");
	CHECK(!err && m.lines == 4, "perfmap: each line read once (%llu)", (unsigned long long)m.lines);
	/* Rewritten, shorter: read again from the start. */
	write_text(path, "w", "4000 10 four\n");
	err = perfmap_read_fd(&m, fd);
	CHECK(!err && m.nr == 1 && !strcmp(lookup(&m, 0x4000), "four"),
	      "perfmap: a file rewritten shorter is read anew (%u ranges)", m.nr);

	/* A line far longer than a read: cut, and the lines after it still read. */
	strcpy(big, "5000 10 ");
	memset(big + 8, 'b', 199000);
	strcpy(big + 8 + 199000, "\n6000 10 after\n");
	write_text(path, "a", big);
	err = perfmap_read_fd(&m, fd);
	CHECK(!err && strlen(lookup(&m, 0x5000)) == PERFMAP_MAX_NAME && m.truncated == 1,
	      "perfmap: a 199000-byte name is cut to %d", PERFMAP_MAX_NAME);
	expect_text(lookup(&m, 0x6000), "after", "perfmap: the line after a long one is read");
	perfmap_release(&m);

	/* Many lines, through several reads. */
	write_text(path, "w", "");
	{
		FILE *f = fopen(path, "w");

		for (i = 0; i < 20000; i++)
			fprintf(f, "%zx 10 fn_%zu with spaces\n", 0x100000 + i * 0x10, i);
		fclose(f);
	}
	perfmap_init(&m);
	err = perfmap_read_fd(&m, fd);
	CHECK(!err && m.nr == 20000 && !strcmp(lookup(&m, 0x100000 + 12345 * 0x10 + 3),
					       "fn_12345 with spaces"),
	      "perfmap: 20000 lines over several reads (%u ranges)", m.nr);
	perfmap_release(&m);
	close(fd);

	/* Found in a process's root; only a regular file. */
	snprintf(path, sizeof(path), "%s/tmp", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/tmp/perf-7.map", dir);
	write_text(path, "w", "1000 10 x\n");
	fd = perfmap_open(dir, 7, (uid_t)-1);
	CHECK(fd >= 0, "perfmap: ROOT/tmp/perf-PID.map opened");
	if (fd >= 0)
		close(fd);
	CHECK(perfmap_open(dir, 8, (uid_t)-1) == -ENOENT, "perfmap: none for another pid");
	if (!chown(path, 12345, 12345)) {
		CHECK(perfmap_open(dir, 7, 54321) == -EPERM,
		      "perfmap: a file of another user than the process's is refused");
		fd = perfmap_open(dir, 7, 12345);
		CHECK(fd >= 0, "perfmap: the process's user's file is taken");
		if (fd >= 0)
			close(fd);
	}
	unlink(path);
	mkfifo(path, 0600);
	CHECK(perfmap_open(dir, 7, (uid_t)-1) == -EPERM, "perfmap: a FIFO is refused (it would block)");
	unlink(path);
	CHECK(symlink("/etc/passwd", path) == 0 && perfmap_open(dir, 7, (uid_t)-1) == -ENOENT,
	      "perfmap: symlinks resolve inside the root, not to our /etc/passwd");
	unlink(path);
	snprintf(real, sizeof(real), "%s/real.map", dir);
	write_text(real, "w", "1000 10 real\n");
	fd = symlink("/real.map", path) ? -1 : perfmap_open(dir, 7, (uid_t)-1);
	perfmap_init(&m);
	CHECK(fd >= 0 && !perfmap_read_fd(&m, fd) && !strcmp(lookup(&m, 0x1000), "real"),
	      "perfmap: ... to the file the process sees there");
	perfmap_release(&m);
	if (fd >= 0)
		close(fd);
	unlink(path);
	unlink(real);
	snprintf(path, sizeof(path), "%s/tmp", dir);
	rmdir(path);
	rmdir(dir);
}

static void test_perfmap_names(void)
{
	static const struct {
		const char *name, *function, *script;
	} v8[] = {
		{ "JS:*hotFunctionA /app/jit.js:8:22", "hotFunctionA", "/app/jit.js" },
		{ "JS:~hotFunctionA /app/jit.js:8:22", "hotFunctionA", "/app/jit.js" },
		{ "JS:^f /app/jit.js:8:22", "f", "/app/jit.js" },
		{ "JS:+f /app/jit.js:8:22", "f", "/app/jit.js" },
		{ "LazyCompile:*old /app/old.js:3", "old", "/app/old.js" },
		{ "JS:~get size /app/map.js:10:5", "get size", "/app/map.js" },
		{ "JS:~ node:internal/main/run_main_module:1:1", "(anonymous)",
		  "node:internal/main/run_main_module" },
		{ "Script:~ /app/jit.js:1:1", "(anonymous)", "/app/jit.js" },
		{ "JS:*noscript", "noscript", "" },
	};
	static const char *const others[] = {
		"Builtin:ArrayPrototypePush", "BytecodeHandler:Add", "Ljava/lang/String;::hashCode",
		"[OptimizedTier1] System.String::Concat(string,string)", "py::f:/app/x.py",
	};
	struct strbuf fn, script;
	size_t i;

	strbuf_init(&fn);
	strbuf_init(&script);
	for (i = 0; i < ARRAY_SIZE(v8); i++) {
		bool ok = perfmap_v8_name(v8[i].name, &fn, &script);

		CHECK(ok && !strcmp(fn.buf, v8[i].function) && !strcmp(script.buf, v8[i].script),
		      "perfmap: V8 '%s' -> '%s' in '%s' (got '%s' in '%s')", v8[i].name,
		      v8[i].function, v8[i].script, fn.buf, script.buf);
	}
	for (i = 0; i < ARRAY_SIZE(others); i++)
		CHECK(!perfmap_v8_name(others[i], &fn, &script) && !fn.len,
		      "perfmap: '%s' is not V8's JS: kept whole", others[i]);
	strbuf_release(&fn);
	strbuf_release(&script);

	{
		uint32_t pid = 0;

		CHECK(!perfmap_status_nspid("Name:\tnode\nTgid:\t4242\nNSpid:\t4242\t17\t7\nNSsid:\t1\n",
					    &pid) && pid == 7,
		      "perfmap: NSpid's last field is the pid in the process's namespace (%u)", pid);
		CHECK(!perfmap_status_nspid("NSpid:\t99\n", &pid) && pid == 99,
		      "perfmap: NSpid with one namespace");
		CHECK(perfmap_status_nspid("Name:\tx\nPid:\t3\n", &pid) == -ENOENT,
		      "perfmap: no NSpid line (before Linux 4.1)");
	}
}

void test_perfmap(void)
{
	test_perfmap_text();
	test_perfmap_file();
	test_perfmap_names();
}

/* A fake /proc: a process with anonymous executable memory and a perf map in its root. */
void test_jit_symbolize(void)
{
	char dir[] = "/tmp/bpfprof-unit-jit.XXXXXX", path[256];
	uint64_t ips[] = { 0x7f0000001010, 0x7f0000002011, 0x7f0000003001, 0x550000001000 };
	struct symbolizer s;
	struct profile p;
	uint32_t locs[4], early, late;
	const struct prof_location *l;
	const struct prof_function *f;

	if (!mkdtemp(dir)) {
		CHECK(false, "jit: a temporary folder");
		return;
	}
	snprintf(path, sizeof(path), "%s/4242", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/4242/maps", dir);
	write_text(path, "w", "550000000000-550000010000 r-xp 00000000 00:00 0 [anon:jit]\n"
			      "7f0000000000-7f0000010000 rwxp 00000000 00:00 0 \n");
	snprintf(path, sizeof(path), "%s/4242/status", dir);
	write_text(path, "w", "Name:\tnode\nNSpid:\t4242\t7\n");
	snprintf(path, sizeof(path), "%s/4242/root", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/4242/root/tmp", dir);
	mkdir(path, 0755);
	/* Named by the pid inside the process's namespace (7), not 4242. */
	snprintf(path, sizeof(path), "%s/4242/root/tmp/perf-7.map", dir);
	write_text(path, "w", "7f0000001000 100 JS:*hotFunctionA /app/jit.js:8:22\n"
			      "7f0000002000 80 _ZNK6shapes6Circle4areaEv\n"
			      "550000000f00 200 stub with spaces\n");

	symbolizer_init(&s);
	free(s.procs.proc_root);
	s.procs.proc_root = xstrdup(dir);
	profile_init(&p);
	symbolize_user_stack(&s, &p, 4242, 0, ips, 4, locs);

	l = &p.locations[locs[0]];
	f = l->nlines ? &p.functions[p.lines[l->first_line].function] : NULL;
	CHECK(l->kind == FRAME_JIT && f && !strcmp(profile_str(&p, f->name), "hotFunctionA") &&
	      !strcmp(profile_str(&p, f->system_name), "JS:*hotFunctionA /app/jit.js:8:22") &&
	      !strcmp(profile_str(&p, f->filename), "/app/jit.js"),
	      "jit: a V8 frame: function, the map's name as system name, the script");
	l = &p.locations[locs[1]];
	f = l->nlines ? &p.functions[p.lines[l->first_line].function] : NULL;
	CHECK(l->kind == FRAME_JIT && l->address == 0x7f0000002010 && f &&
	      !strcmp(profile_str(&p, f->name), "shapes::Circle::area() const") &&
	      !strcmp(profile_str(&p, f->system_name), "_ZNK6shapes6Circle4areaEv"),
	      "jit: a caller's frame, its mangled name demangled");
	early = locs[2];
	l = &p.locations[early];
	CHECK(l->kind == FRAME_USER && !l->nlines, "jit: an address the map does not name: unnamed");
	l = &p.locations[locs[3]];
	f = l->nlines ? &p.functions[p.lines[l->first_line].function] : NULL;
	CHECK(l->kind == FRAME_JIT && f && !strcmp(profile_str(&p, f->name), "stub with spaces"),
	      "jit: a named anonymous mapping ([anon:jit]) is JIT memory too");

	/* The JIT compiles more: read again at the next drain, not before. */
	write_text(path, "a", "7f0000003000 40 JS:~late /app/jit.js:30:1\n");
	ips[0] = 0x7f0000003004;
	symbolize_user_stack(&s, &p, 4242, 0, ips, 1, locs);
	late = locs[0];
	CHECK(!p.locations[late].nlines, "jit: within one drain the map is not read again");
	symbolizer_new_generation(&s);
	ips[0] = 0x7f0000003008;
	symbolize_user_stack(&s, &p, 4242, 0, ips, 1, locs);
	l = &p.locations[locs[0]];
	f = l->nlines ? &p.functions[p.lines[l->first_line].function] : NULL;
	CHECK(l->kind == FRAME_JIT && f && !strcmp(profile_str(&p, f->name), "late"),
	      "jit: a later drain reads what the map gained");
	/* Frames sampled before the map named them (V8 writes it through a buffer). */
	symbolizer_name_late_jit(&s, &p);
	l = &p.locations[late];
	f = l->nlines ? &p.functions[p.lines[l->first_line].function] : NULL;
	CHECK(l->kind == FRAME_JIT && f && !strcmp(profile_str(&p, f->name), "late") &&
	      p.locations[early].nlines && p.locations[early].kind == FRAME_JIT,
	      "jit: frames sampled before their map line are named in place once it comes");
	CHECK(s.jit.nr_late_jit == 0, "jit: nothing left waiting (%u)", s.jit.nr_late_jit);

	profile_release(&p);
	symbolizer_release(&s);
	unlink(path);
	snprintf(path, sizeof(path), "rm -r '%s'", dir);
	CHECK(system(path) == 0, "jit: the fake /proc removed");
}
