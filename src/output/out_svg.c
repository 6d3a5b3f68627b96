// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The built-in flame graph: the profile as one self-contained SVG, drawn
 * the way flamegraph.pl draws it (root at the bottom, each frame as wide as
 * its inclusive samples, children sorted by name), with its own style and
 * script for hover details, click to zoom and regex search. Nothing is
 * fetched from anywhere.
 *
 * The tree is the folded output's: "all", then the thread (comm, or
 * comm-PID), user frames root to leaf, kernel frames root to leaf; a
 * lost-sample pseudo-sample's frame hangs from "all" directly.
 *
 * Every frame is one line, which the script and the tests rely on:
 *   <g class="KIND"><title>NAME (N samples, P%)</title><rect x= y= width=
 *   height= fill= data-s="N" data-o="OFFSET"/><text x= y=>LABEL</text></g>
 * KIND is root, thread, user, kernel, jit, inline or special; OFFSET is the
 * number of samples left of the frame in the whole graph; no <text> when
 * not even three characters of the name fit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/intern.h"
#include "bpfprof/output.h"
#include "bpfprof/runtime_info.h"
#include "svg_script.h"

#define WIDTH		1200	/* px, as flamegraph.pl */
#define XPAD		10
#define FRAME_HEIGHT	16
#define FONT_SIZE	12
#define CHAR_WIDTH	(0.61 * FONT_SIZE)	/* DejaVu Sans Mono: 0.602 em */
#define MIN_WIDTH	0.1	/* px: narrower frames are left out */
#define TOP		58	/* title, subtitle, buttons */
#define BOTTOM		34	/* the details line */
#define TITLE_CHARS	140	/* longer command lines are cut */
#define HIGHLIGHT	"#e600e6"	/* search matches */

enum svg_kind {
	K_ROOT,
	K_THREAD,
	K_USER,
	K_KERNEL,
	K_JIT,
	K_INLINE,
	K_SPECIAL,
	K_INTERP,		/* + a runtime's id: an interpreter's function */
};

static const char *const kind_names[] = {
	[K_ROOT] = "root",
	[K_THREAD] = "thread",
	[K_USER] = "user",
	[K_KERNEL] = "kernel",
	[K_JIT] = "jit",
	[K_INLINE] = "inline",
	[K_SPECIAL] = "special",
};

/* The runtime of a frame of kind (K_INTERP + its id) in p, or NULL. */
static const struct runtime_info *runtime_of(const struct profile *p, uint32_t kind)
{
	return kind >= K_INTERP && kind - K_INTERP < RUNTIME_KINDS ? p->runtimes[kind - K_INTERP]
								    : NULL;
}

/* A frame's class in the SVG: its kind's, or an interpreter's runtime's (--no-OPTION's name). */
static const char *kind_name(const struct profile *p, uint32_t kind)
{
	const struct runtime_info *r = runtime_of(p, kind);

	return kind < K_INTERP ? kind_names[kind] : r ? r->option : "interp";
}

struct node {
	uint64_t count;		/* inclusive samples */
	uint64_t offset;	/* samples left of it in the whole graph */
	uint32_t name;		/* in graph.names */
	uint32_t parent;
	uint32_t children;	/* its first child in graph.order */
	uint32_t nr_children;
	uint32_t depth;		/* "all" is 0 */
	uint8_t kind;		/* enum svg_kind */
};

/* One frame of a location: a line of its inline chain, or its only name. */
struct loc_frame {
	uint32_t name;
	uint8_t kind;
};

struct graph {
	const struct profile *p;
	struct strtab names;	/* sanitized, not escaped */
	struct node *nodes;	/* 0 is "all"; a parent comes before its children */
	uint32_t nr_nodes, nodes_alloc;
	struct itab index;	/* (parent, name, kind) -> node */
	uint32_t *loc_first;	/* per location: its first loc_frame, or ITAB_NONE */
	struct loc_frame *loc_frames;	/* outermost line first */
	uint32_t nr_loc_frames, loc_frames_alloc;
	uint32_t *order;	/* nodes but "all", grouped by parent, by name */
	uint32_t *rank;		/* per name: its place in strcmp order */
	struct strbuf tmp, tmp2;
	/* A differential graph (bpfprof diff): each node's count in the profile before. */
	uint64_t *before, before_total;
	double max_change;	/* the largest change of share, either way */
};

/* Names: valid UTF-8, no control characters -------------------------------- */

