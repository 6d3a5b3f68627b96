# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Ruby methods alpha and beta run the same chain of dependent integer
# operations (each step needs the last: its time is latency, not a loop
# through memory), 2n and n units each turn, n random in 1..8; each
# measures its own thread CPU time (the split to check is that one). At its end it prints "ALPHA_NS BETA_NS" on stdout and
# its figures on stderr, so a profile's split between them can be checked.
#
# usage: ruby rb_split.rb SECONDS [READY_FILE GO_FILE]
require_relative "rb_window"

UNIT = 20_000

def work(n)
  x = 1
  i = 0
  steps = n * UNIT
  while i < steps
    x = (x * 31 + 7) & 0xffffff
    i += 1
  end
  x
end

def alpha(n)
  s = work(2 * n)
  s
end

def beta(n)
  s = work(n)
  s
end

# Runs alpha and beta in turn for seconds of CPU: [alpha's seconds, beta's, rounds, sink, total].
def run_split(seconds)
  spent_a = spent_b = 0.0
  rounds = sink = 0
  start = RbWindow.cpu
  while RbWindow.cpu - start < seconds
    n = rand(1..8)
    t0 = RbWindow.cpu
    sink += alpha(n)
    t1 = RbWindow.cpu
    sink += beta(n)
    t2 = RbWindow.cpu
    spent_a += t1 - t0
    spent_b += t2 - t1
    rounds += 1
  end
  [spent_a, spent_b, rounds, sink, RbWindow.cpu - start]
end

if __FILE__ == $PROGRAM_NAME
  seconds = RbWindow.open("ruby rb_split.rb")
  spent_a, spent_b, rounds, sink, total = run_split(seconds)
  puts format("%.0f %.0f", spent_a * 1e9, spent_b * 1e9)
  warn format("rb_split: %d rounds in %.3f s of CPU: alpha %.3f s, beta %.3f s, alpha/beta %.4f, " \
              "in them %.1f %% (sink %d)", rounds, total, spent_a, spent_b, spent_a / spent_b,
              100 * (spent_a + spent_b) / total, sink)
end
