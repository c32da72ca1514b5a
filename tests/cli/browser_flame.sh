#!/bin/bash
# The flame graph's two sides in headless Chromium: a function that
# vanished is drawn from the baseline and marked; the current, baseline and
# difference views toggle; the finding's report opens the sandwich of its
# function (callers above, callees below); the tooltip element shows both
# sides' self and total, absolute and share; the history has a time axis,
# release boundaries and named captures; and in a screenshot the regressed
# frame's pixels are red.
. "$(dirname "$0")/lib.sh"
fresh_db cli_browser_flame
pr --quiet db init
T=$PROFREG_TEST_TMP/cli_browser_flame
rm -rf "$T" && mkdir -p "$T"

CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
	echo "ok 1 # skip chromium is not installed"
	exit 0
fi
chrome() {
	timeout 90 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage \
		--hide-scrollbars --force-device-scale-factor=1 --window-size=1400,1600 \
		--user-data-dir="$T/chrome" --virtual-time-budget=5000 "$@" 2>>"$T/chrome.log"
}

# v1: ten captures where runtime.pageIndexOf takes ~3%; v2: three where it is gone and
# checkout.computeTax grew from ~10% to ~25%.
capture() { # file tax page noise
	{
		printf 'main;http.serve;checkout.handle;checkout.computeTax %d\n' "$2"
		printf 'main;http.serve;checkout.handle;db.query %d\n' $((3000 + $4))
		printf 'main;http.serve;render.page;tmpl.exec %d\n' $((2500 + $4 / 2))
		printf 'main;gc.run;runtime.mallocgc %d\n' 1000
		[ "$3" -gt 0 ] && printf 'main;gc.run;runtime.pageIndexOf %d\n' "$3"
		printf 'worker;checkout.computeTax %d\n' 200
	} >"$1"
}
pr --quiet service add web && pr --quiet service enable web
for i in 1 2 3 4 5 6 7 8 9 10; do
	capture "$T/v1-$i.folded" $((1000 + (i * 37) % 90)) $((300 + i)) $(((i * 53) % 120))
	pr --quiet ingest "$T/v1-$i.folded" --service web --release v1 --type cpu --host h1 \
		--time "2026-03-$(printf %02d "$i")T06:00:00Z"
done
for i in 1 2 3; do
	capture "$T/v2-$i.folded" $((3300 + i * 41)) 0 $((i * 29))
	pr --quiet ingest "$T/v2-$i.folded" --service web --release v2 --type cpu --host h2 \
		--time "2026-03-10T$((17 + i)):00:00Z"
done
pr --quiet analyze --service web --release v2 --at 2026-03-11T00:00:00Z --min-captures 5 >/dev/null
fid=$(sql "select id from findings where function = 'checkout.computeTax' and direction = 'regression'")
run pr report --finding "$fid" --out "$T/finding.html"
[ $RC -eq 0 ] && [ -n "$fid" ] && ok "the finding's report is written (finding $fid)" || not_ok "report" "$ERR"
run pr diff --base 'service=web,release=v1' --target 'service=web,release=v2' --out "$T/diff.html"
[ $RC -eq 0 ] && ok "the diff page is written" || not_ok "diff" "$ERR"
! grep -Eq '(src|href)="(https?:)?//' "$T/finding.html" "$T/diff.html" && ok "neither page fetches anything" || not_ok "offline"
size=$(wc -c <"$T/finding.html")
[ "$size" -lt 400000 ] && ok "the finding's page stays small ($size bytes)" || not_ok "size" "$size"

