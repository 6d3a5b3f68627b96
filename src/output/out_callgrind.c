// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * callgrind output, for callgrind_annotate and kcachegrind.
 *
 * Every sample is the path the folded writer prints: the thread's name,
 * user frames root first, then kernel frames. Each distinct (name, file)
 * on a path is one callgrind function, and every cost counts samples:
 *
 *   self       samples whose leaf is the function (at that line)
 *   calls=     samples in which the call site caller -> callee occurs, once
 *              per sample however often recursion repeats it
 *   inclusive  samples in which that call is the callee's outermost entry
 *
 * Both readers take a called function's inclusive cost as the sum of its
 * incoming calls' costs. Charging each sample to the outermost call only
 * keeps that sum at "samples the function is in" under recursion: an inner
 * recursive call stays in the graph with its calls= but costs 0. Without
 * recursion, a call's inclusive cost equals its calls=.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/intern.h"
#include "bpfprof/output.h"

#define NO_FUNC ITAB_NONE

struct cg_func {
	uint32_t name, file;		/* ids in cg.names, cg.files */
};

struct cg_self {
	uint32_t func, line;
	uint64_t count;
};

struct cg_call {
	uint32_t caller, line, callee;	/* line: the caller's */
	uint32_t mark;			/* the last path that counted calls */
	uint64_t calls, inclusive;
};

/* Samples that print the same path: the same root and stack. */
struct cg_path {
	uint32_t root;			/* NO_FUNC: no thread name (lost samples) */
	uint32_t stack;
	uint64_t count;
};

struct cg_frame {
	uint32_t func, line;
};

struct cg {
	const struct profile *p;
	struct strtab names, files;

	struct cg_func *funcs;
	uint32_t *func_mark;		/* the last path the function was seen on */
	uint32_t nr_funcs, funcs_alloc, marks_alloc;
	struct itab func_index;

	/* The function of each location line, of each unnamed location, of each comm. */
	uint32_t *line_func, *loc_func, *comm_func;

	struct cg_self *selfs;
	uint32_t nr_selfs, selfs_alloc;
	struct itab self_index;

	struct cg_call *calls;
	uint32_t nr_calls, calls_alloc;
	struct itab call_index;

	struct cg_path *paths;
	uint32_t nr_paths, paths_alloc;
	struct itab path_index;

	struct cg_frame *seq;		/* the path being walked, root first */
	uint32_t seq_alloc;
	uint32_t serial;		/* numbers the paths walked, from 1 */

	uint32_t *rank;			/* function id -> place in the output */
	struct strbuf raw, clean;
};

static uint32_t *none_array(uint32_t n)
{
	uint32_t *a = xmalloc((n ? n : 1) * sizeof(*a));

	memset(a, 0xff, n * sizeof(*a));
	return a;
}

/*
 * Readers take "fn=(id) name" with the spaces after "(id)" skipped and a
 * line per entry: no control character, no leading blank, never empty
 * (an empty name would read as a reference to an earlier id).
 */
static void add_clean(struct strbuf *sb, const char *s, const char *if_empty)
{
	size_t start = sb->len;

	while (*s == ' ' || *s == '\t')
		s++;
	for (; *s; s++) {
		unsigned char ch = *s;

		strbuf_addch(sb, ch < 0x20 || ch == 0x7f ? '?' : ch);
	}
	if (sb->len == start)
		strbuf_addstr(sb, if_empty);
}

static bool func_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct cg_func *a = &((const struct cg *)owner)->funcs[idx], *b = key;

	return a->name == b->name && a->file == b->file;
}

/* The function named name in file (NULL or "" when unknown). */
static uint32_t func_intern(struct cg *cg, const char *name, const char *file)
{
	struct cg_func key;
	uint64_t h;
	uint32_t id;

	strbuf_reset(&cg->clean);
	add_clean(&cg->clean, name, "[unknown]");
	key.name = strtab_intern_n(&cg->names, cg->clean.buf, cg->clean.len);
	strbuf_reset(&cg->clean);
	add_clean(&cg->clean, file ? file : "", "???");
	key.file = strtab_intern_n(&cg->files, cg->clean.buf, cg->clean.len);

	h = hash_mix(key.name, key.file);
	id = itab_find(&cg->func_index, h, func_eq, cg, &key);
	if (id != ITAB_NONE)
		return id;
	ALLOC_GROW(cg->funcs, cg->nr_funcs + 1, cg->funcs_alloc);
	ALLOC_GROW(cg->func_mark, cg->nr_funcs + 1, cg->marks_alloc);
	id = cg->nr_funcs++;
	cg->funcs[id] = key;
	cg->func_mark[id] = 0;
	itab_insert(&cg->func_index, h, id);
	return id;
}


