#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Reads an OTLP ExportProfilesServiceRequest for tests/e2e/otlp.sh.

usage: otlp_read.py FILE check|folded TYPE|profiles|resource|sample-keys

FILE is decoded by protoc --decode against tests/otlp's .proto files (the
specification's field numbers); this script reads protoc's text.

  check        every index into the dictionary in range, each table's entry 0
               its zero value; prints what is wrong, exits 1 if anything is
  folded TYPE  the samples of the profile whose sample type is TYPE as folded
               stacks ("thread.name;root;...;leaf COUNT"), frames named as
               bpfprof's pprof reader names them (bpfprof diff): kernel
               frames "_[k]", inlined calls "_[i]", unnamed ones
               "[FILE+0xOFFSET]"
  profiles     one line a profile: TYPE/UNIT TIME_UNIX_NANO DURATION SUM
  resource     the resource's attributes, "key=value" a line
  sample-keys  the keys of the samples' attributes, and of the locations'
               profile.frame.type values, "key" a line, sorted
  sample-attrs the samples' attributes, "key=value" a line, sorted, once each
  frame-types  each frame of each location, "TYPE<TAB>NAME" a line (NAME as
               folded names it; TYPE its location's profile.frame.type, "-"
               if none)
"""
import codecs
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MESSAGE = 'opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest'
PROTO = 'opentelemetry/proto/collector/profiles/v1development/profiles_service.proto'


def decode(path):
    with open(path, 'rb') as f:
        out = subprocess.run(['protoc', '-I', os.path.join(HERE, 'otlp'), '--decode', MESSAGE, PROTO],
                             stdin=f, capture_output=True, check=True)
    return out.stdout.decode()


def parse(text):
    """protoc's text format as nested dicts of lists: msg[field] = [values or dicts]."""
    root = {}
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == '}':
            stack.pop()
        elif line.endswith('{'):
            child = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
        else:
            key, value = line.split(':', 1)
            value = value.strip()
            if value.startswith('"'):
                value = codecs.escape_decode(value[1:-1].encode('latin-1'))[0].decode('utf-8', 'replace')
            else:
                value = int(value)
            stack[-1].setdefault(key, []).append(value)
    return root


def one(msg, key, default=0):
    v = msg.get(key)
    return v[0] if v else default


