// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A Ruby C extension that calls back into Ruby, as real extensions do
 * (an iterator yielding to a block, a driver calling a method of its
 * argument), and runs work of its own in C. Loaded by rb_ext.rb, it shows
 * how the C frames stand between the Ruby frames: the Ruby caller, the C
 * method (RbExt.each_step, RbExt.call_each), its C function (ext_each_step,
 * ext_call_each), Ruby's own C (rb_yield, rb_funcallv), the Ruby callee.
 *
 *   RbExt.each_step(n) { |i| ... }   yields 0...n to the block
 *   RbExt.call_each(obj, n)          calls obj.step(i) for i in 0...n
 *   RbExt.c_chain(steps)             a chain of steps in C (work.h)
 */
#include <ruby.h>

#include "work.h"

static VALUE ext_each_step(VALUE self, VALUE n)
{
	long i, count = NUM2LONG(n);

	(void)self;
	for (i = 0; i < count; i++)
		rb_yield(LONG2FIX(i));
	return Qnil;
}

static VALUE ext_call_each(VALUE self, VALUE obj, VALUE n)
{
	ID step = rb_intern("step");
	long i, count = NUM2LONG(n);

	(void)self;
	for (i = 0; i < count; i++)
		rb_funcall(obj, step, 1, LONG2FIX(i));
	return Qnil;
}

static VALUE ext_c_chain(VALUE self, VALUE steps)
{
	uint64_t x = 1;

	(void)self;
	CHAIN(x, NUM2ULONG(steps));
	return ULONG2NUM(x & 0xffff);
}

void Init_rb_ext(void)
{
	VALUE mod = rb_define_module("RbExt");

	rb_define_module_function(mod, "each_step", ext_each_step, 1);
	rb_define_module_function(mod, "call_each", ext_call_each, 2);
	rb_define_module_function(mod, "c_chain", ext_c_chain, 1);
}
