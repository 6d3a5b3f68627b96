// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Unit tests: parsers, encoders and the profile model, on built fixtures
 * and hand-made inputs. TAP on stdout; exit 1 if any check failed.
 * usage: unit-tests FIXTURE_DIR
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

int unit_count, unit_failed, unit_skipped;
const char *unit_fixtures = "build/tests/fixtures";

bool unit_check(bool ok, const char *file, int line, const char *expr, const char *fmt, ...)
{
	va_list ap;

	unit_count++;
	printf("%s %d - ", ok ? "ok" : "not ok", unit_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!ok) {
		unit_failed++;
		printf("#   failed: %s at %s:%d\n", expr, file, line);
	}
	return ok;
}

void unit_skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	unit_count++;
	unit_skipped++;
	printf("ok %d - ", unit_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
}

static void diagnose(const char *label, const char *text)
{
	printf("#   %s:\n#     ", label);
	for (; *text; text++) {
		putchar(*text);
		if (*text == '\n' && text[1])
			printf("#     ");
	}
	putchar('\n');
}

bool expect_text(const char *got, const char *want, const char *what)
{
	bool ok = unit_check(!strcmp(got, want), __FILE__, __LINE__, "got == want", "%s", what);

	if (!ok) {
		diagnose("got", got);
		diagnose("want", want);
	}
	return ok;
}

/* Not inlined: GCC 12 takes the text for a pointer to open_memstream's &buf. */
__attribute__((noinline)) char *unit_write(writer_fn *w, const struct profile *p, bool per_pid,
					   int *err)
{
	struct write_options o = { .per_pid = per_pid };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = w(f, p, &o);

	fclose(f);
	if (err)
		*err = rc;
	return buf;
}

char *unit_pipe(const char *cmd, const void *input, size_t len)
{
	char in_path[] = "/tmp/bpfprof-unit.XXXXXX", *full, *out = NULL;
	size_t n = 0, alloc = 0;
	FILE *f, *p;
	int fd = mkstemp(in_path);

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	fwrite(input, 1, len, f);
	fclose(f);
	if (asprintf(&full, "( %s ) < %s", cmd, in_path) < 0)
		return NULL;
	p = popen(full, "r");
	free(full);
	if (p) {
		int c;

		while ((c = fgetc(p)) != EOF) {
			if (n + 2 > alloc)
				out = realloc(out, alloc = alloc ? 2 * alloc : 4096);
			out[n++] = c;
		}
		if (pclose(p) != 0) {
			free(out);
			out = NULL;
		} else if (out) {
			out[n] = '\0';
		} else {
			out = strdup("");
		}
	}
	unlink(in_path);
	return out;
}

#define TESTS(X)                                                                                   \
	X(test_intern) X(test_profile) X(test_fold) X(test_fold_listeners) X(test_window) X(test_kallsyms) X(test_procmaps) X(test_elf)               \
	X(test_proc_generations)                                                                   \
	X(test_cpu_list) X(test_folded) X(test_pb) X(test_pprof) X(test_profile_read) X(test_callgrind)                \
	X(test_svg) X(test_demangle) X(test_perfmap) X(test_jit_symbolize)        \
	X(test_debuginfo) X(test_fuzz_regressions) X(test_hostile) X(test_unwind) X(test_cfi_rows) \
	X(test_unwind_tables) X(test_python_offsets) X(test_python_code) X(test_luajit_file) \
	X(test_luajit_ffnames) \
	X(test_luajit_proto) X(test_ruby_file) X(test_java_file) X(test_php_file) X(test_merge_python) X(test_merge_luajit) X(test_merge_ruby) X(test_merge_java) X(test_merge_php) \
	X(test_rotate) \
	X(test_series) X(test_metrics) X(test_kernel_btf) X(test_collect) X(test_options) X(test_settings)  \
	X(test_option_spellings) X(test_file_listeners) X(test_runtime_table)

#define DECLARE(fn) unit_test_fn fn;
TESTS(DECLARE)

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		unit_test_fn *fn;
	} tests[] = {
#define ENTRY(fn) { #fn, fn },
		TESTS(ENTRY)
	};
	const char *only = argc > 2 ? argv[2] : NULL;
	size_t i;

	if (argc > 1)
		unit_fixtures = argv[1];
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (only && strcmp(only, tests[i].name))
			continue;
		printf("# %s\n", tests[i].name);
		tests[i].fn();
	}
	printf("1..%d\n", unit_count);
	return unit_failed ? 1 : 0;
}