/* The function of line j of location id (j == 0 for an unnamed location). */
static uint32_t frame_func(struct cg *cg, uint32_t id, uint32_t j)
{
	const struct profile *p = cg->p;
	const struct prof_location *loc = &p->locations[id];
	uint32_t *slot = j < loc->nlines ? &cg->line_func[loc->first_line + j] : &cg->loc_func[id];
	const char *file = NULL;

	if (*slot != NO_FUNC)
		return *slot;
	strbuf_reset(&cg->raw);
	profile_frame_name(p, id, j, &cg->raw);
	/* The folded marks, so that kernel and user names never merge. */
	strbuf_addstr(&cg->raw, frame_kind_suffix(loc->kind));
	if (j < loc->nlines) {
		uint32_t fn = p->lines[loc->first_line + j].function;

		file = profile_str(p, p->functions[fn].filename);
	}
	*slot = func_intern(cg, cg->raw.buf, file);
	return *slot;
}

/* The root frame of a sample, as the folded writer names it. */
static uint32_t root_func(struct cg *cg, const struct prof_sample *s, bool per_pid)
{
	const char *comm = profile_str(cg->p, s->comm);
	uint32_t f;

	if (!*comm)
		return NO_FUNC;
	if (!per_pid && cg->comm_func[s->comm] != NO_FUNC)
		return cg->comm_func[s->comm];
	strbuf_reset(&cg->raw);
	strbuf_addstr(&cg->raw, comm);
	if (per_pid)
		strbuf_addf(&cg->raw, "-%u", s->pid);
	f = func_intern(cg, cg->raw.buf, NULL);
	if (!per_pid)
		cg->comm_func[s->comm] = f;
	return f;
}

static bool path_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct cg_path *a = &((const struct cg *)owner)->paths[idx], *b = key;

	return a->root == b->root && a->stack == b->stack;
}

static void path_add(struct cg *cg, uint32_t root, uint32_t stack, uint64_t count)
{
	struct cg_path key = { root, stack, 0 };
	uint64_t h = hash_mix(root, stack);
	uint32_t id = itab_find(&cg->path_index, h, path_eq, cg, &key);

	if (id == ITAB_NONE) {
		ALLOC_GROW(cg->paths, cg->nr_paths + 1, cg->paths_alloc);
		id = cg->nr_paths++;
		cg->paths[id] = key;
		itab_insert(&cg->path_index, h, id);
	}
	cg->paths[id].count += count;
}

static bool self_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct cg_self *a = &((const struct cg *)owner)->selfs[idx], *b = key;

	return a->func == b->func && a->line == b->line;
}

static void self_add(struct cg *cg, const struct cg_frame *f, uint64_t count)
{
	struct cg_self key = { f->func, f->line, 0 };
	uint64_t h = hash_mix(f->func, f->line);
	uint32_t id = itab_find(&cg->self_index, h, self_eq, cg, &key);

	if (id == ITAB_NONE) {
		ALLOC_GROW(cg->selfs, cg->nr_selfs + 1, cg->selfs_alloc);
		id = cg->nr_selfs++;
		cg->selfs[id] = key;
		itab_insert(&cg->self_index, h, id);
	}
	cg->selfs[id].count += count;
}

static bool call_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct cg_call *a = &((const struct cg *)owner)->calls[idx], *b = key;

	return a->caller == b->caller && a->line == b->line && a->callee == b->callee;
}

static struct cg_call *call_get(struct cg *cg, const struct cg_frame *from, uint32_t callee)
{
	struct cg_call key = { from->func, from->line, callee, 0, 0, 0 };
	uint64_t h = hash_mix(hash_mix(from->func, callee), from->line);
	uint32_t id = itab_find(&cg->call_index, h, call_eq, cg, &key);

