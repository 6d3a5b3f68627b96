# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# A C extension calling back into Ruby (rb_ext.c): by_yield gives a block
# to a C iterator, by_call has C call a Ruby method of its argument, in_c
# runs a chain in C. Each measures its own thread CPU time; at its end it
# prints "YIELD_NS CALL_NS C_NS" on stdout and its figures on stderr.
#
# usage: ruby -I DIR_OF_rb_ext.so rb_ext.rb SECONDS [READY_FILE GO_FILE]
require_relative "rb_window"
require "rb_ext"

UNIT = 20_000

# Called from C by RbExt.call_each.
class Stepper
  def step(_i)
    chain(UNIT)
  end
end

def by_yield(n)
  RbExt.each_step(n) { |_i| chain(UNIT) }
end

def by_call(n)
  RbExt.call_each(Stepper.new, n)
end

def in_c(n)
  RbExt.c_chain(n * 400_000)
end

seconds = RbWindow.open("ruby rb_ext.rb")
spent = [0.0, 0.0, 0.0]
start = RbWindow.cpu
while RbWindow.cpu - start < seconds
  n = rand(1..4)
  t0 = RbWindow.cpu
  by_yield(n)
  t1 = RbWindow.cpu
  by_call(n)
  t2 = RbWindow.cpu
  in_c(n)
  t3 = RbWindow.cpu
  spent[0] += t1 - t0
  spent[1] += t2 - t1
  spent[2] += t3 - t2
end
puts spent.map { |s| format("%.0f", s * 1e9) }.join(" ")
warn format("rb_ext: by_yield %.3f s, by_call %.3f s, in_c %.3f s of CPU", *spent)