# The test copy: alert() recorded, a checker at the end that drives the page.
checked() { # page -> page with the checker
	sed 's|<head>|<head><script>window.__alerted=false;window.alert=function(){window.__alerted=true;};</script>|' "$1" |
		sed 's|</body></html>||'
	cat <<'EOF2'
<pre id="check"></pre>
<script>
(function(){
var svg=document.querySelector('svg.flame'),fr=[].slice.call(svg.querySelectorAll('g.fr'));
function one(n){return fr.filter(function(g){return g.dataset.name===n;})[0];}
function shown(g){return g.style.display!=='none'&&+g.querySelector('rect').getAttribute('width')>0;}
function view(v){var r=document.querySelector('input.flame-view[value="'+v+'"]');r.checked=true;
 r.dispatchEvent(new Event('change'));}
var tax=one('checkout.computeTax'),gone=one('runtime.pageIndexOf'),res={};
var bb=tax.querySelector('rect').getBoundingClientRect();
res.tax_box=[Math.round(bb.left),Math.round(bb.top),Math.round(bb.width),Math.round(bb.height)];
res.gone_marked=!!gone&&gone.classList.contains('gone');
res.gone_shown_diff=!!gone&&shown(gone);
var wd=+tax.querySelector('rect').getAttribute('width');
view(0);res.gone_shown_cur=!!gone&&shown(gone);var wc=+tax.querySelector('rect').getAttribute('width');
view(1);res.gone_shown_base=!!gone&&shown(gone);var wb=+tax.querySelector('rect').getAttribute('width');
res.widths_ordered=wb<wd&&wd<wc;
view(2);res.back_to_diff=Math.abs(+tax.querySelector('rect').getAttribute('width')-wd)<0.01;
var box=document.getElementById(svg.id+'-sw');
res.sandwich_open=!!box&&!box.hidden;
res.sandwich_of=box?box.querySelector('.sw-name').textContent:null;
var sw=box?[].slice.call(box.querySelectorAll('g.sw')):[];
function row(n){var g=sw.filter(function(x){return x.dataset.name===n;});
 return g.length?+g[0].querySelector('rect').getAttribute('y'):null;}
var yf=sw.filter(function(g){return g.classList.contains('hl');}).map(function(g){
 return +g.querySelector('rect').getAttribute('y');})[0];
res.callers_above=row('checkout.handle')<yf&&row('main')<yf&&row('worker')<yf;
res.focus_full=sw.filter(function(g){return g.classList.contains('hl');}).map(function(g){
 return Math.round(+g.querySelector('rect').getAttribute('width'));})[0];
tax.dispatchEvent(new MouseEvent('mouseover',{bubbles:true,clientX:100,clientY:100}));
var tip=document.getElementById('flame-tip');
res.tip_shown=!!tip&&tip.style.display==='block';
res.tip=tip?tip.textContent:null;
res.title_hidden_while_hovering=!tax.querySelector('title');
tax.dispatchEvent(new MouseEvent('mouseout',{bubbles:true}));
res.title_back=!!tax.querySelector('title');
var spark=document.querySelector('svg.spark');
res.ticks=spark?[].slice.call(spark.querySelectorAll('text.tick')).map(function(t){return t.textContent;}):[];
res.releases=spark?[].slice.call(spark.querySelectorAll('g.release text')).map(function(t){return t.textContent;}):[];
res.point_title=spark?spark.querySelector('circle.cur title').textContent:null;
res.alerted=window.__alerted;
document.getElementById('check').textContent='CHECK '+JSON.stringify(res)+' END';
})();
</script>
</body></html>
EOF2
}
checked "$T/finding.html" >"$T/check.html"
chrome --dump-dom "file://$T/check.html" >"$T/dom.html"
check=$(sed -n 's/.*<pre id="check">CHECK \(.*\) END<\/pre>.*/\1/p' "$T/dom.html")
echo "# DOM check: $check"
[ -n "$check" ] && ok "the page's script and the checker ran in Chromium" || not_ok "chromium ran" "$(tail -n 5 "$T/chrome.log")"
j() { jq -c "$1" <<<"$check" 2>/dev/null; }
[ "$(j .gone_marked)" = true ] && [ "$(j .gone_shown_diff)" = true ] &&
	ok "the vanished function is drawn from the baseline and marked gone" || not_ok "gone frame" "$check"
[ "$(j .gone_shown_cur)" = false ] && [ "$(j .gone_shown_base)" = true ] && [ "$(j .widths_ordered)" = true ] && [ "$(j .back_to_diff)" = true ] &&
	ok "the current, baseline and difference views toggle" || not_ok "views" "$check"
[ "$(j .sandwich_open)" = true ] && [ "$(j .sandwich_of)" = '"checkout.computeTax"' ] && [ "$(j .callers_above)" = true ] && [ "$(j .focus_full)" = 1200 ] &&
	ok "the sandwich opens on the finding's function, callers from both call sites above" || not_ok "sandwich" "$check"
tip=$(j .tip)
[ "$(j .tip_shown)" = true ] && grep -q 'checkout.computeTax' <<<"$tip" && grep -q 'current' <<<"$tip" && grep -q 'baseline' <<<"$tip" &&
	grep -Eq '[0-9] count [0-9.]+%' <<<"$tip" && grep -q 'pp' <<<"$tip" &&
	ok "the tooltip element shows both sides' self and total, absolute and share" || not_ok "tooltip" "$tip"
[ "$(j .title_hidden_while_hovering)" = true ] && [ "$(j .title_back)" = true ] && ok "the native title gives way to the tooltip while hovering" || not_ok "title" "$check"
[ "$(j '.ticks | length')" = 5 ] && grep -q '"2026-03-01"' <<<"$(j .ticks)" && [ "$(j .releases)" = '["v2"]' ] &&
	ok "the history has a dated time axis and the release boundary" || not_ok "axis" "$check"
