#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""A stand-in for an OpenTelemetry Collector's OTLP/HTTP receiver, for --otlp.

usage: otlp_receiver.py PORT DIR

Answers POST /v1development/profiles as the OTLP specification says a
server does: the body binary protobuf ("Content-Type: application/x-protobuf"),
gzipped when "Content-Encoding: gzip" says so, "OTLP-Profiles-Development-Version"
absent or 1 (what the Collector accepts for this schema); 200 with an empty
ExportProfilesServiceResponse. Each accepted request's body, gunzipped, goes
to DIR/N.otlp.pb (N counts requests from 1) and a line "N BYTES" to DIR/log;
anything else gets 400 or 404 and a line in DIR/refused. With a file
DIR/fail503 present, every request is answered 503 (a server in trouble).
With a file DIR/retry_after holding N, the next request is answered 429 with
"Retry-After: N" (a server asking to be left alone for N s), the file
removed and the time written to DIR/throttled. Times are CLOCK_MONOTONIC
seconds: the log's third column is each kept request's.
"""
import gzip
import http.server
import os
import sys
import time

PORT, DIR = int(sys.argv[1]), sys.argv[2]


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, code, body=b''):
        self.send_response(code)
        self.send_header('Content-Type', 'application/x-protobuf')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def refuse(self, code, why):
        with open(os.path.join(DIR, 'refused'), 'a') as f:
            f.write(f'{code} {why} {self.path}\n')
        self.answer(code)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        if os.path.exists(os.path.join(DIR, 'fail503')):
            return self.refuse(503, 'unavailable (fail503)')
        throttle = os.path.join(DIR, 'retry_after')
        if os.path.exists(throttle):
            with open(throttle) as f:
                after = f.read().strip()
            os.unlink(throttle)
            with open(os.path.join(DIR, 'throttled'), 'a') as f:
                f.write(f'{time.monotonic():.3f}\n')
            self.send_response(429)
            self.send_header('Retry-After', after)
            self.send_header('Content-Length', '0')
            self.end_headers()
            return
        if self.path != '/v1development/profiles':
            return self.refuse(404, 'no such path')
        if self.headers.get('Content-Type') != 'application/x-protobuf':
            return self.refuse(400, 'Content-Type is not application/x-protobuf')
        if self.headers.get_all('OTLP-Profiles-Development-Version', []) not in ([], ['1']):
            return self.refuse(400, 'OTLP-Profiles-Development-Version is not 1')
        if self.headers.get('Content-Encoding') == 'gzip':
            try:
                body = gzip.decompress(body)
            except OSError:
                return self.refuse(400, 'the body is not gzipped')
        elif self.headers.get('Content-Encoding') not in (None, 'identity'):
            return self.refuse(400, 'unknown Content-Encoding')
        n = 1
        while os.path.exists(os.path.join(DIR, f'{n}.otlp.pb')):
            n += 1
        with open(os.path.join(DIR, f'{n}.otlp.pb'), 'wb') as f:
            f.write(body)
        with open(os.path.join(DIR, 'log'), 'a') as f:
            f.write(f'{n} {len(body)} {time.monotonic():.3f}\n')
        self.answer(200)

    def do_GET(self):
        self.answer(404)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer.allow_reuse_address = True
http.server.ThreadingHTTPServer(('127.0.0.1', PORT), Handler).serve_forever()
