// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The unwind-table builder, row by row against binutils' reading of the
 * same CFI (readelf --debug-dump=frames-interp) on libc, ld.so, libstdc++
 * and the workloads built without frame pointers, the row each of its
 * rows must make written here again from its text; then on hand-made CFI
 * for what those files lack: remember/restore_state, advance_loc4, the _sf
 * forms, 64-bit lengths, .debug_frame alone, malformed entries, overlaps.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpfprof/cfi_rows.h"
#include "bpfprof/elf.h"
#include "bpfprof/util.h"
#include "fuzz.h"
#include "unit.h"

/* readelf's text ---------------------------------------------------------- */

/* One row as readelf prints it: the rules as text, "" for a column it has not. */
struct re_row {
	uint64_t loc;
	char cfa[24], rbp[24], ra[24];
};

struct re_fde {
	uint64_t start, end;
	bool signal;			/* its CIE's augmentation has 'S' */
	size_t first, n;		/* its rows */
};

struct re_cie {
	int section;			/* 0: .eh_frame, 1: .debug_frame */
	uint64_t offset;
	bool signal, has_row;
	struct re_row initial;
};

struct readelf {
	struct re_row *rows;
	struct re_fde *fdes;
	struct re_cie *cies;
	size_t nrows, nfdes, ncies, rows_alloc, fdes_alloc, cies_alloc;
};

static void copy_col(char *dst, char **tok, size_t ntok, int col)
{
	const char *s = col >= 0 && (size_t)col < ntok ? tok[col] : "";

	snprintf(dst, sizeof(((struct re_row *)0)->cfa), "%s", s);
}

/* An FDE without rows of its own has its CIE's; rows past its end are none of its. */
static void end_fde(struct readelf *re, struct re_fde *f, const struct re_cie *cie)
{
	if (!f)
		return;
	while (f->n && re->rows[f->first + f->n - 1].loc >= f->end)
		f->n--;
	if (!f->n && cie && cie->has_row) {
		re->nrows = f->first;
		ALLOC_GROW(re->rows, re->nrows + 1, re->rows_alloc);
		re->rows[re->nrows] = cie->initial;
		re->rows[re->nrows++].loc = f->start;
		f->n = 1;
	}
}

static bool read_readelf(const char *path, struct readelf *re)
{
	char cmd[4300], line[2048];
	char *tok[64];
	size_t ntok = 0;
	int section = -1, rbp_col = -1, ra_col = -1;
	struct re_cie *cie = NULL;	/* the entry being read: a CIE, or an FDE and its CIE */
	struct re_fde *fde = NULL;
	FILE *p;

	memset(re, 0, sizeof(*re));
	snprintf(cmd, sizeof(cmd), "readelf -wN --debug-dump=frames-interp '%s' 2>/dev/null", path);
	if (!(p = popen(cmd, "r")))
		return false;
	while (fgets(line, sizeof(line), p)) {
		char *save = NULL, *t;

		if (!strncmp(line, "Contents of the ", 16)) {
			end_fde(re, fde, cie);
			fde = NULL;
			cie = NULL;
			section = !strncmp(line + 16, ".eh_frame ", 10) ? 0 :
				  !strncmp(line + 16, ".debug_frame ", 13) ? 1 : -1;
			continue;
		}
		/* A register rule is "r10 (r10)": the name in brackets is no column of its own. */
		for (ntok = 0, t = strtok_r(line, " \t\n", &save); t && ntok < ARRAY_SIZE(tok);
		     t = strtok_r(NULL, " \t\n", &save))
			if (*t != '(')
				tok[ntok++] = t;
		if (section < 0 || !ntok)
			continue;
		if (ntok >= 5 && (!strcmp(tok[3], "CIE") || !strcmp(tok[3], "FDE"))) {
			end_fde(re, fde, cie);
			fde = NULL;
			cie = NULL;
			rbp_col = ra_col = -1;
		}
		if (ntok >= 5 && !strcmp(tok[3], "CIE")) {
			ALLOC_GROW(re->cies, re->ncies + 1, re->cies_alloc);
			cie = &re->cies[re->ncies++];
			memset(cie, 0, sizeof(*cie));
			cie->section = section;
			cie->offset = strtoull(tok[0], NULL, 16);
			cie->signal = strchr(tok[4], 'S') != NULL;
		} else if (ntok >= 6 && !strcmp(tok[3], "FDE")) {
			uint64_t cie_off = strtoull(tok[4] + 4, NULL, 16);
			size_t i;

			for (i = 0; i < re->ncies; i++)
				if (re->cies[i].section == section && re->cies[i].offset == cie_off)
					cie = &re->cies[i];
			ALLOC_GROW(re->fdes, re->nfdes + 1, re->fdes_alloc);
			fde = &re->fdes[re->nfdes++];
			memset(fde, 0, sizeof(*fde));
			sscanf(tok[5], "pc=%" SCNx64 "..%" SCNx64, &fde->start, &fde->end);
			fde->signal = cie && cie->signal;
			fde->first = re->nrows;
		} else if (!strcmp(tok[0], "LOC")) {
			size_t i;

			for (i = 0; i < ntok; i++) {
				if (!strcmp(tok[i], "rbp"))
					rbp_col = i;
				if (!strcmp(tok[i], "ra"))
					ra_col = i;
			}
		} else if (strlen(tok[0]) == 16 && ntok >= 2 && (fde || cie)) {
			struct re_row r = { strtoull(tok[0], NULL, 16) };

			copy_col(r.cfa, tok, ntok, 1);
			copy_col(r.rbp, tok, ntok, rbp_col);
			copy_col(r.ra, tok, ntok, ra_col);
			if (!fde) {
				cie->initial = r;
				cie->has_row = true;
			} else if (fde->n && re->rows[re->nrows - 1].loc == r.loc) {
				re->rows[re->nrows - 1] = r;	/* the last rules at a location */
			} else {
				ALLOC_GROW(re->rows, re->nrows + 1, re->rows_alloc);
				re->rows[re->nrows++] = r;
				fde->n++;
			}
		}
	}
	end_fde(re, fde, cie);
	return pclose(p) == 0 && re->nfdes;
}