/* The length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t len, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		c &= 0x1f;
		min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms and surrogates are not UTF-8. */
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/*
 * Names come from arbitrary binaries: what XML cannot carry must go. As in
 * the folded output, control characters (C1 too) become '?'; a byte that is
 * not UTF-8, and U+FFFE/U+FFFF which XML forbids, become U+FFFD.
 */
static void add_sanitized(struct strbuf *sb, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, len;
	uint32_t cp;

	while (i < n) {
		len = utf8_seq(u + i, n - i, &cp);
		if (!len) {
			strbuf_addstr(sb, "\xef\xbf\xbd");
			i++;
			continue;
		}
		if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
			strbuf_addch(sb, '?');
		else if (cp == 0xfffe || cp == 0xffff)
			strbuf_addstr(sb, "\xef\xbf\xbd");
		else
			strbuf_add(sb, s + i, len);
		i += len;
	}
}

/* Escapes a sanitized string for text and double- or single-quoted attributes. */
static void add_xml(struct strbuf *sb, const char *s, size_t n)
{
	size_t i, start = 0;
	const char *rep;

	for (i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default: continue;
		}
		strbuf_add(sb, s + start, i - start);
		strbuf_addstr(sb, rep);
		start = i + 1;
	}
	strbuf_add(sb, s + start, n - start);
}

/*
 * The label that fits w px: the whole name, or its first characters and
 * "..", or none when not even three characters fit; as <text x y>LABEL
 * </text>, or nothing at all for no label: most frames of a big graph are
 * too narrow for one, and every element slows the browser down. The
 * script's fit() does the same when zooming.
 */
static void add_label(struct strbuf *sb, const char *name, double x, uint32_t y, double w)
{
	size_t i, chars = 0, cut = 0, fits = w > 6 ? (size_t)((w - 6) / CHAR_WIDTH) : 0;

	if (fits < 3)
		return;
	for (i = 0; name[i]; i++) {
		if ((name[i] & 0xc0) == 0x80)
			continue;
		if (chars == fits - 2)
			cut = i;
		chars++;
	}
	strbuf_addf(sb, "<text x=\"%.2f\" y=\"%u\">", x + 3, y + FRAME_HEIGHT - 5);
	if (chars <= fits) {
		add_xml(sb, name, i);
	} else {
		add_xml(sb, name, cut);
		strbuf_addstr(sb, "..");
	}
	strbuf_addstr(sb, "</text>");
}

/* Colours --------------------------------------------------------------------- */

/*
 * flamegraph.pl's conventions: user code in warm hues picked by a hash of
 * the name, so a function keeps its colour from graph to graph; the kernel
 * a paler orange, JIT code green, inlined functions aqua, an interpreter's
 * functions in its runtime's colour (its descriptor's), what bpfprof made
 * up grey.
 */
static void frame_colour(const char *name, uint32_t kind, const struct runtime_info *rt,
			 char out[8])
{
	uint64_t h = hash_bytes(name, strlen(name), 0x666c616d65ULL);
	double v1 = (h & 0xffff) / 65535.0;
	double v2 = (h >> 16 & 0xffff) / 65535.0;
	double v3 = (h >> 32 & 0xffff) / 65535.0;
	const double v[3] = { v1, v2, v3 };
	unsigned r, g, b;

	if (rt) {
		r = rt->colour[0].base + rt->colour[0].span * v[rt->colour[0].v % 3];
		g = rt->colour[1].base + rt->colour[1].span * v[rt->colour[1].v % 3];
		b = rt->colour[2].base + rt->colour[2].span * v[rt->colour[2].v % 3];
		snprintf(out, 8, "#%02x%02x%02x", r, g, b);
		return;
	}
	switch (kind) {
	case K_KERNEL:
		r = 225 + 30 * v1;
		g = 150 + 35 * v2;
		b = 80 + 40 * v3;
		break;
	case K_JIT:
		r = 50 + 60 * v1;
		g = 200 + 55 * v1;
		b = r;
		break;
	case K_INLINE:
		r = 50 + 60 * v1;
		g = 165 + 55 * v1;
		b = g;
		break;
	case K_SPECIAL:
		r = g = b = 170 + 40 * v1;
		break;
	default:
		r = 205 + 50 * v3;
		g = 230 * v1;
		b = 55 * v2;
		break;
	}
	snprintf(out, 8, "#%02x%02x%02x", r, g, b);
}

/*
 * A differential graph's colours, as FlameGraph's difffolded ones: by how
 * the frame's share changed, red where it grew, blue where it shrank, the
 * deeper the more (against the largest change in the graph), white when
 * the same.
 */