	if (id == ITAB_NONE) {
		ALLOC_GROW(cg->calls, cg->nr_calls + 1, cg->calls_alloc);
		id = cg->nr_calls++;
		cg->calls[id] = key;
		itab_insert(&cg->call_index, h, id);
	}
	return &cg->calls[id];
}

static void seq_push(struct cg *cg, uint32_t *n, uint32_t func, uint32_t line)
{
	ALLOC_GROW(cg->seq, *n + 1, cg->seq_alloc);
	cg->seq[*n].func = func;
	cg->seq[*n].line = line;
	(*n)++;
}

/* Charges one path's samples to its leaf and to the calls along it. */
static void path_walk(struct cg *cg, const struct cg_path *path)
{
	const struct profile *p = cg->p;
	uint32_t depth, i, j, k, n = 0, serial = ++cg->serial;
	const uint32_t *frames = profile_stack_frames(p, path->stack, &depth);

	if (path->root != NO_FUNC)
		seq_push(cg, &n, path->root, 0);
	for (i = depth; i-- > 0;) {
		const struct prof_location *loc = &p->locations[frames[i]];

		if (!loc->nlines) {
			seq_push(cg, &n, frame_func(cg, frames[i], 0), 0);
			continue;
		}
		/* Lines are innermost first: the outermost is the caller. */
		for (j = loc->nlines; j-- > 0;) {
			const struct prof_line *l = &p->lines[loc->first_line + j];

			/* No line (an interpreter's frame between instructions): where it begins. */
			seq_push(cg, &n, frame_func(cg, frames[i], j),
				 l->line ?: p->functions[l->function].start_line);
		}
	}
	if (!n)
		seq_push(cg, &n, func_intern(cg, "[unknown]", NULL), 0);

	self_add(cg, &cg->seq[n - 1], path->count);
	for (k = 0; k < n; k++) {
		uint32_t f = cg->seq[k].func;
		bool outermost = cg->func_mark[f] != serial;
		struct cg_call *c;

		cg->func_mark[f] = serial;
		if (!k)
			continue;
		c = call_get(cg, &cg->seq[k - 1], f);
		if (c->mark != serial) {
			c->mark = serial;
			c->calls += path->count;
		}
		if (outermost)
			c->inclusive += path->count;
	}
}

/*
 * callgrind_annotate annotates each source file it can open from the lines
 * of its self costs, line 0 dropped; a file with none left (costs only at
 * line 0, or only calls: a caller all of whose samples are in its callees)
 * is read as an empty list, and it warns. Such a file gets a self cost of
 * 0 at its first call's line; one with no line at all is written as "???",
 * the name valgrind gives code of no known source. Every cost stays.
 */
static void fit_files_to_annotate(struct cg *cg)
{
	uint32_t unknown = strtab_intern_n(&cg->files, "???", 3);
	bool *lined = xcalloc(cg->files.nr, sizeof(*lined));
	uint32_t i, nr_calls = cg->nr_calls;

	for (i = 0; i < cg->nr_selfs; i++)
		if (cg->selfs[i].line)
			lined[cg->funcs[cg->selfs[i].func].file] = true;
	for (i = 0; i < nr_calls; i++) {
		const struct cg_call *c = &cg->calls[i];
		struct cg_frame at = { c->caller, c->line };

		if (c->line && !lined[cg->funcs[c->caller].file]) {
			self_add(cg, &at, 0);
			lined[cg->funcs[c->caller].file] = true;
		}
	}
	for (i = 0; i < cg->nr_funcs; i++)
		if (!lined[cg->funcs[i].file])
			cg->funcs[i].file = unknown;
	free(lined);
}

static int func_cmp(const void *a, const void *b, void *arg)
{
	const struct cg *cg = arg;
	const struct cg_func *x = &cg->funcs[*(const uint32_t *)a];
	const struct cg_func *y = &cg->funcs[*(const uint32_t *)b];
	int d = strcmp(strtab_get(&cg->files, x->file), strtab_get(&cg->files, y->file));

	return d ? d : strcmp(strtab_get(&cg->names, x->name), strtab_get(&cg->names, y->name));
}

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

