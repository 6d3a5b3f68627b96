# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# rb_split.rb's alpha and beta under Ruby's own sampling profiler,
# stackprof (CPU mode, every millisecond): at its end it prints the share
# of stackprof's samples whose stack holds alpha and beta, in per cent
# ("ALPHA BETA"), so a profile taken of the same process at the same time
# can be compared with it.
#
# usage: ruby rb_stackprof.rb SECONDS [READY_FILE GO_FILE]
require_relative "rb_split"
require "stackprof"

seconds = RbWindow.open("ruby rb_stackprof.rb")
report = StackProf.run(mode: :cpu, interval: 1000) { run_split(seconds) }
total = report[:samples].to_f
share = lambda do |name|
  frame = report[:frames].values.find { |f| f[:name] == name }
  frame ? 100 * frame[:total_samples] / total : 0
end
puts format("%.1f %.1f", share.call("Object#alpha"), share.call("Object#beta"))
warn format("rb_stackprof: %d samples", total)