static void change_colour(double change, double max_change, char out[8])
{
	double x = max_change > 0 ? change / max_change : 0;
	unsigned fade = (unsigned)(255 * (1 - (x < 0 ? -x : x)) + 0.5);

	if (x >= 0)
		snprintf(out, 8, "#ff%02x%02x", fade, fade);
	else
		snprintf(out, 8, "#%02x%02xff", fade, fade);
}

/* The tree ------------------------------------------------------------------- */

struct node_key {
	uint32_t parent, name;
	uint8_t kind;
};

static uint64_t node_hash(uint32_t parent, uint32_t name, uint8_t kind)
{
	return hash_mix(hash_mix(hash_u64(parent), name), kind);
}

static bool node_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct node *n = &((const struct graph *)owner)->nodes[idx];
	const struct node_key *k = key;

	return n->parent == k->parent && n->name == k->name && n->kind == k->kind;
}

static uint32_t add_node(struct graph *g, uint32_t parent, uint32_t name, uint8_t kind)
{
	struct node *n;

	ALLOC_GROW(g->nodes, g->nr_nodes + 1, g->nodes_alloc);
	n = &g->nodes[g->nr_nodes];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->parent = parent;
	n->kind = kind;
	n->depth = g->nr_nodes ? g->nodes[parent].depth + 1 : 0;
	return g->nr_nodes++;
}

/* The child of parent named name, created if needed, with count added. */
static uint32_t child(struct graph *g, uint32_t parent, uint32_t name, uint8_t kind,
		      uint64_t count)
{
	struct node_key k = { parent, name, kind };
	uint64_t hash = node_hash(parent, name, kind);
	uint32_t id = itab_find(&g->index, hash, node_eq, g, &k);

	if (id == ITAB_NONE) {
		id = add_node(g, parent, name, kind);
		itab_insert(&g->index, hash, id);
	}
	g->nodes[id].count += count;
	return id;
}

/* The child of parent named name, ITAB_NONE if there is none. */
static uint32_t find_child(const struct graph *g, uint32_t parent, uint32_t name, uint8_t kind)
{
	struct node_key k = { parent, name, kind };

	return itab_find(&g->index, node_hash(parent, name, kind), node_eq, g, &k);
}

static uint32_t intern_sanitized(struct graph *g, const char *s, size_t n)
{
	strbuf_reset(&g->tmp2);
	add_sanitized(&g->tmp2, s, n);
	return strtab_intern_n(&g->names, g->tmp2.buf, g->tmp2.len);
}

/* A location's frames, outermost line first, named once per location. */
static const struct loc_frame *loc_frames(struct graph *g, uint32_t loc, uint32_t *nr)
{
	const struct prof_location *l = &g->p->locations[loc];
	uint32_t n = l->nlines ? l->nlines : 1, j;
	uint8_t kind;

	*nr = n;
	if (g->loc_first[loc] != ITAB_NONE)
		return g->loc_frames + g->loc_first[loc];
	switch (l->kind) {
	case FRAME_KERNEL:
		kind = K_KERNEL;
		break;
	case FRAME_JIT:
		kind = K_JIT;
		break;
	case FRAME_SPECIAL:
		kind = K_SPECIAL;
		break;
	default:
		if (l->kind >= FRAME_INTERP) {
			kind = K_INTERP + (l->kind - FRAME_INTERP);
			break;
		}
		/* An address in no mapping is "[unknown]": nothing to tell, grey. */
		kind = !l->nlines && !l->label &&
		       (!l->mapping || !g->p->mappings[l->mapping].file) ? K_SPECIAL : K_USER;
		break;
	}
	ALLOC_GROW(g->loc_frames, g->nr_loc_frames + n, g->loc_frames_alloc);
	g->loc_first[loc] = g->nr_loc_frames;
	for (j = 0; j < n; j++) {
		struct loc_frame *f = &g->loc_frames[g->nr_loc_frames + j];

		/* Lines are innermost first; all but the outermost were inlined. */
		strbuf_reset(&g->tmp);
		profile_frame_name(g->p, loc, n - 1 - j, &g->tmp);
		f->name = intern_sanitized(g, g->tmp.buf, g->tmp.len);
		f->kind = j ? K_INLINE : kind;
	}
	g->nr_loc_frames += n;
	return g->loc_frames + g->loc_first[loc];
}

