// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * luajit_file_identify on Debian 12's four LuaJIT files: OpenResty's
 * (package luajit2, installed) and upstream's (packages luajit and
 * libluajit-5.1-2, which conflict with it: make test-build unpacks them
 * into $(O)/luajit-upstream). Each must give what docs/research/luajit.md
 * found by hand in its disassembly. Then copies of them with one
 * instruction, the VM's FDE or the build ID altered (not known, or known
 * from the code whatever the build ID says), files that are no LuaJIT, and
 * garbage and truncated files (no crash, no LuaJIT).
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/luajit_file.h"
#include "unit.h"

#define LIBDIR "/usr/lib/x86_64-linux-gnu/"
#define UPSTREAM "/luajit-upstream"	/* under $(O) */

/* docs/research/luajit.md §1 and §4: the VM FDE's start, lj_vm_ffi_call's FDE's end. */
static const struct build {
	const char *what, *path;
	bool upstream;			/* path is under $(O)/luajit-upstream */
	const char *build_id;
	unsigned flavour, dispatch_to_g, g_j;
	uint64_t vm_begin, vm_end;
	uint64_t vm_resume;		/* lj_vm_resume: the VM's start + 0x1f22 in all four */
} builds[] = {
	{ "upstream libluajit-5.1.so.2.1.0", LIBDIR "libluajit-5.1.so.2.1.0", true,
	  "2e18b5eadde600273e47ba2f83a1df8b6a5b2540", LUAJIT_UPSTREAM, 0xf80, 0x2d8,
	  0x8d70, 0xce55, 0xac92 },
	{ "upstream /usr/bin/luajit", "/usr/bin/luajit", true,
	  "79b0b8114f05a2726860c3141195279ceb0f6e29", LUAJIT_UPSTREAM, 0xf80, 0x2d8,
	  0x704e0, 0x745c5, 0x72402 },
	{ "OpenResty libluajit-5.1.so.2.1.0", LIBDIR "libluajit-5.1.so.2.1.0", false,
	  "0a6563c55d870716908fd332f88bf7cdd9bc6a71", LUAJIT_OPENRESTY, 0xfa8, 0x2e0,
	  0x9e40, 0xdf32, 0xbd62 },
	{ "OpenResty /usr/bin/luajit", "/usr/bin/luajit", false,
	  "3e3d615119e82f1b42bd151e94701750bfd15a9d", LUAJIT_OPENRESTY, 0xfa8, 0x2e0,
	  0x9b90, 0xdc82, 0xbab2 },
};
#define NBUILDS (sizeof(builds) / sizeof(builds[0]))

static int identify(const char *path, struct luajit_file *f)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	memset(f, 0xa5, sizeof(*f));
	if (fd < 0)
		return -errno;
	rc = luajit_file_identify(fd, path, f);
	close(fd);
	return rc;
}

/* A whole file into memory (caller frees); NULL if unreadable. */
static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && !fstat(fd, &st) && (buf = malloc(st.st_size ? st.st_size : 1)) &&
	    read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	*len = buf ? (size_t)st.st_size : 0;
	return buf;
}