class Request:
    def __init__(self, path):
        self.req = parse(decode(path))
        d = one(self.req, 'dictionary', {})
        self.strings = d.get('string_table', [])
        self.mappings = d.get('mapping_table', [])
        self.locations = d.get('location_table', [])
        self.functions = d.get('function_table', [])
        self.links = d.get('link_table', [])
        self.attrs = d.get('attribute_table', [])
        self.stacks = d.get('stack_table', [])

    def profiles(self):
        for rp in self.req.get('resource_profiles', []):
            for sp in rp.get('scope_profiles', []):
                for p in sp.get('profiles', []):
                    yield rp, p

    def s(self, i):
        return self.strings[i]

    def attr(self, i):
        a = self.attrs[i]
        v = one(a, 'value', {})
        if 'string_value_strindex' in v:
            return self.s(one(a, 'key_strindex')), self.s(one(v, 'string_value_strindex'))
        if 'int_value' in v:
            return self.s(one(a, 'key_strindex')), one(v, 'int_value')
        return self.s(one(a, 'key_strindex')), one(v, 'string_value', None)

    def check(self):
        bad = []

        def ref(what, table, i):
            if not 0 <= i < len(table):
                bad.append(f'{what} {i} out of range (table of {len(table)})')

        for name, table in (('string', self.strings), ('mapping', self.mappings),
                            ('location', self.locations), ('function', self.functions),
                            ('link', self.links), ('attribute', self.attrs), ('stack', self.stacks)):
            if not table:
                bad.append(f'no {name}_table entry 0')
        if self.strings and self.strings[0] != '':
            bad.append('string_table[0] is not ""')
        for name, table in (('mapping', self.mappings), ('location', self.locations),
                            ('function', self.functions), ('attribute', self.attrs),
                            ('stack', self.stacks)):
            if table and table[0]:
                bad.append(f'{name}_table[0] is not the zero value: {table[0]}')
        if self.links and any(any(b != 0 for b in v[0].encode('latin-1')) for v in self.links[0].values()):
            bad.append('link_table[0] has IDs that are not zero')
        for m in self.mappings:
            ref('mapping filename_strindex', self.strings, one(m, 'filename_strindex'))
            for a in m.get('attribute_indices', []):
                ref('mapping attribute', self.attrs, a)
        for l in self.locations:
            ref('location mapping_index', self.mappings, one(l, 'mapping_index'))
            for a in l.get('attribute_indices', []):
                ref('location attribute', self.attrs, a)
            for ln in l.get('lines', []):
                ref('line function_index', self.functions, one(ln, 'function_index'))
        for f in self.functions:
            for k in ('name_strindex', 'system_name_strindex', 'filename_strindex'):
                ref('function ' + k, self.strings, one(f, k))
        for a in self.attrs:
            ref('attribute key_strindex', self.strings, one(a, 'key_strindex'))
            v = one(a, 'value', {})
            if 'string_value_strindex' in v:
                ref('attribute string_value_strindex', self.strings, one(v, 'string_value_strindex'))
        for st in self.stacks:
            for i in st.get('location_indices', []):
                ref('stack location', self.locations, i)
        n = 0
        for _, p in self.profiles():
            for k in ('sample_type', 'period_type'):
                for vt in p.get(k, []):
                    ref(k + ' type', self.strings, one(vt, 'type_strindex'))
                    ref(k + ' unit', self.strings, one(vt, 'unit_strindex'))
            for smp in p.get('samples', []):
                n += 1
                ref('sample stack_index', self.stacks, one(smp, 'stack_index'))
                ref('sample link_index', self.links, one(smp, 'link_index'))
                keys = [self.attr(a)[0] for a in smp.get('attribute_indices', []) if 0 <= a < len(self.attrs)]
                for a in smp.get('attribute_indices', []):
                    ref('sample attribute', self.attrs, a)
                if len(keys) != len(set(keys)):
                    bad.append(f'a sample has a key twice: {keys}')
        return bad, n

    def frame_type(self, loc):
        for a in loc.get('attribute_indices', []):
            k, v = self.attr(a)
            if k == 'profile.frame.type':
                return v
        return None

    def frames(self, li):
        """Location li's frames, outermost first, named as bpfprof's pprof reader names them."""
        loc = self.locations[li]
        m = self.mappings[one(loc, 'mapping_index')] if one(loc, 'mapping_index') else None
        kernel = self.frame_type(loc) == 'kernel'
        names = []
        for ln in loc.get('lines', []):
            f = self.functions[one(ln, 'function_index')]
            name = self.s(one(f, 'name_strindex'))
            if m is None and one(f, 'filename_strindex'):
                name = f"{name} ({os.path.basename(self.s(one(f, 'filename_strindex')))}:{one(f, 'start_line')})"
            names.append(name)
        if not names:
            if m is not None:
                base = os.path.basename(self.s(one(m, 'filename_strindex')))
                if len(base) > 2 and base[0] == '[' and base[-1] == ']':
                    base = base[1:-1]
                off = one(loc, 'address') - one(m, 'memory_start') + one(m, 'file_offset')
                names = [f'[{base}+0x{off:x}]']
            else:
                names = ['[unknown]']
        out = []
        for i, name in enumerate(reversed(names)):	# the caller first, its inlined calls after
            suffix = '_[i]' if i else ('_[k]' if kernel else '')
            out.append(name.replace(';', ':') + suffix)
        return out

    def folded(self, type_):
        counts = {}
        for _, p in self.profiles():
            st = one(p, 'sample_type', {})
            if self.s(one(st, 'type_strindex')) != type_:
                continue
            for smp in p.get('samples', []):
                attrs = dict(self.attr(a) for a in smp.get('attribute_indices', []))
                frames = [attrs.get('thread.name', '')]
                for li in reversed(self.stacks[one(smp, 'stack_index')].get('location_indices', [])):
                    frames += self.frames(li)
                key = ';'.join(frames)
                counts[key] = counts.get(key, 0) + sum(smp.get('values', []))
        return counts


def main():
    r = Request(sys.argv[1])
    what = sys.argv[2]
    if what == 'check':
        bad, n = r.check()
        for b in bad[:20]:
            print(b)
        print(f'{n} samples, {len(r.stacks)} stacks, {len(r.locations)} locations, '
              f'{len(r.attrs)} attributes, {len(r.strings)} strings')
        sys.exit(1 if bad else 0)
    elif what == 'folded':
        for k, v in sorted(r.folded(sys.argv[3]).items()):
            print(f'{k} {v}')
    elif what == 'profiles':
        for _, p in r.profiles():
            st = one(p, 'sample_type', {})
            print(f"{r.s(one(st, 'type_strindex'))}/{r.s(one(st, 'unit_strindex'))} "
                  f"{one(p, 'time_unix_nano')} {one(p, 'duration_nano')} "
                  f"{sum(sum(s.get('values', [])) for s in p.get('samples', []))}")
    elif what == 'resource':
        for rp, _ in list(r.profiles())[:1]:
            for kv in one(rp, 'resource', {}).get('attributes', []):
                v = one(kv, 'value', {})
                print(f"{one(kv, 'key', '')}={next(iter(v.values()))[0] if v else ''}")
    elif what == 'sample-keys':
        keys = set()
        for _, p in r.profiles():
            for smp in p.get('samples', []):
                keys.update(r.attr(a)[0] for a in smp.get('attribute_indices', []))
        for l in r.locations:
            t = r.frame_type(l)
            if t:
                keys.add('profile.frame.type=' + t)
        for m in r.mappings:
            for a in m.get('attribute_indices', []):
                keys.add('mapping:' + r.attr(a)[0])
        for k in sorted(keys):
            print(k)
    elif what == 'sample-attrs':
        seen = set()
        for _, p in r.profiles():
            for smp in p.get('samples', []):
                seen.update('%s=%s' % r.attr(a) for a in smp.get('attribute_indices', []))
        for kv in sorted(seen):
            print(kv)
    elif what == 'frame-types':
        for li, loc in enumerate(r.locations):
            if li:
                for name in r.frames(li):
                    print(f"{r.frame_type(loc) or '-'}\t{name}")
    else:
        sys.exit(__doc__)


main()