static void add_sample(struct graph *g, const struct prof_sample *s, bool per_pid)
{
	const struct profile *p = g->p;
	const char *comm = profile_str(p, s->comm);
	uint32_t node = 0, depth, i, j, nr;
	const uint32_t *frames = profile_stack_frames(p, s->stack, &depth);

	g->nodes[0].count += s->count;
	if (*comm) {
		strbuf_reset(&g->tmp);
		strbuf_addstr(&g->tmp, comm);
		if (per_pid)
			strbuf_addf(&g->tmp, "-%u", s->pid);
		node = child(g, 0, intern_sanitized(g, g->tmp.buf, g->tmp.len), K_THREAD, s->count);
	}
	for (i = depth; i-- > 0;) {
		const struct loc_frame *f = loc_frames(g, frames[i], &nr);

		for (j = 0; j < nr; j++)
			node = child(g, node, f[j].name, f[j].kind, s->count);
	}
	/* As in the folded output: a sample with nothing to name still shows. */
	if (!node)
		child(g, 0, strtab_intern(&g->names, "[unknown]"), K_SPECIAL, s->count);
}

static int name_cmp(const void *a, const void *b, void *arg)
{
	const struct strtab *names = arg;

	return strcmp(strtab_get(names, *(const uint32_t *)a), strtab_get(names, *(const uint32_t *)b));
}

static int child_cmp(const void *a, const void *b, void *arg)
{
	const struct graph *g = arg;
	const struct node *x = &g->nodes[*(const uint32_t *)a], *y = &g->nodes[*(const uint32_t *)b];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->name != y->name)
		return g->rank[x->name] < g->rank[y->name] ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

/*
 * Children sorted by name, as flamegraph.pl draws sorted folded lines, and
 * their offsets; only the children of frames wide enough to draw, as a
 * frame is no wider than its parent (when many stacks differ in their
 * leaves, that leaves most nodes out of the sort). Names are ranked once so
 * the big sort compares integers. A parent comes before its children in
 * nodes[], so sorting by parent index meets every parent before its
 * children.
 */
static void layout(struct graph *g, double scale)
{
	uint32_t *by_name = xmalloc(g->names.nr * sizeof(*by_name)), i, n = 0;
	uint64_t next = 0;
	uint32_t last = ITAB_NONE;

	for (i = 0; i < g->names.nr; i++)
		by_name[i] = i;
	qsort_r(by_name, g->names.nr, sizeof(*by_name), name_cmp, &g->names);
	g->rank = xmalloc(g->names.nr * sizeof(*g->rank));
	for (i = 0; i < g->names.nr; i++)
		g->rank[by_name[i]] = i;
	free(by_name);

	g->order = xmalloc(g->nr_nodes * sizeof(*g->order));
	for (i = 1; i < g->nr_nodes; i++)
		if (g->nodes[g->nodes[i].parent].count * scale >= MIN_WIDTH)
			g->order[n++] = i;
	qsort_r(g->order, n, sizeof(*g->order), child_cmp, g);
	for (i = 0; i < n; i++) {
		struct node *c = &g->nodes[g->order[i]];
		struct node *parent = &g->nodes[c->parent];

		if (c->parent != last) {
			last = c->parent;
			parent->children = i;
			next = parent->offset;
		}
		parent->nr_children++;
		c->offset = next;
		next += c->count;
	}
}

/* Writing --------------------------------------------------------------------- */

static void add_duration(struct strbuf *sb, uint64_t ns)
{
	double s = ns / 1e9;

	if (s < 10)
		strbuf_addf(sb, "%.2f s", s);
	else
		strbuf_addf(sb, "%.1f s", s);
}

