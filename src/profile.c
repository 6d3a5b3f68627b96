// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include "bpfprof/profile.h"
#include "bpfprof/interp_names.h"

void profile_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	strtab_init(&p->strings);
	/* Mapping 0 stands for "no mapping". */
	p->mappings = xcalloc(1, sizeof(*p->mappings));
	p->nr_mappings = p->mappings_alloc = 1;
}

/* What profile_fold() builds again: everything but strings, functions and cgroups. */
static void release_rebuilt(struct profile *p)
{
	free(p->mappings);
	itab_release(&p->mapping_index);
	free(p->locations);
	itab_release(&p->location_index);
	free(p->lines);
	free(p->frames);
	free(p->stacks);
	itab_release(&p->stack_index);
	free(p->samples);
	itab_release(&p->sample_index);
}

void profile_release(struct profile *p)
{
	strtab_release(&p->strings);
	release_rebuilt(p);
	free(p->functions);
	itab_release(&p->function_index);
	free(p->cgroups);
	itab_release(&p->cgroup_index);
	free(p->command_line);
	memset(p, 0, sizeof(*p));
}

static size_t itab_bytes(const struct itab *t)
{
	return t->slots ? (size_t)(t->mask + 1) * sizeof(*t->slots) : 0;
}

/* Indexes: all their slots (used all over), between 4/3 and 8/3 of what they index. */
size_t profile_index_bytes(const struct profile *p)
{
	return itab_bytes(&p->strings.index) + itab_bytes(&p->mapping_index) +
	       itab_bytes(&p->function_index) + itab_bytes(&p->location_index) +
	       itab_bytes(&p->stack_index) + itab_bytes(&p->sample_index) +
	       itab_bytes(&p->cgroup_index);
}

/* Arrays count what they use (filled in order). */
size_t profile_bytes(const struct profile *p)
{
	return p->strings.len + p->strings.nr * sizeof(*p->strings.offs) +
	       p->nr_mappings * sizeof(*p->mappings) + p->nr_functions * sizeof(*p->functions) +
	       p->nr_locations * sizeof(*p->locations) + p->nr_lines * sizeof(*p->lines) +
	       p->nr_frames * sizeof(*p->frames) + p->nr_stacks * sizeof(*p->stacks) +
	       p->nr_samples * sizeof(*p->samples) + p->nr_cgroups * sizeof(*p->cgroups) +
	       profile_index_bytes(p);
}

/* Mappings --------------------------------------------------------------- */

static uint64_t mapping_hash(const struct prof_mapping *m)
{
	uint64_t h = hash_mix(m->start, m->limit);

	h = hash_mix(h, m->offset);
	h = hash_mix(h, m->file);
	h = hash_mix(h, m->build_id);
	return hash_mix(h, m->pid);
}

static bool mapping_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct prof_mapping *a = &((const struct profile *)owner)->mappings[idx], *b = key;

	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       a->file == b->file && a->build_id == b->build_id && a->pid == b->pid;
}

uint32_t profile_mapping(struct profile *p, const struct prof_mapping *m)
{
	uint64_t h = mapping_hash(m);
	uint32_t id = itab_find(&p->mapping_index, h, mapping_eq, p, m);

	if (id != ITAB_NONE)
		return id;
	ALLOC_GROW(p->mappings, p->nr_mappings + 1, p->mappings_alloc);
	id = p->nr_mappings++;
	p->mappings[id] = *m;
	p->mappings[id].has_functions = false;
	itab_insert(&p->mapping_index, h, id);
	return id;
}

/* Functions -------------------------------------------------------------- */

static bool function_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct prof_function *a = &((const struct profile *)owner)->functions[idx], *b = key;

	return a->name == b->name && a->system_name == b->system_name && a->filename == b->filename &&
	       a->start_line == b->start_line;
}

uint32_t profile_function(struct profile *p, uint32_t name, uint32_t system_name, uint32_t filename)
{
	return profile_function_at(p, name, system_name, filename, 0);
}

