# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The measured window the Ruby workloads here share, as lua_window.lua is
# the Lua ones': their arguments SECONDS [READY_FILE GO_FILE], and the
# handshake with the test that runs them (READY_FILE written once loaded,
# then GO_FILE awaited, sleeping, while the profiler loads).
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
