// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* The file readers: kallsyms, /proc/PID/maps, ELF symbols, CPU lists. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/cli.h"
#include "bpfprof/elf.h"
#include "bpfprof/kallsyms.h"
#include "bpfprof/procs.h"
#include "bpfprof/util.h"
#include "unit.h"

void test_kallsyms(void)
{
	static const char text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81001000 t do_one\n"
		"ffffffff81002000 D some_data\n"
		"ffffffff81000800 T startup_64\n"
		"ffffffffc0a00000 t mod_fn\t[mymod]\n"
		"ffffffffc0a00100 t mod_fn2\t[mymod]\n"
		"ffffffffc0b00000 t bpf_prog_0123456789abcdef_on_sample\t[bpf]\n";
	struct kallsyms ks;
	const struct ksym *s;

	CHECK(kallsyms_parse(&ks, text, strlen(text)) == 0, "kallsyms: parses a well-formed file");
	CHECK(ks.nr == 6, "kallsyms: keeps text symbols only (got %zu)", ks.nr);
	s = kallsyms_lookup(&ks, 0xffffffff81000900);
	CHECK(s && !strcmp(ksym_name(&ks, s), "startup_64"), "kallsyms: sorts by address");
	s = kallsyms_lookup(&ks, 0xffffffff81001fff);
	CHECK(s && !strcmp(ksym_name(&ks, s), "do_one") && !*ksym_module(&ks, s),
	      "kallsyms: an address inside a vmlinux function");
	s = kallsyms_lookup(&ks, 0xffffffffc0a00150);
	CHECK(s && !strcmp(ksym_name(&ks, s), "mod_fn2") && !strcmp(ksym_module(&ks, s), "mymod"),
	      "kallsyms: module functions carry their module");
	s = kallsyms_lookup(&ks, 0xffffffffc0b00010);
	CHECK(s && !strcmp(ksym_module(&ks, s), "bpf"), "kallsyms: BPF programs are symbols");
	CHECK(kallsyms_lookup(&ks, 0xffffffff80000000) == NULL, "kallsyms: nothing below the first");
	kallsyms_release(&ks);

	CHECK(kallsyms_parse(&ks, "0000000000000000 T a\n0000000000000000 t b\n", 42) == -EPERM,
	      "kallsyms: all-zero addresses (kptr_restrict) are refused");
	CHECK(kallsyms_parse(&ks, "zzzz T a\n", 9) == -EINVAL, "kallsyms: a malformed line is refused");
	CHECK(kallsyms_parse(&ks, "ffff T\n", 7) == -EINVAL, "kallsyms: a line without a name");

	/* Function padding is named for the function it pads; the name is kept once. */
	{
		static const char padded[] = "ffffffff81000ff0 T __pfx_do_work\n"
					     "ffffffff81001000 T do_work\n"
					     "ffffffff81001ff0 t __pfx_other\n"
					     "ffffffff81002000 t next_one\n";

		CHECK(kallsyms_parse(&ks, padded, strlen(padded)) == 0 && ks.nr == 4,
		      "kallsyms: padding symbols parse");
		s = kallsyms_lookup(&ks, 0xffffffff81000ff4);
		CHECK(s && !strcmp(ksym_name(&ks, s), "do_work") && s->name == ks.syms[1].name,
		      "kallsyms: __pfx_do_work is named do_work, one copy of the name");
		s = kallsyms_lookup(&ks, 0xffffffff81002004);
		CHECK(s && !strcmp(ksym_name(&ks, s), "next_one"),
		      "kallsyms: a function after another's padding keeps its own name");
		s = kallsyms_lookup(&ks, 0xffffffff81001ff8);
		CHECK(s && !strcmp(ksym_name(&ks, s), "other"), "kallsyms: __pfx_other is other");
		kallsyms_release(&ks);
	}

	/* The real file parses and names a function we know is there. */
	if (kallsyms_load(&ks, "/proc/kallsyms") == 0) {
		bool found = false;
		size_t i;

		for (i = 0; i < ks.nr && !found; i++)
			found = !strcmp(ksym_name(&ks, &ks.syms[i]), "do_syscall_64");
		CHECK(ks.nr > 10000 && found, "kallsyms: /proc/kallsyms has %zu text symbols", ks.nr);
		kallsyms_release(&ks);
	} else {
		/* Without root it reads as all zeros, which the loader refuses. */
		CHECK_ROOT(false, "kallsyms: /proc/kallsyms readable");
	}
}