static bool spill(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	bool ok = fd >= 0 && write(fd, buf, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* The GNU build ID of the file at path, as hex into hex[41 or more]; "" if none. */
static void build_id(const char *path, char *hex)
{
	const unsigned char *id = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	ssize_t i, n = 0;

	elf_version(EV_CURRENT);
	if ((elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL))
		n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	for (i = 0; i < n && i < 20; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	hex[n > 0 ? 2 * (n < 20 ? n : 20) : 0] = '\0';
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

/* The build's file; upstream's under $(O), the folder unit_fixtures ($(O)/tests/fixtures) is in. */
static const char *path_of(const struct build *b, char *buf, size_t size)
{
	static const char tail[] = "/tests/fixtures";
	size_t n = strlen(unit_fixtures);

	if (!b->upstream)
		return b->path;
	/* Without "..": the fixtures' folder need not have been made. */
	if (n >= sizeof(tail) - 1 && !strcmp(unit_fixtures + n - (sizeof(tail) - 1), tail))
		snprintf(buf, size, "%.*s" UPSTREAM "%s", (int)(n - (sizeof(tail) - 1)),
			 unit_fixtures, b->path);
	else
		snprintf(buf, size, "%s/../.." UPSTREAM "%s", unit_fixtures, b->path);
	return buf;
}

/* The build's file if it is on this machine and is the build the table is about; else NULL. */
static const char *find_build(const struct build *b, char *buf, size_t size, bool say)
{
	const char *path = path_of(b, buf, size);
	char id[41];

	if (access(path, R_OK)) {
		if (say)
			unit_skip(b->upstream ? "not unpacked: make test-build downloads it "
						"(apt-get download luajit libluajit-5.1-2)" :
						"not installed: apt-get install luajit2",
				  "%s: %s", b->what, path);
		return NULL;
	}
	build_id(path, id);
	if (strcmp(id, b->build_id)) {
		if (say)
			unit_skip("another build than docs/research/luajit.md's",
				  "%s: %s has build ID %s", b->what, path, id[0] ? id : "(none)");
		return NULL;
	}
	return path;
}

static void check_build(const struct build *b)
{
	char buf[512];
	const char *path = find_build(b, buf, sizeof(buf), true);
	struct luajit_file f;
	int rc;

	if (!path)
		return;
	rc = identify(path, &f);
	printf("# %s: rc %d known %u flavour %u VM %#llx..%#llx dispatch_to_g %#x g_j %#x\n",
	       b->what, rc, f.known, f.flavour, (unsigned long long)f.vm_begin_rel,
	       (unsigned long long)f.vm_end_rel, f.dispatch_to_g, f.g_j);
	CHECK(rc == 1 && f.known == 1 && f.flavour == b->flavour, "%s: LuaJIT, known, %s",
	      b->what, b->flavour == LUAJIT_OPENRESTY ? "OpenResty" : "upstream");
	CHECK(f.vm_begin_rel == b->vm_begin && f.vm_end_rel == b->vm_end,
	      "%s: the VM's code at %#llx..%#llx (want %#llx..%#llx)", b->what,
	      (unsigned long long)f.vm_begin_rel, (unsigned long long)f.vm_end_rel,
	      (unsigned long long)b->vm_begin, (unsigned long long)b->vm_end);
	CHECK(f.dispatch_to_g == b->dispatch_to_g && f.g_j == b->g_j,
	      "%s: g = DISPATCH - %#x (want %#x), J = g + %#x (want %#x)", b->what,
	      f.dispatch_to_g, b->dispatch_to_g, f.g_j, b->g_j);
}

/* Where pat[0..n) is in buf[from, to), the first time; -1 if not there or there twice. */
static long find_once(const uint8_t *buf, size_t from, size_t to, const void *pat, size_t n)
{
	const uint8_t *p = memmem(buf + from, to - from, pat, n);

	if (!p || memmem(p + 1, buf + to - (p + 1), pat, n))
		return -1;
	return p - buf;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);	/* x86-64: little-endian */
}

/* Hex into bytes; false if not 40 digits. */
static bool id_bytes(const char *hex, uint8_t *out)
{
	unsigned i, v;

	if (strlen(hex) != 40)
		return false;
	for (i = 0; i < 20; i++) {
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return false;
		out[i] = v;
	}
	return true;
}

/* What identify makes of a copy of the file image img with len bytes at off replaced by bytes. */
static int identify_patched(const char *dir, const uint8_t *img, size_t size, long off,
			    const void *bytes, size_t len, struct luajit_file *f)
{
	uint8_t *copy;
	char path[256];
	int rc = -ENOENT;

	if (off < 0 || (size_t)off + len > size || !(copy = malloc(size)))
		return -EINVAL;
	memcpy(copy, img, size);
	memcpy(copy + off, bytes, len);
	snprintf(path, sizeof(path), "%s/patched", dir);
	if (spill(path, copy, size))
		rc = identify(path, f);
	unlink(path);
	free(copy);
	return rc;
}

/* Copies of one of the four with one thing altered: each must make it unknown, or not. */
static void check_patched(const struct build *b, const char *dir)
{
	static const uint8_t set_dispatch[] = { 0x4c, 0x8b, 0x75, 0x10, 0x49, 0x81, 0xc6 };
	/* def_cfa_offset 80; rbp at cfa-16, rbx -24, r15 -32, r14 -40 (data alignment -8) */
	static const uint8_t vm_cfa[] = { 0x0e, 0x50, 0x86, 0x02, 0x83, 0x03, 0x8f, 0x04, 0x8e,
					  0x05 };
	const struct build *other = NULL;
	uint8_t pat[16], *img, id[20], other_id[20];
	char buf[512];
	const char *path = find_build(b, buf, sizeof(buf), false);
	struct luajit_file f;
	size_t size, i;
	long at;
	int rc;

	if (!path || !(img = slurp(path, &size)))
		return;
	/* Its VM code is at its own file offsets: every one of the four has vaddr == offset. */
	rc = identify_patched(dir, img, size, 0, img, 1, &f);
	CHECK(rc == 1 && f.known == 1 && f.dispatch_to_g == b->dispatch_to_g,
	      "%s: a copy is the same LuaJIT", b->what);

	/* lj_vm_resume's add $imm32, %r14: 8 more. */
	memcpy(pat, set_dispatch, sizeof(set_dispatch));
	put32(pat + sizeof(set_dispatch), b->dispatch_to_g);
	at = b->vm_resume + 64 > size ? -1 :
	     find_once(img, b->vm_resume, b->vm_resume + 64, pat, sizeof(set_dispatch) + 4);
	put32(pat + sizeof(set_dispatch), b->dispatch_to_g + 8);
	rc = identify_patched(dir, img, size, at, pat, sizeof(set_dispatch) + 4, &f);
	CHECK(at > 0 && rc == 1 && f.known == 0 && f.flavour == b->flavour && !f.dispatch_to_g &&
		      !f.vm_begin_rel,
	      "%s: lj_vm_resume's add $%#x, %%r14 at %#lx made %#x: LuaJIT, not known (rc %d, "
	      "known %u)", b->what, b->dispatch_to_g, at, b->dispatch_to_g + 8, rc, f.known);
	/* Its mov 0x10(%rbp), %r14 made mov 0x18(%rbp), %r14. */
	rc = identify_patched(dir, img, size, at + 3, "\x18", 1, &f);
	CHECK(at > 0 && rc == 1 && f.known == 0, "%s: lj_vm_resume loads G(L) from elsewhere: "
	      "not known", b->what);

	/* The VM's FDE: CFA rsp + 88, no more the interpreter's frame. */
	at = find_once(img, 0, size, vm_cfa, sizeof(vm_cfa));
	rc = identify_patched(dir, img, size, at + 1, "\x58", 1, &f);
	CHECK(at > 0 && rc == 1 && f.known == 0,
	      "%s: no FDE with the interpreter's frame: not known", b->what);

	/* lua_close's andl $0xfffffffe, J.flags(%rbp) 8 bytes further. */
	pat[0] = 0x83;
	pat[1] = 0xa5;
	put32(pat + 2, b->g_j + 0xa8);
	pat[6] = 0xfe;
	at = find_once(img, 0, size, pat, 7);
	put32(pat + 2, b->g_j + 0xa8 + 8);
	rc = identify_patched(dir, img, size, at, pat, 7, &f);
	CHECK(at > 0 && rc == 1 && f.known == 0, "%s: lua_close clears another J.flags: not known",
	      b->what);

	/* Another build's ID: the code's answers are not that build's. */
	for (i = 0; i < NBUILDS; i++)
		if (&builds[i] != b && builds[i].flavour == b->flavour)
			other = &builds[i];
	at = id_bytes(b->build_id, id) ? find_once(img, 0, size, id, 20) : -1;
	rc = other && id_bytes(other->build_id, other_id) ?
		     identify_patched(dir, img, size, at, other_id, 20, &f) : -EINVAL;
	CHECK(at > 0 && rc == 1 && f.known == 0 && f.flavour == b->flavour,
	      "%s with the build ID of the %s: not known (the table says another VM)", b->what,
	      other ? other->what : "?");
	/* An ID the table does not have: the code alone says. */
	memset(other_id, 0x11, sizeof(other_id));
	rc = identify_patched(dir, img, size, at, other_id, 20, &f);
	CHECK(at > 0 && rc == 1 && f.known == 1 && f.dispatch_to_g == b->dispatch_to_g &&
		      f.g_j == b->g_j && f.vm_begin_rel == b->vm_begin && f.vm_end_rel == b->vm_end,
	      "%s with a build ID not in the table: known from its code alone", b->what);
	free(img);
}

/* The file offset and size of the section named name in the ELF image; false if none. */
static bool section_of(const uint8_t *img, size_t size, const char *name, size_t *off, size_t *len)
{
	Elf *elf = elf_memory((char *)img, size);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *n;
	bool found = false;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while (!found && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, name) && sh.sh_offset + sh.sh_size <= size) {
			*off = sh.sh_offset;
			*len = sh.sh_size;
			found = true;
		}
out:
	if (elf)
		elf_end(elf);
	return found;
}

/*
 * Copies with 16 random bytes of .eh_frame (its lengths, pointers and CFA
 * programs) scrambled, 64 times: still LuaJIT (the exports are intact),
 * and the layout either not known or exactly the file's, never another.
 */
static void check_scrambled(const struct build *b, const char *dir)
{
	char buf[512], path[256];
	const char *lib = find_build(b, buf, sizeof(buf), false);
	unsigned round, i, wrong = 0, known = 0;
	size_t size, off, len;
	uint8_t *img, *copy;
	struct luajit_file f;

	if (!lib || !(img = slurp(lib, &size)))
		return;
	if (!section_of(img, size, ".eh_frame", &off, &len) || len < 16 ||
	    !(copy = malloc(size))) {
		CHECK(false, "%s: has .eh_frame", b->what);
		free(img);
		return;
	}
	snprintf(path, sizeof(path), "%s/scrambled", dir);
	srand(25);
	for (round = 0; round < 64; round++) {
		memcpy(copy, img, size);
		for (i = 0; i < 16; i++)
			copy[off + (size_t)rand() % len] = rand();
		if (!spill(path, copy, size))
			break;
		if (identify(path, &f) != 1 || (f.known &&
		    (f.dispatch_to_g != b->dispatch_to_g || f.g_j != b->g_j ||
		     f.vm_begin_rel != b->vm_begin || f.vm_end_rel != b->vm_end)))
			wrong++;
		known += f.known == 1;
	}
	CHECK(round == 64 && !wrong, "%s with .eh_frame scrambled 64 times: LuaJIT, %u known (all "
	      "right), %u not, %u wrong", b->what, known, round - known, wrong);
	unlink(path);
	free(copy);
	free(img);
}

/* Files that hold no LuaJIT VM. */
static void check_not_luajit(void)
{
	static const char *const paths[] = {
		"/bin/true", LIBDIR "libc.so.6",
		/* nginx's Lua module links libluajit: it is no VM itself */
		"/usr/lib/nginx/modules/ngx_http_lua_module.so",
	};
	struct luajit_file f;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (access(paths[i], R_OK)) {
			unit_skip("not on this machine", "%s: not LuaJIT", paths[i]);
			continue;
		}
		rc = identify(paths[i], &f);
		CHECK(rc == 0 && !f.known && !f.flavour, "%s: not LuaJIT (rc %d)", paths[i], rc);
	}
}

/* Garbage, and a LuaJIT library cut short: no LuaJIT, no crash. */
static void check_bad_files(const char *dir)
{
	char path[256], lib_buf[512];
	const char *lib = NULL;
	struct luajit_file f;
	uint8_t *img = NULL, junk[65536];
	size_t size = 0, i;
	int rc, worst = 0;

	for (i = 0; i < NBUILDS && !lib; i++)
		lib = find_build(&builds[i], lib_buf, sizeof(lib_buf), false);
	snprintf(path, sizeof(path), "%s/bad", dir);
	srand(24);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = rand();
	spill(path, junk, 0);
	rc = identify(path, &f);
	CHECK(rc <= 0 && !f.known, "an empty file: not LuaJIT (rc %d)", rc);
	spill(path, junk, sizeof(junk));
	rc = identify(path, &f);
	CHECK(rc <= 0 && !f.known, "64 KB of garbage: not LuaJIT (rc %d)", rc);
	if (!lib || !(img = slurp(lib, &size)) || size < 4096) {
		unit_skip("none of the four LuaJIT files here", "LuaJIT files cut short");
		free(img);
		unlink(path);
		return;
	}
	/* An ELF header of a LuaJIT, then garbage. */
	memcpy(junk, img, 64);
	spill(path, junk, sizeof(junk));
	rc = identify(path, &f);
	CHECK(rc <= 0 && !f.known, "%s's ELF header and garbage: not LuaJIT (rc %d)", lib, rc);
	/* Cut at a spread of lengths; every result must be no LuaJIT. */
	for (i = 1; i < 64; i++) {
		size_t len = size * i / 64;

		spill(path, img, len);
		rc = identify(path, &f);
		if (rc > 0 || f.known)
			worst = rc > 0 ? rc : 99;
	}
	spill(path, img, size - 1);
	rc = identify(path, &f);
	CHECK(worst <= 0 && rc <= 0 && !f.known,
	      "%s cut at 63 lengths and 1 byte short: never LuaJIT, no crash", lib);
	free(img);
	unlink(path);
}

void test_luajit_file(void)
{
	char dir[] = "/tmp/bpfprof-luajit.XXXXXX";
	size_t i;

	for (i = 0; i < NBUILDS; i++)
		check_build(&builds[i]);
	check_not_luajit();
	if (!mkdtemp(dir)) {
		unit_skip("no /tmp", "altered and truncated LuaJIT files");
		return;
	}
	for (i = 0; i < NBUILDS; i++) {
		check_patched(&builds[i], dir);
		check_scrambled(&builds[i], dir);
	}
	check_bad_files(dir);
	rmdir(dir);
}
