# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# A Ruby method that makes garbage all the time (strings built and
# dropped), so that the VM collects some of the time, on this thread.
#
# usage: ruby rb_alloc.rb SECONDS [READY_FILE GO_FILE]
require_relative "rb_window"

def alloc(n)
  a = nil
  n.times { |i| a = "x#{i}" * 4 }
  a
end

seconds = RbWindow.open("ruby rb_alloc.rb")
start = RbWindow.cpu
rounds = 0
while RbWindow.cpu - start < seconds
  alloc(10_000)
  rounds += 1
end
puts rounds
warn format("rb_alloc: %d rounds, %d collections", rounds, GC.count)
