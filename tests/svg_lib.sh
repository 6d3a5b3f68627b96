# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Reading bpfprof's SVG flame graphs back, and running them in a real browser
# (headless Chromium): for e2e/svg (-o x.svg) and e2e/flamegraph (--listen's
# /flamegraph). Sourced after tests/lib.sh.

CHROMIUM=${CHROMIUM:-chromium}

# frames SVG: one line per frame, tab-separated:
# kind samples offset x width y fill name
frames() {
	awk '
	function attr(k,   m) {
		if (!match($0, " " k "=\"[^\"]*\""))
			return ""
		m = substr($0, RSTART, RLENGTH)
		sub(/^[^"]*"/, "", m)
		sub(/"$/, "", m)
		return m
	}
	/^<g class="/ {
		kind = $0
		sub(/^<g class="/, "", kind)
		sub(/".*/, "", kind)
		name = $0
		sub(/^.*<title>/, "", name)
		sub(/ \([0-9]+ samples?, [0-9.]+%\)<\/title>.*$/, "", name)
		printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", kind, attr("data-s"), attr("data-o"),
			attr("x"), attr("width"), attr("y"), attr("fill"), name
	}' "$1"
}

# matched_ok "PERCENT SAMPLES TOTAL" SAMPLES TOTAL: what the script's search
# reported: the very samples, and the percentage within its 2 decimals
matched_ok() {
	[ -n "$1" ] && awk -v m="$1" -v a="$2" -v t="$3" 'BEGIN {
		split(m, f, " ")
		d = f[1] - 100 * a / t
		exit !(f[2] == a && f[3] == t && d <= 0.0051 && d >= -0.0051)
	}'
}

# chrome ARGS...: headless Chromium, up to CHROME_TIMEOUT seconds (60).
chrome() {
	timeout "${CHROME_TIMEOUT:-60}" "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$T/chrome.XXXXXX")" "$@" 2>> "$T/chrome.err"
}

# browser_checks SVG WHAT: Chromium runs the graph's script as a reader's browser would
# (e2e/svg checks each step in more detail): it reads every frame; a search for
# split_one reports split_one_third's samples of the whole; a zoom on the widest
# split_one_third (?o=OFFSET&d=DEPTH, as a click sets) makes it fill the width and hides
# split_two_thirds.
browser_checks() {
	local svg=$1 what=$2 n ready one total m o y yroot zw hidden
	frames "$svg" > "$svg.tsv"
	n=$(wc -l < "$svg.tsv")
	chrome --dump-dom "file://$svg" > "$svg.dom"
	ready=$(sed -n 's/^<svg [^>]*data-ready="\([0-9]*\)".*/\1/p' "$svg.dom" | head -1)
	check "$what: chromium ran the script over all $n frames (data-ready '$ready')" \
		'[ "$n" -gt 0 ] && [ "$ready" = "$n" ]'
	one=$(awk -F'\t' '$8 == "split_one_third" { t += $2 } END { print t + 0 }' "$svg.tsv")
	total=$(awk -F'\t' '$8 == "all" { print $2; exit }' "$svg.tsv")
	chrome --dump-dom "file://$svg?s=split_one" > "$svg.search"
	m=$(sed -n 's/.*<text id="matched"[^>]*>Matched: \([0-9.]*\)% (\([0-9]*\) of \([0-9]*\) samples)<.*/\1 \2 \3/p' "$svg.search")
	check "$what: chromium's search for split_one matched '$m' (%, samples, of), split_one_third's $one of $total" \
		'[ "$one" -gt 0 ] && matched_ok "$m" "$one" "$total"'
	read -r o y <<< "$(awk -F'\t' '$8 == "split_one_third" && $2 + 0 > w { w = $2 + 0; o = $3; y = $6 } END { print o, y }' "$svg.tsv")"
	yroot=$(awk -F'\t' '$8 == "all" { print $6; exit }' "$svg.tsv")
	chrome --dump-dom "file://$svg?o=$o&d=$(( (${yroot:-0} - ${y:-0}) / 16 ))" > "$svg.zoom"
	zw=$(grep "<title>split_one_third (" "$svg.zoom" | grep "data-o=\"$o\"" | head -1 |
	     sed -n 's/.*<rect x="\([0-9.]*\)"[^>]* width="\([0-9.]*\)".*/\1 \2/p')
	hidden=$(grep "<title>split_two_thirds (" "$svg.zoom" | grep -c 'display: none')
	check "$what: chromium zooms into split_one_third: x, width '$zw' (the whole 1180 px), split_two_thirds hidden ($hidden)" \
		'[ "$zw" = "10.00 1180.00" ] && [ "$hidden" -ge 1 ]'
}