static void readelf_free(struct readelf *re)
{
	free(re->rows);
	free(re->fdes);
	free(re->cies);
}

/* The rows readelf's text says, written again ------------------------------ */

/* "rsp+8", "c-16": prefix, then a signed decimal. */
static bool parse_off(const char *s, const char *prefix, long *off)
{
	size_t n = strlen(prefix);
	char *end;

	if (strncmp(s, prefix, n) || (s[n] != '+' && s[n] != '-'))
		return false;
	*off = strtol(s + n, &end, 10);
	return end > s + n + 1 && !*end;
}

/*
 * The row readelf's rules make; *exp: the CFA is an expression, which only
 * its bytes decide (readelf prints "exp").
 */
static struct unwind_row expected(const struct re_row *r, bool *exp)
{
	struct unwind_row w = { 0 };
	long cfa_off, rbp_off = 0;
	unsigned cfa, rbp;

	*exp = false;
	if (!strcmp(r->ra, "u")) {
		w.rules = ROW_CFA_END;
		return w;
	}
	if (!strcmp(r->cfa, "exp")) {
		*exp = true;
		return w;
	}
	if (strcmp(r->ra, "c-8"))
		return w;
	if (parse_off(r->cfa, "rsp", &cfa_off))
		cfa = ROW_CFA_RSP;
	else if (parse_off(r->cfa, "rbp", &cfa_off))
		cfa = ROW_CFA_RBP;
	else
		return w;
	if (cfa_off % 8 || cfa_off / 8 < INT16_MIN || cfa_off / 8 > INT16_MAX)
		return w;
	if (!*r->rbp || !strcmp(r->rbp, "u") || !strcmp(r->rbp, "s")) {
		rbp = ROW_RBP_SAME;
	} else if (parse_off(r->rbp, "c", &rbp_off) && !(rbp_off % 8) && rbp_off / 8 >= INT8_MIN &&
		   rbp_off / 8 <= INT8_MAX) {
		rbp = ROW_RBP_AT_CFA;
		rbp_off /= 8;
	} else {
		return w;
	}
	w.cfa_off = cfa_off / 8;
	w.rbp_off = rbp_off;
	w.rules = cfa | rbp;
	return w;
}

static bool same_row(const struct unwind_row *a, const struct unwind_row *b)
{
	return a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off && a->rules == b->rules;
}

static bool is_none(const struct unwind_row *r)
{
	return r->rules == ROW_CFA_NONE && !r->cfa_off && !r->rbp_off;
}

/*
 * A CFA expression's row: a signal frame's (glibc's restorers, the only
 * 'S' frames here), a PLT stub's (in .plt or .plt.sec: rsp + 8, plus 8
 * past byte 10 or 11 of the stub), a realigned frame's, or none.
 */
static bool exp_ok(const struct re_row *r, const struct re_fde *f, bool in_plt,
		   const struct unwind_row *got)
{
	unsigned cfa = got->rules & ROW_CFA_MASK, rbp = got->rules & ROW_RBP_MASK;

	if (f->signal)
		return got->rules == ROW_CFA_SIGNAL && !got->cfa_off && !got->rbp_off;
	if (in_plt)
		return got->rules == ROW_CFA_PLT && got->cfa_off == 1 &&
		       (got->rbp_off == 10 || got->rbp_off == 11);
	if (is_none(got))
		return true;
	if (strcmp(r->ra, "c-8"))
		return false;
	if (cfa == ROW_CFA_PLT)
		return rbp == ROW_RBP_SAME &&
		       (!*r->rbp || !strcmp(r->rbp, "u") || !strcmp(r->rbp, "s"));
	if (cfa == ROW_CFA_DEREF_RBP)
		return rbp == ROW_RBP_AT_RBP ? !strcmp(r->rbp, "exp") :
					       rbp == ROW_RBP_SAME || rbp == ROW_RBP_AT_CFA;
	return false;
}