void test_procmaps(void)
{
	static const char text[] =
		"55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 1234        /usr/bin/prog\n"
		"55d0c0a01000-55d0c0a05000 r-xp 00001000 08:01 1234        /usr/bin/prog\n"
		"7f0000000000-7f0000200000 r-xp 00028000 fd:02 98765       /lib/x86_64-linux-gnu/libc.so.6\n"
		"7f1000000000-7f1000001000 r-xp 00000000 00:01 4242        /memfd:jit (deleted)\n"
		"7f2000000000-7f2000010000 rwxp 00000000 00:00 0 \n"
		"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0           [vdso]\n"
		"7ffe00000000-7ffe00001000 r-xp 00000000 00:00 0           /path with spaces/lib.so\n";
	struct proc_map *maps;
	size_t nr;

	CHECK(procmaps_parse(text, &maps, &nr) == 0, "maps: parses");
	CHECK(nr == 6, "maps: keeps executable mappings only (got %zu)", nr);
	CHECK(maps[0].start == 0x55d0c0a01000 && maps[0].end == 0x55d0c0a05000 &&
	      maps[0].offset == 0x1000 && maps[0].inode == 1234 && maps[0].dev_major == 8 &&
	      maps[0].dev_minor == 1 && !strcmp(maps[0].path, "/usr/bin/prog"),
	      "maps: fields of a file mapping");
	CHECK(maps[1].dev_major == 0xfd && maps[1].offset == 0x28000, "maps: hex device and offset");
	CHECK(maps[2].deleted && !strcmp(maps[2].path, "/memfd:jit"), "maps: (deleted) is noted");
	CHECK(!strcmp(maps[3].path, "") && maps[3].inode == 0, "maps: anonymous executable memory");
	CHECK(!strcmp(maps[4].path, "[vdso]"), "maps: [vdso] keeps its name");
	CHECK(!strcmp(maps[5].path, "/path with spaces/lib.so"), "maps: paths with spaces");
	procmaps_free(maps, nr);

	CHECK(procmaps_parse("garbage\n", &maps, &nr) == -EINVAL, "maps: a malformed line is refused");
	CHECK(procmaps_parse("2000-1000 r-xp 0 0:0 0\n", &maps, &nr) == -EINVAL,
	      "maps: end before start is refused");
	CHECK(procmaps_parse("", &maps, &nr) == 0 && nr == 0, "maps: empty (exited process)");
	free(maps);
}

/* Side-band records for test_proc_generations, pid 200 unless said. */
static void apply(struct procs *ps, enum sb_type type, uint32_t pid, uint64_t time)
{
	struct sb_event ev = { .type = type, .pid = pid, .tid = pid, .time = time };
	struct proc *owner;

	if (type == SB_FORK) {
		ev.fork.ppid = 100;
	} else {
		ev.comm.exec = true;
		ev.comm.comm = "burst";
	}
	procs_apply(ps, &ev, &owner);
}

static void apply_mmap(struct procs *ps, uint32_t pid, uint64_t time, uint64_t addr,
		       const char *path)
{
	struct sb_event ev = { .type = SB_MMAP, .pid = pid, .tid = pid, .time = time };
	struct proc *owner;

	ev.mmap.addr = addr;
	ev.mmap.len = 0x1000;
	ev.mmap.filename = path;
	procs_apply(ps, &ev, &owner);
}

/* What the side-band had not yet told when /proc was read: pid 200's exec. */
static void exec_meanwhile(void *ctx)
{
	struct procs *ps = ctx;

	apply(ps, SB_COMM, 200, 20);
	apply_mmap(ps, 200, 21, 0x5000, "/bin/burst");
}

/* A process table over the fake /proc in dir, a drain begun (so /proc may be read). */
static void fake_procs(struct procs *ps, const char *dir)
{
	procs_init(ps);
	free(ps->proc_root);
	ps->proc_root = xstrdup(dir);
	ps->generation++;
}

/* bash (100) maps its libc and forks 200. */
static void bash_forks_200(struct procs *ps)
{
	apply(ps, SB_FORK, 100, 1);
	apply_mmap(ps, 100, 2, 0x7000, "/lib/libc.so.6");
	apply(ps, SB_FORK, 200, 10);
}

static const char *map_path(struct procs *ps, uint32_t pid, uint32_t gen, uint64_t addr)
{
	struct proc_map *m = proc_find_map(ps, procs_find(ps, pid), gen, addr);

	return m ? m->path : "(none)";
}

/*
 * A sample carries the generation it was taken in; /proc shows the process
 * as it is now. A read of /proc must never put a later program's mappings
 * into an earlier generation's image: the fork image (the parent's mappings)
 * names the samples taken in execve before the exec is counted.
 */