static int self_cmp(const void *a, const void *b, void *arg)
{
	const struct cg *cg = arg;
	const struct cg_self *x = a, *y = b;

	return cmp_u32(cg->rank[x->func], cg->rank[y->func]) ?: cmp_u32(x->line, y->line);
}

/* Within one caller's calls: by callee, then by the caller's line. */
static int call_cmp(const void *a, const void *b, void *arg)
{
	const struct cg *cg = arg;
	const struct cg_call *x = &cg->calls[*(const uint32_t *)a];
	const struct cg_call *y = &cg->calls[*(const uint32_t *)b];

	return cmp_u32(cg->rank[x->callee], cg->rank[y->callee]) ?: cmp_u32(x->line, y->line);
}

/*
 * The calls in output order, caller by caller: a counting sort on the
 * caller's rank, then each caller's few calls sorted. *first (nr_funcs + 1
 * entries) gets where each rank's calls start.
 */
static uint32_t *order_calls(struct cg *cg, uint32_t **first)
{
	uint32_t *start = xcalloc(cg->nr_funcs + 1, sizeof(*start));
	uint32_t *order = xmalloc((cg->nr_calls ? cg->nr_calls : 1) * sizeof(*order));
	uint32_t *next = xmalloc((cg->nr_funcs ? cg->nr_funcs : 1) * sizeof(*next));
	uint32_t i, r;

	for (i = 0; i < cg->nr_calls; i++)
		start[cg->rank[cg->calls[i].caller] + 1]++;
	for (r = 0; r < cg->nr_funcs; r++) {
		start[r + 1] += start[r];
		next[r] = start[r];
	}
	for (i = 0; i < cg->nr_calls; i++)
		order[next[cg->rank[cg->calls[i].caller]]++] = i;
	for (r = 0; r < cg->nr_funcs; r++)
		qsort_r(order + start[r], start[r + 1] - start[r], sizeof(*order), call_cmp, cg);
	free(next);
	*first = start;
	return order;
}

/* Name compression: "key=(n) name" the first time, "key=(n)" afterwards. */
static void put_name(FILE *out, const char *key, const struct strtab *st, uint32_t id,
		     uint32_t *ids, uint32_t *next)
{
	if (ids[id]) {
		fprintf(out, "%s=(%u)\n", key, ids[id]);
		return;
	}
	ids[id] = ++*next;
	fprintf(out, "%s=(%u) %s\n", key, ids[id], strtab_get(st, id));
}

static void write_header(FILE *out, const struct cg *cg, uint64_t total)
{
	const struct profile *p = cg->p;
	struct strbuf cmd;

	fprintf(out, "# callgrind format\nversion: 1\ncreator: bpfprof %s\n", BPFPROF_VERSION);
	if (p->command_line && *p->command_line) {
		strbuf_init(&cmd);
		add_clean(&cmd, p->command_line, "");
		fprintf(out, "cmd: %s\n", cmd.buf);
		strbuf_release(&cmd);
	}
	if (p->kind == PROFILE_OFF_CPU)
		fprintf(out, "desc: Trigger: threads leaving the CPU, for %.3f s: the time until "
			"they ran again, in microseconds\n", p->duration_ns / 1e9);
	else if (p->kind == PROFILE_WALL)
		fprintf(out, "desc: Trigger: CPU clock at %u Hz per CPU and threads leaving the CPU, "
			"for %.3f s: a sample is %llu ns of wall time, on or off the CPU\n",
			p->frequency, p->duration_ns / 1e9, (unsigned long long)p->period_ns);
	else if (p->frequency)
		fprintf(out, "desc: Trigger: CPU clock at %u Hz per CPU for %.3f s, "
			"a sample is %llu ns of CPU time\n",
			p->frequency, p->duration_ns / 1e9, (unsigned long long)p->period_ns);
	fprintf(out, "positions: line\nevents: %s\nsummary: %llu\n",
		p->kind == PROFILE_OFF_CPU ? "OffCPU_us" : "Samples", (unsigned long long)total);
}

