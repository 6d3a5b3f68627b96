# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The SVG flame graph, written with the folded output from one run: its
# frames as wide as their samples, and a real browser (headless Chromium)
# running its script, zooming, searching and drawing it; the pixels of one
# screenshot measured.
. tests/lib.sh
. tests/svg_lib.sh

PNG=$O/tests/tools/png_pixels
INNER=1180	# px between the 10 px margins of a 1200 px graph

# field NAME COLUMN: column of the first frame called NAME in $T/frames.tsv
field() { awk -F'\t' -v n="$1" -v c="$2" '$8 == n { print $c; exit }' "$T/frames.tsv"; }
# sum_field NAME COLUMN: the column summed over every frame called NAME
sum_field() { awk -F'\t' -v n="$1" -v c="$2" '$8 == n { t += $c } END { print t + 0 }' "$T/frames.tsv"; }

# 1. One run, two outputs.
start_workload split 8
pid=$!
sleep 0.3
$BPFPROF -F 999 -d 5 -p $pid -o "$T/split.svg" -o "$T/split.folded" 2> "$T/split.err"
rc=$?
check "svg: exit status 0 writing SVG and folded from one run" '[ $rc = 0 ]'
total=$(folded_total "$T/split.folded")
check "svg: the folded output passes the strict checker" '[ -n "$total" ]'
if xmllint --noout "$T/split.svg" 2> "$T/xmllint.err"; then
	ok "svg: xmllint finds $(wc -c < "$T/split.svg") bytes well-formed"
else
	not_ok "svg: xmllint rejects the SVG"
	diag "$T/xmllint.err"
fi

# 2. The frames, read back: as wide as their samples.
frames "$T/split.svg" > "$T/frames.tsv"
nframes=$(wc -l < "$T/frames.tsv")
root=$(field all 2)
thread=$(field split 2)
if [ -n "$total" ] && [ "$root" = "$total" ] && [ "$thread" = "$total" ]; then
	ok "svg: the root frame holds the folded total, $total samples, all in thread split"
else
	not_ok "svg: root frame $root samples, thread split $thread, folded total $total"
	diag "$T/frames.tsv"