static void write_head(FILE *out, struct graph *g, uint32_t height, uint64_t total,
		       uint64_t omitted)
{
	const struct profile *p = g->p;
	struct strbuf *sb = &g->tmp, *clean = &g->tmp2;
	size_t i, chars;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" "
		"onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<!-- Flame graph written by bpfprof; frames as flamegraph.pl draws them. -->\n"
		"<style type=\"text/css\"><![CDATA[\n%s]]></style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n"
		"var fg_conf = { width: %d, xpad: %d, fh: %d, base: %u, minw: %g, cw: %g, "
		"total: %llu, hl: '%s', unit: '%s', btotal: %lld };\n"
		"%s]]></script>\n"
		"<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
		"<stop stop-color=\"#eeeeee\" offset=\"5%%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%%\"/>"
		"</linearGradient></defs>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"url(#background)\"/>\n",
		WIDTH, height, WIDTH, height, svg_style, WIDTH, XPAD, FRAME_HEIGHT,
		height - BOTTOM - FRAME_HEIGHT, MIN_WIDTH, CHAR_WIDTH, (unsigned long long)total,
		HIGHLIGHT, p->kind == PROFILE_OFF_CPU ? "us" : "samples",
		g->before ? (long long)g->before_total : -1LL, svg_script, WIDTH, height);

	/* The title: the command line, cut when it would not fit. */
	strbuf_reset(clean);
	if (p->command_line)
		add_sanitized(clean, p->command_line, strlen(p->command_line));
	else
		strbuf_addstr(clean, "Flame Graph");
	for (i = chars = 0; i < clean->len; i++)
		if ((clean->buf[i] & 0xc0) != 0x80 && ++chars > TITLE_CHARS)
			break;
	strbuf_reset(sb);
	add_xml(sb, clean->buf, i);
	if (i < clean->len)
		strbuf_addstr(sb, "...");
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"24\">%s</text>\n", WIDTH / 2, sb->buf);

	strbuf_reset(sb);
	if (p->duration_ns) {
		add_duration(sb, p->duration_ns);
		if (p->frequency)
			strbuf_addf(sb, " at %u Hz", p->frequency);
		strbuf_addstr(sb, ": ");
	}
	if (p->kind == PROFILE_OFF_CPU)
		strbuf_addf(sb, "%llu us off the CPU", (unsigned long long)total);
	else if (total)
		strbuf_addf(sb, "%llu samples%s", (unsigned long long)total,
			    p->kind == PROFILE_WALL ? " of wall time (on and off the CPU)" : "");
	else
		strbuf_addstr(sb, "no samples");
	if (g->before)
		strbuf_addf(sb, "; before: %llu; red grew, blue shrank (by share)",
			    (unsigned long long)g->before_total);
	if (omitted)
		strbuf_addf(sb, "; %llu frame%s narrower than %g px not drawn",
			    (unsigned long long)omitted, omitted == 1 ? "" : "s", MIN_WIDTH);
	fprintf(out, "<text id=\"subtitle\" x=\"%d\" y=\"44\">%s</text>\n"
		"<text id=\"unzoom\" class=\"btn hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%d\" y=\"24\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%u\"> </text>\n",
		WIDTH / 2, sb->buf, XPAD, WIDTH - XPAD, XPAD, height - 12, WIDTH - XPAD, height - 12);
}

static void write_frame(FILE *out, struct graph *g, const struct node *n, double scale,
			uint64_t total, uint32_t base)
{
	const char *name = strtab_get(&g->names, n->name);
	double x = XPAD + n->offset * scale, w = n->count * scale;
	uint32_t y = base - n->depth * FRAME_HEIGHT;
	struct strbuf *sb = &g->tmp;
	char fill[8];

	uint64_t before = g->before ? g->before[n - g->nodes] : 0;
	double share = 100.0 * n->count / total;
	double share_before = g->before_total ? 100.0 * before / g->before_total : 0;

	if (g->before)
		change_colour((share - share_before) / 100, g->max_change, fill);
	else
		frame_colour(name, n->kind, runtime_of(g->p, n->kind), fill);
	strbuf_reset(sb);
	strbuf_addf(sb, "<g class=\"%s\"><title>", kind_name(g->p, n->kind));
	add_xml(sb, name, strlen(name));
	strbuf_addf(sb, " (%llu %s, %.2f%%", (unsigned long long)n->count,
		    g->p->kind == PROFILE_OFF_CPU ? "us" : n->count == 1 ? "sample" : "samples", share);
	/* A differential graph: the frame before, and how its share changed. */
	if (g->before)
		strbuf_addf(sb, "; before %llu, %.2f%%; %+.2f points", (unsigned long long)before,
			    share_before, share - share_before);
	strbuf_addf(sb, ")</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%d\" "
		    "fill=\"%s\" data-s=\"%llu\" data-o=\"%llu\"", x, y, w, FRAME_HEIGHT - 1, fill,
		    (unsigned long long)n->count, (unsigned long long)n->offset);
	if (g->before)
		strbuf_addf(sb, " data-b=\"%llu\"", (unsigned long long)before);
	strbuf_addstr(sb, "/>");
	add_label(sb, name, x, y, w);
	strbuf_addstr(sb, "</g>\n");
	fwrite(sb->buf, 1, sb->len, out);
}

