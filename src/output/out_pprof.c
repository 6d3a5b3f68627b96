// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * pprof output: google/pprof's profile.proto, gzip-compressed. Streamed:
 * each sample, mapping, location, function and string is encoded into a
 * small buffer and compressed straight away; the Profile message as a whole
 * never exists in memory.
 *
 * Ids: a profile index i is pprof id i + 1 (pprof ids start at 1), except
 * mappings, whose index 0 already means "none". Strings: the profile's
 * table as it is (its id 0 is "", as pprof requires), then ours.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/runtime_info.h"
#include "bpfprof/output.h"
#include "bpfprof/pb.h"

/* profile.proto field numbers. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/* Strings of our own, after the profile's. */
enum {
	S_SAMPLES,
	S_COUNT,
	S_CPU,
	S_NANOSECONDS,
	S_PID,
	S_TID,
	S_COMM,
	S_CGROUP,
	S_OFF_CPU,
	S_WALL,
	S_STATE,
	S_STATE_NAMES,		/* thread_state_name() of each enum thread_state, in order */
	S_COMMAND_LINE = S_STATE_NAMES + PROF_STATES,
	/* Then each runtime's label, if it has one, and its values (runtime_strings) */
	S_RUNTIMES
};

static const char *const extra_strings[] = {
	[S_SAMPLES] = "samples",
	[S_COUNT] = "count",
	[S_CPU] = "cpu",
	[S_NANOSECONDS] = "nanoseconds",
	[S_PID] = "pid",
	[S_TID] = "tid",
	[S_COMM] = "comm",
	[S_CGROUP] = "cgroup",
	[S_OFF_CPU] = "off_cpu",
	[S_WALL] = "wall",
	[S_STATE] = "state",
};

struct pprof_writer {
	const struct profile *p;
	struct pb_gzip gz;
	struct pb_msg field, sub, line;
	uint64_t *ids;		/* scratch for packed location ids */
	size_t ids_alloc;
	bool *mapping_complete;	/* every location of the mapping is named */
	uint32_t *mapping_id;	/* by profile mapping: its pprof id (the main binary's is 1) */
	/* Where each runtime's label is among our strings (its values follow); 0: none */
	uint32_t runtime_label[RUNTIME_KINDS];
	uint32_t nr_extra;	/* our strings */
};

static uint64_t extra(const struct pprof_writer *w, int which)
{
	return w->p->strings.nr + which;
}

/* Wraps w->sub as top-level field number field and compresses it. */
static void emit(struct pprof_writer *w, uint32_t field)
{
	pb_reset(&w->field);
	pb_message(&w->field, field, &w->sub);
	pb_gzip_write(&w->gz, &w->field);
}

static void emit_value_type(struct pprof_writer *w, uint32_t field, int type, int unit)
{
	pb_reset(&w->sub);
	pb_uint64(&w->sub, VALUE_TYPE_TYPE, extra(w, type));
	pb_uint64(&w->sub, VALUE_TYPE_UNIT, extra(w, unit));
	emit(w, field);
}

static void add_num_label(struct pprof_writer *w, int key, uint64_t value)
{
	pb_reset(&w->line);
	pb_uint64(&w->line, LABEL_KEY, extra(w, key));
	pb_uint64(&w->line, LABEL_NUM, value);
	/* A unit keeps a zero (pid 0: idle) from reading as "no label". */
	pb_uint64(&w->line, LABEL_NUM_UNIT, extra(w, key));
	pb_message(&w->sub, SAMPLE_LABEL, &w->line);
}

static void add_str_label(struct pprof_writer *w, int key, uint64_t str)
{
	pb_reset(&w->line);
	pb_uint64(&w->line, LABEL_KEY, extra(w, key));
	pb_uint64(&w->line, LABEL_STR, str);
	pb_message(&w->sub, SAMPLE_LABEL, &w->line);
}

static void emit_samples(struct pprof_writer *w)
{
	const struct profile *p = w->p;
	uint32_t i, j;

	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint32_t depth;
		const uint32_t *frames = profile_stack_frames(p, s->stack, &depth);
		/* Off the CPU, one value: microseconds as nanoseconds. */
		int64_t values[2] = { (int64_t)s->count, (int64_t)(s->count * p->period_ns) },
			off_ns = (int64_t)s->count * 1000;
		uint32_t cgroup;

		if (!s->count)
			continue;
		ALLOC_GROW(w->ids, depth, w->ids_alloc);
		for (j = 0; j < depth; j++)
			w->ids[j] = frames[j] + 1;	/* leaf first, as pprof wants */
		pb_reset(&w->sub);
		pb_packed_uint64(&w->sub, SAMPLE_LOCATION_ID, w->ids, depth);
		if (p->kind == PROFILE_OFF_CPU)
			pb_packed_int64(&w->sub, SAMPLE_VALUE, &off_ns, 1);
		else
			pb_packed_int64(&w->sub, SAMPLE_VALUE, values, 2);
		/* Lost samples belong to no process; folded ones to one no longer known. */
		if (s->comm && s->pid != PROF_PID_EXITED) {
			add_num_label(w, S_PID, s->pid);
			add_num_label(w, S_TID, s->tid);
		}
		if (s->comm)
			add_str_label(w, S_COMM, s->comm);
		cgroup = s->cgroup_id ? profile_cgroup(p, s->cgroup_id) : 0;
		if (cgroup)
			add_str_label(w, S_CGROUP, cgroup);
		if (p->kind != PROFILE_CPU && s->state < PROF_STATES)
			add_str_label(w, S_STATE, extra(w, S_STATE_NAMES + s->state));
		if (s->runtime_state && s->runtime < RUNTIME_KINDS && w->runtime_label[s->runtime])
			add_str_label(w, w->runtime_label[s->runtime],
				      extra(w, w->runtime_label[s->runtime] + s->runtime_state));
		emit(w, PROFILE_SAMPLE);
	}
}

