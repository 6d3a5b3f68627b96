# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# rb_split.rb's alpha and beta under Ruby's own sampling profiler,
# stackprof (CPU mode, every millisecond): at its end it prints the share
# of stackprof's samples whose stack holds alpha and beta, in per cent,
# then alpha's and beta's share of the run by the workload's own thread CPU
# clock ("ALPHA BETA OWN_ALPHA OWN_BETA"), so a profile taken of the same
# process at the same time can be compared with it, and stackprof with the
# clock.
#
# usage: ruby rb_stackprof.rb SECONDS [READY_FILE GO_FILE]
require_relative "rb_split"
require "stackprof"

seconds = RbWindow.open("ruby rb_stackprof.rb")
spent = nil
report = StackProf.run(mode: :cpu, interval: 1000) { spent = run_split(seconds) }
total = report[:samples].to_f
share = lambda do |name|
  frame = report[:frames].values.find { |f| f[:name] == name }
  frame ? 100 * frame[:total_samples] / total : 0
end
spent_a, spent_b, _rounds, _sink, run = spent
puts format("%.1f %.1f %.1f %.1f", share.call("Object#alpha"), share.call("Object#beta"),
            100 * spent_a / run, 100 * spent_b / run)
warn format("rb_stackprof: %d samples", total)