uint32_t profile_function_at(struct profile *p, uint32_t name, uint32_t system_name,
			     uint32_t filename, uint32_t start_line)
{
	struct prof_function f = { name, system_name, filename, start_line };
	uint64_t h = hash_mix(hash_mix(hash_mix(name, system_name), filename), start_line);
	uint32_t id = itab_find(&p->function_index, h, function_eq, p, &f);

	if (id != ITAB_NONE)
		return id;
	ALLOC_GROW(p->functions, p->nr_functions + 1, p->functions_alloc);
	id = p->nr_functions++;
	p->functions[id] = f;
	itab_insert(&p->function_index, h, id);
	return id;
}

/* Locations -------------------------------------------------------------- */

struct location_key {
	uint32_t mapping;
	uint64_t address;
	uint32_t label;
};

static uint64_t location_hash(const struct location_key *k)
{
	return hash_mix(hash_mix(k->address, k->mapping), k->label);
}

static bool location_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct prof_location *a = &((const struct profile *)owner)->locations[idx];
	const struct location_key *b = key;

	return a->mapping == b->mapping && a->address == b->address && a->label == b->label;
}

uint32_t profile_location_find(const struct profile *p, uint32_t mapping, uint64_t address)
{
	struct location_key k = { mapping, address, 0 };

	return itab_find(&p->location_index, location_hash(&k), location_eq, p, &k);
}

/* Gives location id its kind and lines (copied). */
static void set_lines(struct profile *p, uint32_t id, enum frame_kind kind,
		      const struct prof_line *lines, uint16_t nlines)
{
	struct prof_location *loc = &p->locations[id];

	ALLOC_GROW(p->lines, p->nr_lines + nlines, p->lines_alloc);
	if (nlines)
		memcpy(p->lines + p->nr_lines, lines, nlines * sizeof(*lines));
	loc->kind = kind;
	loc->first_line = p->nr_lines;
	loc->nlines = nlines;
	p->nr_lines += nlines;
	if (nlines && loc->mapping)
		p->mappings[loc->mapping].has_functions = true;
}

static uint32_t location_add(struct profile *p, const struct location_key *k, enum frame_kind kind,
			     const struct prof_line *lines, uint16_t nlines)
{
	struct prof_location *loc;
	uint32_t id;

	ALLOC_GROW(p->locations, p->nr_locations + 1, p->locations_alloc);
	id = p->nr_locations++;
	loc = &p->locations[id];
	loc->address = k->address;
	loc->mapping = k->mapping;
	loc->label = k->label;
	set_lines(p, id, kind, lines, nlines);
	itab_insert(&p->location_index, location_hash(k), id);
	return id;
}

uint32_t profile_location_add(struct profile *p, uint32_t mapping, uint64_t address,
			      enum frame_kind kind, const struct prof_line *lines, uint16_t nlines)
{
	struct location_key k = { mapping, address, 0 };

	return location_add(p, &k, kind, lines, nlines);
}

void profile_location_name(struct profile *p, uint32_t id, enum frame_kind kind,
			   const struct prof_line *lines, uint16_t nlines)
{
	set_lines(p, id, kind, lines, nlines);
}

uint32_t profile_special_location(struct profile *p, const char *label)
{
	struct location_key k = { 0, 0, profile_string(p, label) };
	uint32_t id = itab_find(&p->location_index, location_hash(&k), location_eq, p, &k);
	struct prof_line line;

	if (id != ITAB_NONE)
		return id;
	line.function = profile_function(p, k.label, k.label, 0);
	line.line = 0;
	return location_add(p, &k, FRAME_SPECIAL, &line, 1);
}

/* Stacks ----------------------------------------------------------------- */

struct stack_key {
	const uint32_t *locations;
	uint32_t depth;
};

static bool stack_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct profile *p = owner;
	const struct stack_key *k = key;
	const struct prof_stack *s = &p->stacks[idx];

	return s->depth == k->depth &&
	       !memcmp(p->frames + s->first, k->locations, k->depth * sizeof(uint32_t));
}

