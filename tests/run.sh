#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Runs the unit tests and the end-to-end tests, prints their TAP, and ends
# with one line CI can read: "N passed, N failed" (", N skipped" when some
# were). Exit 0 only if none failed. The unit tests run as any user (those
# needing root skip); the end-to-end tests load BPF programs and need root.
#
# usage: tests/run.sh [unit | e2e/NAME ...]   (default: everything)
set -u
cd "$(dirname "$0")/.."
export O=${O:-build}

passed=0
failed=0
skipped=0
failures=()

# Runs one TAP producer, echoing its output and counting its results.
run_tap() {
	local name=$1 out rc n_ok n_bad n_skip
	shift
	echo "# --- $name"
	out=$(mktemp)
	"$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	n_skip=$(grep -c '^ok.*# SKIP' "$out")
	n_ok=$(( $(grep -c '^ok' "$out") - n_skip ))
	n_bad=$(grep -c '^not ok' "$out")
	while IFS= read -r line; do failures+=("$name: ${line#not ok }"); done < <(grep '^not ok' "$out")
	if [ "$rc" != 0 ] && [ "$n_bad" = 0 ]; then
		echo "not ok - $name exited with status $rc"
		failures+=("$name: exited with status $rc")
		n_bad=1
	fi
	passed=$((passed + n_ok))
	skipped=$((skipped + n_skip))
	failed=$((failed + n_bad))
	rm -f "$out"
}

tests=("$@")
e2e_not_run=
if [ ${#tests[@]} = 0 ]; then
	tests=(unit)
	if [ "$(id -u)" = 0 ]; then
		for f in tests/e2e/*.sh; do tests+=("e2e/$(basename "$f" .sh)"); done
	else
		e2e_not_run=1
	fi
fi

for t in "${tests[@]}"; do
	case $t in
	unit) ;;
	e2e/*) if [ "$(id -u)" != 0 ]; then
		echo "tests: the end-to-end tests load BPF programs; run them as root (sudo make test), or run only the unit tests (make check)" >&2
		exit 1
	fi ;;
	*) echo "tests: no test named '$t' (try unit or e2e/NAME)" >&2; exit 2 ;;
	esac
done

start=$(date +%s)
for t in "${tests[@]}"; do
	case $t in
	unit) run_tap unit "$O/tests/unit-tests" "$O/tests/fixtures" ;;
	e2e/*) run_tap "$t" bash "tests/$t.sh" ;;
	*) echo "tests: no test named '$t' (try unit or e2e/NAME)" >&2; exit 2 ;;
	esac
done

echo
if [ ${#failures[@]} -gt 0 ]; then
	echo "# failed:"
	printf '#   %s\n' "${failures[@]}"
fi
summary="$passed passed, $failed failed"
[ "$skipped" = 0 ] || summary+=", $skipped skipped"
echo "$summary ($(( $(date +%s) - start )) s)"
if [ -n "$e2e_not_run" ]; then
	echo "tests: the end-to-end tests were not run: they load BPF programs; run them as root (sudo make test)" >&2
	exit 1
fi
[ "$failed" = 0 ]
