#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""A stand-in for Grafana Pyroscope's ingest endpoint, for tests of --push.

usage: pyroscope_receiver.py PORT DIR

Answers POST /ingest as Pyroscope's HTTP API documents it: the query must
carry name (an application name, labels in braces allowed), from and until
(UNIX seconds, from <= until), format=pprof and sampleRate (Hz); the body
is multipart/form-data with the pprof in the part named "profile" (as
Pyroscope's agents send it), or the pprof itself. Each accepted request's
profile goes to DIR/FROM-UNTIL.N.pb.gz (N counts requests for the same
interval: a second one is a duplicate) and a line "FROM UNTIL NAME RATE" to
DIR/log; anything else gets 400 and a line in DIR/refused. With a file
DIR/fail503 present, every request is answered 503 (a server in trouble).
With a file DIR/noanswer present, the next request accepted is kept and its
connection closed with no answer (a server gone after reading it); the
file is removed.
"""
import email.parser
import email.policy
import gzip
import http.server
import os
import re
import sys
import urllib.parse

PORT, DIR = int(sys.argv[1]), sys.argv[2]
NAME = re.compile(r'^[A-Za-z0-9_.\-]+(\{[A-Za-z0-9_.\-]+=[^,{}]*(,[A-Za-z0-9_.\-]+=[^,{}]*)*\})?$')


def profile_of(content_type, body):
    """The pprof in the body: the multipart part "profile", or the body itself."""
    if content_type.startswith('multipart/form-data'):
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b'Content-Type: ' + content_type.encode() + b'\r\n\r\n' + body)
        for part in msg.iter_parts():
            if part.get_param('name', header='content-disposition') == 'profile':
                return part.get_payload(decode=True)
        return None
    return body


class Handler(http.server.BaseHTTPRequestHandler):
    def refuse(self, code, why):
        with open(os.path.join(DIR, 'refused'), 'a') as f:
            f.write(f'{code} {why} {self.path}\n')
        self.send_response(code)
        self.end_headers()
        self.wfile.write((why + '\n').encode())

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        if os.path.exists(os.path.join(DIR, 'fail503')):
            return self.refuse(503, 'unavailable (fail503)')
        if url.path != '/ingest':
            return self.refuse(404, 'no such path')
        q = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        one = {k: v[0] for k, v in q.items() if len(v) == 1}
        for key in ('name', 'from', 'until', 'format', 'sampleRate'):
            if key not in one:
                return self.refuse(400, f'{key} missing or repeated')
        if not NAME.match(one['name']):
            return self.refuse(400, 'bad name')
        if not (one['from'].isdigit() and one['until'].isdigit() and one['sampleRate'].isdigit()):
            return self.refuse(400, 'from, until, sampleRate: not whole numbers')
        if int(one['from']) > int(one['until']):
            return self.refuse(400, 'from after until')
        if one['format'] != 'pprof':
            return self.refuse(400, 'format is not pprof')
        profile = profile_of(self.headers.get('Content-Type', ''), body)
        if not profile:
            return self.refuse(400, 'no profile in the body')
        try:
            gzip.decompress(profile)
        except OSError:
            return self.refuse(400, 'the profile is not gzipped')
        key = f"{one['from']}-{one['until']}"
        n = 1
        while os.path.exists(os.path.join(DIR, f'{key}.{n}.pb.gz')):
            n += 1
        with open(os.path.join(DIR, f'{key}.{n}.pb.gz'), 'wb') as f:
            f.write(profile)
        with open(os.path.join(DIR, 'log'), 'a') as f:
            f.write(f"{one['from']} {one['until']} {one['name']} {one['sampleRate']}\n")
        try:
            os.unlink(os.path.join(DIR, 'noanswer'))
            self.close_connection = True
            return
        except FileNotFoundError:
            pass
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer.allow_reuse_address = True
http.server.ThreadingHTTPServer(('127.0.0.1', PORT), Handler).serve_forever()
