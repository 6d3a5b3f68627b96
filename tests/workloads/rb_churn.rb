# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Ruby stacks that change all the time, for a profiler to keep up with:
# two fibers passing control back and forth (each has its own execution
# context and control frame stack), methods made by eval and dropped (their
# instruction sequences freed by the GC), recursion that unwinds by throw,
# and GC.compact every 20 ms (it moves instruction sequences). Prints the
# number of rounds at its end.
#
# usage: ruby rb_churn.rb SECONDS [READY_FILE GO_FILE]
require_relative "rb_window"

def dive(k)
  throw :up, chain(200) if k.zero?
  dive(k - 1)
end

def ping_pong(rounds)
  fiber = Fiber.new do
    loop { chain(500); Fiber.yield }
  end
  rounds.times { fiber.resume; chain(500) }
end

def made_and_dropped(n)
  obj = Object.new
  obj.instance_eval("def made_#{n}; chain(300) + #{n}; end", __FILE__, __LINE__)
  obj.send(:"made_#{n}")
end

seconds = RbWindow.open("ruby rb_churn.rb")
stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
compact_at = 0.0
rounds = 0
while (now = Process.clock_gettime(Process::CLOCK_MONOTONIC)) < stop
  ping_pong(20)
  catch(:up) { dive(rand(1..30)) }
  made_and_dropped(rounds)
  if now >= compact_at
    GC.compact
    compact_at = now + 0.02
  end
  rounds += 1
end
puts rounds