uint32_t profile_stack(struct profile *p, const uint32_t *locations, uint32_t depth)
{
	struct stack_key k = { locations, depth };
	uint64_t h = hash_bytes(locations, depth * sizeof(uint32_t), depth);
	uint32_t id = itab_find(&p->stack_index, h, stack_eq, p, &k);

	if (id != ITAB_NONE)
		return id;
	/* One more: frames has room even for an empty stack, so frames + first is never NULL + 0. */
	ALLOC_GROW(p->frames, p->nr_frames + depth + 1, p->frames_alloc);
	ALLOC_GROW(p->stacks, p->nr_stacks + 1, p->stacks_alloc);
	if (depth)
		memcpy(p->frames + p->nr_frames, locations, depth * sizeof(uint32_t));
	id = p->nr_stacks++;
	p->stacks[id].first = p->nr_frames;
	p->stacks[id].depth = depth;
	p->nr_frames += depth;
	itab_insert(&p->stack_index, h, id);
	return id;
}

/* Samples ---------------------------------------------------------------- */

static uint64_t sample_hash(const struct prof_sample *s)
{
	uint64_t h = hash_mix(s->stack, ((uint64_t)s->pid << 32) | s->tid);

	return hash_mix(hash_mix(h, s->comm),
			s->cgroup_id ^ (uint64_t)s->runtime << 48 ^ (uint64_t)s->runtime_state << 56);
}

static bool sample_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct prof_sample *a = &((const struct profile *)owner)->samples[idx], *b = key;

	return a->stack == b->stack && a->pid == b->pid && a->tid == b->tid &&
	       a->comm == b->comm && a->cgroup_id == b->cgroup_id && a->runtime == b->runtime &&
	       a->runtime_state == b->runtime_state;
}

void profile_add_sample(struct profile *p, const struct prof_sample *s)
{
	uint64_t h = sample_hash(s);
	uint32_t id = itab_find(&p->sample_index, h, sample_eq, p, s);

	if (id != ITAB_NONE) {
		p->samples[id].count += s->count;
		return;
	}
	ALLOC_GROW(p->samples, p->nr_samples + 1, p->samples_alloc);
	id = p->nr_samples++;
	p->samples[id] = *s;
	itab_insert(&p->sample_index, h, id);
}

uint64_t profile_total(const struct profile *p)
{
	uint64_t total = 0;
	uint32_t i;

	for (i = 0; i < p->nr_samples; i++)
		total += p->samples[i].count;
	return total;
}

/* Folding exited processes ---------------------------------------------- */

/* Whether each pid the profile names has exited: asked once per pid per fold. */
struct pid_state {
	uint32_t pid;
	bool gone;
};

/* A file's mapping as any process would have it, whatever the address. */
struct file_mapping {
	uint32_t file, build_id;
	uint64_t offset, size;
	uint32_t id;		/* the one mapping of it, in the new profile */
};

struct fold {
	const struct profile *old;
	struct profile *new;
	bool (*gone)(void *ctx, uint32_t pid);
	void *ctx;
	struct pid_state *pids;
	uint32_t nr_pids, pids_alloc;
	struct itab pid_index;
	struct file_mapping *files;
	uint32_t nr_files, files_alloc;
	struct itab file_index;
	uint32_t *mapping_to;	/* old mapping -> new, ITAB_NONE until needed */
	int64_t *shift;		/* what moves an old mapping's address into its new mapping */
	uint32_t *location_to;
};

static bool pid_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct fold *)owner)->pids[idx].pid == *(const uint32_t *)key;
}

static bool pid_gone(struct fold *f, uint32_t pid)
{
	uint32_t idx = itab_find(&f->pid_index, hash_u64(pid), pid_eq, f, &pid);

	if (idx == ITAB_NONE) {
		ALLOC_GROW(f->pids, f->nr_pids + 1, f->pids_alloc);
		idx = f->nr_pids++;
		f->pids[idx] = (struct pid_state){ pid, f->gone(f->ctx, pid) };
		itab_insert(&f->pid_index, hash_u64(pid), idx);
	}
	return f->pids[idx].gone;
}