/* The file under test ---------------------------------------------------- */

struct file {
	const char *label;
	int fd;
	Elf *elf;
	GElf_Phdr segs[64];
	size_t nsegs;
	uint64_t plt[2][2];		/* .plt and .plt.sec: [start, end) */
};

static bool open_file(struct file *f, const char *label, const char *path)
{
	size_t phnum, i, shstrndx;
	Elf_Scn *scn = NULL;

	memset(f, 0, sizeof(*f));
	f->label = label;
	f->fd = open(path, O_RDONLY);
	f->elf = f->fd >= 0 ? elf_open_fd(f->fd) : NULL;
	if (!f->elf || elf_getphdrnum(f->elf, &phnum) || elf_getshdrstrndx(f->elf, &shstrndx)) {
		if (f->fd >= 0)
			close(f->fd);
		f->fd = -1;
		return false;
	}
	for (i = 0; i < phnum && f->nsegs < ARRAY_SIZE(f->segs); i++)
		if (gelf_getphdr(f->elf, i, &f->segs[f->nsegs]) && f->segs[f->nsegs].p_type == PT_LOAD &&
		    (f->segs[f->nsegs].p_flags & PF_X))
			f->nsegs++;
	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(f->elf, shstrndx, sh.sh_name)))
			continue;
		i = !strcmp(name, ".plt") ? 0 : !strcmp(name, ".plt.sec") ? 1 : 2;
		if (i < 2) {
			f->plt[i][0] = sh.sh_addr;
			f->plt[i][1] = sh.sh_addr + sh.sh_size;
		}
	}
	return true;
}

static void close_file(struct file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
}

/* The file offset of vaddr in an executable segment; false if in none. */
static bool offset_of(const struct file *f, uint64_t vaddr, uint32_t *off)
{
	size_t i;

	for (i = 0; i < f->nsegs; i++)
		if (vaddr >= f->segs[i].p_vaddr && vaddr < f->segs[i].p_vaddr + f->segs[i].p_filesz) {
			*off = vaddr - f->segs[i].p_vaddr + f->segs[i].p_offset;
			return true;
		}
	return false;
}

static bool in_plt(const struct file *f, uint64_t vaddr)
{
	return (vaddr >= f->plt[0][0] && vaddr < f->plt[0][1]) ||
	       (vaddr >= f->plt[1][0] && vaddr < f->plt[1][1]);
}

/* A symbol's address from .symtab; 0 if none. */
static uint64_t symbol(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *data;
	size_t i;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++)
			if (gelf_getsym(data, i, &sym) && sym.st_value &&
			    !strcmp(elf_strptr(elf, sh.sh_link, sym.st_name) ?: "", name))
				return sym.st_value;
	}
	return 0;
}