static void emit_mapping(struct pprof_writer *w, uint32_t i)
{
	const struct prof_mapping *m = &w->p->mappings[i];

	pb_reset(&w->sub);
	pb_uint64(&w->sub, MAPPING_ID, w->mapping_id[i]);
	pb_uint64(&w->sub, MAPPING_MEMORY_START, m->start);
	pb_uint64(&w->sub, MAPPING_MEMORY_LIMIT, m->limit);
	pb_uint64(&w->sub, MAPPING_FILE_OFFSET, m->offset);
	pb_uint64(&w->sub, MAPPING_FILENAME, m->file);
	if (m->build_id)
		pb_uint64(&w->sub, MAPPING_BUILD_ID, m->build_id);
	/* Only when every frame is named: otherwise pprof may name the rest itself. */
	pb_bool(&w->sub, MAPPING_HAS_FUNCTIONS, w->mapping_complete[i]);
	emit(w, PROFILE_MAPPING);
}

static int by_pid(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/*
 * The main binary's mapping: go tool pprof takes the first mapping for
 * it. Of the process with the most samples (the one process of -p PID),
 * its lowest mapping of a file: an executable is mapped below its
 * libraries. 0: none (no process's samples, or no file).
 */
static uint32_t main_mapping(const struct profile *p)
{
	uint64_t (*v)[2] = xcalloc(p->nr_samples + 1, sizeof(*v)), best = 0, sum;
	uint32_t i, j, n = 0, pid = 0, main = 0;

	for (i = 0; i < p->nr_samples; i++)
		if (p->samples[i].comm && p->samples[i].pid && p->samples[i].pid != PROF_PID_EXITED) {
			v[n][0] = p->samples[i].pid;
			v[n++][1] = p->samples[i].count;
		}
	qsort(v, n, sizeof(*v), by_pid);
	for (i = 0; i < n; i = j) {
		for (sum = 0, j = i; j < n && v[j][0] == v[i][0]; j++)
			sum += v[j][1];
		if (sum > best) {
			best = sum;
			pid = (uint32_t)v[i][0];
		}
	}
	free(v);
	for (i = 1; pid && i < p->nr_mappings; i++)
		if (p->mappings[i].pid == pid && profile_mapping_is_file(p, i) &&
		    (!main || p->mappings[i].start < p->mappings[main].start))
			main = i;
	return main;
}

/* The main binary's mapping first, id 1; the others after it in their order. */
static void emit_mappings(struct pprof_writer *w)
{
	const struct profile *p = w->p;
	uint32_t main = main_mapping(p), i;

	w->mapping_id = xcalloc(p->nr_mappings + 1, sizeof(*w->mapping_id));
	for (i = 1; i < p->nr_mappings; i++)
		w->mapping_id[i] = !main || i > main ? i : i == main ? 1 : i + 1;
	if (main)
		emit_mapping(w, main);
	for (i = 1; i < p->nr_mappings; i++)
		if (i != main)
			emit_mapping(w, i);
}

static void emit_locations(struct pprof_writer *w)
{
	const struct profile *p = w->p;
	uint32_t i, j;

	for (i = 0; i < p->nr_locations; i++) {
		const struct prof_location *loc = &p->locations[i];

		pb_reset(&w->sub);
		pb_uint64(&w->sub, LOCATION_ID, i + 1);
		if (loc->mapping)
			pb_uint64(&w->sub, LOCATION_MAPPING_ID, w->mapping_id[loc->mapping]);
		pb_uint64(&w->sub, LOCATION_ADDRESS, loc->address);
		for (j = 0; j < loc->nlines; j++) {	/* innermost first, as pprof wants */
			const struct prof_line *line = &p->lines[loc->first_line + j];

			pb_reset(&w->line);
			pb_uint64(&w->line, LINE_FUNCTION_ID, line->function + 1);
			if (line->line)
				pb_int64(&w->line, LINE_LINE, line->line);
			pb_message(&w->sub, LOCATION_LINE, &w->line);
		}
		emit(w, PROFILE_LOCATION);
	}
}

static void emit_functions(struct pprof_writer *w)
{
	const struct profile *p = w->p;
	uint32_t i;

	for (i = 0; i < p->nr_functions; i++) {
		const struct prof_function *f = &p->functions[i];

		pb_reset(&w->sub);
		pb_uint64(&w->sub, FUNCTION_ID, i + 1);
		pb_uint64(&w->sub, FUNCTION_NAME, f->name);
		pb_uint64(&w->sub, FUNCTION_SYSTEM_NAME, f->system_name ? f->system_name : f->name);
		if (f->filename)
			pb_uint64(&w->sub, FUNCTION_FILENAME, f->filename);
		if (f->start_line)
			pb_uint64(&w->sub, FUNCTION_START_LINE, f->start_line);
		emit(w, PROFILE_FUNCTION);
	}
}

/*
 * The runtimes' strings after S_RUNTIMES, by id (the profile's): each one's
 * label (its descriptor's state_label) and its values, for a runtime that has one.
 * runtime_string(i): the i-th; runtime_strings(w): where each label is.
 */
static const char *runtime_string(const struct profile *p, uint32_t i)
{
	uint32_t k;

	for (k = 0; k < RUNTIME_KINDS; k++) {
		const struct runtime_info *r = p->runtimes[k];

		if (!r || !r->state_label)
			continue;
		if (i <= r->nr_states)
			return i ? r->state_names[i - 1] : r->state_label;
		i -= 1 + r->nr_states;
	}
	return "";
}

static void runtime_strings(struct pprof_writer *w)
{
	uint32_t k;

	w->nr_extra = S_RUNTIMES;
	for (k = 0; k < RUNTIME_KINDS; k++) {
		const struct runtime_info *r = w->p->runtimes[k];

		if (!r || !r->state_label)
			continue;
		w->runtime_label[k] = w->nr_extra;
		w->nr_extra += 1 + r->nr_states;
	}
}

/* The string table: one field per string, in id order. */
static void emit_strings(struct pprof_writer *w)
{
	const struct profile *p = w->p;
	uint32_t i;

	for (i = 0; i < p->strings.nr; i++) {
		pb_reset(&w->field);
		pb_string(&w->field, PROFILE_STRING_TABLE, profile_str(p, i));
		pb_gzip_write(&w->gz, &w->field);
	}
	for (i = 0; i < w->nr_extra; i++) {
		pb_reset(&w->field);
		pb_string(&w->field, PROFILE_STRING_TABLE,
			  i == S_COMMAND_LINE ? (p->command_line ? p->command_line : "")
			  : i >= S_RUNTIMES ? runtime_string(p, i - S_RUNTIMES)
			  : i >= S_STATE_NAMES ? thread_state_name(i - S_STATE_NAMES)
			  : extra_strings[i]);
		pb_gzip_write(&w->gz, &w->field);
	}
}

static void emit_header(struct pprof_writer *w)
{
	const struct profile *p = w->p;

	/* CPU samples and their CPU time; off-CPU time alone; or wall time, in samples and ns. */
	int time = p->kind == PROFILE_OFF_CPU ? S_OFF_CPU : p->kind == PROFILE_WALL ? S_WALL : S_CPU;

	if (p->kind != PROFILE_OFF_CPU)
		emit_value_type(w, PROFILE_SAMPLE_TYPE, S_SAMPLES, S_COUNT);
	emit_value_type(w, PROFILE_SAMPLE_TYPE, time, S_NANOSECONDS);
	emit_value_type(w, PROFILE_PERIOD_TYPE, time, S_NANOSECONDS);
	pb_reset(&w->field);
	pb_int64(&w->field, PROFILE_TIME_NANOS, p->start_wall_ns);
	pb_int64(&w->field, PROFILE_DURATION_NANOS, p->duration_ns);
	pb_int64(&w->field, PROFILE_PERIOD, p->kind == PROFILE_OFF_CPU ? 1000 : p->period_ns);
	pb_int64(&w->field, PROFILE_COMMENT, extra(w, S_COMMAND_LINE));
	pb_int64(&w->field, PROFILE_DEFAULT_SAMPLE_TYPE, extra(w, time));
	pb_gzip_write(&w->gz, &w->field);
}

/* A mapping is complete when every location in it has a name. */
static bool *complete_mappings(const struct profile *p)
{
	bool *complete = xmalloc(p->nr_mappings * sizeof(*complete));
	uint32_t i;

	for (i = 0; i < p->nr_mappings; i++)
		complete[i] = p->mappings[i].has_functions;
	for (i = 0; i < p->nr_locations; i++)
		if (!p->locations[i].nlines)
			complete[p->locations[i].mapping] = false;
	return complete;
}

int write_pprof(FILE *out, const struct profile *p, const struct write_options *o)
{
	struct pprof_writer w = { .p = p };
	int err;

	(void)o;
	if ((err = pb_gzip_open(&w.gz, out)))
		return err;
	w.mapping_complete = complete_mappings(p);
	runtime_strings(&w);
	emit_header(&w);
	emit_samples(&w);
	emit_mappings(&w);
	emit_locations(&w);
	emit_functions(&w);
	emit_strings(&w);
	err = pb_gzip_close(&w.gz);
	pb_release(&w.field);
	pb_release(&w.sub);
	pb_release(&w.line);
	free(w.ids);
	free(w.mapping_complete);
	free(w.mapping_id);
	return err;
}