void test_proc_generations(void)
{
	char dir[] = "/tmp/bpfprof-procs.XXXXXX", path[4200];
	struct procs ps;
	FILE *f;

	if (!mkdtemp(dir)) {
		CHECK(false, "procs: a temporary folder");
		return;
	}
	snprintf(path, sizeof(path), "%s/200", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/200/maps", dir);
	f = fopen(path, "w");
	fputs("5000-6000 r-xp 00000000 08:01 7 /bin/burst\n", f);	/* after the exec */
	fclose(f);
	fake_procs(&ps, dir);

	/* bash forks 200, which execs burst while /proc is read. */
	bash_forks_200(&ps);
	ps.catch_up = exec_meanwhile;
	ps.catch_up_ctx = &ps;
	CHECK(!strcmp(map_path(&ps, 200, 1, 0xdead000), "(none)"),
	      "procs: a fork-generation frame in no mapping stays unnamed");
	CHECK(!strcmp(map_path(&ps, 200, 1, 0x7010), "/lib/libc.so.6"),
	      "procs: /proc read after an exec the side-band told of meanwhile leaves the fork "
	      "image as it was (got %s)", map_path(&ps, 200, 1, 0x7010));
	CHECK(!strcmp(map_path(&ps, 200, 2, 0x5010), "/bin/burst"),
	      "procs: the exec's generation has the new program");
	procs_release(&ps);

	/* Records lost: a sample of a generation never told of, the process alive. */
	fake_procs(&ps, dir);
	bash_forks_200(&ps);
	CHECK(!strcmp(map_path(&ps, 200, 2, 0x5010), "/bin/burst"),
	      "procs: a generation newer than the side-band told is read from /proc");
	CHECK(!strcmp(map_path(&ps, 200, 1, 0x7010), "/lib/libc.so.6"),
	      "procs: ... into an image of its own, not the fork's (got %s)",
	      map_path(&ps, 200, 1, 0x7010));
	procs_release(&ps);

	/* A sample named before its process's records are read, once it is gone. */
	fake_procs(&ps, dir);
	procs_get(&ps, 300, 2);
	CHECK(!procs_known(&ps, 300, 2), "procs: a process gone before /proc is read is not known");
	apply(&ps, SB_FORK, 300, 10);
	apply(&ps, SB_COMM, 300, 20);
	apply_mmap(&ps, 300, 21, 0x5000, "/bin/burst");
	CHECK(!strcmp(map_path(&ps, 300, 2, 0x5010), "/bin/burst"),
	      "procs: ... and its side-band records, read later, still tell of it");
	procs_release(&ps);

	snprintf(path, sizeof(path), "rm -r '%s'", dir);
	CHECK(system(path) == 0, "procs: the fake /proc removed");
}

/* Lines of "ADDR SIZE TYPE NAME" as written by nm -S for the fixture. */
struct nm_sym {
	unsigned long long addr, size;
	char type;
	char name[128];
};

static int read_nm(const char *path, struct nm_sym **out)
{
	FILE *f = fopen(path, "r");
	struct nm_sym s, *v = NULL;
	int n = 0;
	char line[512];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %llx %c %127s", &s.addr, &s.size, &s.type, s.name) == 4 ||
		    (sscanf(line, "%llx %c %127s", &s.addr, &s.type, s.name) == 3 && !(s.size = 0))) {
			v = xrealloc(v, (n + 1) * sizeof(*v));
			v[n++] = s;
		}
	fclose(f);
	*out = v;
	return n;
}

static void check_fixture(const char *lib, const char *nm_file, bool stripped)
{
	char path[512];
	struct elf_symtab t;
	struct nm_sym *nm = NULL;
	int fd, n, i, matched = 0, want = 0;

	snprintf(path, sizeof(path), "%s/%s", unit_fixtures, lib);
	fd = open(path, O_RDONLY);
	if (!CHECK(fd >= 0, "elf: fixture %s exists (make test-build)", path))
		return;
	CHECK(elf_symtab_read_fd(&t, fd) == 0, "elf: reads %s", lib);
	close(fd);
	CHECK(t.from_symtab == !stripped, "elf: %s uses %s", lib, stripped ? ".dynsym" : ".symtab");
	CHECK(strlen(t.build_id) == 40, "elf: %s has a 20-byte build ID (%s)", lib, t.build_id);

	snprintf(path, sizeof(path), "%s/%s", unit_fixtures, nm_file);
	n = read_nm(path, &nm);
	CHECK(n > 0, "elf: nm listing %s read", nm_file);
	for (i = 0; i < n; i++) {
		const struct elf_sym *s, *mid;

		if (!strchr("TtW", nm[i].type))
			continue;
		if (strncmp(nm[i].name, "fixture_", 8) || !nm[i].size)
			continue;	/* labels: check_labels */
		if (stripped && nm[i].type == 't')
			continue;	/* local: gone with .symtab */
		want++;
		s = elf_symtab_lookup(&t, nm[i].addr);
		mid = elf_symtab_lookup(&t, nm[i].addr + nm[i].size / 2);
		matched += s && mid && !strcmp(elf_sym_name(&t, s), nm[i].name) && s == mid &&
			   s->size == nm[i].size;
	}
	CHECK(want >= 3 && matched == want, "elf: %s names %d of %d fixture functions at start and middle",
	      lib, matched, want);
	free(nm);
	elf_symtab_release(&t);
}