static void row_text(const struct unwind_row *r, char *buf, size_t size)
{
	if (!r)
		snprintf(buf, size, "(no row)");
	else
		snprintf(buf, size, "rules 0x%02x cfa_off %d rbp_off %d", r->rules, r->cfa_off, r->rbp_off);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* The readelf row at or before vaddr in the FDE covering it (by start); NULL if none covers it. */
static const struct re_row *row_at(const struct readelf *re, const struct re_fde *const *by_start,
				   uint64_t vaddr)
{
	size_t lo = 0, hi = re->nfdes, i;
	const struct re_fde *f;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (by_start[mid]->start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || vaddr >= (f = by_start[lo - 1])->end || !f->n)
		return NULL;
	for (i = f->n; i > 1 && re->rows[f->first + i - 1].loc > vaddr; i--)
		;
	return &re->rows[f->first + i - 1];
}

static int fde_start_cmp(const void *a, const void *b)
{
	const struct re_fde *x = *(const struct re_fde *const *)a;
	const struct re_fde *y = *(const struct re_fde *const *)b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Every row readelf prints for path, found in the table as mapped; the end
 * of every FDE; the table sorted and merged. is_libc: its PLT stubs' and
 * __restore_rt's rows, and less than 1 % unsupported. has_start: _start's
 * last row ends the stack.
 */
static void check_file(const char *label, const char *path, bool is_libc, bool has_start)
{
	struct readelf re;
	struct cfi_rows t;
	struct file f;
	struct timespec t0;
	const struct re_fde **by_start;
	size_t i, j, total = 0, bad = 0, none = 0, plt = 0, signal = 0, ends_bad = 0, sorted = 1;
	size_t outside = 0;
	double ms;
	int err;

	if (!CHECK(open_file(&f, label, path), "%s: %s opens (make test-build)", label, path))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = cfi_rows_build(f.elf, NULL, &t);
	ms = ms_since(&t0);
	if (!CHECK(!err, "%s: builds (%d)", label, err) ||
	    !CHECK(read_readelf(path, &re), "%s: readelf --debug-dump=frames-interp reads its CFI",
		   label)) {
		close_file(&f);
		return;
	}
	for (i = 0; i < re.nfdes; i++) {
		const struct re_fde *fde = &re.fdes[i];

		for (j = 0; j < fde->n; j++) {
			const struct re_row *r = &re.rows[fde->first + j];
			const struct unwind_row *got;
			struct unwind_row want;
			bool exp, ok;
			uint32_t off;

			if (!offset_of(&f, r->loc, &off)) {
				outside++;
				continue;
			}
			total++;
			want = expected(r, &exp);
			got = cfi_rows_find(&t, off);
			ok = got && (exp ? exp_ok(r, fde, in_plt(&f, r->loc), got) :
					   same_row(got, &want));
			none += got && is_none(got);
			plt += ok && exp && in_plt(&f, r->loc);
			signal += ok && exp && fde->signal;
			if (!ok && bad++ < 10) {
				char g[64], w[64];

				row_text(got, g, sizeof(g));
				row_text(exp ? NULL : &want, w, sizeof(w));
				printf("#   %s: at 0x%" PRIx64 " (CFA %s, rbp %s, ra %s%s): got %s, "
				       "want %s\n", label, r->loc, r->cfa, *r->rbp ? r->rbp : "-",
				       *r->ra ? r->ra : "-", fde->signal ? ", signal frame" : "", g,
				       exp ? "per its expression" : w);
			}
		}
	}
	CHECK(!bad && total, "%s: each of readelf's %zu rows is found mapped (%zu are not; %zu outside "
	      "executable segments, not looked up)", label, total, bad, outside);

	/* Where an FDE ends: NONE, or the row of the FDE that starts there. */
	by_start = xmalloc((re.nfdes ? re.nfdes : 1) * sizeof(*by_start));
	for (i = 0; i < re.nfdes; i++)
		by_start[i] = &re.fdes[i];
	qsort(by_start, re.nfdes, sizeof(*by_start), fde_start_cmp);
	for (i = 0; i < re.nfdes; i++) {
		const struct re_row *next = row_at(&re, by_start, re.fdes[i].end);
		const struct unwind_row *got, *want = NULL;
		uint32_t off, next_off;

		/* Not at the end of a segment: nothing of the file follows that. */
		if (re.fdes[i].start == re.fdes[i].end || !offset_of(&f, re.fdes[i].start, &off) ||
		    !offset_of(&f, re.fdes[i].end, &off))
			continue;
		got = cfi_rows_find(&t, off);
		if (next && offset_of(&f, next->loc, &next_off))
			want = cfi_rows_find(&t, next_off);
		if (!got || (want ? !same_row(got, want) : !is_none(got))) {
			if (ends_bad++ < 5)
				printf("#   %s: the FDE 0x%" PRIx64 "..0x%" PRIx64 " ends in a %s\n", label,
				       re.fdes[i].start, re.fdes[i].end, got ? "wrong row" : "gap");
		}
	}
	free(by_start);
	CHECK(!ends_bad, "%s: each FDE's end gives NONE or the next FDE's row (%zu do not)", label,
	      ends_bad);

	for (i = 1; i < t.nr; i++)
		if (t.rows[i - 1].addr >= t.rows[i].addr || same_row(&t.rows[i - 1], &t.rows[i]))
			sorted = 0;
	CHECK(sorted && t.nr, "%s: %zu rows, strictly sorted, no two neighbours alike", label, t.nr);

	printf("# %s: %u FDEs, %u rows before merging, %zu after (%zu bytes); built in %.2f ms\n", label,
	       t.stats.fdes, t.stats.rows_in, t.nr, t.nr * sizeof(*t.rows), ms);
	printf("# %s: %zu of readelf's rows (%.3f %%) unsupported (ROW_CFA_NONE); %u bad entries\n", label,
	       none, total ? 100.0 * none / total : 0, t.stats.bad);
	if (is_libc) {
		CHECK(plt > 0, "%s: its PLT stubs' rows are ROW_CFA_PLT (%zu rows)", label, plt);
		CHECK(signal > 0, "%s: __restore_rt's row is ROW_CFA_SIGNAL (%zu rows)", label, signal);
		CHECK(total && 100.0 * none / total < 1,
		      "%s: less than 1 %% of the rows unsupported (%.3f %%)", label,
		      total ? 100.0 * none / total : 0);
	}
	if (has_start) {
		uint64_t start = symbol(f.elf, "_start");
		const struct re_fde *fde = NULL;
		const struct unwind_row *got = NULL;
		uint32_t off;

		for (i = 0; i < re.nfdes && start; i++)
			if (start >= re.fdes[i].start && start < re.fdes[i].end && re.fdes[i].n)
				fde = &re.fdes[i];
		if (fde && offset_of(&f, re.rows[fde->first + fde->n - 1].loc, &off))
			got = cfi_rows_find(&t, off);
		CHECK(got && got->rules == ROW_CFA_END, "%s: _start's last row is ROW_CFA_END", label);
	}
	readelf_free(&re);
	cfi_rows_free(&t);
	close_file(&f);
}

/* The split workload with its CFI only in .debug_frame: its own, its debug file's, compressed. */
static void check_debug_frame(const char dir[4096])
{
	struct file full, strip, debug;
	struct cfi_rows a, b, c;
	char path[3][4200];
	uint64_t main_addr;
	uint32_t off = 0;
	int i;

	snprintf(path[0], sizeof(path[0]), "%s/split-dframe", dir);
	snprintf(path[1], sizeof(path[1]), "%s/split-dframe-strip", dir);
	snprintf(path[2], sizeof(path[2]), "%s/split-dframe-strip.debug", dir);
	if (!CHECK(open_file(&full, "split-dframe", path[0]) &&
		   open_file(&strip, "split-dframe-strip", path[1]) &&
		   open_file(&debug, "split-dframe-strip.debug", path[2]),
		   "split-dframe, split-dframe-strip and its debug file open (make test-build)"))
		return;
	main_addr = symbol(full.elf, "main");
	CHECK(!cfi_rows_build(full.elf, NULL, &a) && !cfi_rows_build(strip.elf, debug.elf, &b) &&
	      !cfi_rows_build(strip.elf, NULL, &c), "split-dframe: the three build");
	CHECK(a.nr && a.nr == b.nr && !memcmp(a.rows, b.rows, a.nr * sizeof(*a.rows)),
	      "split-dframe-strip with its debug file: the rows of split-dframe (%zu, %zu)", a.nr, b.nr);
	CHECK(main_addr && offset_of(&full, main_addr, &off) && !is_none(cfi_rows_find(&b, off)) &&
	      c.nr && c.nr < b.nr && (!cfi_rows_find(&c, off) || is_none(cfi_rows_find(&c, off))),
	      "split-dframe-strip alone: .eh_frame's rows (crt1, the PLT: %zu), none for main", c.nr);
	cfi_rows_free(&b);
	cfi_rows_free(&c);

	/* Compressed, the ELF way and GNU's (.zdebug_frame): the same rows. */
	for (i = 0; i < 2; i++) {
		char tmp[] = "/tmp/bpfprof-cfi.XXXXXX", cmd[8400];
		int fd = mkstemp(tmp);
		struct file z;

		if (fd >= 0)
			close(fd);
		snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=%s '%s' '%s' 2>/dev/null",
			 i ? "zlib-gnu" : "zlib", path[0], tmp);
		if (CHECK(fd >= 0 && !system(cmd) && open_file(&z, "compressed", tmp),
			  "objcopy --compress-debug-sections=%s", i ? "zlib-gnu" : "zlib")) {
			CHECK(!cfi_rows_build(z.elf, NULL, &b) && b.nr == a.nr &&
			      !memcmp(a.rows, b.rows, a.nr * sizeof(*a.rows)),
			      "split-dframe with .debug_frame compressed (%s): the same rows",
			      i ? "zlib-gnu" : "zlib");
			cfi_rows_free(&b);
			close_file(&z);
		}
		unlink(tmp);
	}
	cfi_rows_free(&a);
	close_file(&full);
	close_file(&strip);
	close_file(&debug);
}

/* Hand-made CFI -------------------------------------------------------------- */

struct bytes {
	uint8_t b[4096];
	size_t n;
};

static void put(struct bytes *b, uint64_t v, unsigned size)
{
	while (size--) {
		b->b[b->n++] = v;
		v >>= 8;
	}
}

static void put_uleb(struct bytes *b, uint64_t v)
{
	do {
		b->b[b->n++] = (v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
		v >>= 7;
	} while (v);
}

static void put_sleb(struct bytes *b, int64_t v)
{
	bool more;

	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		more = !((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)));
		b->b[b->n++] = byte | (more ? 0x80 : 0);
	} while (more);
}