fi
bad=$(awk -F'\t' -v t="${total:-1}" -v inner=$INNER '
	function abs(v) { return v < 0 ? -v : v }
	abs($5 - $2 * inner / t) > 0.0051 || abs($4 - (10 + $3 * inner / t)) > 0.0051 { n++ }
	END { print n + 0 }' "$T/frames.tsv")
check "svg: all $nframes frames: width = samples x $INNER/$total px, x = 10 + offset x the same" \
	'[ "$bad" = 0 ]'
two=$(sum_matching "$T/split.folded" ';split_two_thirds(;|$)')
one=$(sum_matching "$T/split.folded" ';split_one_third(;|$)')
s2=$(sum_field split_two_thirds 2)
s1=$(sum_field split_one_third 2)
w2=$(sum_field split_two_thirds 5)
w1=$(sum_field split_one_third 5)
check "svg: split_two_thirds and split_one_third hold their folded counts ($s2, $s1)" \
	'[ "$s2" = "$two" -a "$s1" = "$one" ]'
rf=$(ratio "$two" "$one")
rw=$(awk -v a="$w2" -v b="$w1" 'BEGIN { printf "%.5f", b ? a / b : 0 }')
# The 2:1 split itself is e2e/sample's to check: here both leaves must be there.
rel=$(awk -v a="$rw" -v b="$two" -v c="$one" 'BEGIN { printf "%.6f", c ? a / (b / c) : 0 }')
if within "$rel" 0.999 1.001 && within "$rf" 1.5 2.5; then
	ok "svg: widths $w2 : $w1 px = $rw, the folded counts' $two : $one = $rf"
else
	not_ok "svg: widths $w2 : $w1 px = $rw, folded $two : $one = $rf"
	diag "$T/frames.tsv"
fi

# 3. A browser runs the script: every frame read, labels, search, zoom.
url="file://$T/split.svg"
start=$(date +%s%N)
chrome --dump-dom "$url" > "$T/dom.svg"
ms=$((($(date +%s%N) - start) / 1000000))
ready=$(sed -n 's/^<svg [^>]*data-ready="\([0-9]*\)".*/\1/p' "$T/dom.svg" | head -1)
if [ "$ready" = "$nframes" ]; then
	ok "chromium: the script ran and read all $nframes frames (load and dump $ms ms)"
else
	not_ok "chromium: data-ready='$ready', want $nframes frames" "$(tail -3 "$T/chrome.err")"
fi
if grep -q '>split_two_thirds</text></g>$' "$T/dom.svg" && grep -q '>split_one_third</text></g>$' "$T/dom.svg" &&
   grep -q '>split_caller</text></g>$' "$T/dom.svg"; then
	ok "chromium: split_two_thirds, split_one_third, split_caller labelled in the rendered DOM"
else
	not_ok "chromium: the hot functions' labels are missing from the rendered DOM"
	diag "$T/dom.svg"
fi

chrome --dump-dom "$url?s=split_one" > "$T/search.svg"
m=$(sed -n 's/.*<text id="matched"[^>]*>Matched: \([0-9.]*\)% (\([0-9]*\) of \([0-9]*\) samples)<.*/\1 \2 \3/p' "$T/search.svg")
hl=$(grep -c 'fill="#e600e6"' "$T/search.svg")
if matched_ok "$m" "$one" "$total" && [ "$hl" -ge 1 ]; then
	ok "chromium: search split_one highlights $hl frame(s); matched share, samples, total: $m"
else
	not_ok "chromium: search split_one: matched '$m', want $one of $total samples; $hl highlighted"
	grep 'id="matched"' "$T/search.svg" | diag /dev/stdin
fi

o1=$(field split_one_third 3)
y1=$(field split_one_third 6)
yroot=$(field all 6)
d1=$(((yroot - y1) / 16))
chrome --dump-dom "$url?o=$o1&d=$d1" > "$T/zoom.svg"
zw=$(grep '<title>split_one_third (' "$T/zoom.svg" | head -1 | sed -n 's/.*<rect x="\([0-9.]*\)"[^>]* width="\([0-9.]*\)".*/\1 \2/p')
hidden=$(grep '<title>split_two_thirds (' "$T/zoom.svg" | grep -c 'display: none')
parent=$(grep -c '^<g class="user parent"[^>]*><title>main (' "$T/zoom.svg")
unzoom=$(grep -c '<text id="unzoom" class="btn"' "$T/zoom.svg")
if [ "$zw" = "10.00 $INNER.00" ] && [ "$hidden" -ge 1 ] && [ "$parent" = 1 ] && [ "$unzoom" = 1 ]; then
	ok "chromium: zoom into split_one_third: it fills the width, split_two_thirds hidden, main faded, Reset Zoom shown"
else
	not_ok "chromium: zoom into split_one_third (o=$o1 d=$d1): x,width '$zw', two-thirds hidden $hidden, main parent $parent, reset $unzoom"
fi

# The same by hand: a page next to the SVG loads it in a frame and sends
# it mouse and key events (file pages may read each other only with
# --allow-file-access-from-files); prompt() is replaced to answer searches.
cat > "$T/events.html" << 'EOF'
<html><body><iframe id="f" src="split.svg" width="1200" height="400"></iframe><pre id="out"></pre>
<script>
function log(s) { document.getElementById('out').textContent += s + '\n'; }
document.getElementById('f').onload = function () {
	var w = this.contentWindow, d = this.contentDocument, i, one, all;
	function fire(el, type) { el.dispatchEvent(new w.MouseEvent(type, { bubbles: true })); }
	function text(id) { return d.getElementById(id).textContent; }
	try {
		for (i = 0; i < d.getElementById('frames').children.length; i++) {
			var g = d.getElementById('frames').children[i], t = g.children[0].textContent;
			/* The widest: a rare stack may hold another, narrow one. */
			if (t.indexOf('split_one_third (') === 0 &&
			    (!one || +g.children[1].getAttribute('data-s') > +one.getAttribute('data-s')))
				one = g.children[1];
			if (t.indexOf('all (') === 0) all = g.children[1];
		}
		fire(one, 'mouseover');
		log('hover|' + text('details'));
		fire(one, 'click');
		log('click|' + one.getAttribute('width') + '|' + d.getElementById('unzoom').getAttribute('class') + '|' + w.location.search);
		fire(d.getElementById('unzoom'), 'click');
		log('reset|' + one.getAttribute('width') + '|' + d.getElementById('unzoom').getAttribute('class'));
		w.prompt = function () { return 'two_thirds$'; };
		fire(d.getElementById('search'), 'click');
		log('search|' + text('matched') + '|' + text('search'));
		w.dispatchEvent(new w.KeyboardEvent('keydown', { key: 'Escape' }));
		log('escape|' + text('matched') + '|' + text('search'));
	} catch (e) {
		log('error|' + e);
	}
};
</script></body></html>
EOF
chrome --allow-file-access-from-files --virtual-time-budget=5000 --dump-dom "file://$T/events.html" > "$T/events.out"
ev() { sed 's/^.*<pre id="out">//' "$T/events.out" | sed -n "s/^$1|//p" | head -1; }
# The page hovers the widest split_one_third frame (a rare stack may hold another).
widest=$(grep -o '<title>split_one_third ([0-9]* samples' "$T/split.svg" | tr -dc '0-9\n' | sort -n | tail -1)
# Its width: the frames' widths are their samples' share of all of split_one_third's.
w1w=$(awk -v w="$w1" -v n="${widest:-0}" -v s="$s1" 'BEGIN { if (s > 0) printf "%.2f\n", w * n / s }')
case $(ev hover) in
"split_one_third ($widest samples, "*"%)") hover=ok ;;
*) hover= ;;
esac
if [ -z "$hover" ]; then
	not_ok "chromium events: hovering split_one_third says '$(ev hover)'"
	diag "$T/events.out"
