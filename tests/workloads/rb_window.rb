# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# What the Ruby workloads here share, as lua_window.lua does the Lua ones':
# their measured window (arguments SECONDS [READY_FILE GO_FILE], and the
# handshake with the test that runs them: READY_FILE written once loaded,
# then GO_FILE awaited, sleeping, while the profiler loads), and chain, the
# work whose time is a chain of dependent integer operations (latency, not
# a loop through memory), which tests find as "chain (rb_window.rb:N)".
#   require_relative "rb_window"
module RbWindow
  # SECONDS, after the handshake when READY_FILE and GO_FILE are given.
  def self.open(usage)
    seconds = Float(ARGV[0]) rescue nil
    unless seconds
      warn "usage: #{usage} SECONDS [READY_FILE GO_FILE]"
      exit 2
    end
    if ARGV[2]
      File.write(ARGV[1], "")
      sleep 0.02 until File.exist?(ARGV[2])
    end
    seconds
  end

  # This thread's CPU time, in seconds.
  def self.cpu
    Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
  end
end

# steps dependent steps of integer arithmetic.
def chain(steps)
  x = 1
  i = 0
  while i < steps
    x = (x * 31 + 7) & 0xffffff
    i += 1
  end
  x
end
