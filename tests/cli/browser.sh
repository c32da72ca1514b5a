#!/bin/bash
# The HTML report in a real browser: headless Chromium renders the report
# of a known regression; a checker script (only in the test's copy) reads
# the DOM after the page's own script ran and writes what it found into
# the page, which --dump-dom prints. A screenshot is kept for a person.
. "$(dirname "$0")/lib.sh"
fresh_db cli_browser
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_browser
OUTDIR=${BUILD:-build}/test-output
rm -rf "$T" && mkdir -p "$T"

CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
	echo "ok 1 # skip chromium is not installed"
	exit 0
fi
chrome() {
	timeout 90 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage \
		--user-data-dir="$T/chrome" --virtual-time-budget=5000 "$@" 2>>"$T/chrome.log"
}

pr --quiet service add web && pr --quiet service enable web
while read -r f rel at; do
	pr --quiet ingest "$f" --service web --release "$rel" --time "$at" --type cpu
done < <(bash "$PROFREG_TEST_DATA/reports/web.sh" "$T/caps")
pr --quiet analyze --service web --release v2 --at 2026-03-11T00:00:00Z --min-captures 5 >/dev/null
run_id=$(sql "select max(id) from runs where kind = 'analyze'")
run pr report --run "$run_id" --out "$T/report.html"
[ $RC -eq 0 ] && ok "the report is written" || not_ok "report" "$ERR"

# The test copy: alert() recorded instead of shown, and a checker at the end.
{
	sed 's|<head>|<head><script>window.__alerted=false;window.alert=function(){window.__alerted=true;};</script>|' "$T/report.html" |
		sed 's|</body></html>||'
	cat <<'EOF'
<pre id="check"></pre>
<script>
(function(){
var svg=document.querySelector('svg.flame'), fr=[].slice.call(svg.querySelectorAll('g.fr'));
function redness(g){var f=g.querySelector('rect').getAttribute('fill'),r=parseInt(f.substr(1,2),16),
 gg=parseInt(f.substr(3,2),16),b=parseInt(f.substr(5,2),16);return r-(gg+b)/2;}
var byDelta=fr.reduce(function(a,g){return +g.dataset.delta>+a.dataset.delta?g:a;});
var byColour=fr.reduce(function(a,g){return redness(g)>redness(a)?g:a;});
var hostile=fr.filter(function(g){return g.getAttribute('data-name')==='\u003cscript>alert(1)\u003c/script>';})[0];
var tax=fr.filter(function(g){return g.getAttribute('data-name')==='checkout.computeTax';})[0];
var res={frames:fr.length,names:fr.map(function(g){return g.getAttribute('data-name');}).sort().join(','),
 reddest_by_delta:byDelta.dataset.name, reddest_by_colour:byColour.dataset.name,
 hostile_is_text:!!hostile && hostile.querySelector('title').textContent.split('\n')[0]==='\u003cscript>alert(1)\u003c/script>',
 hostile_label:hostile?hostile.querySelector('text').textContent:null,
 scripts:document.querySelectorAll('script').length, alerted:window.__alerted,
 sparkline_points:document.querySelector('svg.spark').querySelectorAll('circle').length};
tax.dispatchEvent(new MouseEvent('click',{bubbles:true}));
res.zoom_width=+tax.querySelector('rect').getAttribute('width');
res.zoom_hidden=fr.filter(function(g){return g.style.display==='none';}).length;
document.getElementById('check').textContent='CHECK '+JSON.stringify(res)+' END';
})();
</script>
</body></html>
EOF
} >"$T/check.html"
chrome --dump-dom "file://$T/check.html" >"$T/dom.html"
check=$(sed -n 's/.*<pre id="check">CHECK \(.*\) END<\/pre>.*/\1/p' "$T/dom.html")
echo "# DOM check: $check"
[ -n "$check" ] && ok "the page's script and the checker ran in Chromium" || not_ok "chromium ran" "$(tail -n 5 "$T/chrome.log")"
grep -q '"names":"&lt;script&gt;alert(1)&lt;/script&gt;,all,checkout.computeTax,checkout.handle,db.query,gc.run,http.serve,json.encode,main,render.page,tmpl.exec"' <<<"$check" &&
	ok "the flame graph has exactly the expected frames" || not_ok "frames" "$check"
grep -q '"reddest_by_delta":"checkout.computeTax"' <<<"$check" && grep -q '"reddest_by_colour":"checkout.computeTax"' <<<"$check" &&
	ok "the regressed frame is the reddest, by its data and by its colour" || not_ok "reddest" "$check"
grep -q '"hostile_is_text":true' <<<"$check" && grep -q '"scripts":3' <<<"$check" && grep -q '"alerted":false' <<<"$check" &&
	ok "a hostile function name shows as text and runs nothing" || not_ok "hostile name" "$check"
grep -q '"sparkline_points":13' <<<"$check" && ok "the first finding's sparkline shows all 13 captures" || not_ok "sparkline" "$check"
grep -q '"zoom_width":1200' <<<"$check" && grep -Eq '"zoom_hidden":[1-9]' <<<"$check" && ok "clicking a frame zooms into it" || not_ok "zoom" "$check"

chrome --screenshot="$T/report.png" --window-size=1400,2000 "file://$T/report.html" >/dev/null
if [ -s "$T/report.png" ]; then
	mkdir -p "$OUTDIR" 2>/dev/null && cp "$T/report.png" "$OUTDIR/report.png" 2>/dev/null
	ok "a screenshot is saved ($T/report.png, $OUTDIR/report.png)"
else
	not_ok "screenshot" "$(tail -n 5 "$T/chrome.log")"
fi
finish