/* Depth first, children in name order, so equal profiles give equal files. */
static void write_frames(FILE *out, struct graph *g, double scale, uint64_t total, uint32_t base)
{
	uint32_t *stack, top = 0, i;

	stack = xmalloc(g->nr_nodes * sizeof(*stack));
	stack[top++] = 0;
	while (top) {
		const struct node *n = &g->nodes[stack[--top]];

		if (n->count * scale < MIN_WIDTH)
			continue;	/* its children are no wider */
		write_frame(out, g, n, scale, total, base);
		for (i = n->nr_children; i-- > 0;)
			stack[top++] = g->order[n->children + i];
	}
	free(stack);
}

static void graph_release(struct graph *g)
{
	strtab_release(&g->names);
	free(g->nodes);
	itab_release(&g->index);
	free(g->loc_first);
	free(g->loc_frames);
	free(g->order);
	free(g->rank);
	free(g->before);
	strbuf_release(&g->tmp);
	strbuf_release(&g->tmp2);
}

/* The graph of p's samples. */
static void build(struct graph *g, const struct profile *p, bool per_pid)
{
	uint32_t i;

	g->p = p;
	strtab_init(&g->names);
	strbuf_init(&g->tmp);
	strbuf_init(&g->tmp2);
	g->loc_first = xmalloc((p->nr_locations + 1) * sizeof(*g->loc_first));
	for (i = 0; i < p->nr_locations; i++)
		g->loc_first[i] = ITAB_NONE;
	add_node(g, 0, strtab_intern(&g->names, "all"), K_ROOT);
	for (i = 0; i < p->nr_samples; i++)
		if (p->samples[i].count)
			add_sample(g, &p->samples[i], per_pid);
}

/*
 * bpfprof diff: each node's count in the profile before, found by the
 * same path of names and kinds in its graph (0 where it had none), and the
 * largest change of share among the frames drawn.
 */
static void compare(struct graph *g, const struct profile *before, double scale)
{
	struct graph b = { 0 };
	uint32_t *at = xmalloc(g->nr_nodes * sizeof(*at)), i, name;
	double change;

	build(&b, before, false);
	g->before = xcalloc(g->nr_nodes, sizeof(*g->before));
	g->before_total = b.nodes[0].count;
	at[0] = 0;
	g->before[0] = g->before_total;
	for (i = 1; i < g->nr_nodes; i++) {
		const struct node *n = &g->nodes[i];

		/* A parent comes before its children: its place in b is known. */
		at[i] = ITAB_NONE;
		if (at[n->parent] != ITAB_NONE) {
			name = strtab_intern(&b.names, strtab_get(&g->names, n->name));
			at[i] = find_child(&b, at[n->parent], name, n->kind);
		}
		g->before[i] = at[i] != ITAB_NONE ? b.nodes[at[i]].count : 0;
		if (n->count * scale < MIN_WIDTH)
			continue;
		change = (double)n->count / g->nodes[0].count -
			 (g->before_total ? (double)g->before[i] / g->before_total : 0);
		if (change < 0)
			change = -change;
		if (change > g->max_change)
			g->max_change = change;
	}
	free(at);
	graph_release(&b);
}

int write_svg(FILE *out, const struct profile *p, const struct write_options *o)
{
	struct graph g = { 0 };
	uint32_t i, max_depth = 0, height, base;
	uint64_t total, omitted = 0;
	double scale;
	int err = 0;

	build(&g, p, o->per_pid);
	total = g.nodes[0].count;
	scale = total ? (double)(WIDTH - 2 * XPAD) / total : 0;
	layout(&g, scale);
	if (o->before)
		compare(&g, o->before, scale);
	for (i = 0; i < g.nr_nodes; i++) {
		if (g.nodes[i].count * scale < MIN_WIDTH)
			omitted++;
		else if (g.nodes[i].depth > max_depth)
			max_depth = g.nodes[i].depth;
	}
	if (!total)
		omitted = 0;	/* "all" with no samples: nothing to draw, nothing left out */
	height = TOP + (max_depth + 1) * FRAME_HEIGHT + BOTTOM;
	base = height - BOTTOM - FRAME_HEIGHT;

	write_head(out, &g, height, total, omitted);
	fputs("<g id=\"frames\">\n", out);
	if (total)
		write_frames(out, &g, scale, total, base);
	fputs("</g>\n</svg>\n", out);
	if (fflush(out) || ferror(out))
		err = -(errno ? errno : EIO);
	graph_release(&g);
	return err;
}