static bool file_mapping_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct file_mapping *a = &((const struct fold *)owner)->files[idx], *b = key;

	return a->file == b->file && a->build_id == b->build_id && a->offset == b->offset &&
	       a->size == b->size;
}

/*
 * An exited process's mapping of a file with a build ID holds what any
 * process's mapping of that file would: it joins the file's one mapping.
 * Anything else (anonymous and JIT memory, files of unknown content) stays
 * its process's.
 */
static uint32_t fold_mapping(struct fold *f, uint32_t old)
{
	const struct prof_mapping *m = &f->old->mappings[old];
	struct prof_mapping pm = *m;
	struct file_mapping k;
	uint64_t h;
	uint32_t idx;

	if (f->mapping_to[old] != ITAB_NONE)
		return f->mapping_to[old];
	f->shift[old] = 0;
	if (!old) {
		f->mapping_to[old] = 0;
		return 0;
	}
	if (!m->build_id || !(m->pid == 0 || pid_gone(f, m->pid))) {
		f->mapping_to[old] = profile_mapping(f->new, m);
		return f->mapping_to[old];
	}
	k = (struct file_mapping){ m->file, m->build_id, m->offset, m->limit - m->start, 0 };
	h = hash_mix(hash_mix(hash_mix(k.file, k.build_id), k.offset), k.size);
	idx = itab_find(&f->file_index, h, file_mapping_eq, f, &k);
	if (idx == ITAB_NONE) {
		pm.pid = 0;
		k.id = profile_mapping(f->new, &pm);
		ALLOC_GROW(f->files, f->nr_files + 1, f->files_alloc);
		idx = f->nr_files++;
		f->files[idx] = k;
		itab_insert(&f->file_index, h, idx);
	}
	f->mapping_to[old] = f->files[idx].id;
	f->shift[old] = (int64_t)(f->new->mappings[f->files[idx].id].start - m->start);
	return f->mapping_to[old];
}

static uint32_t fold_location(struct fold *f, uint32_t old)
{
	const struct prof_location *l = &f->old->locations[old];
	uint32_t mapping, id;
	uint64_t address;

	if (f->location_to[old] != ITAB_NONE)
		return f->location_to[old];
	if (l->label) {
		id = profile_special_location(f->new, profile_str(f->old, l->label));
	} else {
		mapping = fold_mapping(f, l->mapping);
		address = l->address + f->shift[l->mapping];
		id = profile_location_find(f->new, mapping, address);
		if (id == ITAB_NONE)
			id = profile_location_add(f->new, mapping, address, l->kind,
						  f->old->lines + l->first_line, l->nlines);
	}
	f->location_to[old] = id;
	return id;
}

void profile_on_fold(struct profile *p, struct fold_listener *l)
{
	struct fold_listener **end = &p->fold_listeners;

	while (*end)
		end = &(*end)->next;
	l->next = NULL;
	*end = l;
}

void profile_off_fold(struct profile *p, struct fold_listener *l)
{
	struct fold_listener **at;

	for (at = &p->fold_listeners; *at; at = &(*at)->next)
		if (*at == l) {
			*at = l->next;
			l->next = NULL;
			return;
		}
}

static void fold_ids(struct profile *p, const struct fold_rule *rule, struct profile_renumbering *r);

void profile_fold(struct profile *p, const struct fold_rule *rule)
{
	struct profile_renumbering r;
	struct fold_listener *l, *next;
	uint32_t i;

	for (l = p->fold_listeners; l; l = l->next)
		if (l->before)
			l->before(l->ctx);
	for (i = 0; rule->trim && i < p->nr_samples; i++)
		p->samples[i].count = 0;
	fold_ids(p, rule, &r);
	/* A listener may leave as it is told (a window that closes). */
	for (l = p->fold_listeners; l; l = next) {
		next = l->next;
		if (l->after)
			l->after(l->ctx, &r);
	}
	free(r.mappings);
	free(r.locations);
}

