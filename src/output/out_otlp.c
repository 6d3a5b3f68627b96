// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * OTLP profiles: an ExportProfilesServiceRequest of OpenTelemetry's
 * opentelemetry/proto/collector/profiles/v1development (the schema of
 * opentelemetry-proto 1.10, what the Collector's otlpreceiver calls
 * profiles development version 1), as -o FILE.otlp.pb writes it and
 * --otlp POSTs it.
 *
 * One resource (the host), one scope (bpfprof), one profile per sample
 * type: CPU samples (samples/count, a period of cpu nanoseconds), off-CPU
 * time (off_cpu/nanoseconds), or with --wall both, each sample in the one
 * its state says. The dictionary is shared: its tables are the profile's
 * own (mappings, functions, locations, stacks, strings) at the same index
 * plus one, index 0 being the zero entry the specification asks for, so
 * no table is rebuilt; after the profile's strings come ours (keys, values
 * made here). Sample and location attributes are interned in the
 * attribute table: process.pid, thread.id, thread.name,
 * process.executable.name, process.linux.cgroup; profile.frame.type; a
 * mapping's build ID as process.executable.build_id.gnu.
 *
 * Built in memory, not streamed as pprof is: a message's length comes
 * before it, and the request is two messages (the resources, the
 * dictionary). The file is the bare protobuf; the HTTP body is gzipped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bpfprof/output.h"
#include "bpfprof/pb.h"
#include "bpfprof/runtime_info.h"

/* Field numbers, by message. */
enum {
	REQUEST_RESOURCE_PROFILES = 1,
	REQUEST_DICTIONARY = 2,

	DICT_MAPPING_TABLE = 1,
	DICT_LOCATION_TABLE = 2,
	DICT_FUNCTION_TABLE = 3,
	DICT_LINK_TABLE = 4,
	DICT_STRING_TABLE = 5,
	DICT_ATTRIBUTE_TABLE = 6,
	DICT_STACK_TABLE = 7,

	RESOURCE_PROFILES_RESOURCE = 1,
	RESOURCE_PROFILES_SCOPE_PROFILES = 2,
	RESOURCE_ATTRIBUTES = 1,
	KEY_VALUE_KEY = 1,
	KEY_VALUE_VALUE = 2,
	SCOPE_PROFILES_SCOPE = 1,
	SCOPE_PROFILES_PROFILES = 2,
	SCOPE_NAME = 1,
	SCOPE_VERSION = 2,

	ANY_VALUE_STRING = 1,
	ANY_VALUE_INT = 3,
	ANY_VALUE_STRING_STRINDEX = 8,

	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLES = 2,
	PROFILE_TIME_UNIX_NANO = 3,
	PROFILE_DURATION_NANO = 4,
	PROFILE_PERIOD_TYPE = 5,
	PROFILE_PERIOD = 6,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_STACK_INDEX = 1,
	SAMPLE_ATTRIBUTE_INDICES = 2,
	SAMPLE_VALUES = 4,

	MAPPING_MEMORY_START = 1,
	MAPPING_MEMORY_LIMIT = 2,
	MAPPING_FILE_OFFSET = 3,
	MAPPING_FILENAME = 4,
	MAPPING_ATTRIBUTE_INDICES = 5,

	STACK_LOCATION_INDICES = 1,

	LOCATION_MAPPING_INDEX = 1,
	LOCATION_ADDRESS = 2,
	LOCATION_LINES = 3,
	LOCATION_ATTRIBUTE_INDICES = 4,

	LINE_FUNCTION_INDEX = 1,
	LINE_LINE = 2,

	FUNCTION_NAME = 1,
	FUNCTION_SYSTEM_NAME = 2,
	FUNCTION_FILENAME = 3,
	FUNCTION_START_LINE = 4,

	KEY_VALUE_AND_UNIT_KEY = 1,
	KEY_VALUE_AND_UNIT_VALUE = 2,

