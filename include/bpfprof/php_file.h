/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Which ELF files hold a PHP engine (the php CLI, php-fpm, php-cgi), and
 * what the BPF program's PHP walk needs of each (struct php_file,
 * php_frames.h), found without debug information (Debian's PHP is
 * stripped of .symtab but exports what extensions link against):
 *   the version       from the X-Powered-By header the binary sends
 *                     ("X-Powered-By: PHP/8.2.36"), and with it the layout:
 *                     a row of a table by version
 *   the build         thread-safe or not, from its extension API string
 *                     ("API20220829,NTS"): only NTS builds are read
 *   executor_globals  exported (an NTS build's)
 *   execute_ex        exported, with its size: the VM's native frame
 * A reader: never prints but debug lines; returns 1, 0 or a negative errno.
 */
#ifndef BPFPROF_PHP_FILE_H
#define BPFPROF_PHP_FILE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/php_frames.h"

/*
 * Whether the ELF file on fd (at path, for debug lines) holds a PHP
 * engine: it exports execute_ex and zend_execute. 1: it does, *out filled,
 * out->known 0 for a PHP bpfprof cannot read (*why says which: a version
 * not in the table, a thread-safe build, a value not found); 0: not PHP;
 * a negative errno: the file could not be read.
 */
int php_file_identify(int fd, const char *path, struct php_file *out, const char **why);

/* Where names are read from, alike in every PHP 8 (x86-64). */
#define PHP_FN_NAME	8	/* zend_function.common.function_name: a zend_string * */
#define PHP_FN_SCOPE	16	/* zend_function.common.scope: a zend_class_entry * */
#define PHP_CE_NAME	8	/* zend_class_entry.name */
#define PHP_STR_LEN	16	/* zend_string.len */
#define PHP_STR_VAL	24	/* zend_string.val */

/* The layout of PHP major.minor, or NULL: not in the table. */
const struct php_layout *php_layout_of(unsigned major, unsigned minor);

#endif