elif [ "$(ev click)" != "$INNER.00|btn|?o=$o1&amp;d=$d1" ] ||
     ! within "$(ev reset | cut -d'|' -f1)" "$(awk -v w="$w1w" 'BEGIN { print w - 0.011 }')" \
	"$(awk -v w="$w1w" 'BEGIN { print w + 0.011 }')" || [ "$(ev reset | cut -d'|' -f2)" != "btn hide" ]; then
	not_ok "chromium events: click '$(ev click)', Reset Zoom '$(ev reset)'; want $INNER.00 wide, then $w1w"
	diag "$T/events.out"
elif ! matched_ok "$(ev search | sed -n 's/^Matched: \([0-9.]*\)% (\([0-9]*\) of \([0-9]*\) samples)|Reset Search$/\1 \2 \3/p')" "$two" "$total" ||
     [ "$(ev escape)" != " |Search" ]; then
	not_ok "chromium events: search '$(ev search)', then Escape '$(ev escape)'"
	diag "$T/events.out"
else
	ok "chromium events: hover details '$(ev hover)'; click zooms to $INNER px and back; search: $(ev search | cut -d'|' -f1)"
fi

# 4. One screenshot: the leaves' row measured in pixels. A column belongs
# to a frame when at least 3 of the row's 15 pixels have the frame's fill
# (labels and rounded corners cover the others).
chrome --screenshot="$T/split.png" --window-size=1200,800 "$url" > /dev/null 2>&1
size=$($PNG "$T/split.png" | head -1)
check "screenshot: a 1200x800 PNG" '[ "$size" = "1200 800" ]'

