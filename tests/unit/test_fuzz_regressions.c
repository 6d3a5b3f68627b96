// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The fuzz targets (tests/fuzz/fuzz_*.c) without libFuzzer: every input
 * that once made one fail (tests/fuzz/regressions/NAME/), every committed
 * seed (tests/fuzz/corpus/NAME/) and the built ELF fixtures go through
 * the same checks again. Built with SANITIZE=address,undefined (or run
 * under valgrind) they are checked for memory errors too.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bpfprof/util.h"
#include "fuzz.h"
#include "unit.h"

/* Every regular file under dir, sorted, as paths; how many. */
static size_t list_files(const char *dir, char ***out)
{
	struct dirent **names;
	char **paths;
	int n = scandir(dir, &names, NULL, alphasort), i;
	size_t nr = 0;

	*out = NULL;
	if (n < 0)
		return 0;
	paths = xcalloc(n ? n : 1, sizeof(*paths));
	for (i = 0; i < n; i++) {
		struct stat st;
		char *path;

		if (asprintf(&path, "%s/%s", dir, names[i]->d_name) < 0)
			die("out of memory");
		if (!stat(path, &st) && S_ISREG(st.st_mode))
			paths[nr++] = path;
		else
			free(path);
		free(names[i]);
	}
	free(names);
	*out = paths;
	return nr;
}

/* Runs target on each file in dir, if any; the files on which a check failed are named. */
static void replay(const char *target, fuzz_target_fn *fn, const char *dir)
{
	char **paths;
	size_t n = list_files(dir, &paths), i, bad = 0;

	if (!n) {
		free(paths);
		return;
	}
	for (i = 0; i < n; i++) {
		unsigned before = fuzz_failures;
		char *data;
		size_t len;

		if (read_file(paths[i], &data, &len)) {
			printf("#   cannot read %s\n", paths[i]);
			bad++;
		} else {
			fn((const uint8_t *)data, len);
			free(data);
			if (fuzz_failures != before) {
				printf("#   %s: a check failed (see stderr)\n", paths[i]);
				bad++;
			}
		}
		free(paths[i]);
	}
	free(paths);
	CHECK(!bad, "fuzz %s: the %zu inputs in %s pass (%zu fail)", target, n, dir, bad);
}

void test_fuzz_regressions(void)
{
	static const struct {
		const char *name;
		fuzz_target_fn *fn;
	} targets[] = {
#define TARGET(name) { #name, fuzz_##name },
		FUZZ_TARGETS(TARGET)
#undef TARGET
	};
	char dir[512];
	struct stat st;
	size_t i;

	if (!CHECK(!stat("tests/fuzz/regressions", &st) && !stat("tests/fuzz/corpus", &st),
		   "fuzz: tests/fuzz/regressions and corpus (run from the top directory)"))
		return;
	fuzz_abort_on_failure = false;
	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		snprintf(dir, sizeof(dir), "tests/fuzz/regressions/%s", targets[i].name);
		replay(targets[i].name, targets[i].fn, dir);
		snprintf(dir, sizeof(dir), "tests/fuzz/corpus/%s", targets[i].name);
		replay(targets[i].name, targets[i].fn, dir);
	}
	/* Real ELF files: the fixtures, with and without DWARF and symbols. */
	replay("elf", fuzz_elf, unit_fixtures);
	replay("dwarf", fuzz_dwarf, unit_fixtures);
	snprintf(dir, sizeof(dir), "%s/dbg", unit_fixtures);
	replay("elf", fuzz_elf, dir);
	replay("dwarf", fuzz_dwarf, dir);
	snprintf(dir, sizeof(dir), "%s/hostile", unit_fixtures);
	replay("elf", fuzz_elf, dir);
	replay("dwarf", fuzz_dwarf, dir);
	fuzz_abort_on_failure = true;
}
