// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Readers against files made to hurt them, as anyone whose process we
 * profile can make them: absurd sizes and counts (sparse files claim
 * terabytes), names that would break the folded format, DWARF that nests
 * past any stack or names files libdw would open on its own (a FIFO
 * there hangs the reader), files truncated while we read them. Each
 * reader must stay within its limits, answer promptly and yield names
 * tests/check_folded.awk accepts.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpfprof/debuginfo.h"
#include "bpfprof/dwarf.h"
#include "bpfprof/elf.h"
#include "bpfprof/kallsyms.h"
#include "bpfprof/perfmap.h"
#include "bpfprof/sideband.h"
#include "bpfprof/util.h"
#include "fuzz.h"
#include "unit.h"

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int memfd_with(const void *data, size_t size)
{
	return fuzz_memfd(data, size);
}

/*
 * Runs fn(arg) in a child with a time limit, so a hang or a crash is a
 * failed check, not the end of the tests. NULL if it returned, else what
 * happened.
 */
static const char *in_child(void (*fn)(void *), void *arg, unsigned seconds)
{
	static char what[64];
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return "fork failed";
	if (!pid) {
		alarm(seconds);
		fn(arg);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return "waitpid failed";
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return NULL;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		snprintf(what, sizeof(what), "hung for %u s", seconds);
	else if (WIFSIGNALED(status))
		snprintf(what, sizeof(what), "killed by %s", strsignal(WTERMSIG(status)));
	else
		snprintf(what, sizeof(what), "exit status %d", WEXITSTATUS(status));
	return what;
}

/* Folded lines ------------------------------------------------------------ */

/* Whether the line (up to its count) has exactly n frames. */
static bool line_has_frames(const char *line, size_t n)
{
	const char *space = strchr(line, '\n');
	size_t frames = 1;

	while (space > line && space[-1] != ' ')
		space--;
	for (; line < space - 1; line++)
		frames += *line == ';';
	return frames == n;
}

/*
 * One sample per name, "comm;main;NAME", written as folded: every line
 * valid (by tests/check_folded.awk itself and by the same rules in C),
 * three frames each, all samples there.
 */
static void check_folded(const char *what, const char *comm, const char *const *names, size_t n,
			 enum frame_kind kind)
{
	struct prof_line line = { 0, 0 };
	struct profile p;
	uint32_t root, i, three = 0;
	uint64_t total;
	size_t lines;
	const char *problem, *l;
	char *text, *awk;
	int err;

	profile_init(&p);
	line.function = profile_function(&p, profile_string(&p, "main"), profile_string(&p, "main"), 0);
	root = profile_location_add(&p, 0, 0x1000, FRAME_USER, &line, 1);
	for (i = 0; i < n; i++) {
		struct prof_sample s = { .pid = 1, .tid = 1, .count = 1 };
		uint32_t stack[2];

		s.comm = profile_string(&p, comm);
		line.function = profile_function(&p, profile_string(&p, names[i]),
						 profile_string(&p, names[i]), 0);
		stack[0] = profile_location_add(&p, 0, 0x2000 + 16 * i, kind, &line, 1);
		stack[1] = root;
		s.stack = profile_stack(&p, stack, 2);
		profile_add_sample(&p, &s);
	}
	text = unit_write(write_folded, &p, false, &err);
	problem = fuzz_folded_problem(text, strlen(text), &total, &lines);
	CHECK(!err && !problem && total == n, "%s: valid folded lines, %zu samples (%s)", what, n,
	      problem ? problem : "ok");
	for (l = text; *l; l = strchr(l, '\n') + 1)
		three += line_has_frames(l, 3);
	CHECK(three == lines, "%s: every line is comm;main;name, no name split or lost", what);
	awk = unit_pipe("LC_ALL=C awk -f tests/check_folded.awk", text, strlen(text));
	CHECK(awk && strtoull(awk, NULL, 10) == n, "%s: tests/check_folded.awk accepts them%s", what,
	      awk ? "" : " (it did not)");
	free(awk);
	free(text);
	profile_release(&p);
}

/* ELF ----------------------------------------------------------------------- */

struct test_sym {
	uint32_t name;		/* offset in the string table */
	uint64_t value, size;
};

enum { SH_NULL, SH_TEXT, SH_SYMTAB, SH_STRTAB, SH_SHSTRTAB, SH_COUNT };

/*
 * A small ELF64 shared object: .text (NOBITS, 1 MiB at 0x1000), .symtab
 * of global functions in it, .strtab, .shstrtab, one PT_LOAD. Tests
 * patch its headers afterwards.
 */
static unsigned char *build_elf(const struct test_sym *syms, size_t nsyms, const char *strtab,
				size_t strtab_len, size_t *size)
{
	static const char shstrtab[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	size_t symtab_off = 128, strtab_off = symtab_off + (nsyms + 1) * sizeof(Elf64_Sym);
	size_t shstr_off = strtab_off + strtab_len, sh_off = (shstr_off + sizeof(shstrtab) + 7) & ~7ul;
	unsigned char *buf;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf64_Sym *sym;
	Elf64_Shdr *sh;
	size_t i;

	*size = sh_off + SH_COUNT * sizeof(Elf64_Shdr);
	buf = xcalloc(1, *size);
	eh = (Elf64_Ehdr *)buf;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = sh_off;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = SH_COUNT;
	eh->e_shstrndx = SH_SHSTRTAB;
	ph = (Elf64_Phdr *)(buf + eh->e_phoff);
	*ph = (Elf64_Phdr){ PT_LOAD, PF_R | PF_X, 0, 0, 0, *size, 0x101000, 0x1000 };
	sym = (Elf64_Sym *)(buf + symtab_off);
	for (i = 0; i < nsyms; i++)
		sym[i + 1] = (Elf64_Sym){ syms[i].name, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), 0, SH_TEXT,
					  syms[i].value, syms[i].size };
	memcpy(buf + strtab_off, strtab, strtab_len);
	memcpy(buf + shstr_off, shstrtab, sizeof(shstrtab));
	sh = (Elf64_Shdr *)(buf + sh_off);
	sh[SH_TEXT] = (Elf64_Shdr){ 1, SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0x1000, 1 << 20,
				    0, 0, 16, 0 };
	sh[SH_SYMTAB] = (Elf64_Shdr){ 7, SHT_SYMTAB, 0, 0, symtab_off, (nsyms + 1) * sizeof(*sym),
				      SH_STRTAB, 1, 8, sizeof(*sym) };
	sh[SH_STRTAB] = (Elf64_Shdr){ 15, SHT_STRTAB, 0, 0, strtab_off, strtab_len, 0, 0, 1, 0 };
	sh[SH_SHSTRTAB] = (Elf64_Shdr){ 23, SHT_STRTAB, 0, 0, shstr_off, sizeof(shstrtab), 0, 0, 1, 0 };
	return buf;
}

static Elf64_Shdr *section_headers(unsigned char *elf)
{
	return (Elf64_Shdr *)(elf + ((Elf64_Ehdr *)elf)->e_shoff);
}

/* Thousands of symbols naming one 64 KiB string: memory as the table's, names cut. */
static void test_elf_shared_name(void)
{
	enum { NSYMS = 20000, LONG = 64 * 1024 };
	struct test_sym *syms = xcalloc(NSYMS, sizeof(*syms));
	char *strtab = xmalloc(LONG + 2);
	struct elf_symtab t;
	unsigned char *elf;
	size_t size, i, cut = 0;

	strtab[0] = '\0';
	memset(strtab + 1, 'a', LONG);
	strtab[LONG + 1] = '\0';
	for (i = 0; i < NSYMS; i++)
		syms[i] = (struct test_sym){ 1, 0x1000 + 16 * i, 16 };
	elf = build_elf(syms, NSYMS, strtab, LONG + 2, &size);
	CHECK(elf_symtab_read_mem(&t, elf, size) == 0 && t.nr == NSYMS,
	      "elf: %d symbols sharing one name read (%zu)", NSYMS, t.nr);
	for (i = 0; i < t.nr; i++)
		cut += strlen(elf_sym_name(&t, &t.syms[i])) == ELF_MAX_NAME;
	CHECK(cut == t.nr, "elf: a 64 KiB name is cut to %d bytes", ELF_MAX_NAME);
	/* One copy per symbol would be 1.3 GB. */
	CHECK(t.names_len <= LONG + 2 + 1, "elf: the names take %zu bytes, the string table's size",
	      t.names_len);
	elf_symtab_release(&t);
	free(elf);
	free(strtab);
	free(syms);
}

/* Names that would break a folded line, or are no names at all. */
static void test_elf_names(void)
{
	static const char *const raw[] = {
		"semi;colon", "new\nline", "bad\xff\xfeutf8\xe2\x82", "ctrl\x01\x1b[31m", "trailing  ",
		"tab\t", "ver@@GLIBC_2.34", "@@only_a_version", "stub@plt", "", "_ZN3foo3barEv",
		"_Z1fILi1EEvv_bogus", "  ",
	};
	static const char *const want[] = {
		"semi;colon", "new\nline", "bad\xff\xfeutf8\xe2\x82", "ctrl\x01\x1b[31m", "trailing",
		"tab", "ver", NULL, "stub@plt", NULL, "_ZN3foo3barEv", "_Z1fILi1EEvv_bogus", NULL,
	};
	enum { N = ARRAY_SIZE(raw), LONG = 5000 };
	struct test_sym syms[N + 2];
	const char *names[N + 1];
	char *table = xmalloc(4096 + LONG);
	const struct elf_sym *s;
	struct elf_symtab t;
	unsigned char *elf;
	size_t size, len = 0, i, n = 0, right = 0, long_len = 0;

	table[len++] = '\0';
	for (i = 0; i < N; i++) {
		syms[i] = (struct test_sym){ len, 0x1000 + 16 * i, 16 };
		memcpy(table + len, raw[i], strlen(raw[i]) + 1);
		len += strlen(raw[i]) + 1;
	}
	/* "x" and 2-byte characters: cut at ELF_MAX_NAME, between two of them. */
	syms[N] = (struct test_sym){ len, 0x1000 + 16 * N, 16 };
	table[len++] = 'x';
	for (i = 0; i < LONG; i += 2) {
		table[len++] = (char)0xc3;
		table[len++] = (char)0xa9;
	}
	table[len++] = '\0';
	/* The table's last bytes, without a NUL: no name. */
	syms[N + 1] = (struct test_sym){ len, 0x1000 + 16 * (N + 1), 16 };
	memcpy(table + len, "unterminated", 12);
	len += 12;
	elf = build_elf(syms, N + 2, table, len, &size);

	CHECK(elf_symtab_read_mem(&t, elf, size) == 0, "elf: a table of hostile names reads");
	for (i = 0; i < N; i++) {
		const char *got;

		s = elf_symtab_lookup(&t, 0x1000 + 16 * i);
		got = s && s->addr == 0x1000 + 16 * i ? elf_sym_name(&t, s) : NULL;
		if (!got != !want[i] || (got && strcmp(got, want[i])))
			printf("#   symbol %zu: got '%s', want '%s'\n", i, got ? got : "(none)",
			       want[i] ? want[i] : "(none)");
		else
			right++;
		if (got)
			names[n++] = got;
	}
	CHECK(right == N, "elf: versions and trailing blanks go; empty names are none");
	s = elf_symtab_lookup(&t, 0x1000 + 16 * N);
	if (s && s->addr == 0x1000 + 16 * N) {
		names[n++] = elf_sym_name(&t, s);
		long_len = strlen(elf_sym_name(&t, s));
	}
	CHECK(long_len && long_len <= ELF_MAX_NAME && long_len % 2 == 1,
	      "elf: a long name is cut at %d bytes, not inside a character (%zu)", ELF_MAX_NAME,
	      long_len);
	s = elf_symtab_lookup(&t, 0x1000 + 16 * (N + 1));
	CHECK(!s || s->addr != 0x1000 + 16 * (N + 1), "elf: a name its table does not end is none");
	check_folded("elf: hostile symbol names", "evil;comm\n", names, n, FRAME_USER);
	elf_symtab_release(&t);
	free(elf);
	free(table);
}

/* A small ELF file in a memfd that a sparse tail makes size bytes long. */
static int sparse_file(const unsigned char *elf, size_t len, uint64_t size)
{
	int fd = memfd_with(elf, len);

	if (fd >= 0 && ftruncate(fd, size)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Headers that claim terabytes: read promptly, without allocating what they claim. */
static void test_elf_absurd_sizes(void)
{
	struct test_sym syms[] = { { 1, 0x1000, 16 }, { 1, 0x1010, 16 } };
	struct timespec t0;
	struct elf_symtab t;
	unsigned char *elf;
	Elf64_Shdr *sh;
	double secs;
	size_t size;
	int fd, err;

	/* A symbol table of 1 TiB (45 billion symbols) in a 2 TiB file. */
	elf = build_elf(syms, 2, "\0f", 3, &size);
	sh = section_headers(elf);
	sh[SH_SYMTAB].sh_offset = 1ull << 40;
	sh[SH_SYMTAB].sh_size = 1ull << 40;
	fd = sparse_file(elf, size, 2ull << 40);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = fd >= 0 ? elf_symtab_read_fd(&t, fd) : -1;
	secs = seconds_since(&t0);
	CHECK(!err && t.nr == 0 && secs < 5, "elf: a 1 TiB symbol table is left out, promptly (%.2f s)",
	      secs);
	if (!err)
		elf_symtab_release(&t);
	if (fd >= 0)
		close(fd);

	/* 2^24 sections, in section 0's sh_size (extended numbering), in a 1 GiB file. */
	((Elf64_Ehdr *)elf)->e_shnum = 0;
	sh[SH_NULL].sh_size = 1u << 24;
	fd = sparse_file(elf, size, 1ull << 30);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = fd >= 0 ? elf_symtab_read_fd(&t, fd) : 0;
	secs = seconds_since(&t0);
	CHECK(err == -ENOEXEC && secs < 5, "elf: 16 M sections are refused, promptly (%d, %.2f s)", err,
	      secs);
	if (fd >= 0)
		close(fd);
	sh[SH_NULL].sh_size = 0;
	((Elf64_Ehdr *)elf)->e_shnum = SH_COUNT;

	/* 2^31 program headers (PN_XNUM, the count in section 0's sh_info). */
	((Elf64_Ehdr *)elf)->e_phnum = PN_XNUM;
	sh[SH_NULL].sh_info = 1u << 31;
	fd = sparse_file(elf, size, 1ull << 40);
	err = fd >= 0 ? elf_symtab_read_fd(&t, fd) : 0;
	CHECK(err == -ENOEXEC, "elf: 2 G program headers are refused (%d)", err);
	if (fd >= 0)
		close(fd);
	free(elf);

	/*
	 * The string table over the symbol table: names from the bytes of
	 * symbols (an st_info of 0x12, a control character), still names.
	 */
	syms[0].name = 3 * sizeof(Elf64_Sym) + 1;	/* "f", past the symbols */
	syms[1].name = sizeof(Elf64_Sym) + 4;	/* symbol 1's st_info */
	elf = build_elf(syms, 2, "\0f", 3, &size);
	sh = section_headers(elf);
	sh[SH_STRTAB].sh_offset = sh[SH_SYMTAB].sh_offset;
	sh[SH_STRTAB].sh_size += sh[SH_SYMTAB].sh_size;
	err = elf_symtab_read_mem(&t, elf, size);
	CHECK(!err && t.nr == 2 && !strcmp(elf_sym_name(&t, &t.syms[0]), "f") &&
	      !strcmp(elf_sym_name(&t, &t.syms[1]), "\x12"),
	      "elf: a string table over the symbol table names them from its bytes");
	if (!err) {
		const char *names[64];
		size_t i, n = 0;

		for (i = 0; i < t.nr && n < ARRAY_SIZE(names); i++)
			names[n++] = elf_sym_name(&t, &t.syms[i]);
		check_folded("elf: names from overlapping sections", "prog", names, n, FRAME_USER);
		elf_symtab_release(&t);
	}
	free(elf);
}

/* DWARF --------------------------------------------------------------------- */

static char hostile_dir[512];

/* Opens DWARF and looks up every symbol's address: in a child, by the caller's time limit. */
static void lookup_all(void *arg)
{
	const char *path = arg;
	struct dwarf_frame f[16];
	struct dwarf_index *d;
	struct elf_symtab t;
	size_t i;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || elf_symtab_read_fd(&t, fd) || dwarf_index_open(&d, fd) < 0)
		_exit(0);	/* refused: fine */
	close(fd);
	for (i = 0; i < t.nr; i++)
		dwarf_index_frames(d, t.syms[i].addr, f, 16);
	dwarf_index_free(d);
	elf_symtab_release(&t);
}

static void test_dwarf_deep(void)
{
	char path[600];
	const char *what;

	snprintf(path, sizeof(path), "%s/deep.so", hostile_dir);
	if (!CHECK(!access(path, R_OK), "dwarf: fixture %s (make test-build)", path))
		return;
	what = in_child(lookup_all, path, 60);
	CHECK(!what, "dwarf: 400000 nested blocks: no stack overflow (%s)", what ? what : "ok");
}

/* A copy of the fixture in a fresh directory, beside a FIFO named as its .dwo. */
static void test_dwarf_split_fifo(void)
{
	char src[600], dir[] = "/tmp/bpfprof-unit.XXXXXX", path[600], fifo[600];
	const char *what = "no fixture";
	char *data;
	size_t len;
	FILE *f;

	snprintf(src, sizeof(src), "%s/split/libsplit.so", hostile_dir);
	if (!read_file(src, &data, &len) && mkdtemp(dir)) {
		snprintf(path, sizeof(path), "%s/libsplit.so", dir);
		snprintf(fifo, sizeof(fifo), "%s/libsplit.so-debuginfo.dwo", dir);
		f = fopen(path, "w");
		if (f && fwrite(data, 1, len, f) == len && !fclose(f) && !mkfifo(fifo, 0600))
			what = in_child(lookup_all, path, 10);
		unlink(fifo);
		unlink(path);
		rmdir(dir);
		free(data);
	}
	CHECK(!what, "dwarf: a split unit's .dwo that is a FIFO is never opened (%s)",
	      what ? what : "ok");
}

static void test_dwarf_dwz_fifo(void)
{
	static const char common[] = "/tmp/bpfprof-test-dwz-common.debug";	/* hostile.sh's */
	char path[600];
	const char *what = "cannot make the FIFO";
	struct dwarf_index *d = NULL;
	struct stat st;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/dwz/liba.so", hostile_dir);
	fd = open(path, O_RDONLY);
	if (!CHECK(fd >= 0, "dwarf: fixture %s (make test-build; dwz installed)", path))
		return;
	err = dwarf_index_open(&d, fd);
	close(fd);
	dwarf_index_free(d);
	CHECK(err == -EOPNOTSUPP, "dwarf: DWARF shared through dwz is refused (%d)", err);
	/* At the path the file names (another test run may have made it already). */
	unlink(common);
	if (!mkfifo(common, 0600) ||
	    (errno == EEXIST && !lstat(common, &st) && S_ISFIFO(st.st_mode)))
		what = in_child(lookup_all, path, 10);
	unlink(common);
	CHECK(!what, "dwarf: the dwz file, a FIFO, is never opened (%s)", what ? what : "ok");
}

/* Truncated under the index: a read fails, nothing faults. */
static void lookup_truncated(void *arg)
{
	const char *path = arg;
	struct dwarf_frame f[16];
	struct dwarf_index *d;
	struct elf_symtab t;
	char *data;
	size_t len, i;
	int fd;

	if (read_file(path, &data, &len) || (fd = memfd_with(data, len)) < 0)
		_exit(2);
	if (elf_symtab_read_fd(&t, fd) || dwarf_index_open(&d, fd))
		_exit(3);
	if (ftruncate(fd, 64))
		_exit(4);
	for (i = 0; i < t.nr; i++)
		dwarf_index_frames(d, t.syms[i].addr, f, 16);
	dwarf_index_free(d);
	elf_symtab_release(&t);
	close(fd);
	free(data);
}

static void test_dwarf_truncated(void)
{
	char path[600];
	const char *what;

	snprintf(path, sizeof(path), "%s/dbg/libdbg.so", unit_fixtures);
	what = in_child(lookup_truncated, path, 30);
	CHECK(!what, "dwarf: a file truncated after it was opened: no SIGBUS (%s)", what ? what : "ok");
}

/* A compressed section that claims to inflate to 1 TiB. */
static void test_dwarf_bomb(void)
{
	char path[600], *data;
	size_t len;
	Elf *elf;
	Elf_Scn *scn = NULL;
	struct dwarf_index *d = NULL;
	bool patched = false;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/zlib.so", hostile_dir);
	if (!CHECK(!read_file(path, &data, &len), "dwarf: fixture %s", path))
		return;
	elf = elf_memory(data, len);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		    sh.sh_offset + sizeof(Elf64_Chdr) <= len) {
			((Elf64_Chdr *)(data + sh.sh_offset))->ch_size = 1ull << 40;
			patched = true;
		}
	}
	if (elf)
		elf_end(elf);
	fd = memfd_with(data, len);
	if (fd >= 0) {
		err = dwarf_index_open(&d, fd);
		dwarf_index_free(d);
		close(fd);
	}
	CHECK(patched && err == -EFBIG, "dwarf: debug sections claiming 1 TiB are refused (%d)", err);
	free(data);
}

