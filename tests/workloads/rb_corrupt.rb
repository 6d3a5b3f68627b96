# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Bad input for a profiler: a method whose instruction sequence says a
# label and a path that are not there. Before its window, the program
# overwrites (Fiddle) the label and path pointers of `victim`'s iseq body
# with addresses that map nothing, then runs victim, which the VM runs as
# before: it reads neither. The GC is off, as its marking would read them.
# CRuby 3.1's layout (RTypedData's data at 32, rb_iseq_t's body at 16, the
# body's pathobj at 0x40 and label at 0x50). Prints "VICTIM_NS" at its end.
#
# usage: ruby rb_corrupt.rb SECONDS [READY_FILE GO_FILE]
require_relative "rb_window"
require "fiddle"

abort "rb_corrupt.rb: the layout here is CRuby 3.1's, not #{RUBY_VERSION}'s" unless RUBY_VERSION.start_with?("3.1.")
GC.disable

def victim
  x = 1
  i = 0
  while i < 200_000
    x = (x * 31 + 7) & 0xffffff
    i += 1
  end
  x
end

def word(addr, off) = Fiddle::Pointer.new(addr)[off, 8].unpack1("Q")

iseq = word(Fiddle.dlwrap(RubyVM::InstructionSequence.of(method(:victim))), 32)
body = Fiddle::Pointer.new(word(iseq, 16))
body[0x50, 8] = [0x7ff0deadbee0].pack("Q")	# label
body[0x40, 8] = [0x10].pack("Q")		# pathobj

seconds = RbWindow.open("ruby rb_corrupt.rb")
t0 = RbWindow.cpu
victim while RbWindow.cpu - t0 < seconds
puts format("%.0f", (RbWindow.cpu - t0) * 1e9)
