# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The docs say what the runtimes' descriptors say (include/bpfprof/runtime_info.h): the
# table in docs/runtimes.md is `bpfprof runtimes` word for word; --help, the man page, the
# README and the docs name each runtime's versions in its descriptor's words and no others
# ("CPython 3.8 to 3.13": a product's name and versions is always the versions read); and
# no paragraph of the docs is cut short or said twice. Nothing is sampled.
. tests/lib.sh

DOCS="README.md src/bpfprof.8 $(ls docs/*.md)"

"$BPFPROF" runtimes > "$T/runtimes" 2> "$T/runtimes.err"
rc=$?
"$BPFPROF" --help > "$T/help"
nr=$(grep -c -- '^ *--no-' "$T/help")
rows=$(grep -c '^| [A-Z].* (`--no-' "$T/runtimes")
check "bpfprof runtimes: exit $rc, a row for each of the $nr --no-OPTION runtimes ($rows)" \
	'[ $rc = 0 ] && [ ! -s "$T/runtimes.err" ] && [ "$nr" -ge 3 ] && [ "$rows" = "$nr" ]'
# Each runtime's versions: the table's second column.
awk -F ' [|] ' '/^[|] [A-Z].* \(`--no-/ { print $2 }' "$T/runtimes" > "$T/versions"

sed -n '/^<!-- bpfprof runtimes: begin -->$/,/^<!-- bpfprof runtimes: end -->$/p' docs/runtimes.md |
	sed '1d;$d' > "$T/runtimes.table"
if [ -s "$T/runtimes.table" ] && diff -u "$T/runtimes" "$T/runtimes.table" > "$T/d.runtimes"; then
	ok "docs/runtimes.md's table is bpfprof runtimes' ($(wc -l < "$T/runtimes.table") lines)"
else
	not_ok "docs/runtimes.md's table between its markers differs from bpfprof runtimes (paste its output there)"
	diag "$T/d.runtimes" 20
fi

# --help: each --no-OPTION's help names its runtime's versions (its two lines joined).
awk '/^ *--no-/ { l = $0; getline; print l " " $0 }' "$T/help" | tr -s ' ' > "$T/help.no"
missing=
while IFS= read -r v; do grep -qF -- "$v" "$T/help.no" || missing+="$v; "; done < "$T/versions"
check "--help: every --no-OPTION names its versions as its descriptor does" '[ -z "$missing" ]'
if [ -n "$missing" ]; then diag "$T/help.no"; fi

# Every "PRODUCT VERSIONS" phrase in the docs, the man page and the runtimes' messages.
python3 tests/doc_text.py versions $DOCS src/runtime/*.c > "$T/phrases"
python3 tests/doc_text.py versions "$T/help" | sed "s|^$T/help|--help|" >> "$T/phrases"
awk -F '\t' 'NR == FNR { v[$0] = 1; next } !($2 in v)' "$T/versions" "$T/phrases" > "$T/wrong"
check "$(wc -l < "$T/phrases") statements of versions read, each a descriptor's words ($(tr '\n' ';' < "$T/versions"))" \
	'[ "$(wc -l < "$T/phrases")" -gt 10 ] && [ ! -s "$T/wrong" ]'
if [ -s "$T/wrong" ]; then diag "$T/wrong"; fi

# The places a user reads first name every runtime's versions.
for f in README.md src/bpfprof.8 docs/runtimes.md --help; do
	missing=
	while IFS= read -r v; do
		grep -qF -- "$(printf '%s\t%s' "$f" "$v")" "$T/phrases" || missing+="$v; "
	done < "$T/versions"
	check "$f names every runtime's versions" '[ -z "$missing" ]'
	if [ -n "$missing" ]; then echo "#   missing: $missing"; fi
done

# The README's docs table: runtimes.md's row names every runtime (its frames' name in messages).
row=$(grep -F '| [docs/runtimes.md]' README.md)
missing=
for what in $(sed -n 's/^| \([A-Z][a-z]*\) (`--no-.*/\1/p' "$T/runtimes"); do
	case $row in *"$what"*) ;; *) missing+="$what " ;; esac
done
check "README's docs table: runtimes.md's row names every runtime ($row)" '[[ -n $row && -z $missing ]]'

# runtimes.md in order: the table, each runtime, then adding one, then what is next.
grep '^## ' docs/runtimes.md | tr '\n' '|' > "$T/heads"
check "docs/runtimes.md: Which builds are read, Python, LuaJIT, Ruby, Java, Adding a runtime, What is next ($(cat "$T/heads"))" \
	'[ "$(cat "$T/heads")" = "## Which builds are read|## Python|## LuaJIT|## Ruby|## Java|## PHP|## Adding a runtime|## What is next|" ]'

# Prose: no paragraph cut short, no sentence said twice.
python3 tests/doc_text.py prose $DOCS docs/research/*.md > "$T/prose"
check "README.md and docs/*.md: no paragraph cut short, no sentence said twice" '[ ! -s "$T/prose" ]'
if [ -s "$T/prose" ]; then diag "$T/prose"; fi