static void write_body(FILE *out, struct cg *cg)
{
	uint32_t *order, *calls, *first, *name_ids, *file_ids, next_name = 0, next_file = 0;
	uint32_t r, i, si = 0, file = NO_FUNC;

	order = xmalloc((cg->nr_funcs ? cg->nr_funcs : 1) * sizeof(*order));
	for (r = 0; r < cg->nr_funcs; r++)
		order[r] = r;
	qsort_r(order, cg->nr_funcs, sizeof(*order), func_cmp, cg);
	cg->rank = xmalloc((cg->nr_funcs ? cg->nr_funcs : 1) * sizeof(*cg->rank));
	for (r = 0; r < cg->nr_funcs; r++)
		cg->rank[order[r]] = r;
	if (cg->nr_selfs)	/* selfs is NULL then, which qsort_r must not get */
		qsort_r(cg->selfs, cg->nr_selfs, sizeof(*cg->selfs), self_cmp, cg);
	calls = order_calls(cg, &first);

	name_ids = xcalloc(cg->names.nr, sizeof(*name_ids));
	file_ids = xcalloc(cg->files.nr, sizeof(*file_ids));
	for (r = 0; r < cg->nr_funcs; r++) {
		const struct cg_func *f = &cg->funcs[order[r]];

		fputc('\n', out);
		if (f->file != file) {
			put_name(out, "fl", &cg->files, f->file, file_ids, &next_file);
			file = f->file;
		}
		put_name(out, "fn", &cg->names, f->name, name_ids, &next_name);
		for (; si < cg->nr_selfs && cg->selfs[si].func == order[r]; si++)
			fprintf(out, "%u %llu\n", cg->selfs[si].line,
				(unsigned long long)cg->selfs[si].count);
		for (i = first[r]; i < first[r + 1]; i++) {
			const struct cg_call *c = &cg->calls[calls[i]];
			const struct cg_func *callee = &cg->funcs[c->callee];

			/* cfl= always: without it readers take the caller's file. */
			put_name(out, "cfl", &cg->files, callee->file, file_ids, &next_file);
			put_name(out, "cfn", &cg->names, callee->name, name_ids, &next_name);
			fprintf(out, "calls=%llu 0\n%u %llu\n", (unsigned long long)c->calls, c->line,
				(unsigned long long)c->inclusive);
		}
	}
	free(name_ids);
	free(file_ids);
	free(calls);
	free(first);
	free(order);
}

int write_callgrind(FILE *out, const struct profile *p, const struct write_options *o)
{
	struct cg cg = { .p = p };
	uint64_t total = 0;
	uint32_t i;
	int err = 0;

	strtab_init(&cg.names);
	strtab_init(&cg.files);
	strbuf_init(&cg.raw);
	strbuf_init(&cg.clean);
	cg.line_func = none_array(p->nr_lines);
	cg.loc_func = none_array(p->nr_locations);
	cg.comm_func = none_array(o->per_pid ? 0 : p->strings.nr);

	/* Threads of one process share stacks: walk each distinct path once. */
	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i];

		if (!s->count)
			continue;
		path_add(&cg, root_func(&cg, s, o->per_pid), s->stack, s->count);
		total += s->count;
	}
	for (i = 0; i < cg.nr_paths; i++)
		path_walk(&cg, &cg.paths[i]);
	fit_files_to_annotate(&cg);

	write_header(out, &cg, total);
	write_body(out, &cg);
	fprintf(out, "\ntotals: %llu\n", (unsigned long long)total);
	if (fflush(out) || ferror(out))
		err = -(errno ? errno : EIO);

	strtab_release(&cg.names);
	strtab_release(&cg.files);
	strbuf_release(&cg.raw);
	strbuf_release(&cg.clean);
	free(cg.funcs);
	free(cg.func_mark);
	itab_release(&cg.func_index);
	free(cg.line_func);
	free(cg.loc_func);
	free(cg.comm_func);
	free(cg.selfs);
	itab_release(&cg.self_index);
	free(cg.calls);
	itab_release(&cg.call_index);
	free(cg.paths);
	itab_release(&cg.path_index);
	free(cg.seq);
	free(cg.rank);
	return err;
}