/* perf maps ---------------------------------------------------------------- */

/* A perf map of n lines from fmt (with the line's number for each %u), in a memfd. */
static int perfmap_file(size_t n, const char *fmt)
{
	struct strbuf sb;
	size_t i;
	int fd;

	strbuf_init(&sb);
	for (i = 0; i < n; i++)
		strbuf_addf(&sb, fmt, (unsigned)i, (unsigned)i);
	fd = memfd_with(sb.buf, sb.len);
	strbuf_release(&sb);
	return fd;
}

static void test_perfmap_absurd(void)
{
	struct perfmap m;
	struct strbuf sb;
	const struct perfmap_entry *e;
	struct timespec t0;
	double secs;
	size_t i;
	int fd, err;

	/* A million and a half JIT functions, each a line: the first million are kept. */
	fd = perfmap_file(PERFMAP_MAX_ENTRIES + PERFMAP_MAX_ENTRIES / 2, "%x0 10 fn_%u\n");
	perfmap_init(&m);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = fd >= 0 ? perfmap_read_fd(&m, fd) : -EBADF;
	secs = seconds_since(&t0);
	CHECK(!err && secs < 30, "perfmap: 1.5 M lines read (%.1f s)", secs);
	CHECK(m.nr <= PERFMAP_MAX_ENTRIES && m.dropped >= PERFMAP_MAX_ENTRIES / 2 &&
	      m.nr + m.dropped == m.lines + m.dropped && m.lines <= PERFMAP_MAX_ENTRIES,
	      "perfmap: at most %u ranges kept (%u), the rest dropped and counted (%llu)",
	      PERFMAP_MAX_ENTRIES, m.nr, (unsigned long long)m.dropped);
	perfmap_release(&m);
	close(fd);

	/* 100,000 names of 1000 bytes, all different: 100 MB of names, 64 MB kept. */
	strbuf_init(&sb);
	strbuf_addstr(&sb, "%x00 10 %u");
	for (i = 0; i < 990; i++)
		strbuf_addch(&sb, 'n');
	strbuf_addch(&sb, '\n');
	fd = perfmap_file(100000, sb.buf);
	strbuf_release(&sb);
	perfmap_init(&m);
	/* 100 MB: as many reads as it takes (each is bounded, and may come back short). */
	for (i = 0, err = fd >= 0 ? 0 : -EBADF; !err && i < 16; i++)
		err = perfmap_read_fd(&m, fd);
	CHECK(!err && m.dropped > 0 && m.names.len <= PERFMAP_MAX_NAME_BYTES + PERFMAP_MAX_NAME + 1,
	      "perfmap: names stop at %u MiB (%zu bytes, %llu lines dropped)",
	      PERFMAP_MAX_NAME_BYTES >> 20, m.names.len, (unsigned long long)m.dropped);
	perfmap_release(&m);
	close(fd);

	/* 16 GiB of a sparse file, no line in it: one read takes 64 MiB of it, promptly. */
	fd = memfd_with("", 0);
	perfmap_init(&m);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = fd >= 0 && !ftruncate(fd, 16ull << 30) ? perfmap_read_fd(&m, fd) : -EBADF;
	secs = seconds_since(&t0);
	CHECK(!err && m.pos >= PERFMAP_MAX_READ && m.pos < 2 * PERFMAP_MAX_READ && secs < 5,
	      "perfmap: 16 GiB without a line: %llu MiB read in %.2f s, the rest next time",
	      (unsigned long long)m.pos >> 20, secs);
	perfmap_release(&m);
	if (fd >= 0)
		close(fd);

	/* One line of 8 MiB: its name is cut, the next line still read. */
	strbuf_init(&sb);
	strbuf_addstr(&sb, "1000 10 ");
	for (i = 0; i < (8u << 20); i += 3)
		strbuf_add(&sb, "\xe2\x82\xac", 3);	/* the euro sign: 3 bytes */
	strbuf_addstr(&sb, "\n2000 10 after\n");
	fd = memfd_with(sb.buf, sb.len);
	strbuf_release(&sb);
	perfmap_init(&m);
	err = fd >= 0 ? perfmap_read_fd(&m, fd) : -EBADF;
	CHECK(!err && m.nr == 2 && m.truncated == 1, "perfmap: an 8 MiB line is one entry, cut");
	e = perfmap_lookup(&m, 0x1000);
	CHECK(e && strlen(perfmap_name(&m, e)) <= PERFMAP_MAX_NAME &&
	      strlen(perfmap_name(&m, e)) % 3 == 0, "perfmap: cut at %u bytes, between characters",
	      PERFMAP_MAX_NAME);
	e = perfmap_lookup(&m, 0x2000);
	CHECK(e && !strcmp(perfmap_name(&m, e), "after"), "perfmap: the line after it is read");
	perfmap_release(&m);
	close(fd);
}