	LINK_TRACE_ID = 1,
	LINK_SPAN_ID = 2,
};

/* An entry of the attribute table: a key and an int or a string (a string index). */
struct attr {
	uint32_t key;
	bool is_int;
	int64_t value;
};

/* A process's main binary: its lowest mapping of a file (an executable maps below its libraries). */
struct exe {
	uint32_t pid, mapping;
	uint64_t start;
};

struct otlp_writer {
	const struct profile *p;
	const struct write_options *o;
	struct strtab extra;		/* our strings, after the profile's */
	struct attr *attrs;		/* attribute table; [0] the empty one */
	uint32_t nr_attrs, attrs_alloc;
	struct itab attr_index;
	struct exe *exes;
	uint32_t nr_exes;
	uint32_t *exe_name;		/* by mapping: its file's base name (a string), once asked */
	uint64_t *ids;			/* scratch for packed indices */
	size_t ids_alloc;
	struct pb_msg sub, item, line;
};

/* A string of ours: its index in the request's table (the profile's come first). */
static uint32_t str(struct otlp_writer *w, const char *s)
{
	uint32_t id = strtab_intern(&w->extra, s);

	return id ? w->p->strings.nr + id - 1 : 0;
}

static const char *str_of(const struct otlp_writer *w, uint32_t id)
{
	return id < w->p->strings.nr ? profile_str(w->p, id)
				     : strtab_get(&w->extra, id - w->p->strings.nr + 1);
}

static bool attr_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct attr *a = &((const struct otlp_writer *)owner)->attrs[idx], *b = key;

	return a->key == b->key && a->is_int == b->is_int && a->value == b->value;
}

/* The attribute's index in the table, added if new. */
static uint32_t attr(struct otlp_writer *w, uint32_t key, bool is_int, int64_t value)
{
	struct attr a = { .key = key, .is_int = is_int, .value = value };
	uint64_t h = hash_mix(hash_mix(hash_u64(key), is_int), (uint64_t)value);
	uint32_t i = itab_find(&w->attr_index, h, attr_eq, w, &a);

	if (i != ITAB_NONE)
		return i;
	ALLOC_GROW(w->attrs, w->nr_attrs + 1, w->attrs_alloc);
	w->attrs[w->nr_attrs] = a;
	itab_insert(&w->attr_index, h, w->nr_attrs);
	return w->nr_attrs++;
}

static uint32_t attr_str(struct otlp_writer *w, const char *key, uint32_t value)
{
	return attr(w, str(w, key), false, value);
}

