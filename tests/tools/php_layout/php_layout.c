// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Prints the offsets and constants bpfprof's PHP walk reads, one name=value
 * a line, as a PHP's own headers define them: the reference the layouts in
 * the PHP module are checked against, for each PHP version it reads.
 * Compiled against that PHP's headers with the compiler the PHP was built
 * with (HAVE_GCC_GLOBAL_REGS, hence ZEND_VM_KIND, comes from its
 * php_config.h):
 *
 *   cc $(php-config --includes) -o php_layout tests/tools/php_layout/php_layout.c && ./php_layout
 *
 * For the trixie root's PHP 8.4 (php8.4-dev and gcc added with
 * tests/tools/root_add.sh), the same inside it with tests/tools/in_root.sh.
 * Only offsetof/sizeof/#define: nothing of libphp is linked.
 */
#define _GNU_SOURCE	/* memrchr, which zend_operators.h uses */
#include <stddef.h>
#include <stdio.h>

#include "php.h"
#include "php_version.h"
#include "zend_globals.h"
#include "zend_vm_opcodes.h"

#define OFF(name, type, member) printf("%s=%zu\n", name, offsetof(type, member))

int main(void)
{
	printf("PHP_VERSION=%s\n", PHP_VERSION);
	printf("ZEND_MODULE_API_NO=%d\n", ZEND_MODULE_API_NO);
#ifdef ZTS
	printf("ZTS=1\n");
#else
	printf("ZTS=0\n");
#endif
	OFF("zend_executor_globals.current_execute_data", zend_executor_globals, current_execute_data);

	OFF("zend_execute_data.opline", zend_execute_data, opline);
	OFF("zend_execute_data.func", zend_execute_data, func);
	OFF("zend_execute_data.This", zend_execute_data, This);
	OFF("zend_execute_data.This.u1.type_info", zend_execute_data, This.u1.type_info);
	OFF("zend_execute_data.prev_execute_data", zend_execute_data, prev_execute_data);
	printf("sizeof(zend_execute_data)=%zu\n", sizeof(zend_execute_data));

	OFF("zend_function.type", zend_function, type);
	OFF("zend_function.common.function_name", zend_function, common.function_name);
	OFF("zend_function.common.scope", zend_function, common.scope);
	OFF("zend_function.common.fn_flags", zend_function, common.fn_flags);
	OFF("zend_function.op_array.filename", zend_function, op_array.filename);
	OFF("zend_function.op_array.line_start", zend_function, op_array.line_start);
	OFF("zend_function.op_array.line_end", zend_function, op_array.line_end);
	OFF("zend_function.op_array.opcodes", zend_function, op_array.opcodes);

	OFF("zend_op.lineno", zend_op, lineno);
	printf("sizeof(zend_op)=%zu\n", sizeof(zend_op));

	OFF("zend_class_entry.name", zend_class_entry, name);
	OFF("zend_string.len", zend_string, len);
	OFF("zend_string.val", zend_string, val);

	/* ZEND_CALL_INFO(call) is This.u1.type_info whole: the flags already
	 * carry their shift (ZEND_CALL_TOP is 1 << 17, bit 1 of type_info >> 16). */
	printf("ZEND_CALL_TOP=%#x\n", (unsigned)ZEND_CALL_TOP);
	printf("ZEND_CALL_CODE=%#x\n", (unsigned)ZEND_CALL_CODE);
	printf("ZEND_CALL_HAS_THIS=%#x\n", (unsigned)ZEND_CALL_HAS_THIS);
	printf("ZEND_CALL_CLOSURE=%#x\n", (unsigned)ZEND_CALL_CLOSURE);
	printf("ZEND_USER_FUNCTION=%d\n", ZEND_USER_FUNCTION);
	printf("ZEND_INTERNAL_FUNCTION=%d\n", ZEND_INTERNAL_FUNCTION);
	printf("ZEND_EVAL_CODE=%d\n", ZEND_EVAL_CODE);
	printf("ZEND_ACC_CLOSURE=%#x\n", (unsigned)ZEND_ACC_CLOSURE);
	printf("ZEND_VM_KIND=%d (%s)\n", ZEND_VM_KIND,
	       ZEND_VM_KIND == ZEND_VM_KIND_HYBRID ? "HYBRID" :
	       ZEND_VM_KIND == ZEND_VM_KIND_CALL ? "CALL" :
	       ZEND_VM_KIND == ZEND_VM_KIND_GOTO ? "GOTO" : "SWITCH");
	return 0;
}