/* The address nm gives NAME, or 0. */
static unsigned long long nm_addr(const struct nm_sym *nm, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(nm[i].name, name))
			return nm[i].addr;
	return 0;
}

/* The name the reader gives an address, or "". */
static const char *name_at(const struct elf_symtab *t, uint64_t addr)
{
	const struct elf_sym *s = elf_symtab_lookup(t, addr);

	return s ? elf_sym_name(t, s) : "";
}

/* Labels (no type, no size) cover up to the next symbol, as perf has it, but not inside a function. */
static void check_labels(void)
{
	char path[512];
	struct elf_symtab t;
	struct nm_sym *nm = NULL;
	unsigned long long entry, next, sized, inner;
	int fd, n;

	snprintf(path, sizeof(path), "%s/libfixture.nm", unit_fixtures);
	n = read_nm(path, &nm);
	entry = nm_addr(nm, n, "fixture_entry");
	next = nm_addr(nm, n, "fixture_entry_next");
	sized = nm_addr(nm, n, "fixture_sized");
	inner = nm_addr(nm, n, "fixture_sized_inner");
	free(nm);
	snprintf(path, sizeof(path), "%s/libfixture.so", unit_fixtures);
	fd = open(path, O_RDONLY);
	if (!CHECK(entry && next && sized && inner && fd >= 0 && !elf_symtab_read_fd(&t, fd),
		   "elf: fixture labels in nm's listing and the library read"))
		return;
	close(fd);
	CHECK(!strcmp(name_at(&t, entry + 3), "fixture_entry") &&
	      !strcmp(name_at(&t, next + 3), "fixture_entry_next"),
	      "elf: a label with no type or size names the code up to the next one (ld.so's _start)");
	CHECK(!strcmp(name_at(&t, inner), "fixture_sized") && !strcmp(name_at(&t, inner + 3), "fixture_sized"),
	      "elf: a label inside a sized function leaves the function its name");
	elf_symtab_release(&t);
}

void test_elf(void)
{
	struct elf_symtab t;
	uint64_t vaddr;
	int fd;

	check_fixture("libfixture.so", "libfixture.nm", false);
	check_fixture("libfixture-stripped.so", "libfixture.nm", true);
	check_labels();

	memset(&t, 0, sizeof(t));
	t.segs = (struct elf_segment[]){ { 0, 0x1000, 0, 0x1000 }, { 0x1000, 0x2000, 0x401000, 0x2000 } };
	t.nsegs = 2;
	CHECK(!elf_symtab_offset_to_vaddr(&t, 0x1800, &vaddr) && vaddr == 0x401800,
	      "elf: file offset to virtual address through PT_LOAD");
	CHECK(elf_symtab_offset_to_vaddr(&t, 0x9000, &vaddr) == -ENOENT,
	      "elf: an offset outside every segment");

	fd = open("/proc/self/exe", O_RDONLY);
	CHECK(elf_symtab_read_fd(&t, fd) == 0 && t.nr > 10, "elf: reads this test binary");
	elf_symtab_release(&t);
	close(fd);
	fd = open("/proc/self/maps", O_RDONLY);
	CHECK(elf_symtab_read_fd(&t, fd) == -ENOEXEC, "elf: a text file is not ELF");
	close(fd);
	CHECK(elf_symtab_read_mem(&t, "\177ELF garbage", 12) != 0, "elf: a truncated header");
}

void test_cpu_list(void)
{
	int *cpus;
	size_t n;

	CHECK(parse_cpu_list("0-3,6\n", &cpus, &n) == 0 && n == 5 && cpus[4] == 6, "cpus: 0-3,6");
	free(cpus);
	CHECK(parse_cpu_list("1,1,0-1", &cpus, &n) == 0 && n == 2, "cpus: duplicates merge");
	free(cpus);
	CHECK(parse_cpu_list("3-1", &cpus, &n) == -EINVAL, "cpus: a backwards range");
	CHECK(parse_cpu_list("a", &cpus, &n) == -EINVAL, "cpus: not a number");
	CHECK(parse_cpu_list("", &cpus, &n) == -EINVAL, "cpus: empty");
	CHECK(parse_cpu_list("0,", &cpus, &n) == 0 && n == 1, "cpus: a trailing comma");
	free(cpus);
	CHECK(parse_cpu_list("0-", &cpus, &n) == -EINVAL, "cpus: an open range");
}