static int by_pid_start(const void *a, const void *b)
{
	const struct exe *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Each process's main binary, sorted by pid (its first entry is its lowest mapping). */
static void find_exes(struct otlp_writer *w)
{
	const struct profile *p = w->p;
	uint32_t i;

	w->exes = xcalloc(p->nr_mappings + 1, sizeof(*w->exes));
	for (i = 1; i < p->nr_mappings; i++)
		if (p->mappings[i].pid && profile_mapping_is_file(p, i))
			w->exes[w->nr_exes++] = (struct exe){ p->mappings[i].pid, i,
							      p->mappings[i].start };
	qsort(w->exes, w->nr_exes, sizeof(*w->exes), by_pid_start);
	w->exe_name = xcalloc(p->nr_mappings + 1, sizeof(*w->exe_name));
}

/* The base name of process pid's main binary, as a string index; 0: not known. */
static uint32_t exe_name(struct otlp_writer *w, uint32_t pid)
{
	uint32_t lo = 0, hi = w->nr_exes, m;
	const char *file, *base;

	while (lo < hi) {	/* the first entry of pid */
		uint32_t mid = lo + (hi - lo) / 2;

		if (w->exes[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == w->nr_exes || w->exes[lo].pid != pid)
		return 0;
	m = w->exes[lo].mapping;
	if (!w->exe_name[m]) {
		file = profile_str(w->p, w->p->mappings[m].file);
		base = strrchr(file, '/');
		w->exe_name[m] = str(w, base ? base + 1 : file);
	}
	return w->exe_name[m];
}

static void add_id(struct otlp_writer *w, size_t *n, uint64_t id)
{
	ALLOC_GROW(w->ids, *n + 1, w->ids_alloc);
	w->ids[(*n)++] = id;
}

/* A sample's attributes (indices in the table) into w->ids. */
static size_t sample_attrs(struct otlp_writer *w, const struct prof_sample *s)
{
	const struct profile *p = w->p;
	uint32_t cgroup = s->cgroup_id ? profile_cgroup(p, s->cgroup_id) : 0, exe;
	size_t n = 0;

	/* Lost samples belong to no process; folded ones to one no longer known. */
	if (s->comm && s->pid != PROF_PID_EXITED) {
		add_id(w, &n, attr(w, str(w, "process.pid"), true, s->pid));
		add_id(w, &n, attr(w, str(w, "thread.id"), true, s->tid));
		if ((exe = exe_name(w, s->pid)))
			add_id(w, &n, attr_str(w, "process.executable.name", exe));
	}
	if (s->comm)
		add_id(w, &n, attr_str(w, "thread.name", s->comm));
	if (cgroup) {
		/* As /proc/PID/cgroup says it: hierarchy 0, no controllers, the v2 path. */
		struct strbuf sb;

		strbuf_init(&sb);
		strbuf_addf(&sb, "0::%s", profile_str(p, cgroup));
		add_id(w, &n, attr_str(w, "process.linux.cgroup", str(w, sb.buf)));
		strbuf_release(&sb);
	}
	if (p->kind != PROFILE_CPU && s->state < PROF_STATES)
		add_id(w, &n, attr_str(w, "bpfprof.thread.state",
				       str(w, thread_state_name(s->state))));
	if (s->runtime_state && s->runtime < RUNTIME_KINDS && p->runtimes[s->runtime] &&
	    p->runtimes[s->runtime]->state_label &&
	    s->runtime_state <= p->runtimes[s->runtime]->nr_states) {
		const struct runtime_info *r = p->runtimes[s->runtime];
		struct strbuf sb;

		strbuf_init(&sb);
		strbuf_addf(&sb, "bpfprof.%s", r->state_label);
		add_id(w, &n, attr_str(w, sb.buf, str(w, r->state_names[s->runtime_state - 1])));
		strbuf_release(&sb);
	}
	return n;
}

static void value_type(struct otlp_writer *w, struct pb_msg *m, uint32_t field, const char *type,
		       const char *unit)
{
	pb_reset(&w->item);
	pb_uint64(&w->item, VALUE_TYPE_TYPE, str(w, type));
	pb_uint64(&w->item, VALUE_TYPE_UNIT, str(w, unit));
	pb_message(m, field, &w->item);
}

/* Which profile a sample is in: 0 its CPU samples, 1 its time off the CPU. */
static int sample_profile(const struct profile *p, const struct prof_sample *s)
{
	return p->kind == PROFILE_OFF_CPU || (p->kind == PROFILE_WALL && s->state != 0);
}

/* Profile which (sample_profile) into out: its types, times and samples. */
static void encode_profile(struct otlp_writer *w, struct pb_msg *out, int which)
{
	const struct profile *p = w->p;
	uint32_t i;

	pb_reset(out);
	if (which == 0) {
		value_type(w, out, PROFILE_SAMPLE_TYPE, "samples", "count");
		value_type(w, out, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
	} else {
		value_type(w, out, PROFILE_SAMPLE_TYPE, "off_cpu", "nanoseconds");
	}
	pb_fixed64(out, PROFILE_TIME_UNIX_NANO, p->start_wall_ns);
	pb_uint64(out, PROFILE_DURATION_NANO, p->duration_ns);
	if (which == 0)
		pb_int64(out, PROFILE_PERIOD, p->period_ns);
	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i];
		/* Off the CPU: microseconds, or with --wall periods, as nanoseconds. */
		int64_t value = which == 0 ? (int64_t)s->count
			      : p->kind == PROFILE_WALL ? (int64_t)(s->count * p->period_ns)
			      : (int64_t)s->count * 1000;
		size_t n;

		if (!s->count || sample_profile(p, s) != which)
			continue;
		n = sample_attrs(w, s);
		pb_reset(&w->sub);
		pb_uint64(&w->sub, SAMPLE_STACK_INDEX, s->stack + 1);
		pb_packed_uint64(&w->sub, SAMPLE_ATTRIBUTE_INDICES, w->ids, n);
		pb_packed_int64(&w->sub, SAMPLE_VALUES, &value, 1);
		pb_message(out, PROFILE_SAMPLES, &w->sub);
	}
}

/* profile.frame.type, as OpenTelemetry's semantic conventions name them; NULL: none. */
static const char *frame_type(const struct profile *p, const struct prof_location *loc)
{
	const struct runtime_info *r;

	switch (loc->kind) {
	case FRAME_USER:
		return "native";
	case FRAME_KERNEL:
		return "kernel";
	case FRAME_JIT:
		return "jit";	/* named by a perf map: whose JIT is not known */
	case FRAME_SPECIAL:
		return NULL;	/* made up by bpfprof: [lost: ...], [unknown] */
	}
	r = loc->kind - FRAME_INTERP < RUNTIME_KINDS ? p->runtimes[loc->kind - FRAME_INTERP] : NULL;
	if (!r)
		return NULL;
	return r->frame_type;
}

/* Every table of the dictionary but attributes and strings, which these fill. */
static void encode_tables(struct otlp_writer *w, struct pb_msg *dict)
{
	static const uint8_t zero_trace[16], zero_span[8];
	const struct profile *p = w->p;
	uint32_t i, j;

	/* Each table's zero entry: an empty message (the link's with zero IDs of their sizes). */
	pb_reset(&w->item);
	pb_message(dict, DICT_MAPPING_TABLE, &w->item);
	pb_message(dict, DICT_LOCATION_TABLE, &w->item);
	pb_message(dict, DICT_FUNCTION_TABLE, &w->item);
	pb_message(dict, DICT_STACK_TABLE, &w->item);
	pb_bytes(&w->item, LINK_TRACE_ID, zero_trace, sizeof(zero_trace));
	pb_bytes(&w->item, LINK_SPAN_ID, zero_span, sizeof(zero_span));
	pb_message(dict, DICT_LINK_TABLE, &w->item);

	for (i = 1; i < p->nr_mappings; i++) {	/* the profile's 0 is "none" too */
		const struct prof_mapping *m = &p->mappings[i];

		pb_reset(&w->item);
		pb_uint64(&w->item, MAPPING_MEMORY_START, m->start);
		pb_uint64(&w->item, MAPPING_MEMORY_LIMIT, m->limit);
		pb_uint64(&w->item, MAPPING_FILE_OFFSET, m->offset);
		pb_uint64(&w->item, MAPPING_FILENAME, m->file);
		if (m->build_id) {
			uint64_t a = attr_str(w, "process.executable.build_id.gnu", m->build_id);

			pb_packed_uint64(&w->item, MAPPING_ATTRIBUTE_INDICES, &a, 1);
		}
		pb_message(dict, DICT_MAPPING_TABLE, &w->item);
	}
	for (i = 0; i < p->nr_locations; i++) {
		const struct prof_location *loc = &p->locations[i];
		const char *type = frame_type(p, loc);

		pb_reset(&w->item);
		if (loc->mapping)
			pb_uint64(&w->item, LOCATION_MAPPING_INDEX, loc->mapping);
		pb_uint64(&w->item, LOCATION_ADDRESS, loc->address);
		for (j = 0; j < loc->nlines; j++) {	/* innermost first; the last is the caller */
			const struct prof_line *line = &p->lines[loc->first_line + j];

			pb_reset(&w->line);
			pb_uint64(&w->line, LINE_FUNCTION_INDEX, line->function + 1);
			if (line->line)
				pb_int64(&w->line, LINE_LINE, line->line);
			pb_message(&w->item, LOCATION_LINES, &w->line);
		}
		if (type) {
			uint64_t a = attr_str(w, "profile.frame.type", str(w, type));

			pb_packed_uint64(&w->item, LOCATION_ATTRIBUTE_INDICES, &a, 1);
		}
		pb_message(dict, DICT_LOCATION_TABLE, &w->item);
	}
	for (i = 0; i < p->nr_functions; i++) {
		const struct prof_function *f = &p->functions[i];

		pb_reset(&w->item);
		pb_uint64(&w->item, FUNCTION_NAME, f->name);
		pb_uint64(&w->item, FUNCTION_SYSTEM_NAME, f->system_name ? f->system_name : f->name);
		if (f->filename)
			pb_uint64(&w->item, FUNCTION_FILENAME, f->filename);
		if (f->start_line)
			pb_int64(&w->item, FUNCTION_START_LINE, f->start_line);
		pb_message(dict, DICT_FUNCTION_TABLE, &w->item);
	}
	for (i = 0; i < p->nr_stacks; i++) {
		uint32_t depth;
		const uint32_t *frames = profile_stack_frames(p, i, &depth);
		size_t n = 0;

		for (j = 0; j < depth; j++)	/* leaf first, as both want */
			add_id(w, &n, frames[j] + 1);
		pb_reset(&w->item);
		pb_packed_uint64(&w->item, STACK_LOCATION_INDICES, w->ids, n);
		pb_message(dict, DICT_STACK_TABLE, &w->item);
	}
}

/* The attribute table, then the string table: the profile's strings, then ours. */
static void encode_attrs_strings(struct otlp_writer *w, struct pb_msg *dict)
{
	uint32_t i;

	for (i = 0; i < w->nr_attrs; i++) {	/* [0] is the empty entry */
		const struct attr *a = &w->attrs[i];

		pb_reset(&w->item);
		if (i) {
			pb_reset(&w->line);
			if (a->is_int)
				pb_int64(&w->line, ANY_VALUE_INT, a->value);
			else
				pb_uint64(&w->line, ANY_VALUE_STRING_STRINDEX, (uint64_t)a->value);
			pb_uint64(&w->item, KEY_VALUE_AND_UNIT_KEY, a->key);
			pb_message(&w->item, KEY_VALUE_AND_UNIT_VALUE, &w->line);
		}
		pb_message(dict, DICT_ATTRIBUTE_TABLE, &w->item);
	}
	for (i = 0; i < w->p->strings.nr + w->extra.nr - 1; i++)
		pb_string(dict, DICT_STRING_TABLE, str_of(w, i));
}

static void resource_attr(struct otlp_writer *w, struct pb_msg *res, const char *key,
			  const char *value, size_t n)
{
	pb_reset(&w->line);
	pb_bytes(&w->line, ANY_VALUE_STRING, value, n);
	pb_reset(&w->item);
	pb_string(&w->item, KEY_VALUE_KEY, key);
	pb_message(&w->item, KEY_VALUE_VALUE, &w->line);
	pb_message(res, RESOURCE_ATTRIBUTES, &w->item);
}

/*
 * The host's resource: host.name, host.arch (as the semantic conventions
 * name x86-64 and AArch64), os.type, and service.name: --app-name, its
 * Pyroscope labels ("web{dc=eu1}") as attributes of their own; else the
 * host's name.
 */
static void encode_resource(struct otlp_writer *w, struct pb_msg *res)
{
	const char *app = w->o ? w->o->app_name : NULL, *brace, *s;
	char host[256] = "";
	struct utsname u;

	if (gethostname(host, sizeof(host) - 1))
		host[0] = '\0';
	if (uname(&u))
		strcpy(u.machine, "");
	pb_reset(res);
	resource_attr(w, res, "host.name", host, strlen(host));
	s = !strcmp(u.machine, "x86_64") ? "amd64" : !strcmp(u.machine, "aarch64") ? "arm64"
									  : u.machine;
	resource_attr(w, res, "host.arch", s, strlen(s));
	resource_attr(w, res, "os.type", "linux", 5);
	if (!app || !*app)
		app = host;
	brace = strchr(app, '{');
	resource_attr(w, res, "service.name", app, brace ? (size_t)(brace - app) : strlen(app));
	for (s = brace ? brace + 1 : NULL; s && *s && *s != '}';) {
		size_t n = strcspn(s, ",}");
		const char *eq = memchr(s, '=', n);
		char key[128];

		if (eq && eq > s && (size_t)(eq - s) < sizeof(key)) {
			memcpy(key, s, eq - s);
			key[eq - s] = '\0';
			resource_attr(w, res, key, eq + 1, n - (eq + 1 - s));
		}
		s += n + (s[n] == ',');
	}
}

/* The request's bytes into out. */
static void encode_request(struct otlp_writer *w, struct pb_msg *out)
{
	const struct profile *p = w->p;
	struct pb_msg res = { 0 }, prof = { 0 }, scope = { 0 }, rp = { 0 }, dict = { 0 };
	int which;

	encode_resource(w, &res);
	pb_reset(&w->item);
	pb_string(&w->item, SCOPE_NAME, "bpfprof");
	pb_string(&w->item, SCOPE_VERSION, BPFPROF_VERSION);
	pb_message(&scope, SCOPE_PROFILES_SCOPE, &w->item);
	for (which = 0; which < 2; which++) {
		if ((which == 0 && p->kind == PROFILE_OFF_CPU) ||
		    (which == 1 && p->kind == PROFILE_CPU))
			continue;
		encode_profile(w, &prof, which);
		pb_message(&scope, SCOPE_PROFILES_PROFILES, &prof);
	}
	pb_message(&rp, RESOURCE_PROFILES_RESOURCE, &res);
	pb_message(&rp, RESOURCE_PROFILES_SCOPE_PROFILES, &scope);
	encode_tables(w, &dict);
	encode_attrs_strings(w, &dict);
	pb_message(out, REQUEST_RESOURCE_PROFILES, &rp);
	pb_message(out, REQUEST_DICTIONARY, &dict);
	pb_release(&res);
	pb_release(&prof);
	pb_release(&scope);
	pb_release(&rp);
	pb_release(&dict);
}

int write_otlp(FILE *out, const struct profile *p, const struct write_options *o)
{
	struct otlp_writer w = { .p = p, .o = o };
	struct pb_msg req = { 0 };
	int err = 0;

	strtab_init(&w.extra);
	attr(&w, 0, false, 0);	/* [0]: the empty entry */
	find_exes(&w);
	encode_request(&w, &req);
	if (o && o->gzip) {
		struct pb_gzip *gz = xmalloc(sizeof(*gz));

		if (!(err = pb_gzip_open(gz, out))) {
			pb_gzip_write(gz, &req);
			err = pb_gzip_close(gz);
		}
		free(gz);
	} else if (req.len && fwrite(req.buf, 1, req.len, out) != req.len) {
		err = -(errno ? errno : EIO);
	} else if (fflush(out) || ferror(out)) {
		err = -(errno ? errno : EIO);
	}
	pb_release(&req);
	pb_release(&w.sub);
	pb_release(&w.item);
	pb_release(&w.line);
	strtab_release(&w.extra);
	itab_release(&w.attr_index);
	free(w.attrs);
	free(w.exes);
	free(w.exe_name);
	free(w.ids);
	return err;
}
