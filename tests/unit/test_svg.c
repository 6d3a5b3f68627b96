// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The SVG flame graph writer: well-formed XML whatever the names, frames as
 * wide as their samples, the same tree as the folded output, colours by
 * kind, narrow frames left out and counted, the empty profile, a full disk.
 * The frames are read back from the one-line-per-frame structure the
 * writer promises (see src/output/out_svg.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "bpfprof/intern.h"
#include "bpfprof/output.h"
#include "bpfprof/profile.h"
#include "unit.h"

#define INNER_WIDTH 1180.0	/* 1200 px less 10 px each side */
#define CHAR_PX (0.61 * 12)

struct frame {
	char kind[16];
	char fill[8];
	char *name;		/* unescaped */
	char *label;		/* unescaped */
	uint64_t s, o;
	double x, w;
	unsigned y, depth;
};

struct frames {
	struct frame *v;
	size_t n;
};

static char *render(const struct profile *p, bool per_pid)
{
	int err;
	char *buf = unit_write(write_svg, p, per_pid, &err);

	CHECK(err == 0, "svg: the writer returns 0 (%d)", err);
	return buf;
}

/* xmllint's verdict; 127 when it is not installed. */
static int xmllint(const char *doc)
{
	FILE *f = popen("xmllint --noout - 2>/dev/null", "w");
	int status;

	if (!f)
		return -1;
	fputs(doc, f);
	status = pclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *unescape(const char *s, size_t n)
{
	static const struct {
		const char *ent, *ch;
	} ents[] = { { "&amp;", "&" }, { "&lt;", "<" }, { "&gt;", ">" }, { "&quot;", "\"" },
		     { "&#39;", "'" } };
	struct strbuf sb;
	size_t i, j;

	strbuf_init(&sb);
	for (i = 0; i < n;) {
		for (j = 0; j < ARRAY_SIZE(ents); j++)
			if (!strncmp(s + i, ents[j].ent, strlen(ents[j].ent)))
				break;
		if (j < ARRAY_SIZE(ents)) {
			strbuf_addstr(&sb, ents[j].ch);
			i += strlen(ents[j].ent);
		} else {
			strbuf_addch(&sb, s[i++]);
		}
	}
	return strbuf_detach(&sb);
}

static bool attr(const char *line, const char *name, char *buf, size_t size)
{
	char key[32];
	const char *v, *end;

	snprintf(key, sizeof(key), " %s=\"", name);
	v = strstr(line, key);
	if (!v)
		return false;
	v += strlen(key);
	end = strchr(v, '"');
	if (!end || (size_t)(end - v) >= size)
		return false;
	memcpy(buf, v, end - v);
	buf[end - v] = '\0';
	return true;
}

static void frames_release(struct frames *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		free(fs->v[i].name);
		free(fs->v[i].label);
	}
	free(fs->v);
	memset(fs, 0, sizeof(*fs));
}

/* Every <g class=...> line of the frames, in document order; false if one does not parse. */
static bool parse(const char *svg, struct frames *fs)
{
	const char *line = svg, *eol, *t, *te;
	char buf[64];
	size_t alloc = 0;

	memset(fs, 0, sizeof(*fs));
	while ((line = strstr(line, "\n<g class=\""))) {
		struct frame f = { 0 };
		char *l;

		line++;
		eol = strchr(line, '\n');
		l = strndup(line, eol ? (size_t)(eol - line) : strlen(line));
		t = strstr(l, "<title>");
		te = strstr(l, "</title>");
		if (sscanf(l, "<g class=\"%15[a-z]\">", f.kind) != 1 || !t || !te)
			goto bad;
		t += 7;
		while (te > t && strncmp(te, " (", 2))
			te--;
		f.name = unescape(t, te - t);
		if (!attr(l, "data-s", buf, sizeof(buf)) || sscanf(buf, "%" SCNu64, &f.s) != 1 ||
		    !attr(l, "data-o", buf, sizeof(buf)) || sscanf(buf, "%" SCNu64, &f.o) != 1 ||
		    !attr(l, "x", buf, sizeof(buf)) || sscanf(buf, "%lf", &f.x) != 1 ||
		    !attr(l, "width", buf, sizeof(buf)) || sscanf(buf, "%lf", &f.w) != 1 ||
		    !attr(l, "y", buf, sizeof(buf)) || sscanf(buf, "%u", &f.y) != 1 ||
		    !attr(l, "fill", f.fill, sizeof(f.fill)))
			goto bad;
		/* No <text> when no label fits; else it starts 3 px into the frame. */
		t = strstr(l, "<text");
		if (!t) {
			f.label = strdup("");
		} else {
			double tx;

			te = strstr(t, "</text>");
			if (!te || sscanf(t, "<text x=\"%lf\"", &tx) != 1 || tx - f.x < 2.995 ||
			    tx - f.x > 3.005)
				goto bad;
			t = strchr(t, '>') + 1;
			f.label = unescape(t, te - t);
			if (!*f.label)
				goto bad;
		}
		if (!strstr(l, "</g>"))
			goto bad;
		free(l);
		ALLOC_GROW(fs->v, fs->n + 1, alloc);
		fs->v[fs->n++] = f;
		continue;
bad:
		printf("#   cannot parse: %s\n", l);
		free(l);
		free(f.name);
		free(f.label);
		frames_release(fs);
		return false;
	}
	/* The first frame is "all", at the bottom. */
	for (size_t i = 0; i < fs->n; i++)
		fs->v[i].depth = (fs->v[0].y - fs->v[i].y) / 16;
	return true;
}

/* Characters, not bytes: labels are cut at whole UTF-8 characters. */
static size_t chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += (*s & 0xc0) != 0x80;
	return n;
}