static void fold_ids(struct profile *p, const struct fold_rule *rule, struct profile_renumbering *r)
{
	struct profile q;
	struct fold f = { p, &q, rule->gone, rule->ctx };
	bool keep_pids = rule->keep_pids;
	uint32_t *frames = NULL, frames_alloc = 0, i, j;
	uint32_t *pids = NULL, *tids = NULL, nr_folded = 0, folded_alloc = 0;

	/* Strings, functions and cgroups only grow with what is distinct: they move as they are. */
	profile_init(&q);
	strtab_release(&q.strings);
	q.strings = p->strings;
	q.functions = p->functions;
	q.nr_functions = p->nr_functions;
	q.functions_alloc = p->functions_alloc;
	q.function_index = p->function_index;
	q.cgroups = p->cgroups;
	q.nr_cgroups = p->nr_cgroups;
	q.cgroups_alloc = p->cgroups_alloc;
	q.cgroup_index = p->cgroup_index;
	q.start_wall_ns = p->start_wall_ns;
	q.duration_ns = p->duration_ns;
	q.kind = p->kind;
	q.frequency = p->frequency;
	q.period_ns = p->period_ns;
	q.command_line = p->command_line;
	q.exited_pids = p->exited_pids;
	q.exited_tids = p->exited_tids;
	q.fold_listeners = p->fold_listeners;

	f.mapping_to = xmalloc(p->nr_mappings * sizeof(*f.mapping_to));
	memset(f.mapping_to, 0xff, p->nr_mappings * sizeof(*f.mapping_to));
	f.shift = xmalloc(p->nr_mappings * sizeof(*f.shift));
	fold_mapping(&f, 0);
	f.location_to = xmalloc((p->nr_locations ? p->nr_locations : 1) * sizeof(*f.location_to));
	memset(f.location_to, 0xff, p->nr_locations * sizeof(*f.location_to));
	for (i = 0; i < p->nr_samples; i++) {
		struct prof_sample s = p->samples[i];
		uint32_t depth;
		const uint32_t *old = profile_stack_frames(p, s.stack, &depth);

		if (!s.count)
			continue;	/* nothing to keep (a trim let its count go) */

		ALLOC_GROW(frames, depth, frames_alloc);
		for (j = 0; j < depth; j++)
			frames[j] = fold_location(&f, old[j]);
		s.stack = profile_stack(&q, frames, depth);
		if (!keep_pids && s.pid && s.pid != PROF_PID_EXITED && pid_gone(&f, s.pid)) {
			if (nr_folded == folded_alloc) {
				folded_alloc = folded_alloc ? 2 * folded_alloc : 64;
				pids = xrealloc(pids, folded_alloc * sizeof(*pids));
				tids = xrealloc(tids, folded_alloc * sizeof(*tids));
			}
			pids[nr_folded] = s.pid;
			tids[nr_folded++] = s.tid;
			s.pid = s.tid = PROF_PID_EXITED;
		}
		profile_add_sample(&q, &s);
	}
	/* The summary counts them still. */
	q.exited_pids += count_distinct_u32(pids, nr_folded);
	q.exited_tids += count_distinct_u32(tids, nr_folded);
	free(pids);
	free(tids);
	free(frames);
	free(f.shift);
	free(f.pids);
	itab_release(&f.pid_index);
	free(f.files);
	itab_release(&f.file_index);

	release_rebuilt(p);
	*p = q;
	r->mappings = f.mapping_to;
	r->locations = f.location_to;
}

/* Cgroups ---------------------------------------------------------------- */

static bool cgroup_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct profile *)owner)->cgroups[idx].id == *(const uint64_t *)key;
}