static void put_bytes(struct bytes *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

/* Starts an entry: its length, patched by end_entry(). */
static size_t begin_entry(struct bytes *b, bool dwarf64)
{
	size_t at = b->n;

	if (dwarf64)
		put(b, 0xffffffff, 4);
	put(b, 0, dwarf64 ? 8 : 4);
	return at;
}

static void end_entry(struct bytes *b, size_t at, bool dwarf64)
{
	size_t body = at + (dwarf64 ? 12 : 4), len = b->n - body, i;

	for (i = 0; i < (dwarf64 ? 8u : 4u); i++)
		b->b[body - (dwarf64 ? 8 : 4) + i] = len >> 8 * i;
}

/* Code addresses in the minimal ELF file, and their file offsets. */
#define T(x) (FUZZ_CFI_TEXT_VADDR + 0x1000 + (x))
#define OFF(x) ((uint32_t)(T(x) - FUZZ_CFI_TEXT_VADDR + FUZZ_CFI_TEXT_OFFSET))

/*
 * An .eh_frame CIE: augmentation aug ("zR..."; FDE addresses pcrel
 * sdata4), code alignment 1, data alignment -8, return address in r16;
 * initially CFA = rsp + 8, return address at CFA - 8. Returns its offset.
 */
static size_t eh_cie(struct bytes *b, bool dwarf64, const char *aug)
{
	size_t at = begin_entry(b, dwarf64);

	put(b, 0, dwarf64 ? 8 : 4);
	put(b, 1, 1);
	put_bytes(b, aug, strlen(aug) + 1);
	put_uleb(b, 1);
	put_sleb(b, -8);
	put(b, 16, 1);
	put_uleb(b, 1);
	put(b, 0x1b, 1);
	put_bytes(b, "\x0c\x07\x08\x90\x01", 5);	/* def_cfa rsp 8; offset r16 at cfa-8 */
	end_entry(b, at, dwarf64);
	return at;
}

/* An .eh_frame FDE of the CIE at cie for [T(start), T(start) + len), its program prog. */
static void eh_fde(struct bytes *b, size_t cie, uint64_t start, uint32_t len, const void *prog,
		   size_t prog_len)
{
	size_t at = begin_entry(b, false);

	put(b, b->n - cie, 4);
	put(b, T(start) - (FUZZ_CFI_SECTION_ADDR + b->n), 4);
	put(b, len, 4);
	put_uleb(b, 0);
	put_bytes(b, prog, prog_len);
	end_entry(b, at, false);
}

static struct cfi_rows build_image(const struct bytes *b, bool debug_frame, Elf *debug, int *err)
{
	struct cfi_rows t;
	size_t size;
	void *image = fuzz_cfi_elf(b->b, b->n, debug_frame, &size);
	Elf *elf = elf_open_mem(image, size);

	*err = elf ? cfi_rows_build(elf, debug, &t) : -EINVAL;
	if (elf)
		elf_end(elf);
	free(image);
	return t;
}

/* The table holds exactly want[n] (addresses as file offsets). */
static bool rows_are(const struct cfi_rows *t, const struct unwind_row *want, size_t n)
{
	size_t i;

	if (t->nr != n) {
		printf("#   %zu rows, want %zu:\n", t->nr, n);
		for (i = 0; i < t->nr; i++)
			printf("#     0x%x rules 0x%02x cfa_off %d rbp_off %d\n", t->rows[i].addr,
			       t->rows[i].rules, t->rows[i].cfa_off, t->rows[i].rbp_off);
		return false;
	}
	for (i = 0; i < n; i++)
		if (t->rows[i].addr != want[i].addr || !same_row(&t->rows[i], &want[i])) {
			printf("#   row %zu: 0x%x rules 0x%02x cfa_off %d rbp_off %d; "
			       "want 0x%x rules 0x%02x cfa_off %d rbp_off %d\n", i, t->rows[i].addr,
			       t->rows[i].rules, t->rows[i].cfa_off, t->rows[i].rbp_off, want[i].addr,
			       want[i].rules, want[i].cfa_off, want[i].rbp_off);
			return false;
		}
	return true;
}

#define ROW(at, cfa, rbp, rules) { OFF(at), (cfa), (rbp), (rules) }

static void check_hand_made(void)
{
	static const uint8_t prog_a[] = {
		0x41, 0x0e, 0x10, 0x86, 0x02,	/* +1: def_cfa_offset 16; offset rbp at cfa-16 */
		0x43, 0x0d, 0x06,		/* +3: def_cfa_register rbp */
		0x44, 0x0a,			/* +4: remember_state */
		0x41, 0x0c, 0x07, 0x08, 0xc6,	/* +1: def_cfa rsp 8; restore rbp */
		0x41, 0x0b,			/* +1: restore_state */
		0x04, 0x00, 0x00, 0x01, 0x00,	/* advance_loc4 0x10000 */
		0x12, 0x07, 0x7d,		/* def_cfa_sf rsp -3 (* -8: 24) */
		0x11, 0x06, 0x03,		/* offset_extended_sf rbp 3 (* -8: -24) */
	};
	static const uint8_t truncated[] = { 0x0c, 0x07 };	/* def_cfa rsp, no offset */
	static const uint8_t plt[] = {
		0x0e, 0x10, 0x46, 0x0e, 0x18, 0x4a,	/* def_cfa_offset 16; +6: 24; +10: */
		0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22,
	};
	static const uint8_t realigned[] = {
		0x45, 0x0c, 0x0a, 0x00,			/* +5: def_cfa r10 0 */
		0x4f, 0x10, 0x06, 0x02, 0x76, 0x00,	/* +15: expression rbp (breg6 0) */
		0x42, 0x0f, 0x03, 0x76, 0x78, 0x06,	/* +2: def_cfa_expression (breg6 -8; deref) */
		0x4e, 0x0c, 0x07, 0x08,			/* +14: def_cfa rsp 8, rbp still at rbp */
	};
	static const uint8_t outermost[] = { 0x07, 0x10 };	/* undefined r16 */
	/* CFA, rip and rbp in the ucontext at rsp, as glibc's __restore_rt has them (and not). */
	static const uint8_t sigframe[] = {
		0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06, 0x10, 0x10, 0x03, 0x77, 0xa8, 0x01,
		0x10, 0x06, 0x03, 0x77, 0xf8, 0x00, 0x42,
		0x10, 0x10, 0x03, 0x77, 0xb0, 0x01,	/* +2: rip at rsp + 176: not the kernel's frame */
	};
	struct bytes b = { .n = 0 };
	struct cfi_rows t;
	size_t cie, cie64, cie_s;
	int err;

	/* remember/restore_state, advance_loc4, def_cfa_sf, offset_extended_sf; a 64-bit CIE. */
	cie = eh_cie(&b, false, "zR");
	eh_fde(&b, cie, 0, 0x20000, prog_a, sizeof(prog_a));
	cie64 = eh_cie(&b, true, "zR");
	eh_fde(&b, cie64, 0x30000, 0x10, "", 0);
	eh_fde(&b, cie, 0x40000, 0x10, truncated, sizeof(truncated));
	eh_fde(&b, cie, 0x50000, 0x10, outermost, sizeof(outermost));
	put(&b, 0, 4);
	t = build_image(&b, false, NULL, &err);
	{
		static const struct unwind_row want[] = {
			ROW(0, 1, 0, ROW_CFA_RSP),
			ROW(1, 2, -2, ROW_CFA_RSP | ROW_RBP_AT_CFA),
			ROW(4, 2, -2, ROW_CFA_RBP | ROW_RBP_AT_CFA),
			ROW(9, 1, 0, ROW_CFA_RSP),
			ROW(10, 2, -2, ROW_CFA_RBP | ROW_RBP_AT_CFA),
			ROW(0x1000a, 3, -3, ROW_CFA_RSP | ROW_RBP_AT_CFA),
			ROW(0x20000, 0, 0, ROW_CFA_NONE),
			ROW(0x30000, 1, 0, ROW_CFA_RSP),
			ROW(0x30010, 0, 0, ROW_CFA_NONE),
			ROW(0x50000, 0, 0, ROW_CFA_END),
			ROW(0x50010, 0, 0, ROW_CFA_NONE),
		};

		CHECK(!err && rows_are(&t, want, ARRAY_SIZE(want)),
		      "hand-made: remember/restore_state, advance_loc4, def_cfa_sf, offset_extended_sf, "
		      "a 64-bit-length CIE, undefined return address (ROW_CFA_END)");
		CHECK(t.stats.bad == 1 && t.stats.fdes == 3 && t.stats.rows_in == 9 &&
		      !t.stats.unsupported,
		      "hand-made: the truncated FDE counted bad, the others kept (%u FDEs, %u rows, "
		      "%u bad)",
		      t.stats.fdes, t.stats.rows_in, t.stats.bad);
		CHECK(!cfi_rows_find(&t, OFF(0) - 1) && cfi_rows_find(&t, OFF(0x40008)) == &t.rows[8],
		      "hand-made: nothing before the first row; the bad FDE's code falls in a NONE row");
	}
	cfi_rows_free(&t);

	/* An entry cut short by the section's end: counted once, what comes before kept. */
	b.n -= 4;
	put(&b, 0x100, 4);
	put(&b, 0, 8);
	t = build_image(&b, false, NULL, &err);
	CHECK(!err && t.nr == 11 && t.stats.bad == 2,
	      "hand-made: a last entry cut short (%zu rows, bad %u)", t.nr, t.stats.bad);
	cfi_rows_free(&t);

	/* The PLT stubs' expression; gcc's realigned frame; a signal frame; overlapping FDEs. */
	b.n = 0;
	cie = eh_cie(&b, false, "zR");
	cie_s = eh_cie(&b, false, "zRS");
	eh_fde(&b, cie, 0, 0x100, plt, sizeof(plt));
	eh_fde(&b, cie, 0x1000, 0x40, realigned, sizeof(realigned));
	eh_fde(&b, cie_s, 0x2000, 0x10, sigframe, sizeof(sigframe));
	eh_fde(&b, cie, 0x3000, 0x100, "", 0);
	eh_fde(&b, cie, 0x3080, 0x100, "\x0e\x10", 2);
	t = build_image(&b, false, NULL, &err);
	{
		static const struct unwind_row want[] = {
			ROW(0, 2, 0, ROW_CFA_RSP),
			ROW(6, 3, 0, ROW_CFA_RSP),
			ROW(16, 1, 11, ROW_CFA_PLT),
			ROW(0x100, 0, 0, ROW_CFA_NONE),
			ROW(0x1000, 1, 0, ROW_CFA_RSP),
			ROW(0x1005, 0, 0, ROW_CFA_NONE),
			ROW(0x1016, -1, 0, ROW_CFA_DEREF_RBP | ROW_RBP_AT_RBP),
			ROW(0x1024, 0, 0, ROW_CFA_NONE),
			ROW(0x2000, 0, 0, ROW_CFA_SIGNAL),
			ROW(0x2002, 0, 0, ROW_CFA_NONE),
			ROW(0x3000, 1, 0, ROW_CFA_RSP),
			ROW(0x3100, 2, 0, ROW_CFA_RSP),
			ROW(0x3180, 0, 0, ROW_CFA_NONE),
		};

		CHECK(!err && rows_are(&t, want, ARRAY_SIZE(want)),
		      "hand-made: PLT stub (threshold 11), realigned frame (DEREF_RBP, rbp at rbp), "
		      "__restore_rt's frame (its offsets only), overlapping FDEs (the earlier wins)");
		CHECK(t.stats.unsupported == 4, "hand-made: r10-based CFA, rbp at rbp under rsp, rip "
		      "elsewhere in a signal frame: unsupported (%u)", t.stats.unsupported);
	}
	cfi_rows_free(&t);

	/* .debug_frame alone: CIE id ~0, version 4, absolute addresses; then below .eh_frame. */
	b.n = 0;
	cie = begin_entry(&b, false);
	put(&b, 0xffffffff, 4);
	put(&b, 4, 1);
	put(&b, 0, 1);			/* no augmentation */
	put(&b, 8, 1);			/* address size */
	put(&b, 0, 1);			/* segment selector size */
	put_uleb(&b, 1);
	put_sleb(&b, -8);
	put_uleb(&b, 16);
	put_bytes(&b, "\x0c\x07\x08\x90\x01", 5);
	end_entry(&b, cie, false);
	{
		static const uint64_t fdes[][2] = { { 0, 0x100 }, { 0x3000, 0x10 } };
		size_t i, at;

		for (i = 0; i < ARRAY_SIZE(fdes); i++) {
			at = begin_entry(&b, false);
			put(&b, cie, 4);
			put(&b, T(fdes[i][0]), 8);
			put(&b, fdes[i][1], 8);
			put_bytes(&b, "\x41\x0e\x10", 3);	/* +1: def_cfa_offset 16 */
			end_entry(&b, at, false);
		}
	}
	t = build_image(&b, true, NULL, &err);
	{
		static const struct unwind_row want[] = {
			ROW(0, 1, 0, ROW_CFA_RSP),
			ROW(1, 2, 0, ROW_CFA_RSP),
			ROW(0x100, 0, 0, ROW_CFA_NONE),
			ROW(0x3000, 1, 0, ROW_CFA_RSP),
			ROW(0x3001, 2, 0, ROW_CFA_RSP),
			ROW(0x3010, 0, 0, ROW_CFA_NONE),
		};

		CHECK(!err && rows_are(&t, want, ARRAY_SIZE(want)),
		      "hand-made: .debug_frame, version 4");
	}
	cfi_rows_free(&t);
	{
		/* The same as a debug file's, under the .eh_frame above: only what that lacks. */
		struct bytes eh = { .n = 0 };
		size_t dsize;
		void *dimage = fuzz_cfi_elf(b.b, b.n, true, &dsize);
		Elf *debug = elf_open_mem(dimage, dsize);
		static const struct unwind_row want[] = {
			ROW(0, 1, 0, ROW_CFA_RSP),
			ROW(0x40, 0, 0, ROW_CFA_NONE),
			ROW(0x3000, 1, 0, ROW_CFA_RSP),
			ROW(0x3001, 2, 0, ROW_CFA_RSP),
			ROW(0x3010, 0, 0, ROW_CFA_NONE),
		};

		cie = eh_cie(&eh, false, "zR");
		eh_fde(&eh, cie, 0, 0x40, "", 0);
		t = build_image(&eh, false, debug, &err);
		CHECK(!err && rows_are(&t, want, ARRAY_SIZE(want)),
		      "hand-made: .eh_frame wins where both cover code, a debug file's .debug_frame "
		      "fills the rest");
		cfi_rows_free(&t);
		elf_end(debug);
		free(dimage);
	}
}

void test_cfi_rows(void)
{
	static const struct {
		const char *label, *path;
		bool is_libc;
	} libs[] = {
		{ "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", true },
		{ "ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2", false },
		{ "libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", false },
	};
	static const char *const workloads[] = { "split-nofp", "qsort-nofp", "split-dframe" };
	char dir[4096], path[4200];
	size_t i;

	elf_version(EV_CURRENT);
	for (i = 0; i < ARRAY_SIZE(libs); i++)
		check_file(libs[i].label, libs[i].path, libs[i].is_libc, false);
	snprintf(dir, sizeof(dir), "%s/../workloads", unit_fixtures);
	for (i = 0; i < ARRAY_SIZE(workloads); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, workloads[i]);
		check_file(workloads[i], path, false, true);
	}
	check_debug_frame(dir);
	check_hand_made();
}
