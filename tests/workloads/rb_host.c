// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A C program embedding CRuby through its C API, linked with Debian's
 * libruby-3.1 as applications that run Ruby scripts link it: not named
 * ruby, and not ruby's main. main -> host_run (the host's own frame, kept
 * out of line) -> ruby_init, ruby_options (the script and its ARGV, as
 * ruby's command line would take them: the prelude and encodings loaded,
 * the script compiled) -> ruby_run_node, the script's Ruby frames above.
 * A profiler must find the VM by its library and put the script's frames
 * over the host's.
 *
 * Exits with the script's status (ruby_run_node's; an error printed by it).
 *
 * usage: rb_host SCRIPT [ARGS...]
 */
#include <ruby.h>
#include <stdio.h>

__attribute__((noinline)) static int host_run(int argc, char **argv)
{
	ruby_init();
	return ruby_run_node(ruby_options(argc, argv));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: rb_host SCRIPT [ARGS...]\n");
		return 2;
	}
	ruby_sysinit(&argc, &argv);
	{
		RUBY_INIT_STACK;
		return host_run(argc, argv);
	}
}