# columns BAND_FILE FILL: "count first last" of the columns painted FILL (+-8 per channel)
columns() {
	awk -v fill="$2" '
	function hex(s) { return index("0123456789abcdef", substr(s, 1, 1)) * 16 + index("0123456789abcdef", substr(s, 2, 1)) - 17 }
	function near(a, b) { return a - b <= 8 && b - a <= 8 }
	BEGIN { r = hex(substr(fill, 2, 2)); g = hex(substr(fill, 4, 2)); b = hex(substr(fill, 6, 2)) }
	NR > 1 && near(hex(substr($3, 1, 2)), r) && near(hex(substr($3, 3, 2)), g) && near(hex(substr($3, 5, 2)), b) { n[$1]++ }
	END {
		lo = -1
		for (x in n)
			if (n[x] >= 3) {
				c++
				if (lo < 0 || x + 0 < lo) lo = x + 0
				if (x + 0 > hi) hi = x + 0
			}
		print c + 0, lo, hi + 0
	}' "$1"
}
# dark BAND_FILE X0 X1: label pixels (red below 120 on a warm fill) between X0 and X1
dark() { awk -v a="$2" -v b="$3" 'NR > 1 && $1 >= a && $1 <= b && substr($3, 1, 2) < "78" { n++ } END { print n + 0 }' "$1"; }

ly=$(field split_two_thirds 6)
$PNG "$T/split.png" "$ly" $((ly + 14)) > "$T/leaves.txt"
$PNG "$T/split.png" "$yroot" $((yroot + 14)) > "$T/root.txt"
f2=$(field split_two_thirds 7)
f1=$(field split_one_third 7)
x2=$(field split_two_thirds 4)
x1=$(field split_one_third 4)
read -r n2 lo2 hi2 <<< "$(columns "$T/leaves.txt" "$f2")"
read -r n1 lo1 hi1 <<< "$(columns "$T/leaves.txt" "$f1")"
read -r nr lor hir <<< "$(columns "$T/root.txt" "$(field all 7)")"
rp=$(ratio "$n2" "$n1")
if [ "$(columns "$T/leaves.txt" "$f1" | cut -d' ' -f1)" = 0 ] || [ "$f1" = "$f2" ]; then
	not_ok "screenshot: split_one_third's fill $f1 not found or not told from $f2"
elif within "$(ratio "$rp" "$rf")" 0.98 1.02 &&
     within "$lo2" "$(awk -v x="$x2" 'BEGIN { print x - 2 }')" "$(awk -v x="$x2" 'BEGIN { print x + 2 }')" &&
     within "$hi2" "$(awk -v x="$x2" -v w="$w2" 'BEGIN { print x + w - 3 }')" "$(awk -v x="$x2" -v w="$w2" 'BEGIN { print x + w + 1 }')" &&
     within "$lo1" "$(awk -v x="$x1" 'BEGIN { print x - 2 }')" "$(awk -v x="$x1" 'BEGIN { print x + 2 }')" &&
     within "$hi1" "$(awk -v x="$x1" -v w="$w1" 'BEGIN { print x + w - 3 }')" "$(awk -v x="$x1" -v w="$w1" 'BEGIN { print x + w + 1 }')"; then
	ok "screenshot: row y=$ly: split_two_thirds $f2 in x $lo2-$hi2 ($n2 columns), split_one_third $f1 in x $lo1-$hi1 ($n1): $rp, folded $rf"
else
	not_ok "screenshot: row y=$ly: split_two_thirds $n2 columns x $lo2-$hi2 (drawn at $x2 + $w2), split_one_third $n1 x $lo1-$hi1 (at $x1 + $w1): $rp, folded $rf"
fi
if within "$nr" $((INNER - 4)) $INNER && within "$lor" 9 11; then
	ok "screenshot: the root frame painted across $nr of $INNER columns from x $lor"
else
	not_ok "screenshot: the root frame painted across $nr columns from x $lor, want $INNER from 10"
fi
d2=$(dark "$T/leaves.txt" "$lo2" "$hi2")
check "screenshot: a label drawn inside split_two_thirds ($d2 dark pixels)" '[ "$d2" -ge 40 ]'