static void test_perfmap_names(void)
{
	static const char text[] =
		"1000 10 semi;colon\n"
		"1010 10 bad \xff\xfe utf-8 \xe2\x82\n"
		"1020 10 ctrl \x01\x1b[31m\x7f\n"
		"1030 10 nul\0after\n"
		"1040 10 \0only after a nul\n"
		"1050 10 JS:*fn;x /app/a;b.js:1:2\n"
		"1060 10 LazyCompile:~  /app/x.js:3\n"
		"1070 10 trailing blanks  \t \r\n";
	const char *names[16] = { 0 };
	struct strbuf fn, script;
	struct perfmap m;
	size_t n = 0;
	uint32_t i;

	perfmap_init(&m);
	perfmap_parse(&m, text, sizeof(text) - 1);
	CHECK(m.nr == 7 && m.skipped == 1, "perfmap: a name from a NUL on is cut, an empty one skipped");
	strbuf_init(&fn);
	strbuf_init(&script);
	for (i = 0; i < m.nr && n < ARRAY_SIZE(names); i++) {
		const char *name = perfmap_name(&m, &m.entries[i]);

		/* As the symbolizer names JIT frames: V8's function, other names whole. */
		names[n++] = perfmap_v8_name(name, &fn, &script) ? xstrdup(fn.buf) : xstrdup(name);
	}
	check_folded("perfmap: hostile JIT names", "node", names, n, FRAME_JIT);
	for (i = 0; i < n; i++)
		free((char *)names[i]);
	strbuf_release(&fn);
	strbuf_release(&script);
	perfmap_release(&m);
}

