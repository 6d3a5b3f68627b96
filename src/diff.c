// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/cli.h"
#include "bpfprof/diff.h"
#include "bpfprof/output.h"
#include "bpfprof/profile_read.h"
#include "bpfprof/util.h"

const char diff_synopsis[] = "bpfprof diff BEFORE AFTER [-o FILE]...";

static const char diff_usage[] =
	"Compares two profiles, each folded or pprof (as bpfprof writes them):\n"
	"  -o FILE.svg     a differential flame graph: widths from AFTER, red where a frame's\n"
	"                  share grew, blue where it shrank; hover shows both counts\n"
	"  -o FILE.folded  FlameGraph's difffolded form, \"stack BEFORE AFTER\" (the default, on stdout)\n";

static int usage_fail(const char *fmt, const char *arg)
{
	fputs("bpfprof: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

/* A profile from a file into p (empty); one line and -1 if it cannot be. */
static int load(struct profile *p, const char *path)
{
	char why[READ_WHY], *buf;
	size_t len;
	int err;

	if ((err = read_file(path, &buf, &len)))
		return error("cannot read '%s': %s; give a folded or pprof file", path, strerror(-err));
	err = profile_read(p, buf, len, why);
	free(buf);
	if (err)
		return error("cannot read '%s' as a profile: %s; give a folded or pprof file", path, why);
	return 0;
}

/* One output: svg or folded, by its name. */
static int write_diff(const char *path, const struct profile *before, const struct profile *after)
{
	struct write_options wo = { .before = before };
	struct output_file out;
	int fmt = path ? format_of_path(path) : FORMAT_FOLDED, err;

	if (output_open(&out, path))
		return -1;
	err = fmt == FORMAT_SVG ? write_svg(out.f, after, &wo) : write_difffolded(out.f, before, after);
	if (!err)
		err = output_commit(&out);
	if (err) {
		output_abort(&out);
		return error("cannot write the diff to %s: %s", path ? path : "stdout", strerror(-err));
	}
	return 0;
}

/* What diff's arguments ask for. */
struct diff_args {
	const char *files[2];	/* BEFORE, AFTER */
	const char **outs;	/* -o files; NULL: folded on stdout */
	int nouts;
	bool help;
};

/* Reads argv into a; 0, or EXIT_USAGE after saying why. */
static int parse_args(struct diff_args *a, int argc, char **argv)
{
	int i, nfiles = 0, fmt;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			a->help = true;
			return 0;
		}
		if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
			if (++i == argc)
				return usage_fail("diff: %s needs a file name; see bpfprof diff --help",
						  argv[i - 1]);
			fmt = format_of_path(argv[i]);
			if (fmt != FORMAT_SVG && fmt != FORMAT_FOLDED)
				return usage_fail("diff -o %s: a diff is written as .svg or .folded; "
						  "name the file so", argv[i]);
			a->outs[a->nouts++] = argv[i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return usage_fail("diff: unknown option '%s'; see bpfprof diff --help", argv[i]);
		} else if (nfiles < 2) {
			a->files[nfiles++] = argv[i];
		} else {
			return usage_fail("diff: one BEFORE and one AFTER, not '%s' as well", argv[i]);
		}
	}
	if (nfiles < 2)
		return usage_fail("%s", "diff: give BEFORE and AFTER profiles (folded or pprof); "
				  "see bpfprof diff --help");
	if (!a->nouts)
		a->outs[a->nouts++] = NULL;	/* folded, on stdout */
	return 0;
}

int diff_main(int argc, char **argv)
{
	struct diff_args a = { .outs = xcalloc(argc + 1, sizeof(*a.outs)) };
	struct profile before, after;
	int i, rc;

	if ((rc = parse_args(&a, argc, argv)) || a.help) {
		if (a.help)
			printf("Usage: %s\n%s", diff_synopsis, diff_usage);
		free(a.outs);
		return rc;
	}
	profile_init(&before);
	profile_init(&after);
	if (load(&before, a.files[0]) || load(&after, a.files[1])) {
		rc = EXIT_RUNTIME;
	} else {
		for (i = 0; i < a.nouts; i++)
			if (write_diff(a.outs[i], &before, &after))
				rc = EXIT_RUNTIME;
	}
	profile_release(&before);
	profile_release(&after);
	free(a.outs);
	return rc;
}