static const struct frame *find(const struct frames *fs, const char *name, size_t nth)
{
	for (size_t i = 0; i < fs->n; i++)
		if (!strcmp(fs->v[i].name, name) && !nth--)
			return &fs->v[i];
	return NULL;
}

static double worse(double worst, double diff)
{
	if (diff < 0)
		diff = -diff;
	return diff > worst ? diff : worst;
}

/*
 * Widths and offsets proportional to samples, children inside their parent
 * with no more samples than it, siblings in name order.
 */
static void check_geometry(const struct frames *fs, uint64_t total, const char *what)
{
	double scale = INNER_WIDTH / total, worst_w = 0, worst_x = 0;
	size_t parent[512], i, bad_nest = 0, bad_order = 0, bad_label = 0;
	uint64_t *child_sum = calloc(fs->n, sizeof(*child_sum));

	for (i = 0; i < fs->n; i++) {
		const struct frame *f = &fs->v[i];

		worst_w = worse(worst_w, f->w - f->s * scale);
		worst_x = worse(worst_x, f->x - (10 + f->o * scale));
		if (*f->label && chars(f->label) * CHAR_PX > f->w - 6 + 1e-9)
			bad_label++;
		if (f->depth >= ARRAY_SIZE(parent))
			continue;
		parent[f->depth] = i;
		if (!f->depth)
			continue;
		const struct frame *up = &fs->v[parent[f->depth - 1]];

		child_sum[parent[f->depth - 1]] += f->s;
		if (f->o < up->o || f->o + f->s > up->o + up->s)
			bad_nest++;
		/* The previous frame one level up or at this level is a sibling if it shares the parent. */
		for (size_t j = i; j-- > parent[f->depth - 1] + 1;)
			if (fs->v[j].depth == f->depth) {
				if (strcmp(fs->v[j].name, f->name) > 0 || fs->v[j].o + fs->v[j].s != f->o)
					bad_order++;
				break;
			}
	}
	for (i = 0; i < fs->n; i++)
		if (child_sum[i] > fs->v[i].s)
			bad_nest++;
	CHECK(fs->n && fs->v[0].s == total && !strcmp(fs->v[0].name, "all") && fs->v[0].depth == 0,
	      "svg %s: the root \"all\" holds all %llu samples", what, (unsigned long long)total);
	CHECK(worst_w <= 0.005 + 1e-9, "svg %s: every width is samples x %.4f px (worst off by %.4f)",
	      what, scale, worst_w);
	CHECK(worst_x <= 0.005 + 1e-9, "svg %s: every x is 10 + offset x %.4f px (worst off by %.4f)",
	      what, scale, worst_x);
	CHECK(!bad_nest, "svg %s: children lie inside their parent, no wider in sum (%zu bad)", what,
	      bad_nest);
	CHECK(!bad_order, "svg %s: siblings side by side in name order (%zu bad)", what, bad_order);
	CHECK(!bad_label, "svg %s: every label fits its frame (%zu too long)", what, bad_label);
	free(child_sum);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The folded lines the flame graph draws: every frame's self samples (its
 * own less its children's) on its path, named as the folded writer names.
 */
static char *refold(const struct frames *fs)
{
	char **paths = calloc(fs->n, sizeof(*paths)), **lines = calloc(fs->n, sizeof(*lines));
	uint64_t *self = calloc(fs->n, sizeof(*self));
	size_t parent[512], i, n = 0;
	struct strbuf sb;

	strbuf_init(&sb);
	for (i = 0; i < fs->n; i++) {
		const struct frame *f = &fs->v[i];
		const char *c;

		self[i] = f->s;
		parent[f->depth] = i;
		if (!f->depth)
			continue;
		strbuf_reset(&sb);
		if (f->depth > 1) {
			strbuf_addstr(&sb, paths[parent[f->depth - 1]]);
			strbuf_addch(&sb, ';');
		}
		self[parent[f->depth - 1]] -= f->s;
		for (c = f->name; *c; c++)
			strbuf_addch(&sb, *c == ';' ? ':' : *c);
		if (!strcmp(f->kind, "kernel"))
			strbuf_addstr(&sb, "_[k]");
		else if (!strcmp(f->kind, "jit"))
			strbuf_addstr(&sb, "_[j]");
		else if (!strcmp(f->kind, "inline"))
			strbuf_addstr(&sb, "_[i]");
		paths[i] = xstrdup(sb.buf);
	}
	for (i = 1; i < fs->n; i++)
		if (self[i]) {
			strbuf_reset(&sb);
			strbuf_addf(&sb, "%s %llu\n", paths[i], (unsigned long long)self[i]);
			lines[n++] = xstrdup(sb.buf);
		}
	qsort(lines, n, sizeof(*lines), str_cmp);
	strbuf_reset(&sb);
	for (i = 0; i < n; i++) {
		strbuf_addstr(&sb, lines[i]);
		free(lines[i]);
	}
	for (i = 0; i < fs->n; i++)
		free(paths[i]);
	free(paths);
	free(lines);
	free(self);
	return strbuf_detach(&sb);
}

static char *folded(const struct profile *p, bool per_pid)
{
	return unit_write(write_folded, p, per_pid, NULL);
}

static uint32_t func(struct profile *p, const char *name)
{
	return profile_function(p, profile_string(p, name), profile_string(p, name), 0);
}

/*
 * Two processes of three threads, user, kernel, inlined and JIT frames, an
 * unnamed and an unmapped address, a lost-sample pseudo-sample. reverse
 * adds the same samples in the opposite order.
 */
static void build(struct profile *p, bool reverse)
{
	struct prof_mapping m = { 0x1000, 0x5000, 0x0, 0, 0, 42, false };
	struct prof_mapping k = { 0xffffffff81000000, 0xffffffff82000000, 0, 0, 0, 0, false };
	struct prof_line line = { 0, 0 }, chain[2] = { { 0, 0 }, { 0, 0 } };
	uint32_t um, km, l_main, l_work, l_unnamed, l_sys, l_read, l_inl, l_jit, l_unknown, l_lost;
	struct prof_sample s[7] = { { 0 } };
	uint32_t i;

	profile_init(p);
	p->command_line = strdup("bpfprof -F 99 -d 1 -o 'a&b<c>.svg'");
	p->duration_ns = 1500000000;
	p->frequency = 99;
	m.file = profile_string(p, "/usr/bin/app");
	k.file = profile_string(p, "[kernel.kallsyms]");
	um = profile_mapping(p, &m);
	km = profile_mapping(p, &k);
	line.function = func(p, "main");
	l_main = profile_location_add(p, um, 0x1100, FRAME_USER, &line, 1);
	line.function = func(p, "work;odd\nname");
	l_work = profile_location_add(p, um, 0x1200, FRAME_USER, &line, 1);
	l_unnamed = profile_location_add(p, um, 0x1abc, FRAME_USER, NULL, 0);
	line.function = func(p, "do_syscall_64");
	l_sys = profile_location_add(p, km, 0xffffffff81000010, FRAME_KERNEL, &line, 1);
	line.function = func(p, "ksys_read");
	l_read = profile_location_add(p, km, 0xffffffff81000020, FRAME_KERNEL, &line, 1);
	chain[0].function = func(p, "inlined_helper");	/* innermost first */
	chain[1].function = func(p, "outer_fn");
	l_inl = profile_location_add(p, um, 0x1300, FRAME_USER, chain, 2);
	line.function = func(p, "jitted");
	l_jit = profile_location_add(p, 0, 0x7f0000001000, FRAME_JIT, &line, 1);
	l_unknown = profile_location_add(p, 0, 0x7f0000002000, FRAME_USER, NULL, 0);
	l_lost = profile_special_location(p, "[lost: stack map full]");

	/* leaf first: kernel, then user */
	s[0].stack = profile_stack(p, (uint32_t[]){ l_sys, l_work, l_main }, 3);
	s[0].pid = 42, s[0].tid = 43, s[0].count = 5;
	s[1] = s[0];
	s[1].tid = 44, s[1].count = 2;
	s[2].stack = profile_stack(p, (uint32_t[]){ l_read, l_sys, l_work, l_main }, 4);
	s[2].pid = 42, s[2].tid = 43, s[2].count = 3;
	s[3].stack = profile_stack(p, (uint32_t[]){ l_unnamed, l_main }, 2);
	s[3].pid = 7, s[3].tid = 7, s[3].count = 4;
	s[4].stack = profile_stack(p, (uint32_t[]){ l_inl, l_main }, 2);
	s[4].pid = 42, s[4].tid = 43, s[4].count = 6;
	s[5].stack = profile_stack(p, (uint32_t[]){ l_jit, l_unknown, l_main }, 3);
	s[5].pid = 7, s[5].tid = 8, s[5].count = 2;
	s[6].stack = profile_stack(p, &l_lost, 1);
	s[6].count = 1;
	for (i = 0; i < 6; i++)
		s[i].comm = profile_string(p, i == 5 ? "worker" : "app");
	for (i = 0; i < 7; i++)
		profile_add_sample(p, &s[reverse ? 6 - i : i]);
}

static void colour(const char *fill, unsigned *r, unsigned *g, unsigned *b)
{
	*r = *g = *b = 0;
	sscanf(fill, "#%2x%2x%2x", r, g, b);
}

static void test_svg_tree(void)
{
	struct profile p, q;
	struct frames fs;
	char *svg, *svg2, *fold, *re;
	const struct frame *f, *g;
	unsigned r, gr, b;

	build(&p, false);
	svg = render(&p, false);
	CHECK(xmllint(svg) == 0, "svg: xmllint finds the document well-formed");
	CHECK(!strncmp(svg, "<?xml", 5) && strstr(svg, "</svg>\n"), "svg: a whole document");
	CHECK(!strstr(svg, "xlink:href") && !strstr(svg, "<image") && !strstr(svg, " src="),
	      "svg: nothing loaded from elsewhere");
	CHECK(strstr(svg, "function init(evt)") && strstr(svg, "onload=\"init(evt)\""),
	      "svg: its script is embedded and runs at load");
	CHECK(strstr(svg, ">bpfprof -F 99 -d 1 -o &#39;a&amp;b&lt;c&gt;.svg&#39;</text>") != NULL,
	      "svg: the title is the command line, escaped");
	CHECK(strstr(svg, ">1.50 s at 99 Hz: 23 samples</text>") != NULL,
	      "svg: the subtitle gives duration, rate and samples");
	if (!CHECK(parse(svg, &fs), "svg: every frame line parses"))
		return;
	CHECK(fs.n == 14, "svg: 14 frames: 13 distinct nodes and \"all\" (%zu)", fs.n);
	check_geometry(&fs, 23, "tree");

	fold = folded(&p, false);
	re = refold(&fs);
	expect_text(re, fold, "svg: the flame graph's tree is the folded output's");
	free(re);
	free(fold);

	f = find(&fs, "do_syscall_64", 0);
	CHECK(f && !strcmp(f->kind, "kernel") && f->s == 10, "svg: do_syscall_64 a kernel frame of 10 samples");
	f = find(&fs, "ksys_read", 0);
	g = find(&fs, "do_syscall_64", 0);
	CHECK(f && g && f->depth == g->depth + 1 && f->o == g->o,
	      "svg: kernel frames root to leaf above the user frames");
	f = find(&fs, "work;odd?name", 0);
	CHECK(f && !strcmp(f->kind, "user") && g && g->depth == f->depth + 1,
	      "svg: ';' kept, newline made '?', kernel frames above their user caller");
	f = find(&fs, "outer_fn", 0);
	g = find(&fs, "inlined_helper", 0);
	CHECK(f && g && !strcmp(f->kind, "user") && !strcmp(g->kind, "inline") &&
	      g->depth == f->depth + 1 && g->s == 6,
	      "svg: an inline chain: the outer function, then the inlined one above it, class inline");
	f = find(&fs, "jitted", 0);
	CHECK(f && !strcmp(f->kind, "jit"), "svg: JIT frame class jit");
	f = find(&fs, "[unknown]", 0);
	CHECK(f && !strcmp(f->kind, "special"), "svg: an unmapped address is [unknown], class special");
	f = find(&fs, "[lost: stack map full]", 0);
	CHECK(f && !strcmp(f->kind, "special") && f->depth == 1 && f->s == 1,
	      "svg: a lost-sample frame is a root of its own, class special");
	f = find(&fs, "app", 0);
	CHECK(f && !strcmp(f->kind, "thread") && f->s == 20 && f->depth == 1,
	      "svg: the thread name is the root (20 samples of 'app')");
	f = find(&fs, "[app+0xabc]", 0);
	CHECK(f && !strcmp(f->kind, "user") && f->s == 4, "svg: an unnamed frame is [module+0xoffset]");

	/* Colours by kind; a name keeps its colour. */
	for (size_t i = 0; i < fs.n; i++) {
		bool ok;

		f = &fs.v[i];
		colour(f->fill, &r, &gr, &b);
		if (!strcmp(f->kind, "kernel"))
			ok = r >= 225 && gr >= 150 && gr <= 185 && b >= 80 && b <= 120;
		else if (!strcmp(f->kind, "jit"))
			ok = gr >= 200 && r == b && r < 120;
		else if (!strcmp(f->kind, "inline"))
			ok = gr == b && gr >= 165 && r < 120;
		else if (!strcmp(f->kind, "special"))
			ok = r == gr && gr == b;
		else
			ok = r >= 205 && gr <= 230 && b <= 55;
		CHECK(ok, "svg: %s frame %s coloured %s", f->kind, f->name, f->fill);
	}
	f = find(&fs, "main", 0);
	g = find(&fs, "main", 1);
	CHECK(f && g && f != g && !strcmp(f->fill, g->fill), "svg: main is main's colour under both threads");
	frames_release(&fs);

	/* --per-pid: comm-PID roots, as in the folded output. */
	svg2 = render(&p, true);
	CHECK(parse(svg2, &fs) && find(&fs, "app-42", 0) && find(&fs, "app-7", 0) &&
	      find(&fs, "worker-7", 0) && !find(&fs, "app", 0), "svg --per-pid: comm-PID roots");
	fold = folded(&p, true);
	re = refold(&fs);
	expect_text(re, fold, "svg --per-pid: the tree is the folded output's");
	free(re);
	free(fold);
	frames_release(&fs);
	free(svg2);

	/* The same samples in another order draw the same bytes. */
	build(&q, true);
	svg2 = render(&q, false);
	CHECK(!strcmp(svg, svg2), "svg: deterministic: samples in another order, the same file");
	free(svg2);
	profile_release(&q);
	free(svg);
	profile_release(&p);
}

/* Names as arbitrary binaries have them. */
static void test_svg_names(void)
{
	static const char *const nasty[] = {
		"<&>\"'",
		"bad\xff\xfe-bytes",
		"overlong\xc0\xaf-slash",
		"surrogate\xed\xa0\x80-half",
		"cut\xe2\x82",
		"tab\there",
		"new\nline\r",
		"del\x7f-c1\xc2\x85-nel",
		"nonchar\xef\xbf\xbe-fffe",
		"]]>cdata-end",
		"-->comment-end",
		"utf8-\xc3\xbc-\xe5\x87\xbd\xe6\x95\xb0-\xf0\x9f\x94\xa5",
	};
	static const char *const want[] = {
		"<&>\"'",
		"bad\xef\xbf\xbd\xef\xbf\xbd-bytes",
		"overlong\xef\xbf\xbd\xef\xbf\xbd-slash",
		"surrogate\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd-half",
		"cut\xef\xbf\xbd\xef\xbf\xbd",
		"tab?here",
		"new?line?",
		"del?-c1?-nel",
		"nonchar\xef\xbf\xbd-fffe",
		"]]>cdata-end",
		"-->comment-end",
		"utf8-\xc3\xbc-\xe5\x87\xbd\xe6\x95\xb0-\xf0\x9f\x94\xa5",
	};
	struct prof_mapping m = { 0x1000, 0x5000, 0x0, 0, 0, 1, false };
	struct prof_line line = { 0, 0 };
	struct prof_sample s = { 0 };
	struct profile p;
	struct frames fs;
	uint32_t um, loc, i;
	char *svg, *frames_part, comm[32], longname[300];
	bool raw_ctl = false;

	profile_init(&p);
	p.command_line = strdup("bpfprof\x01 <script>\xff");
	m.file = profile_string(&p, "/opt/we\nird<dir>/app\xff");
	um = profile_mapping(&p, &m);
	for (i = 0; i < ARRAY_SIZE(nasty); i++) {
		line.function = func(&p, nasty[i]);
		loc = profile_location_add(&p, um, 0x1000 + i, FRAME_USER, &line, 1);
		s.stack = profile_stack(&p, &loc, 1);
		snprintf(comm, sizeof(comm), "c<%u>&\"\x1b", i % 2);
		s.comm = profile_string(&p, comm);
		s.pid = 1, s.tid = 1 + i % 2;
		s.count = 10 + i;
		profile_add_sample(&p, &s);
	}
	loc = profile_location_add(&p, um, 0x2abc, FRAME_USER, NULL, 0);	/* named by the file */
	s.stack = profile_stack(&p, &loc, 1);
	s.count = 7;
	profile_add_sample(&p, &s);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	memcpy(longname, "\xe5\x87\xbd", 3);	/* a multi-byte first character */
	line.function = func(&p, longname);
	loc = profile_location_add(&p, um, 0x3000, FRAME_USER, &line, 1);
	s.stack = profile_stack(&p, &loc, 1);
	s.count = 30;
	profile_add_sample(&p, &s);

	svg = render(&p, false);
	CHECK(xmllint(svg) == 0, "svg names: xmllint finds the document well-formed");
	if (!CHECK(parse(svg, &fs), "svg names: every frame line parses"))
		return;
	for (i = 0; i < ARRAY_SIZE(want); i++)
		CHECK(find(&fs, want[i], 0) != NULL, "svg names: frame %u reads back as expected", i);
	CHECK(find(&fs, "c<0>&\"?", 0) && find(&fs, "c<1>&\"?", 0), "svg names: thread names escaped");
	CHECK(find(&fs, "[app\xef\xbf\xbd+0x1abc]", 0) != NULL,
	      "svg names: an unnamed frame's file name sanitized too");
	CHECK(strstr(svg, ">bpfprof? &lt;script&gt;\xef\xbf\xbd</text>") != NULL,
	      "svg names: the command line sanitized and escaped");
	frames_part = strstr(svg, "<g id=\"frames\">");
	for (const char *c = frames_part; c && *c; c++)
		if ((unsigned char)*c < 0x20 && *c != '\n')
			raw_ctl = true;
	CHECK(frames_part && !raw_ctl, "svg names: no control character inside the frames");
	check_geometry(&fs, profile_total(&p), "names");

	/* A long name: cut to what fits, whole characters, ending in "..". */
	for (i = 0; i < fs.n; i++)
		if (!strncmp(fs.v[i].name, "\xe5\x87\xbd" "xxx", 6))
			break;
	if (CHECK(i < fs.n, "svg names: the long name is drawn")) {
		const struct frame *f = &fs.v[i];
		size_t fits = (size_t)((f->w - 6) / CHAR_PX), len = strlen(f->label);

		CHECK(len > 2 && !strcmp(f->label + len - 2, "..") &&
		      !strncmp(f->label, f->name, len - 2) && chars(f->label) == fits,
		      "svg names: its label is the first %zu characters and \"..\" (%s)", fits - 2,
		      f->label);
	}
	frames_release(&fs);
	free(svg);
	profile_release(&p);
}

/* Frames narrower than 0.1 px are not drawn, and the page says how many. */
static void test_svg_narrow(void)
{
	struct prof_line line = { 0, 0 };
	struct prof_sample s = { 0 };
	struct profile p;
	struct frames fs;
	uint32_t a, b, c, d;
	char *svg;

	profile_init(&p);
	line.function = func(&p, "big");
	a = profile_location_add(&p, 0, 0x10, FRAME_USER, &line, 1);
	line.function = func(&p, "a_tiny_caller");
	b = profile_location_add(&p, 0, 0x20, FRAME_USER, &line, 1);
	line.function = func(&p, "tiny_leaf");
	c = profile_location_add(&p, 0, 0x30, FRAME_USER, &line, 1);
	line.function = func(&p, "just_wide_enough");
	d = profile_location_add(&p, 0, 0x40, FRAME_USER, &line, 1);
	s.comm = profile_string(&p, "t");
	s.stack = profile_stack(&p, &a, 1);
	s.count = 100000;	/* 1 sample is 0.0118 px: 9 are 0.106 px */
	profile_add_sample(&p, &s);
	s.stack = profile_stack(&p, (uint32_t[]){ c, b }, 2);
	s.count = 8;
	profile_add_sample(&p, &s);
	s.stack = profile_stack(&p, &d, 1);
	s.count = 9;
	profile_add_sample(&p, &s);

	svg = render(&p, false);
	CHECK(xmllint(svg) == 0, "svg narrow: well-formed");
	if (!CHECK(parse(svg, &fs), "svg narrow: frames parse"))
		return;
	CHECK(find(&fs, "big", 0) && find(&fs, "just_wide_enough", 0) &&
	      !find(&fs, "a_tiny_caller", 0) && !find(&fs, "tiny_leaf", 0),
	      "svg narrow: 0.094 px frames left out, 0.106 px drawn");
	CHECK(strstr(svg, "100017 samples; 2 frames narrower than 0.1 px not drawn") != NULL,
	      "svg narrow: the subtitle counts the 2 frames not drawn");
	CHECK(fs.n == 4 && find(&fs, "t", 0) && find(&fs, "t", 0)->s == 100017,
	      "svg narrow: what is drawn still counts every sample");
	CHECK(find(&fs, "big", 0) && find(&fs, "big", 0)->o == 8,
	      "svg narrow: big sits right of where a_tiny_caller's 8 samples would be");
	check_geometry(&fs, 100017, "narrow");
	frames_release(&fs);
	free(svg);
	profile_release(&p);
}

static void test_svg_empty(void)
{
	struct profile p;
	struct frames fs;
	char *svg;
	FILE *full;

	profile_init(&p);
	svg = render(&p, false);
	CHECK(xmllint(svg) == 0, "svg empty: well-formed");
	CHECK(parse(svg, &fs) && fs.n == 0, "svg empty: no frame");
	CHECK(strstr(svg, ">no samples</text>") && strstr(svg, "total: 0,"),
	      "svg empty: says there are no samples");
	frames_release(&fs);
	free(svg);
	profile_release(&p);

	/* The stream failing is the writer's error. */
	build(&p, false);
	full = fopen("/dev/full", "w");
	if (CHECK(full != NULL, "svg: /dev/full opens")) {
		struct write_options o = { 0 };
		int err = write_svg(full, &p, &o);

		CHECK(err == -ENOSPC, "svg: a full disk is -ENOSPC (%d)", err);
		fclose(full);
	}
	profile_release(&p);
}

/* 50k distinct stacks, 24 frames deep, names from a pool of 3000 functions. */
static void test_svg_large(void)
{
	struct prof_line line = { 0, 0 };
	struct prof_sample s = { 0 };
	struct write_options o = { 0 };
	struct timespec t0, t1;
	struct profile p;
	uint32_t locs[3000], frames[24], i, j;
	uint64_t x = 88172645463325252ULL;
	char name[64], *buf = NULL;
	size_t len = 0;
	FILE *f;
	double ms;
	int err;

	profile_init(&p);
	for (i = 0; i < ARRAY_SIZE(locs); i++) {
		snprintf(name, sizeof(name), "namespace::function_%u<int>", i);
		line.function = func(&p, name);
		locs[i] = profile_location_add(&p, 0, 0x1000 + i * 16, i % 10 ? FRAME_USER : FRAME_KERNEL,
					       &line, 1);
	}
	s.comm = profile_string(&p, "big");
	for (i = 0; i < 50000; i++) {
		/* Shared roots, diverging leaves: a realistic tree shape. */
		for (j = 0; j < 24; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			frames[23 - j] = locs[j < 4 ? j : (uint32_t)(x % (j < 10 ? 20 * j : 3000))];
		}
		s.stack = profile_stack(&p, frames, 24);
		s.tid = i % 8;
		s.count = 1 + x % 50;
		profile_add_sample(&p, &s);
	}
	f = open_memstream(&buf, &len);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = write_svg(f, &p, &o);
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	CHECK(err == 0 && p.nr_stacks >= 49000, "svg large: %u distinct stacks written, %.1f MB in %.0f ms",
	      p.nr_stacks, len / 1e6, ms);
	CHECK(ms < 5000, "svg large: in well under 5 s (%.0f ms)", ms);
	CHECK(xmllint(buf) == 0, "svg large: well-formed");
	free(buf);
	profile_release(&p);
}

void test_svg(void)
{
	test_svg_tree();
	test_svg_names();
	test_svg_narrow();
	test_svg_empty();
	test_svg_large();
}