/* The rest ------------------------------------------------------------------ */

static void test_debuglink(void)
{
	char path[600];
	struct debuginfo_elf e;
	uint32_t crc;
	int fd, err;

	/* libdbg-link.so's link, rewritten to climb out of where debug files are looked for. */
	snprintf(path, sizeof(path), "%s/dbg/libdbg-link.so", unit_fixtures);
	{
		char *data, *at;
		size_t len;

		if (!CHECK(!read_file(path, &data, &len), "debuginfo: fixture %s", path))
			return;
		at = memmem(data, len, "libdbg.debug", 12);
		if (at)
			memcpy(at, "../../proc/x", 12);
		fd = memfd_with(data, len);
		free(data);
		err = fd >= 0 ? debuginfo_elf_read(&e, fd) : -1;
		CHECK(at && !err && !e.link_name, "debuginfo: a debuglink with a '/' is no link");
		if (!err)
			debuginfo_elf_release(&e);
		if (fd >= 0)
			close(fd);
	}
	/* A candidate of 1 TiB (/proc/kcore is one, if sparse): not read through. */
	fd = memfd_with("", 0);
	err = fd >= 0 && !ftruncate(fd, 1ull << 40) ? debuginfo_file_crc(fd, &crc) : 0;
	CHECK(err == -EFBIG, "debuginfo: a 1 TiB candidate is not checksummed (%d)", err);
	if (fd >= 0)
		close(fd);
}

