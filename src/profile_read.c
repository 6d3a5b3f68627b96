// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bpfprof/interp_names.h"
#include "bpfprof/profile_read.h"
#include "bpfprof/util.h"

#define MAX_INFLATED (1u << 30)	/* a pprof bigger than this is not read */
#define MAX_LINES 256		/* inlined calls in one location */
#define MAX_COUNT (1ULL << 53)	/* a sample's count: beyond, writers' arithmetic overflows */
#define KERNEL_MAPPING "[kernel.kallsyms]"	/* as bpfprof's pprof names the kernel */
#define JIT_MAPPING "[jit]"			/* a folded file's JIT frames ("_[j]") */

static int bad(char why[READ_WHY], const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(char why[READ_WHY], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, READ_WHY, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A location of one function line per frame, interned by (name, kind) or by its lines. */
static uint32_t frames_location(struct profile *p, const uint32_t *functions, uint16_t n,
				enum frame_kind kind)
{
	struct prof_line lines[MAX_LINES];
	uint32_t loc, mapping = 0;
	uint64_t address;
	uint16_t i;

	/*
	 * An address made of the kind and the functions, so equal frames meet
	 * in one location: exact for one function (the high bit set), a hash
	 * of them all for an inline chain.
	 */
	for (i = 0; i < n; i++) {
		lines[i].function = functions[i];
		lines[i].line = 0;
	}
	if (n == 1)
		address = 1ULL << 63 | (uint64_t)kind << 32 | functions[0];
	else
		address = hash_bytes(functions, n * sizeof(*functions), 0x6b696e64ULL + kind) &
			  ~(1ULL << 63);
	/* Kernel and JIT frames in a mapping named so, as a pprof says them. */
	if (kind == FRAME_KERNEL || kind == FRAME_JIT) {
		struct prof_mapping m = { 0 };

		m.file = profile_string(p, kind == FRAME_KERNEL ? KERNEL_MAPPING : JIT_MAPPING);
		m.limit = UINT64_MAX;
		mapping = profile_mapping(p, &m);
	}
	loc = profile_location_find(p, mapping, address);
	return loc != ITAB_NONE ? loc : profile_location_add(p, mapping, address, kind, lines, n);
}

/* Folded ------------------------------------------------------------------------------- */

static bool strip(const char **s, size_t *n, const char *mark)
{
	size_t m = strlen(mark);

	if (*n < m || memcmp(*s + *n - m, mark, m))
		return false;
	*n -= m;
	return true;
}

/*
 * A whole number made of the digits from s to end (the line's end: the
 * buffer need not end after it, so no strtoull), not past MAX_COUNT.
 */
static bool parse_count(const char *s, const char *end, unsigned long long *v)
{
	for (*v = 0; s < end; s++) {
		if (*s < '0' || *s > '9' || *v > MAX_COUNT)
			return false;
		*v = *v * 10 + (unsigned)(*s - '0');
	}
	return true;
}

/* One line: "comm;frame;...;frame COUNT". */
static int folded_line(struct profile *p, const char *s, size_t n, size_t lineno,
		       char why[READ_WHY])
{
	uint32_t *stack = NULL, nstack = 0, alloc = 0, functions[MAX_LINES], f;
	const char *sp = memrchr(s, ' ', n), *field, *end;
	struct prof_sample smp = { 0 };
	uint16_t nlines = 0;
	enum frame_kind kind = FRAME_USER;
	unsigned long long count;
	size_t len;
	int err = 0;

	if (!sp || sp == s)
		return bad(why, "line %zu: no \"stack count\"", lineno);
	if (sp + 1 == s + n || !parse_count(sp + 1, s + n, &count))
		return bad(why, "line %zu: the count is not a whole number", lineno);
	if (count > MAX_COUNT)
		return bad(why, "line %zu: a count beyond 2^53", lineno);
	end = memchr(s, ';', sp - s);
	smp.comm = strtab_intern_n(&p->strings, s, (end ? end : sp) - s);
	/* Frames root first: a frame without "_[i]" begins a location, its inlined calls follow. */
	for (field = end ? end + 1 : sp; field < sp; field = end + 1) {
		end = memchr(field, ';', sp - field);
		end = end ? end : sp;
		len = end - field;
		if (!len) {
			err = bad(why, "line %zu: an empty frame", lineno);
			break;
		}
		/* An inlined call needs a frame to be inlined into: a first "_[i]" is a name. */
		if (!nlines || !strip(&field, &len, "_[i]")) {
			if (nlines) {
				ALLOC_GROW(stack, nstack + 1, alloc);
				stack[nstack++] = frames_location(p, functions, nlines, kind);
			}
			nlines = 0;
			kind = strip(&field, &len, "_[k]") ? FRAME_KERNEL
			     : strip(&field, &len, "_[j]") ? FRAME_JIT
			     : field[0] == '[' ? FRAME_SPECIAL : FRAME_USER;
		}
		if (nlines == MAX_LINES) {
			err = bad(why, "line %zu: more than %d inlined calls in a frame", lineno, MAX_LINES);
			break;
		}
		/* Lines are innermost first: each inlined call goes before its caller. */
		f = strtab_intern_n(&p->strings, field, len);
		memmove(functions + 1, functions, nlines * sizeof(*functions));
		functions[0] = profile_function(p, f, f, 0);
		nlines++;
	}
	if (!err && nlines) {
		ALLOC_GROW(stack, nstack + 1, alloc);
		stack[nstack++] = frames_location(p, functions, nlines, kind);
	}
	if (!err) {
		/* The profile's stacks are leaf first. */
		for (f = 0; f < nstack / 2; f++) {
			uint32_t t = stack[f];

			stack[f] = stack[nstack - 1 - f];
			stack[nstack - 1 - f] = t;
		}
		smp.stack = profile_stack(p, stack ? stack : &f, nstack);	/* no frames: none read */
		smp.count = count;
		profile_add_sample(p, &smp);
	}
	free(stack);
	return err;
}

int profile_read_folded(struct profile *p, const char *buf, size_t len, char why[READ_WHY])
{
	const char *s = buf, *end = buf + len, *nl;
	size_t lineno = 0;
	int err;

	while (s < end) {
		nl = memchr(s, '\n', end - s);
		lineno++;
		if ((nl ? nl : end) > s && (err = folded_line(p, s, (nl ? nl : end) - s, lineno, why)))
			return err;
		s = nl ? nl + 1 : end;
	}
	return 0;
}

/* pprof ---------------------------------------------------------------------------------- */

struct pb {
	const uint8_t *p, *end;
};

static bool pb_varint(struct pb *r, uint64_t *v)
{
	unsigned shift;

	for (*v = 0, shift = 0; r->p < r->end && shift < 64; shift += 7) {
		uint8_t b = *r->p++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* The next field: its number, and its value (varint) or its bytes (length-delimited). */
static bool pb_field(struct pb *r, uint32_t *num, uint64_t *v, struct pb *bytes, bool *ok)
{
	uint64_t key, len;

	*ok = false;
	if (r->p >= r->end)
		return false;
	if (!pb_varint(r, &key))
		return true;
	*num = key >> 3;
	bytes->p = bytes->end = NULL;
	switch (key & 7) {
	case 0:
		*ok = pb_varint(r, v);
		return true;
	case 1:
		if (r->end - r->p < 8)
			return true;
		memcpy(v, r->p, 8);
		r->p += 8;
		break;
	case 2:
		if (!pb_varint(r, &len) || len > (uint64_t)(r->end - r->p))
			return true;
		bytes->p = r->p;
		bytes->end = r->p + len;
		r->p += len;
		break;
	case 5:
		if (r->end - r->p < 4)
			return true;
		*v = 0;
		memcpy(v, r->p, 4);
		r->p += 4;
		break;
	default:
		return true;
	}
	*ok = true;
	return true;
}

/* A repeated integer: packed (bytes) or one value. */
static bool pb_each(const struct pb *bytes, uint64_t v, uint64_t **out, uint32_t *n, uint32_t *alloc)
{
	struct pb r = *bytes;

	if (!bytes->p) {
		ALLOC_GROW(*out, *n + 1, *alloc);
		(*out)[(*n)++] = v;
		return true;
	}
	while (r.p < r.end) {
		ALLOC_GROW(*out, *n + 1, *alloc);
		if (!pb_varint(&r, &(*out)[(*n)++]))
			return false;
	}
	return true;
}

struct slices {
	struct pb *v;
	uint32_t n, alloc;
};

static void add_slice(struct slices *s, const struct pb *b)
{
	ALLOC_GROW(s->v, s->n + 1, s->alloc);
	s->v[s->n++] = *b;
}

/* An id's index among entries with ids (ids[i]); ITAB_NONE if none. */
static uint32_t by_id(const uint64_t *ids, uint32_t n, uint64_t id)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ids[mid] == id)
			return mid;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return ITAB_NONE;
}

/* A pprof Mapping, as its frames are named. */
struct pp_mapping {
	uint64_t start, offset;
	uint32_t file;		/* our string */
	uint8_t kind;		/* FRAME_KERNEL, FRAME_JIT (for named frames), or FRAME_USER */
};

/*
 * A pprof Function: ours (by its names alone), its file and first line (our
 * string, 0 if none), and ours as a runtime's frame names it (ITAB_NONE: not made yet).
 */
struct pp_function {
	uint32_t ours, file, line, runtime;
};

struct pprof {
	struct slices strings, types, samples, mappings, locations, functions;
	uint64_t *fn_ids, *loc_ids, *map_ids;
	uint32_t *loc_of;	/* our location per entry */
	struct pp_function *fns;
	struct pp_mapping *maps;
	int64_t duration, time;
	uint64_t per;		/* the value read, divided by this, is the folded output's count */
};

static const char *pp_str(const struct pprof *pp, uint64_t i, size_t *len)
{
	if (i >= pp->strings.n) {
		*len = 0;
		return "";
	}
	*len = pp->strings.v[i].end - pp->strings.v[i].p;
	return (const char *)pp->strings.v[i].p;
}

static bool pp_str_is(const struct pprof *pp, uint64_t i, const char *s)
{
	size_t len;
	const char *t = pp_str(pp, i, &len);

	return len == strlen(s) && !memcmp(t, s, len);
}

/* Ids of entries (field 1 of each), sorted, with their place; false if not increasing. */
static bool ids_of(const struct slices *s, uint64_t **ids)
{
	uint32_t i, num;
	uint64_t v;
	struct pb r, b;
	bool ok;

	*ids = xcalloc(s->n + 1, sizeof(**ids));
	for (i = 0; i < s->n; i++) {
		r = s->v[i];
		while (pb_field(&r, &num, &v, &b, &ok))
			if (ok && num == 1)
				(*ids)[i] = v;
		if (!(*ids)[i] || (i && (*ids)[i] <= (*ids)[i - 1]))
			return false;
	}
	return true;
}

/* The top-level fields: each table's entries as byte slices, the time and duration. */
static int pprof_tables(struct pprof *pp, const uint8_t *buf, size_t len, char why[READ_WHY])
{
	struct pb r = { buf, buf + len }, b;
	uint32_t num;
	uint64_t v;
	bool ok;

	while (pb_field(&r, &num, &v, &b, &ok)) {
		if (!ok || (num >= 1 && num <= 6 && !b.p))
			return bad(why, "not a pprof profile: a malformed field at byte %zu",
				   (size_t)(r.p - buf));
		switch (num) {
		case 1: add_slice(&pp->types, &b); break;
		case 2: add_slice(&pp->samples, &b); break;
		case 3: add_slice(&pp->mappings, &b); break;
		case 4: add_slice(&pp->locations, &b); break;
		case 5: add_slice(&pp->functions, &b); break;
		case 6: add_slice(&pp->strings, &b); break;
		case 9: pp->time = v; break;
		case 10: pp->duration = v; break;
		}
	}
	if (!pp->strings.n || !pp_str_is(pp, 0, ""))
		return bad(why, "not a pprof profile: no string table starting with \"\"");
	if (!ids_of(&pp->functions, &pp->fn_ids) || !ids_of(&pp->locations, &pp->loc_ids) ||
	    !ids_of(&pp->mappings, &pp->map_ids))
		return bad(why, "pprof: ids that are 0 or not increasing (bpfprof reads its own order)");
	return 0;
}

/*
 * The value to read: "samples" if the profile counts them, else the first.
 * bpfprof's --off-cpu pprof has one, off_cpu in nanoseconds, where its
 * folded output counts microseconds: pp->per 1000 then, else 1.
 */
static uint32_t pprof_value_index(struct pprof *pp)
{
	uint32_t num, i, value = 0;
	uint64_t v, type, unit;
	bool ok, samples = false;
	struct pb b;

	pp->per = 1;
	for (i = 0; i < pp->types.n; i++) {
		struct pb t = pp->types.v[i];

		type = unit = 0;
		while (pb_field(&t, &num, &v, &b, &ok)) {
			if (ok && num == 1)
				type = v;
			if (ok && num == 2)
				unit = v;
		}
		if (pp_str_is(pp, type, "samples")) {
			value = i;
			samples = true;
		}
		if (!i && pp_str_is(pp, type, "off_cpu") && pp_str_is(pp, unit, "nanoseconds"))
			pp->per = 1000;
	}
	if (samples)
		pp->per = 1;
	return value;
}

static bool pp_str_starts(const struct pprof *pp, uint64_t i, const char *s)
{
	size_t len;
	const char *t = pp_str(pp, i, &len);

	return len >= strlen(s) && !memcmp(t, s, strlen(s));
}

/*
 * Mappings: where they start, their offset and file. The kernel's by name,
 * or by starting in the kernel's half of the address space (its modules',
 * "[bpf]"), the vsyscall page aside; JIT code's by name: bpfprof's "[jit]",
 * or anonymous memory, where what a perf map names is JIT code.
 */
static void pprof_mappings(struct profile *p, struct pprof *pp)
{
	uint32_t num, i;
	uint64_t v;
	struct pb b;
	bool ok;

	pp->maps = xcalloc(pp->mappings.n + 1, sizeof(*pp->maps));
	for (i = 0; i < pp->mappings.n; i++) {
		struct pb m = pp->mappings.v[i];
		struct pp_mapping *pm = &pp->maps[i];
		const char *s;
		size_t n;

		while (pb_field(&m, &num, &v, &b, &ok)) {
			if (!ok)
				continue;
			if (num == 2)
				pm->start = v;
			if (num == 4)
				pm->offset = v;
			if (num != 5)
				continue;
			s = pp_str(pp, v, &n);
			pm->file = strtab_intern_n(&p->strings, s, n);
			pm->kind = pp_str_is(pp, v, KERNEL_MAPPING) ? FRAME_KERNEL
				 : pp_str_is(pp, v, JIT_MAPPING) || pp_str_starts(pp, v, "[anon") ||
				   pp_str_starts(pp, v, "//anon") ? FRAME_JIT : FRAME_USER;
		}
		if (pm->start >> 63 && strcmp(profile_str(p, pm->file), "[vsyscall]"))
			pm->kind = FRAME_KERNEL;
	}
}

/*
 * Functions: ours for each entry, by its names (a native frame is named by
 * its name alone, wherever its source), and its file and first line.
 */
static void pprof_functions(struct profile *p, struct pprof *pp)
{
	uint32_t num, i;
	uint64_t v;
	struct pb b;
	bool ok;

	pp->fns = xcalloc(pp->functions.n + 1, sizeof(*pp->fns));
	for (i = 0; i < pp->functions.n; i++) {
		struct pb f = pp->functions.v[i];
		uint64_t name = 0, sys = 0, file = 0, line = 0;
		size_t n1, n2, n3;
		const char *s1, *s2, *s3;

		while (pb_field(&f, &num, &v, &b, &ok))
			if (ok)
				switch (num) {
				case 2: name = v; break;
				case 3: sys = v; break;
				case 4: file = v; break;
				case 5: line = v; break;
				}
		s1 = pp_str(pp, name, &n1);
		s2 = pp_str(pp, sys, &n2);
		s3 = pp_str(pp, file, &n3);
		pp->fns[i].ours = profile_function(p, strtab_intern_n(&p->strings, s1, n1),
						   strtab_intern_n(&p->strings, s2, n2), 0);
		pp->fns[i].file = strtab_intern_n(&p->strings, s3, n3);
		pp->fns[i].line = (uint32_t)line;
		pp->fns[i].runtime = ITAB_NONE;
	}
}

/*
 * Entry f's function as a runtime's frame's: bpfprof puts an interpreter's
 * functions in no mapping, with their file and first line, and names them
 * "name (file:first)" (interp_frame_name); a function without a file keeps
 * its name. Named so, as the folded reader reads the name, once.
 */
static uint32_t runtime_function(struct profile *p, struct pprof *pp, uint32_t f)
{
	struct pp_function *fn = &pp->fns[f];
	struct strbuf sb;
	uint32_t s;

	if (fn->runtime != ITAB_NONE)
		return fn->runtime;
	if (!fn->file)
		return fn->runtime = fn->ours;
	strbuf_init(&sb);
	interp_frame_name(&sb, profile_str(p, p->functions[fn->ours].name), profile_str(p, fn->file),
			  fn->line);
	s = profile_string(p, sb.buf);
	strbuf_release(&sb);
	return fn->runtime = profile_function(p, s, s, 0);
}

/*
 * A location of n lines (fns: pprof function entries, innermost first) at
 * address in mapping m (ITAB_NONE: none), named as bpfprof's folded output
 * names it: a runtime's frame in no mapping with its file and line; one
 * with no lines "[FILE+0xOFFSET]" in a mapping, else "[unknown]"; the kind
 * by the mapping, a user frame whose name starts with '[' made up, as the
 * folded reader takes it.
 */
static uint32_t pprof_location(struct profile *p, struct pprof *pp, uint32_t m, uint64_t address,
			       const uint32_t *fns, uint16_t n)
{
	const struct pp_mapping *pm = m != ITAB_NONE ? &pp->maps[m] : NULL;
	enum frame_kind kind = pm ? pm->kind : FRAME_USER;
	uint32_t functions[MAX_LINES], s;
	struct strbuf sb;
	uint16_t i;

	for (i = 0; i < n; i++)
		functions[i] = pm ? pp->fns[fns[i]].ours : runtime_function(p, pp, fns[i]);
	if (!n) {
		strbuf_init(&sb);
		if (pm && pm->file)
			profile_offset_name(&sb, profile_str(p, pm->file), address - pm->start + pm->offset);
		else
			strbuf_addstr(&sb, "[unknown]");
		s = profile_string(p, sb.buf);
		strbuf_release(&sb);
		functions[n++] = profile_function(p, s, s, 0);
		if (kind == FRAME_JIT)	/* a perf map named none of it */
			kind = FRAME_USER;
	}
	if (kind == FRAME_USER && profile_str(p, p->functions[functions[n - 1]].name)[0] == '[')
		kind = FRAME_SPECIAL;
	return frames_location(p, functions, n, kind);
}

/* Locations: their mapping, address and lines' functions; ours for each entry. */
static void pprof_locations(struct profile *p, struct pprof *pp)
{
	uint32_t num, i;
	uint64_t v;
	struct pb b;
	bool ok;

	pp->loc_of = xcalloc(pp->locations.n + 1, sizeof(*pp->loc_of));
	for (i = 0; i < pp->locations.n; i++) {
		struct pb l = pp->locations.v[i], ln;
		uint32_t fns[MAX_LINES], m = ITAB_NONE, f;
		uint64_t address = 0;
		uint16_t n = 0;

		while (pb_field(&l, &num, &v, &b, &ok)) {
			if (!ok)
				continue;
			if (num == 2)
				m = by_id(pp->map_ids, pp->mappings.n, v);
			if (num == 3)
				address = v;
			if (num != 4 || !b.p)
				continue;
			ln = b;
			while (pb_field(&ln, &num, &v, &b, &ok))
				if (ok && num == 1 && n < MAX_LINES &&
				    (f = by_id(pp->fn_ids, pp->functions.n, v)) != ITAB_NONE)
					fns[n++] = f;
		}
		pp->loc_of[i] = pprof_location(p, pp, m, address, fns, n);
	}
}

/* A sample's label (lb): the thread's comm, pid or tid into smp; others ignored. */
static void pprof_label(struct profile *p, const struct pprof *pp, struct pb lb,
			struct prof_sample *smp)
{
	uint64_t key = 0, str = 0, numv = 0, v;
	uint32_t num;
	struct pb b;
	bool ok;

	while (pb_field(&lb, &num, &v, &b, &ok))
		if (ok)
			switch (num) {
			case 1: key = v; break;
			case 2: str = v; break;
			case 3: numv = v; break;
			}
	if (pp_str_is(pp, key, "comm")) {
		size_t n;
		const char *c = pp_str(pp, str, &n);

		smp->comm = strtab_intern_n(&p->strings, c, n);
	} else if (pp_str_is(pp, key, "pid")) {
		smp->pid = (uint32_t)numv;
	} else if (pp_str_is(pp, key, "tid")) {
		smp->tid = (uint32_t)numv;
	}
}

/* One sample: its locations (leaf first, as ours), value number value, the thread's labels. */
static int pprof_sample(struct profile *p, const struct pprof *pp, struct pb s, uint32_t value,
			char why[READ_WHY])
{
	uint64_t *locs = NULL, *values = NULL, v;
	uint32_t nl = 0, nv = 0, al = 0, av = 0, *stack = NULL, num, j;
	struct prof_sample smp = { 0 };
	struct pb b;
	bool ok;
	int err = 0;

	while (pb_field(&s, &num, &v, &b, &ok)) {
		if (!ok)
			continue;
		if ((num == 1 && !pb_each(&b, v, &locs, &nl, &al)) ||
		    (num == 2 && !pb_each(&b, v, &values, &nv, &av))) {
			err = bad(why, "pprof: a sample's locations or values are malformed");
			goto out;
		}
		if (num == 3 && b.p)
			pprof_label(p, pp, b, &smp);
	}
	stack = xmalloc((nl + 1) * sizeof(*stack));
	for (j = 0; j < nl; j++) {
		uint32_t at = by_id(pp->loc_ids, pp->locations.n, locs[j]);

		if (at == ITAB_NONE) {
			bad(why, "pprof: a sample names location %llu, which it does not have",
			    (unsigned long long)locs[j]);
			err = -EINVAL;
			goto out;
		}
		stack[j] = pp->loc_of[at];
	}
	smp.stack = profile_stack(p, stack, nl);
	smp.count = value < nv ? values[value] : 0;
	if (smp.count > MAX_COUNT) {	/* negative ones too, as they are unsigned */
		err = bad(why, "pprof: a sample's value is negative or beyond 2^53");
		goto out;
	}
	smp.count /= pp->per;
	if (smp.count)
		profile_add_sample(p, &smp);
out:
	free(stack);
	free(locs);
	free(values);
	return err;
}

static int pprof_parse(struct profile *p, struct pprof *pp, const uint8_t *buf, size_t len,
		       char why[READ_WHY])
{
	uint32_t value, i;
	int err = pprof_tables(pp, buf, len, why);

	if (err)
		return err;
	value = pprof_value_index(pp);
	pprof_mappings(p, pp);
	pprof_functions(p, pp);
	pprof_locations(p, pp);
	for (i = 0; i < pp->samples.n; i++)
		if ((err = pprof_sample(p, pp, pp->samples.v[i], value, why)))
			return err;
	p->duration_ns = pp->duration > 0 ? pp->duration : 0;
	p->start_wall_ns = pp->time > 0 ? pp->time : 0;
	return 0;
}

/* buf inflated if it is gzipped: into *out (malloc'd), or buf itself. */
static int gunzip(const void *buf, size_t len, uint8_t **out, size_t *out_len, char why[READ_WHY])
{
	z_stream z = { 0 };
	size_t cap = len * 4 + 4096;
	int rc;

	*out = NULL;
	if (len < 2 || ((const uint8_t *)buf)[0] != 0x1f || ((const uint8_t *)buf)[1] != 0x8b)
		return 0;
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return bad(why, "cannot inflate: zlib will not start");
	*out = xmalloc(cap);
	z.next_in = (Bytef *)buf;
	z.avail_in = len;
	do {
		if (z.total_out == cap) {
			if (cap >= MAX_INFLATED) {
				inflateEnd(&z);
				return bad(why, "more than %u MiB inflated: not read", MAX_INFLATED >> 20);
			}
			cap *= 2;
			*out = xrealloc(*out, cap);
		}
		z.next_out = *out + z.total_out;
		z.avail_out = cap - z.total_out;
		rc = inflate(&z, Z_NO_FLUSH);
	} while (rc == Z_OK);
	*out_len = z.total_out;
	inflateEnd(&z);
	if (rc != Z_STREAM_END)
		return bad(why, "gzip data that does not inflate (%s)", z.msg ? z.msg : "cut short");
	return 0;
}

int profile_read_pprof(struct profile *p, const void *buf, size_t len, char why[READ_WHY])
{
	struct pprof pp = { 0 };
	uint8_t *raw;
	size_t raw_len = 0;
	int err = gunzip(buf, len, &raw, &raw_len, why);

	if (!err)
		err = pprof_parse(p, &pp, raw ? raw : buf, raw ? raw_len : len, why);
	free(raw);
	free(pp.strings.v);
	free(pp.types.v);
	free(pp.samples.v);
	free(pp.mappings.v);
	free(pp.locations.v);
	free(pp.functions.v);
	free(pp.fn_ids);
	free(pp.loc_ids);
	free(pp.map_ids);
	free(pp.loc_of);
	free(pp.fns);
	free(pp.maps);
	return err;
}

int profile_read(struct profile *p, const void *buf, size_t len, char why[READ_WHY])
{
	const uint8_t *b = buf;
	size_t i;

	/* gzip, or a protobuf's first field (sample_type, 1, length-delimited): pprof. */
	if (len >= 2 && ((b[0] == 0x1f && b[1] == 0x8b) || b[0] == 0x0a))
		return profile_read_pprof(p, buf, len, why);
	for (i = 0; i < len && i < 4096; i++)
		if (!b[i])
			return bad(why, "neither folded text nor pprof (a NUL byte at %zu)", i);
	return profile_read_folded(p, buf, len, why);
}
