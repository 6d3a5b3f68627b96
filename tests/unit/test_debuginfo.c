// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Separate debug files and DWARF, on the fixtures debuglayout.sh lays out
 * around libdbg.so and on the system's libc with libc6-dbg; file, line and
 * inline chains checked against an independent reader, eu-addr2line.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpfprof/debuginfo.h"
#include "bpfprof/dwarf.h"
#include "bpfprof/elf.h"
#include "bpfprof/output.h"
#include "bpfprof/symbolize.h"
#include "bpfprof/util.h"
#include "unit.h"

#define MAX_FRAMES 16

static void dbg_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/dbg/%s", unit_fixtures, name);
}

static int open_dbg(const char *name)
{
	char path[4096];

	dbg_path(path, sizeof(path), name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static bool read_elf(const char *path, struct debuginfo_elf *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0 && !debuginfo_elf_read(e, fd);

	if (fd >= 0)
		close(fd);
	return ok;
}

static bool read_symtab(const char *path, struct elf_symtab *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0 && !elf_symtab_read_fd(t, fd);

	if (fd >= 0)
		close(fd);
	return ok;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The build ID debuglayout.sh read with readelf. */
static void fixture_build_id(char *out, size_t size)
{
	char path[4096];
	FILE *f;

	dbg_path(path, sizeof(path), "build-id");
	out[0] = '\0';
	f = fopen(path, "r");
	if (f) {
		if (fgets(out, size, f))
			out[strcspn(out, "\n")] = '\0';
		fclose(f);
	}
}

/*
 * Looks for the debug file of the fixture at bin_path as dirs say, with
 * bin's build ID or link removed when asked; 0 or -errno, *found the
 * path it was found at.
 */
static int find(const struct debuginfo_dirs *dirs, const char *bin_path, const char *path,
		bool no_build_id, bool no_link, char **found, char *got_id)
{
	struct debuginfo_elf bin, dbg;
	int fd;

	*found = NULL;
	if (!read_elf(bin_path, &bin))
		return -EIO;
	if (no_build_id)
		bin.build_id[0] = '\0';
	if (no_link) {
		free(bin.link_name);
		bin.link_name = NULL;
	}
	fd = debuginfo_find(dirs, path, &bin, found);
	debuginfo_elf_release(&bin);
	if (fd < 0)
		return fd;
	got_id[0] = '\0';
	if (!debuginfo_elf_read(&dbg, fd))
		strcpy(got_id, dbg.build_id);
	debuginfo_elf_release(&dbg);
	close(fd);
	return 0;
}

static void test_find(void)
{
	char id[2 * BUILD_ID_MAX + 1], got_id[2 * BUILD_ID_MAX + 1], bin[4096], want[8192],
		dir[4096], root[2048];
	struct debuginfo_dirs dirs = { 0 };
	struct debuginfo_elf e;
	uint32_t crc;
	char *found;
	int err, fd;

	fixture_build_id(id, sizeof(id));
	if (!CHECK(strlen(id) == 40, "debuginfo: fixtures laid out (make test-build)"))
		return;

	dbg_path(bin, sizeof(bin), "libdbg.so");
	CHECK(read_elf(bin, &e) && e.has_dwarf && !e.link_name && !strcmp(e.build_id, id),
	      "debuginfo: libdbg.so has DWARF, no link, build ID %s (readelf's)", e.build_id);
	debuginfo_elf_release(&e);
	dbg_path(bin, sizeof(bin), "libdbg-link.so");
	CHECK(read_elf(bin, &e) && !e.has_dwarf && e.link_name && !strcmp(e.link_name, "libdbg.debug") &&
	      !strcmp(e.build_id, id), "debuginfo: a stripped copy has no DWARF, a link to '%s'",
	      e.link_name ? e.link_name : "");
	fd = open_dbg("libdbg.debug");
	crc = ~e.link_crc;
	CHECK(fd >= 0 && !debuginfo_file_crc(fd, &crc) && crc == e.link_crc,
	      "debuginfo: the debug file's CRC-32 %08x is the one objcopy recorded, %08x", crc,
	      e.link_crc);
	if (fd >= 0)
		close(fd);
	debuginfo_elf_release(&e);

	/* Our own defaults: /, /usr/lib/debug, where no fixture is. */
	dbg_path(dir, sizeof(dir), "none");
	dirs.debug_dir = dir;
	dbg_path(bin, sizeof(bin), "libdbg-link.so");
	dbg_path(want, sizeof(want), "libdbg.debug");
	err = find(&dirs, bin, bin, false, false, &found, got_id);
	CHECK(!err && !strcmp(found, want) && !strcmp(got_id, id),
	      "debuginfo: by debuglink beside the binary (%s)", found ? found : strerror(-err));
	free(found);

	dbg_path(bin, sizeof(bin), "libdbg-sub.so");
	dbg_path(want, sizeof(want), ".debug/libdbg-sub.debug");
	err = find(&dirs, bin, bin, false, false, &found, got_id);
	CHECK(!err && !strcmp(found, want) && !strcmp(got_id, id),
	      "debuginfo: by debuglink in .debug/ (%s)", found ? found : strerror(-err));
	free(found);

	dbg_path(bin, sizeof(bin), "libdbg-badcrc.so");
	err = find(&dirs, bin, bin, false, false, &found, got_id);
	CHECK(err == -ESTALE && !found, "debuginfo: a debug file whose CRC does not match is refused (%s)",
	      strerror(-err));
	dbg_path(bin, sizeof(bin), "libdbg-nolink.so");
	err = find(&dirs, bin, bin, false, false, &found, got_id);
	CHECK(err == -ENOENT, "debuginfo: no link, no build ID file: none (%s)", strerror(-err));

	dbg_path(dir, sizeof(dir), "buildid");
	snprintf(want, sizeof(want), "%s/.build-id/%.2s/%s.debug", dir, id, id + 2);
	err = find(&dirs, bin, bin, false, false, &found, got_id);
	CHECK(!err && !strcmp(found, want) && !strcmp(got_id, id),
	      "debuginfo: by build ID under the debug directory (%s)", found ? found : strerror(-err));
	free(found);
	CHECK(read_elf(bin, &e), "debuginfo: reads libdbg-nolink.so");
	strcpy(e.build_id, "0000000000000000000000000000000000000001");
	err = debuginfo_find(&dirs, bin, &e, NULL);
	CHECK(err == -ESTALE, "debuginfo: a file filed under another build ID is refused (%s)",
	      strerror(err < 0 ? -err : 0));
	if (err >= 0)
		close(err);
	debuginfo_elf_release(&e);

	/* Inside another root: paths and symlinks are that root's. */
	dbg_path(root, sizeof(root), "root");
	dbg_path(bin, sizeof(bin), "root/opt/dbg/libdbg-root.so");
	dirs.root = root;
	dirs.debug_dir = NULL;
	err = find(&dirs, bin, "/opt/dbg/libdbg-root.so", true, false, &found, got_id);
	CHECK(!err && !strcmp(found, "/usr/lib/debug/opt/dbg/libdbg-root.debug") && !strcmp(got_id, id),
	      "debuginfo: by debuglink in the debug directory of the binary's root (%s)",
	      found ? found : strerror(-err));
	free(found);
	snprintf(want, sizeof(want), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	err = find(&dirs, bin, "/opt/dbg/libdbg-root.so", false, true, &found, got_id);
	CHECK(!err && !strcmp(found, want) && !strcmp(got_id, id),
	      "debuginfo: by build ID in that root, through an absolute symlink (%s)",
	      found ? found : strerror(-err));
	free(found);
	snprintf(dir, sizeof(dir), "%s/usr/lib/debug", root);
	dirs.root = NULL;
	dirs.debug_dir = dir;
	err = find(&dirs, bin, "/opt/dbg/libdbg-root.so", false, true, &found, got_id);
	CHECK(err == -ENOENT, "debuginfo: the same symlink seen from outside that root leads nowhere (%s)",
	      strerror(-err));
	free(found);
}

/* Symbols -------------------------------------------------------------------- */

static void test_debug_symbols(void)
{
	char path[4096];
	struct elf_symtab full, stripped, dbg;
	size_t i, want = 0, matched = 0;
	bool ok;

	dbg_path(path, sizeof(path), "libdbg.so");
	ok = read_symtab(path, &full);
	dbg_path(path, sizeof(path), "libdbg-link.so");
	ok &= read_symtab(path, &stripped);
	dbg_path(path, sizeof(path), "libdbg.debug");
	ok &= read_symtab(path, &dbg);
	if (!CHECK(ok, "debuginfo: reads libdbg.so, a stripped copy and the debug file"))
		return;
	CHECK(!stripped.from_symtab && dbg.from_symtab, "debuginfo: .symtab only in the debug file");
	for (i = 0; i < full.nr; i++) {
		const struct elf_sym *s = &full.syms[i], *d;
		const char *name = elf_sym_name(&full, s);

		if (strncmp(name, "dbg_", 4) || strstr(name, "@plt"))	/* stubs: not functions */
			continue;
		want++;
		d = elf_symtab_lookup(&dbg, s->addr + s->size / 2);
		matched += d && d->addr == s->addr && d->size == s->size &&
			   !strcmp(elf_sym_name(&dbg, d), name);
	}
	CHECK(want == 3 && matched == want,
	      "debuginfo: the debug file names all %zu of %zu functions as the full library does",
	      matched, want);
	for (i = 0; i < full.nr; i++)
		if (!strcmp(elf_sym_name(&full, &full.syms[i]), "dbg_local"))
			break;
	CHECK(i < full.nr && !elf_symtab_lookup(&stripped, full.syms[i].addr),
	      "debuginfo: the stripped copy alone does not name dbg_local");
	elf_symtab_release(&full);
	elf_symtab_release(&stripped);
	elf_symtab_release(&dbg);
}

/* DWARF ---------------------------------------------------------------------- */

/* Our frames at addr, as eu-addr2line -a -i -f --pretty-print prints them, without columns. */
static int format_frames(struct strbuf *sb, struct dwarf_index *d, const struct elf_symtab *t,
			 uint64_t addr)
{
	struct dwarf_frame fr[MAX_FRAMES];
	const struct elf_sym *sym = elf_symtab_lookup(t, addr);
	int n = dwarf_index_frames(d, addr, fr, MAX_FRAMES), i;

	strbuf_addf(sb, "0x%016" PRIx64 ": ", addr);
	if (!n)
		strbuf_addf(sb, "%s at ??:0\n", sym ? elf_sym_name(t, sym) : "??");
	for (i = 0; i < n; i++) {
		const char *name = fr[i].name;

		/* eu-addr2line too names a function DWARF does not know by its symbol. */
		if (!name && i == n - 1 && sym)
			name = elf_sym_name(t, sym);
		strbuf_addf(sb, "%s%s at %s:%" PRIu32 "\n", i ? " (inlined by) " : "", name ? name : "??",
			    fr[i].file ? fr[i].file : "??", fr[i].line);
	}
	return n;
}

/* The next address's block: from text up to the next line that starts with "0x". */
static const char *next_block(const char *text, size_t *len)
{
	const char *end = text;

	do {
		end = strchr(end, '\n');
		end = end ? end + 1 : text + strlen(text);
	} while (*end && strncmp(end, "0x", 2));
	*len = end - text;
	return end;
}

/* Columns and discriminators dropped; with basenames, files by their base names only. */
#define NORMALIZE "sed -E -e 's/ \\(discriminator [0-9]+\\)$//' -e 's/(:[0-9]+):[0-9]+$/\\1/'"
#define BASENAMES " | sed -E 's@ at ([^ ]*/)?([^/ ]+):@ at \\2:@'"

/*
 * What a reader of file says of addrs[n]: the blocks -a -i -f --pretty-print prints,
 * one per address. eu-addr2line and binutils' addr2line agree on that.
 */
static char *reader_text(const char *reader, const char *file, const uint64_t *addrs, size_t n,
			 bool basenames)
{
	struct strbuf in, cmd;
	size_t i;
	char *out;

	strbuf_init(&in);
	strbuf_init(&cmd);
	for (i = 0; i < n; i++)
		strbuf_addf(&in, "0x%" PRIx64 "\n", addrs[i]);
	strbuf_addf(&cmd, "xargs %s -a -i -f --pretty-print -e '%s' | " NORMALIZE "%s", reader, file,
		    basenames ? BASENAMES : "");
	out = unit_pipe(cmd.buf, in.buf, in.len);
	strbuf_release(&in);
	strbuf_release(&cmd);
	return out;
}

static char *our_text(struct dwarf_index *d, const struct elf_symtab *t, const uint64_t *addrs,
		      size_t n, bool basenames)
{
	struct strbuf sb;
	char *out;
	size_t i;

	strbuf_init(&sb);
	for (i = 0; i < n; i++)
		format_frames(&sb, d, t, addrs[i]);
	if (!basenames)
		return strbuf_detach(&sb);
	out = unit_pipe("cat" BASENAMES, sb.buf, sb.len);
	strbuf_release(&sb);
	return out;
}

/* A block of text as TAP diagnostics, under a label. */
static void show_block(const char *label, const char *text, size_t len)
{
	const char *end = text + len;

	printf("#   %s:\n", label);
	while (text < end) {
		const char *nl = memchr(text, '\n', end - text);
		size_t n = nl ? (size_t)(nl - text) : (size_t)(end - text);

		printf("#     %.*s\n", (int)n, text);
		text += n + 1;
	}
}

/* One address's block in a reader's text. */
struct block {
	const char *text;
	size_t len;
};

/*
 * Compares our frames at addrs[n] with eu-addr2line's and, where they
 * differ, with binutils' addr2line's (the two readers differ now and
 * then). Returns how many agree with eu-addr2line (0 if its answer was
 * cut short), *second how many of the others with binutils'; shows the
 * first few that agree with neither.
 */
static size_t compare_readers(struct dwarf_index *d, const struct elf_symtab *t, const char *file,
			      const uint64_t *addrs, size_t n, bool basenames, size_t *second)
{
	char *ours = our_text(d, t, addrs, n, basenames), *bu;
	char *eu = reader_text("eu-addr2line", file, addrs, n, basenames);
	uint64_t *differ = xmalloc((n ? n : 1) * sizeof(*differ));
	struct block *eu_block = xmalloc((n ? n : 1) * sizeof(*eu_block));
	const char *a = ours ? ours : "", *b = eu ? eu : "";
	size_t i, same = 0, ndiffer = 0, shown = 0, la, lb;
	bool complete;

	for (i = 0; i < n && *a && *b; i++) {
		const char *na = next_block(a, &la), *nb = next_block(b, &lb);

		if (la == lb && !memcmp(a, b, la)) {
			same++;
		} else {
			eu_block[ndiffer] = (struct block){ b, lb };
			differ[ndiffer++] = addrs[i];
		}
		a = na;
		b = nb;
	}
	complete = i == n && !*a && !*b;
	if (!complete)
		printf("#   eu-addr2line's answer does not cover the %zu addresses\n", n);
	free(ours);
	*second = 0;
	if (ndiffer) {
		ours = our_text(d, t, differ, ndiffer, basenames);
		bu = reader_text("addr2line", file, differ, ndiffer, basenames);
		a = ours ? ours : "";
		b = bu ? bu : "";
		for (i = 0; i < ndiffer && *a && *b; i++) {
			const char *na = next_block(a, &la), *nb = next_block(b, &lb);

			if (la == lb && !memcmp(a, b, la)) {
				(*second)++;
				printf("#   0x%" PRIx64 ": eu-addr2line differs, binutils' addr2line "
				       "agrees with us\n", differ[i]);
			} else if (shown++ < 3) {
				show_block("ours", a, la);
				show_block("eu-addr2line", eu_block[i].text, eu_block[i].len);
				show_block("binutils' addr2line", b, lb);
			}
			a = na;
			b = nb;
		}
		free(ours);
		free(bu);
	}
	free(eu);
	free(eu_block);
	free(differ);
	return complete ? same : 0;
}

/* A copy of the file at path in memory, that the test may truncate; -1 if it cannot be had. */
static int memfd_copy(const char *path)
{
	int in = open(path, O_RDONLY | O_CLOEXEC), fd = memfd_create("dwarf", MFD_CLOEXEC);
	char buf[65536];
	ssize_t n = 0;

	while (in >= 0 && fd >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, n) != n)
			n = -1;
	if (in >= 0)
		close(in);
	if (n && fd >= 0) {
		close(fd);
		fd = -1;
	}
	return in < 0 ? -1 : fd;
}

/* Every byte of the fixture's functions, as read from file (the library or its debug file). */
static void check_fixture_dwarf(const char *name, const char *dwarf_file)
{
	char path[4096], lib[4096];
	struct dwarf_index *d;
	struct elf_symtab t;
	struct dwarf_frame fr[MAX_FRAMES], two[2];
	uint64_t *addrs = NULL, chain_addr = 0;
	size_t i, n = 0, alloc = 0, same, second;
	int fd, err, k;

	dbg_path(lib, sizeof(lib), "libdbg.so");
	dbg_path(path, sizeof(path), dwarf_file);
	if (!CHECK(read_symtab(lib, &t), "dwarf: reads libdbg.so's symbols"))
		return;
	fd = memfd_copy(path);
	err = fd < 0 ? -errno : dwarf_index_open(&d, fd);
	if (!CHECK(!err, "dwarf: opens the DWARF of %s (%s)", name, strerror(-err))) {
		if (fd >= 0)
			close(fd);
		elf_symtab_release(&t);
		return;
	}
	for (i = 0; i < t.nr; i++) {
		const struct elf_sym *s = &t.syms[i];
		uint64_t a;

		if (strncmp(elf_sym_name(&t, s), "dbg_", 4) || strstr(elf_sym_name(&t, s), "@plt"))
			continue;
		for (a = s->addr; a < s->addr + s->size; a++) {
			ALLOC_GROW(addrs, n + 1, alloc);
			addrs[n++] = a;
			k = dwarf_index_frames(d, a, fr, MAX_FRAMES);
			if (!chain_addr && k == 3 && fr[0].name && !strcmp(fr[0].name, "dbg_inner") &&
			    fr[1].name && !strcmp(fr[1].name, "dbg_middle") && fr[2].name &&
			    !strcmp(fr[2].name, "dbg_outer") && ends_with(fr[0].file, "tests/fixtures/debuginfo.c"))
				chain_addr = a;
		}
	}
	CHECK(chain_addr, "dwarf: %s: dbg_inner inlined in dbg_middle inlined in dbg_outer, "
	      "in tests/fixtures/debuginfo.c (at 0x%" PRIx64 ")", name, chain_addr);
	if (chain_addr) {
		dwarf_index_frames(d, chain_addr, fr, MAX_FRAMES);
		k = dwarf_index_frames(d, chain_addr, two, 2);
		CHECK(k == 2 && !strcmp(two[0].name, "dbg_middle") && two[0].line == fr[1].line &&
		      !strcmp(two[1].name, "dbg_outer"),
		      "dwarf: %s: a chain cut to 2 frames keeps the outermost", name);
		/*
		 * Trimmed: the debug sections go after DWARF_IDLE_TRIMS drains
		 * in which no unit needed them, lookups of indexed units apart.
		 * The units looked up are the index's own: the file is not read again.
		 */
		for (k = 0; k < DWARF_IDLE_TRIMS; k++) {
			dwarf_index_frames(d, chain_addr, two, 2);
			dwarf_index_trim(d);
		}
		k = ftruncate(fd, 0) ? -1 : dwarf_index_frames(d, chain_addr, two, 2);
		CHECK(k == 2 && !strcmp(two[0].name, "dbg_middle") && !strcmp(two[1].name, "dbg_outer"),
		      "dwarf: %s: the same frames once the sections were let go, the file gone", name);
		for (k = 0; k < 3 * DWARF_IDLE_TRIMS; k++)
			dwarf_index_trim(d);
		k = dwarf_index_frames(d, chain_addr, two, 2);
		CHECK(k == 2 && !strcmp(two[1].name, "dbg_outer"),
		      "dwarf: %s: and again after a longer idle spell", name);
	}
	same = compare_readers(d, &t, path, addrs, n, false, &second);
	CHECK(n > 100 && same == n,
	      "dwarf: %s: names, files and lines of %zu of %zu addresses (every byte of "
	      "the functions) as eu-addr2line -i says", name, same, n);
	CHECK(dwarf_index_frames(d, 0x10, fr, MAX_FRAMES) == 0, "dwarf: %s: no frames outside the code",
	      name);
	free(addrs);
	dwarf_index_free(d);
	close(fd);
	elf_symtab_release(&t);
}

/* libc and its debug file -------------------------------------------------- */

/* Where our libc is, from the dynamic linker (not an address: sanitizers intercept). */
static bool libc_map(const char **path, uint64_t *base)
{
	struct link_map *lm = NULL;
	void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	bool ok = h && !dlinfo(h, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name[0] == '/';

	if (ok) {
		*path = lm->l_name;
		*base = lm->l_addr;
	}
	if (h)
		dlclose(h);
	return ok;
}

/* How many of t's symbols are PLT stubs. */
static size_t plt_stubs(const struct elf_symtab *t)
{
	size_t i, n = 0, len;

	for (i = 0; i < t->nr; i++) {
		len = strlen(elf_sym_name(t, &t->syms[i]));
		n += len > 4 && !strcmp(elf_sym_name(t, &t->syms[i]) + len - 4, "@plt");
	}
	return n;
}

/*
 * libc's debug file: an fd, its symbols into t (the PLT's from libc
 * itself), its path into *debug_path; the PLT stubs libc names itself.
 */
static int open_libc_debug(struct elf_symtab *t, char **debug_path, size_t *bin_stubs)
{
	struct debuginfo_elf bin;
	struct elf_symtab own;
	const char *libc;
	uint64_t base;
	int fd, bin_fd;

	*debug_path = NULL;
	if (!libc_map(&libc, &base))
		return -ENOENT;
	if (!read_elf(libc, &bin))
		return -EIO;
	fd = debuginfo_find(NULL, libc, &bin, debug_path);
	debuginfo_elf_release(&bin);
	bin_fd = open(libc, O_RDONLY | O_CLOEXEC);
	*bin_stubs = bin_fd >= 0 && !elf_symtab_read_fd(&own, bin_fd) ? plt_stubs(&own) : 0;
	if (bin_fd >= 0)
		elf_symtab_release(&own);
	if (fd >= 0 && elf_symtab_read_debug_fd(t, fd, bin_fd)) {
		close(fd);
		fd = -EIO;
	}
	if (bin_fd >= 0)
		close(bin_fd);
	return fd;
}

static double seconds(uint64_t ns)
{
	return ns / 1e9;
}

static bool same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * With the sections let go, a unit is read by itself, from its own bytes
 * of them: the same frames as the whole sections give (whole: an index
 * that read every unit with them). A drain that needs more units than
 * DWARF_ALONE_PER_DRAIN reads the sections whole.
 */
static void check_units_alone(struct dwarf_index *whole, const char *debug, const uint64_t *addrs,
			      size_t n)
{
	struct dwarf_frame a[MAX_FRAMES], b[MAX_FRAMES];
	struct dwarf_index *d;
	size_t i, tried = 0, same = 0, reads, alone, alone_before;
	uint64_t t0, ns = 0;
	int fd = open(debug, O_RDONLY | O_CLOEXEC), err, k, na, nb;

	err = fd < 0 ? -errno : dwarf_index_open(&d, fd);
	if (fd >= 0)
		close(fd);
	if (!CHECK(!err, "libc: opens its debug file again (%s)", strerror(-err)))
		return;
	dwarf_index_by_need(d, false);
	/* The first lookup reads where every unit is, with the whole sections; they go when idle. */
	dwarf_index_frames(d, addrs[0], a, MAX_FRAMES);
	for (k = 0; k < 1 + DWARF_IDLE_TRIMS; k++)
		dwarf_index_trim(d);
	for (i = n / 2; i < n && tried < 24; i += n / 48 + 1, tried++) {
		dwarf_index_trim(d);
		t0 = now_ns();
		na = dwarf_index_frames(d, addrs[i], a, MAX_FRAMES);
		ns += now_ns() - t0;
		nb = dwarf_index_frames(whole, addrs[i], b, MAX_FRAMES);
		for (k = 0; k < na && na == nb; k++)
			if (!same_text(a[k].name, b[k].name) || !same_text(a[k].file, b[k].file) ||
			    a[k].line != b[k].line)
				break;
		same += na > 0 && na == nb && k == na;
	}
	dwarf_index_reads(d, &reads, &alone);
	printf("# libc: %zu units read by themselves in %.1f ms each\n", alone,
	       alone ? ns / 1e6 / alone : 0);
	CHECK(reads == 1 && alone >= tried * 3 / 4 && same == tried,
	      "libc: %zu units read by themselves, one a drain; the frames at %zu of %zu addresses "
	      "in them as with the whole sections", alone, same, tried);
	/* Addresses a drain has not looked up yet. */
	dwarf_index_trim(d);
	alone_before = alone;
	for (i = 1; i < n / 2 && reads == 1; i += 7) {
		dwarf_index_frames(d, addrs[i], a, MAX_FRAMES);
		dwarf_index_reads(d, &reads, &alone);
	}
	CHECK(reads == 2 && alone - alone_before == DWARF_ALONE_PER_DRAIN,
	      "libc: a drain reads %zu units by themselves, then the sections whole",
	      alone - alone_before);
	dwarf_index_free(d);
}

static size_t gcd(size_t a, size_t b)
{
	while (b) {
		size_t r = a % b;

		a = b;
		b = r;
	}
	return a;
}

static bool same_frames(const struct dwarf_frame *a, int na, const struct dwarf_frame *b, int nb)
{
	int k;

	for (k = 0; k < na && na == nb; k++)
		if (!same_text(a[k].name, b[k].name) || !same_text(a[k].file, b[k].file) ||
		    a[k].line != b[k].line)
			return false;
	return na == nb;
}

/*
 * Units read by need, .debug_aranges saying which (the default), against
 * every unit read on the first lookup: the same frames at every byte of
 * every function of libc, looked up out of order (a unit before the
 * ones read, one far after). Those in some unit's ranges are served with
 * no whole read; the others (PLT stubs, say) may read the whole index.
 */
static void check_by_need(const char *debug, const struct elf_symtab *t)
{
	struct dwarf_frame a[MAX_FRAMES], b[MAX_FRAMES];
	struct dwarf_index *whole, *need;
	uint64_t *addrs = NULL, t0, ns_need = 0, ns_whole;
	size_t i, j, k, n = 0, alloc = 0, in_units = 0, same = 0, same_out = 0, differ = 0, reads,
	       alone, by_need, stride, *first;
	int fd = open(debug, O_RDONLY | O_CLOEXEC), err, na, nb, pass;
	char *has;

	err = fd < 0 ? -errno : dwarf_index_open(&whole, fd);
	if (!err && (err = dwarf_index_open(&need, fd)))
		dwarf_index_free(whole);
	if (fd >= 0)
		close(fd);
	if (!CHECK(!err, "libc: opens its debug file twice (%s)", strerror(-err)))
		return;
	dwarf_index_by_need(whole, false);
	first = xmalloc((t->nr + 1) * sizeof(*first));
	for (i = 0; i < t->nr; i++) {
		first[i] = n;
		for (k = 0; k < t->syms[i].size; k++) {
			ALLOC_GROW(addrs, n + 1, alloc);
			addrs[n++] = t->syms[i].addr + k;
		}
	}
	first[t->nr] = n;
	/* A stride through the functions that reaches each once. */
	for (stride = 7919; t->nr && gcd(stride, t->nr) != 1; stride++)
		;
	has = xcalloc(n ? n : 1, 1);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		has[i] = dwarf_index_frames(whole, addrs[i], a, MAX_FRAMES) > 0;
		in_units += has[i];
	}
	ns_whole = now_ns() - t0;
	/*
	 * First the addresses some unit has, then the others; in each, the
	 * functions in a stride through them, each function's bytes in turn.
	 */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0, j = 0; i < t->nr; i++, j = (j + stride) % t->nr) {
			for (k = first[j]; k < first[j + 1]; k++) {
				if (has[k] != !pass)
					continue;
				t0 = now_ns();
				na = dwarf_index_frames(need, addrs[k], a, MAX_FRAMES);
				ns_need += now_ns() - t0;
				nb = dwarf_index_frames(whole, addrs[k], b, MAX_FRAMES);
				if (same_frames(a, na, b, nb))
					*(pass ? &same_out : &same) += 1;
				else if (differ++ < 5)
					printf("# libc: at 0x%" PRIx64 " %d frames by need (%s), "
					       "%d whole (%s)\n", addrs[k], na,
					       na ? (a[0].name ? a[0].name : "?") : "-", nb,
					       nb ? (b[0].name ? b[0].name : "?") : "-");
			}
		}
		if (!pass) {
			dwarf_index_reads(need, &reads, &alone);
			by_need = dwarf_index_reads_by_need(need);
			printf("# libc: %zu units read by need in %.2f s for %zu addresses (%.2f s "
			       "for all %zu with every unit read at once)\n", by_need, ns_need / 1e9,
			       in_units, ns_whole / 1e9, n);
			CHECK(in_units > 100000 && same == in_units && reads == 0 && by_need > 1000,
			      "libc: by need (%zu units, %zu whole reads), the frames at %zu of the %zu "
			      "addresses of its functions in some unit as with every unit read at once",
			      by_need, reads, same, in_units);
		}
	}
	CHECK(same_out == n - in_units,
	      "libc: and at %zu of the %zu in no unit (none, as the whole index)", same_out,
	      n - in_units);
	free(first);
	free(has);
	free(addrs);
	dwarf_index_free(whole);
	dwarf_index_free(need);
}

/*
 * libc: its debug file found by build ID, its DWARF (GCC's, with inlining
 * everywhere) against eu-addr2line, and how fast addresses are named.
 */
static void test_libc(void)
{
	struct dwarf_frame fr[MAX_FRAMES];
	struct dwarf_index *d;
	struct elf_symtab t;
	uint64_t *addrs = NULL, *sample = NULL, t0, cold, warm;
	size_t i, n = 0, alloc = 0, nsample = 0, sample_alloc = 0, named = 0, inlined = 0, same,
		  second, bin_stubs;
	char *debug = NULL;
	int fd = open_libc_debug(&t, &debug, &bin_stubs), err, k, pass;

	if (!CHECK(fd >= 0 && strstr(debug, "/.build-id/"),
		   "libc: debug file %s found by build ID (libc6-dbg installed?)",
		   debug ? debug : strerror(-fd)))
		goto out;
	CHECK(bin_stubs > 10 && plt_stubs(&t) == bin_stubs,
	      "libc: its %zu PLT stubs named with the debug file's symbols (%zu), from libc's relocations",
	      bin_stubs, plt_stubs(&t));
	err = dwarf_index_open(&d, fd);
	close(fd);
	if (!CHECK(!err && t.from_symtab, "libc: the debug file has .symtab and DWARF"))
		goto out;
	/* Eight addresses in each function. */
	for (i = 0; i < t.nr; i++) {
		const struct elf_sym *s = &t.syms[i];

		for (k = 0; k < 8 && s->size; k++) {
			ALLOC_GROW(addrs, n + 1, alloc);
			addrs[n++] = s->addr + s->size * k / 8;
		}
	}
	for (pass = 0; pass < 2; pass++) {
		t0 = now_ns();
		for (i = 0; i < n; i++) {
			const struct elf_sym *s = elf_symtab_lookup(&t, addrs[i]);

			k = dwarf_index_frames(d, addrs[i], fr, MAX_FRAMES);
			if (pass)
				continue;
			named += s || (k && fr[k - 1].name);
			inlined += k > 1;
			/* A spread of the ones DWARF knows the function of, for eu-addr2line. */
			if (k && fr[k - 1].name && i % 37 == 0) {
				ALLOC_GROW(sample, nsample + 1, sample_alloc);
				sample[nsample++] = addrs[i];
			}
		}
		if (pass)
			warm = now_ns() - t0;
		else
			cold = now_ns() - t0;
	}
	printf("# libc: %zu addresses: %.0f/s the first time (DWARF indexed on the way), "
	       "%.0f/s again; %zu in inlined code\n", n, n / seconds(cold), n / seconds(warm), inlined);
	CHECK(n > 10000 && named == n && inlined > n / 20,
	      "libc: all %zu addresses named, %zu of them in inlined code", n, inlined);
	/*
	 * Its build directory is relative (-fdebug-prefix-map): eu-addr2line
	 * joins it to the file names anyway, we do not.
	 */
	same = compare_readers(d, &t, debug, sample, nsample, true, &second);
	CHECK(nsample > 300 && same + second == nsample && second < nsample / 50,
	      "libc: %zu of %zu addresses named, inlined and placed (file base name, line) as "
	      "eu-addr2line -i says, the other %zu as binutils' addr2line -i says", same, nsample,
	      second);
	if (nsample)
		check_units_alone(d, debug, sample, nsample);
	check_by_need(debug, &t);
	dwarf_index_free(d);
	elf_symtab_release(&t);
out:
	free(addrs);
	free(sample);
	free(debug);
}

/* Through the symbolizer ----------------------------------------------------- */

static const char *loc_function(const struct profile *p, uint32_t loc, uint32_t line,
				const char **file, uint32_t *lineno)
{
	const struct prof_location *l = &p->locations[loc];
	const struct prof_line *pl = &p->lines[l->first_line + line];
	const struct prof_function *f = &p->functions[pl->function];

	*file = profile_str(p, f->filename);
	*lineno = pl->line;
	return profile_str(p, f->name);
}

/* The vaddr of a symbol named name in t, or 0. */
static uint64_t sym_addr(const struct elf_symtab *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		if (!strcmp(elf_sym_name(t, &t->syms[i]), name))
			return t->syms[i].addr;
	return 0;
}

/*
 * Our own process maps the stripped library; the symbolizer finds its
 * debug file by the link, and libc's by build ID, as it would for any
 * sampled process.
 */
static void test_symbolizer(void)
{
	char path[4096], *debug = NULL;
	const char *libc;
	uint64_t libc_base;
	struct elf_symtab full, libc_syms;
	size_t stubs;
	struct symbolizer s;
	struct profile p;
	struct dwarf_index *d = NULL;
	struct dwarf_frame fr[MAX_FRAMES];
	uint64_t ips[3], base, chain = 0, a;
	uint32_t locs[3], line;
	const char *file, *name;
	void *h, *outer;
	int fd;

	dbg_path(path, sizeof(path), "libdbg.so");
	if (!CHECK(read_symtab(path, &full), "symbolizer: reads libdbg.so"))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		dwarf_index_open(&d, fd);
		close(fd);
	}
	/* An address in dbg_inner, inlined twice deep: where its loop body is. */
	for (a = sym_addr(&full, "dbg_outer"); d && a && !chain && a < sym_addr(&full, "dbg_outer") + 0x60; a++)
		if (dwarf_index_frames(d, a, fr, MAX_FRAMES) == 3)
			chain = a;
	dwarf_index_free(d);

	dbg_path(path, sizeof(path), "libdbg-link.so");
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	outer = h ? dlsym(h, "dbg_outer") : NULL;
	if (!CHECK(outer && chain, "symbolizer: dlopen()s the stripped libdbg-link.so (%s)",
		   h ? "" : dlerror())) {
		elf_symtab_release(&full);
		return;
	}
	base = (uint64_t)(uintptr_t)outer - sym_addr(&full, "dbg_outer");
	ips[0] = base + chain;
	/* Callers' addresses are return addresses: one past the call. */
	ips[1] = base + sym_addr(&full, "dbg_local") + 1;
	ips[2] = 0;
	fd = open_libc_debug(&libc_syms, &debug, &stubs);
	if (fd >= 0) {
		if (libc_map(&libc, &libc_base))
			ips[2] = libc_base + sym_addr(&libc_syms, "__libc_start_call_main") + 1;
		close(fd);
		elf_symtab_release(&libc_syms);
	}

	symbolizer_init(&s);
	profile_init(&p);
	symbolize_user_stack(&s, &p, getpid(), 0, ips, ips[2] ? 3 : 2, locs);
	CHECK(p.locations[locs[0]].nlines == 3, "symbolizer: the stripped library's leaf has 3 frames "
	      "(%u)", p.locations[locs[0]].nlines);
	if (p.locations[locs[0]].nlines == 3) {
		static const char *want[] = { "dbg_inner", "dbg_middle", "dbg_outer" };
		bool ok = true;
		int i;

		for (i = 0; i < 3; i++) {
			name = loc_function(&p, locs[0], i, &file, &line);
			ok &= !strcmp(name, want[i]) && ends_with(file, "tests/fixtures/debuginfo.c") &&
			      line > 0;
		}
		CHECK(ok, "symbolizer: dbg_inner, dbg_middle, dbg_outer, each with its file and line");
	}
	name = p.locations[locs[1]].nlines ? loc_function(&p, locs[1], 0, &file, &line) : "";
	CHECK(!strcmp(name, "dbg_local") && ends_with(file, "debuginfo.c"),
	      "symbolizer: dbg_local, in the debug file's .symtab only, named (%s)", name);
	if (CHECK(ips[2], "symbolizer: libc's __libc_start_call_main found in its debug file")) {
		name = p.locations[locs[2]].nlines ?
			loc_function(&p, locs[2], p.locations[locs[2]].nlines - 1, &file, &line) : "";
		CHECK(!strcmp(name, "__libc_start_call_main") && *file && line,
		      "symbolizer: libc's local function named, with its file and line (%s %s:%u)",
		      name, file, line);
	}
	profile_release(&p);
	symbolizer_release(&s);
	dlclose(h);
	free(debug);
	elf_symtab_release(&full);
}