grep -q 'release v2, host h2' <<<"$(j .point_title)" && ok "hovering a point names its capture" || not_ok "point" "$(j .point_title)"
[ "$(j .alerted)" = false ] && ok "nothing ran from the data" || not_ok "alert"

# The screenshot: the regressed frame's pixels are red where the checker found it.
chrome --screenshot="$T/finding.png" "file://$T/finding.html" >/dev/null
read -r x y w h < <(j .tax_box | tr -d '[]' | tr ',' ' ')
if [ -s "$T/finding.png" ] && [ -n "$w" ]; then
	read -r r g b < <(python3 "$(dirname "$0")/../support/pngpixel.py" "$T/finding.png" $((x + w - 3)) $((y + 3)))
	echo "# frame at $x,$y ${w}x$h: pixel $r $g $b"
	[ "$r" -gt 180 ] && [ "$g" -lt 90 ] && [ "$b" -lt 90 ] && ok "in the screenshot the regressed frame is red ($r,$g,$b)" || not_ok "red pixel" "$r $g $b"
	read -r r g b < <(python3 "$(dirname "$0")/../support/pngpixel.py" "$T/finding.png" $((x - 1 > 0 ? x - 1 : 0)) $((y - 20)))
	! { [ "$r" -gt 180 ] && [ "$g" -lt 90 ]; } && ok "the frame's parent row is not red ($r,$g,$b)" || not_ok "parent red" "$r $g $b"
else
	not_ok "screenshot" "$(tail -n 5 "$T/chrome.log")"
fi

# The diff page: the same views and the vanished frame.
checked "$T/diff.html" >"$T/check2.html"
chrome --dump-dom "file://$T/check2.html" >"$T/dom2.html"
check=$(sed -n 's/.*<pre id="check">CHECK \(.*\) END<\/pre>.*/\1/p' "$T/dom2.html")
[ "$(j .gone_marked)" = true ] && [ "$(j .widths_ordered)" = true ] && ok "the diff page has both sides and the view toggle" || not_ok "diff page" "$check"

# Frames named like a JavaScript object's own properties (ordinary names
# in V8 profiles): the sandwich of their callee merges them as any other
# name. Kept in plain objects, toString threw and stopped every control.
pr --quiet service add js && pr --quiet service enable js
for r in v1 v2; do
	n=$([ $r = v1 ] && echo 300 || echo 900)
	printf 'main;toString;__proto__;checkout.computeTax %d
main;constructor;hasOwnProperty;checkout.computeTax 200
main;valueOf;db.query 500
' \
		"$n" >"$T/js-$r.folded"
	pr --quiet ingest "$T/js-$r.folded" --service js --release $r --type cpu
done
run pr diff --base 'service=js,release=v1' --target 'service=js,release=v2' --out "$T/js.html"
sed 's|</body></html>||' "$T/js.html" >"$T/js-check.html"
cat >>"$T/js-check.html" <<'EOF2'
<pre id="check"></pre>
<script>
(function(){
var res={},svg=document.querySelector('svg.flame');
var g=[].slice.call(svg.querySelectorAll('g.fr')).filter(function(x){
 return x.dataset.name==='checkout.computeTax';})[0];
try{g.dispatchEvent(new MouseEvent('click',{bubbles:true,altKey:true}));res.error=null;}
catch(e){res.error=String(e);}
var box=document.getElementById(svg.id+'-sw');
res.open=!!box&&!box.hidden;
res.callers=box?[].slice.call(box.querySelectorAll('g.sw')).map(function(x){return x.dataset.name;})
 .filter(function(n){return n!=='checkout.computeTax';}).sort():[];
res.proto_clean=Object.prototype.c===undefined&&typeof ({}).toString==='function';
document.getElementById('check').textContent='CHECK '+JSON.stringify(res)+' END';
})();
</script>
</body></html>
EOF2
chrome --dump-dom "file://$T/js-check.html" >"$T/dom3.html"
check=$(sed -n 's/.*<pre id="check">CHECK \(.*\) END<\/pre>.*/\1/p' "$T/dom3.html")
[ $RC -eq 0 ] && [ "$(j .error)" = null ] && [ "$(j .open)" = true ] &&
	[ "$(j .callers)" = '["__proto__","constructor","hasOwnProperty","main","main","toString"]' ] &&
	[ "$(j .proto_clean)" = true ] &&
	ok "frames named toString or __proto__ merge in the sandwich like any other" || not_ok "js names" "rc=$RC $check"
finish