static void test_kallsyms_nul(void)
{
	static const char text[] = "ffffffff81000000 T a\0b\nffffffff81001000 T \0c\n";
	struct kallsyms ks;

	CHECK(kallsyms_parse(&ks, text, sizeof(text) - 1) == -EINVAL,
	      "kallsyms: a name that is empty before a NUL is a malformed line");
}

static void test_sideband_wrap(void)
{
	struct {
		uint32_t type;
		uint16_t misc, size;
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_gen;
		uint32_t prot, flags;
		char filename[8];
		uint32_t sid_pid, sid_tid;
		uint64_t time;
	} __attribute__((packed)) rec = {
		10, 0, sizeof(rec), 1, 1, 0xfffffffffffff000, 0x2000, 0, 0, 0, 1, 0, 5, 2, "/x", 1, 1, 1
	};
	struct sb_event ev;

	CHECK(sideband_decode(&rec, sizeof(rec), &ev) == -EINVAL,
	      "sideband: a mapping that wraps around the address space is malformed");
	rec.addr = 0x1000;
	CHECK(sideband_decode(&rec, sizeof(rec), &ev) == 0 && ev.mmap.len == 0x2000,
	      "sideband: the same mapping where it fits decodes");
}

void test_hostile(void)
{
	snprintf(hostile_dir, sizeof(hostile_dir), "%s/hostile", unit_fixtures);
	elf_version(EV_CURRENT);
	test_elf_shared_name();
	test_elf_names();
	test_elf_absurd_sizes();
	test_dwarf_deep();
	test_dwarf_split_fifo();
	test_dwarf_dwz_fifo();
	test_dwarf_truncated();
	test_dwarf_bomb();
	test_perfmap_absurd();
	test_perfmap_names();
	test_debuglink();
	test_kallsyms_nul();
	test_sideband_wrap();
}