uint32_t profile_cgroup(const struct profile *p, uint64_t id)
{
	uint32_t idx = itab_find(&p->cgroup_index, hash_u64(id), cgroup_eq, p, &id);

	return idx == ITAB_NONE ? 0 : p->cgroups[idx].path;
}

void profile_set_cgroup_path(struct profile *p, uint64_t id, const char *path)
{
	uint32_t idx = itab_find(&p->cgroup_index, hash_u64(id), cgroup_eq, p, &id);

	if (idx == ITAB_NONE) {
		ALLOC_GROW(p->cgroups, p->nr_cgroups + 1, p->cgroups_alloc);
		idx = p->nr_cgroups++;
		p->cgroups[idx].id = id;
		itab_insert(&p->cgroup_index, hash_u64(id), idx);
	}
	p->cgroups[idx].path = profile_string(p, path);
}

/* Names ------------------------------------------------------------------ */

const char *thread_state_name(unsigned state)
{
	static const char *const names[] = { "running", "sleeping", "uninterruptible", "runnable" };

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "unknown";
}

const char *frame_kind_suffix(enum frame_kind kind)
{
	switch (kind) {
	case FRAME_KERNEL:
		return "_[k]";
	case FRAME_JIT:
		return "_[j]";
	default:
		return "";
	}
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

void profile_frame_name(const struct profile *p, uint32_t id, uint32_t i, struct strbuf *sb)
{
	const struct prof_location *loc = &p->locations[id];
	const struct prof_mapping *m;

	if (i < loc->nlines) {
		const struct prof_function *f = &p->functions[p->lines[loc->first_line + i].function];

		/* An interpreter's function with a file (not a C function the runtime names, say). */
		if (loc->kind >= FRAME_INTERP && f->filename)
			interp_frame_name(sb, profile_str(p, f->name), profile_str(p, f->filename),
					  f->start_line);
		else
			strbuf_addstr(sb, profile_str(p, f->name));
		return;
	}
	if (loc->label) {
		strbuf_addstr(sb, profile_str(p, loc->label));
		return;
	}
	m = &p->mappings[loc->mapping];
	if (!loc->mapping || !m->file) {
		strbuf_addstr(sb, "[unknown]");
		return;
	}
	/* The offset in the file, which is what a reader of the file can use. */
	profile_offset_name(sb, profile_str(p, m->file), loc->address - m->start + m->offset);
}

void profile_offset_name(struct strbuf *sb, const char *file, uint64_t offset)
{
	const char *name = basename_of(file);
	size_t len = strlen(name);

	if (len > 2 && name[0] == '[' && name[len - 1] == ']') {	/* [vdso], [kernel.kallsyms] */
		name++;
		len -= 2;
	}
	strbuf_addf(sb, "[%.*s+0x%llx]", (int)len, name, (unsigned long long)offset);
}

/* Copies ------------------------------------------------------------------ */

void profile_copy_init(struct profile_copy *c, struct profile *dst, const struct profile *src)
{
	uint32_t k;

	memset(c, 0, sizeof(*c));
	c->src = src;
	c->dst = dst;
	for (k = 0; k < RUNTIME_KINDS; k++)
		if (!dst->runtimes[k])
			dst->runtimes[k] = src->runtimes[k];
}

void profile_copy_release(struct profile_copy *c)
{
	free(c->strings);
	free(c->mappings);
	free(c->functions);
	free(c->locations);
	free(c->stacks);
	memset(c, 0, sizeof(*c));
}

/* The slot for src id in a map of src -> dst ids, grown to n (new slots ITAB_NONE). */
static uint32_t *copy_slot(uint32_t **map, uint32_t *nr, uint32_t n, uint32_t id)
{
	if (*nr < n) {
		*map = xrealloc(*map, n * sizeof(**map));
		memset(*map + *nr, 0xff, (n - *nr) * sizeof(**map));
		*nr = n;
	}
	return &(*map)[id];
}

static uint32_t copy_string(struct profile_copy *c, uint32_t id)
{
	uint32_t *d;

	if (!id)
		return 0;
	d = copy_slot(&c->strings, &c->nr_strings, c->src->strings.nr, id);
	if (*d == ITAB_NONE)
		*d = profile_string(c->dst, profile_str(c->src, id));
	return *d;
}

static uint32_t copy_mapping(struct profile_copy *c, uint32_t id)
{
	const struct prof_mapping *m = &c->src->mappings[id];
	struct prof_mapping n = *m;
	uint32_t *d;

	if (!id)
		return 0;
	d = copy_slot(&c->mappings, &c->nr_mappings, c->src->nr_mappings, id);
	if (*d == ITAB_NONE) {
		n.file = copy_string(c, m->file);
		n.build_id = copy_string(c, m->build_id);
		*d = profile_mapping(c->dst, &n);
	}
	if (m->has_functions)
		c->dst->mappings[*d].has_functions = true;
	return *d;
}

static uint32_t copy_function(struct profile_copy *c, uint32_t id)
{
	const struct prof_function *f = &c->src->functions[id];
	uint32_t *d = copy_slot(&c->functions, &c->nr_functions, c->src->nr_functions, id);

	if (*d == ITAB_NONE)
		*d = profile_function_at(c->dst, copy_string(c, f->name), copy_string(c, f->system_name),
					 copy_string(c, f->filename), f->start_line);
	return *d;
}

static uint32_t copy_location(struct profile_copy *c, uint32_t id)
{
	const struct prof_location *l = &c->src->locations[id];
	uint32_t *d = copy_slot(&c->locations, &c->nr_locations, c->src->nr_locations, id), m;
	uint16_t i, n = l->nlines;
	struct prof_line *lines;

	if (*d != ITAB_NONE)
		return *d;
	if (l->label)
		return *d = profile_special_location(c->dst, profile_str(c->src, l->label));
	lines = xmalloc((n + 1) * sizeof(*lines));
	for (i = 0; i < n; i++) {
		lines[i].function = copy_function(c, c->src->lines[l->first_line + i].function);
		lines[i].line = c->src->lines[l->first_line + i].line;
	}
	m = copy_mapping(c, l->mapping);
	*d = profile_location_find(c->dst, m, l->address);
	if (*d == ITAB_NONE)
		*d = profile_location_add(c->dst, m, l->address, l->kind, lines, n);
	else if (!c->dst->locations[*d].nlines && n)
		profile_location_name(c->dst, *d, l->kind, lines, n);
	free(lines);
	return *d;
}

static uint32_t copy_stack(struct profile_copy *c, uint32_t id)
{
	uint32_t *d = copy_slot(&c->stacks, &c->nr_stacks, c->src->nr_stacks, id), depth, i;
	const uint32_t *frames;
	uint32_t *locs;

	if (*d != ITAB_NONE)
		return *d;
	frames = profile_stack_frames(c->src, id, &depth);
	locs = xmalloc((depth + 1) * sizeof(*locs));
	for (i = 0; i < depth; i++)
		locs[i] = copy_location(c, frames[i]);
	*d = profile_stack(c->dst, locs, depth);
	free(locs);
	return *d;
}

void profile_copy_sample(struct profile_copy *c, const struct prof_sample *s, uint64_t count)
{
	struct prof_sample n = *s;
	uint32_t path;

	n.stack = copy_stack(c, s->stack);
	n.comm = copy_string(c, s->comm);
	n.count = count;
	profile_add_sample(c->dst, &n);
	if (s->cgroup_id && !profile_cgroup(c->dst, s->cgroup_id) &&
	    (path = profile_cgroup(c->src, s->cgroup_id)))
		profile_set_cgroup_path(c->dst, s->cgroup_id, profile_str(c->src, path));
}

bool profile_mapping_is_file(const struct profile *p, uint32_t m)
{
	const char *file;

	if (!m || m >= p->nr_mappings)
		return false;
	file = profile_str(p, p->mappings[m].file);
	return file[0] == '/' && strncmp(file, "//anon", 6);
}
