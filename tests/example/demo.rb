# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# A small Ruby service for the README's Ruby flame graph: requests handled in
# Ruby (render: string building), with C underneath (checksum: OpenSSL's
# SHA-256; compress: zlib; parse: the json extension), and a second thread
# ranking records with a block that C (Array#sort_by) calls back.
#
# usage: ruby demo.rb [SECONDS]
require "json"
require "openssl"
require "zlib"

Record = Struct.new(:id, :name, :score)

def render(records)
  records.map { |r| format("%-8d %-20s %8.3f", r.id, r.name, r.score) }.join("\n")
end

def checksum(text)
  OpenSSL::Digest::SHA256.digest(text * 32)
end

def compress(text)
  Zlib::Deflate.deflate(text, Zlib::BEST_SPEED)
end

def parse(json)
  JSON.parse(json).sum { |h| h["score"] }
end

def handle_request(records, json)
  page = render(records)
  [checksum(page), compress(page), parse(json)]
end

def rank(records)
  records.sort_by { |r| [-r.score, r.name] }.first(10)
end

seconds = Float(ARGV[0] || 30)
records = Array.new(400) { |i| Record.new(i, "user#{i * 7919 % 1000}", (i * 37 % 101) / 7.0) }
json = JSON.generate(records.map(&:to_h))
stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
ranker = Thread.new do
  while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
    rank(records)
    sleep 0.004
  end
end
handle_request(records, json) while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
ranker.join
