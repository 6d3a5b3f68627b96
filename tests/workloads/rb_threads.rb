# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Two Ruby threads, each in a method of its own (spin_left, spin_right),
# taking turns with the GVL; and the main thread digesting with OpenSSL
# (digest_it: SHA-256 of a 1 MiB string, in C) between them. A MiB a call
# keeps the call's own cost (OpenSSL's lookups and locks, the method call)
# a small share on any host; at 64 KiB it was 2-10 %, depending on the host.
# Each measures its own thread CPU time; at its end it prints
# "LEFT_NS RIGHT_NS DIGEST_NS".
#
# usage: ruby rb_threads.rb SECONDS [READY_FILE GO_FILE]
require_relative "rb_window"
require "openssl"

def spin_left(stop)
  t0 = RbWindow.cpu
  chain(10_000) while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
  RbWindow.cpu - t0
end

def spin_right(stop)
  t0 = RbWindow.cpu
  chain(10_000) while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
  RbWindow.cpu - t0
end

def digest_it(data, stop)
  t0 = RbWindow.cpu
  d = OpenSSL::Digest.new("SHA256")
  d.digest(data) while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
  RbWindow.cpu - t0
end

seconds = RbWindow.open("ruby rb_threads.rb")
stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
left = Thread.new { spin_left(stop) }
right = Thread.new { spin_right(stop) }
d = digest_it("x" * 1_048_576, stop)
l = left.value
r = right.value
puts format("%.0f %.0f %.0f", l * 1e9, r * 1e9, d * 1e9)
warn format("rb_threads: spin_left %.3f s, spin_right %.3f s, digest_it %.3f s of CPU", l, r, d)