/*
 * The vDSO, named from the running kernel's image, which every process
 * shares: its clock_gettime, as this process's dynamic linker finds it.
 */
static void test_vdso(void)
{
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *fn = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	struct symbolizer s;
	struct profile p;
	uint64_t ip = (uint64_t)(uintptr_t)fn + 4;	/* inside it, past its first instruction */
	uint32_t loc, line;
	const char *file, *name = "";

	if (!CHECK(fn, "vdso: the dynamic linker finds __vdso_clock_gettime (%s)", h ? "" : dlerror()))
		return;
	symbolizer_init(&s);
	profile_init(&p);
	symbolize_user_stack(&s, &p, getpid(), 0, &ip, 1, &loc);
	if (p.locations[loc].nlines)
		name = loc_function(&p, loc, 0, &file, &line);
	CHECK(!strcmp(name, "__vdso_clock_gettime"), "vdso: an address in it named from the kernel's "
	      "image (%s)", name);
	profile_release(&p);
	symbolizer_release(&s);
	dlclose(h);
}

/* Folded output: inlined calls marked ------------------------------------ */

static void test_folded_inline(void)
{
	struct prof_mapping m = { 0x1000, 0x5000, 0, 0, 0, 42, false };
	struct prof_mapping k = { 0xffffffff81000000, 0xffffffff82000000, 0, 0, 0, 0, false };
	struct prof_line lines[3];
	struct prof_sample smp = { 0 };
	struct profile p;
	uint32_t um, km, frames[3];
	char *out;

	profile_init(&p);
	m.file = profile_string(&p, "/usr/bin/app");
	k.file = profile_string(&p, "[kernel.kallsyms]");
	um = profile_mapping(&p, &m);
	km = profile_mapping(&p, &k);
#define FN(name) profile_function(&p, profile_string(&p, name), profile_string(&p, name), 0)
	lines[0] = (struct prof_line){ FN("inner"), 3 };
	lines[1] = (struct prof_line){ FN("middle"), 9 };
	lines[2] = (struct prof_line){ FN("outer"), 20 };
	frames[1] = profile_location_add(&p, um, 0x1100, FRAME_USER, lines, 3);
	lines[0] = (struct prof_line){ FN("main"), 30 };
	frames[2] = profile_location_add(&p, um, 0x1200, FRAME_USER, lines, 1);
	lines[0] = (struct prof_line){ FN("kinline"), 0 };
	lines[1] = (struct prof_line){ FN("kfunc"), 0 };
#undef FN
	frames[0] = profile_location_add(&p, km, 0xffffffff81000010, FRAME_KERNEL, lines, 2);
	smp.stack = profile_stack(&p, frames, 3);
	smp.pid = smp.tid = 42;
	smp.comm = profile_string(&p, "app");
	smp.count = 5;
	profile_add_sample(&p, &smp);
	out = unit_write(write_folded, &p, false, NULL);
	expect_text(out, "app;main;outer;middle_[i];inner_[i];kfunc_[k];kinline_[i] 5\n",
		    "folded: inlined calls are frames marked _[i], outermost first; _[k] on the "
		    "kernel function");
	free(out);
	profile_release(&p);
}

void test_debuginfo(void)
{
	test_find();
	test_debug_symbols();
	check_fixture_dwarf("libdbg.so", "libdbg.so");
	check_fixture_dwarf("libdbg.debug", "libdbg.debug");
	check_fixture_dwarf("libdbg.debug compressed (ELF, zlib)", "libdbg-zlib.debug");
	check_fixture_dwarf("libdbg.debug compressed (GNU's .zdebug)", "libdbg-zgnu.debug");
	test_libc();
	test_symbolizer();
	test_vdso();
	test_folded_inline();
}
