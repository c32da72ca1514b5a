#!/bin/bash
# The comparison page in headless Chromium, driven over the DevTools
# protocol (tests/node/compare_browser.js): the browser meets serve's 401
# challenge and authenticates with a token as the Basic password; the
# service list shows only the token's team's services; it picks the
# service, then two releases, submits; the shareable URL names the
# selection; the diff page renders with its script running under the
# page's Content-Security-Policy, the hostile function name as text, and
# the regressed frame red, by its fill and in a screenshot.
set -u
. "$(dirname "$0")/lib.sh"

T=$PROFREG_TEST_TMP/browser_compare
OUTDIR=${BUILD:-build}/test-output
rm -rf "$T" && mkdir -p "$T"
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ] || ! command -v node >/dev/null; then
	echo "ok 1 # skip chromium or node is not installed"
	exit 0
fi
SPID=""
cleanup() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null; }
trap cleanup EXIT

fresh_db browser_compare
pr db init >/dev/null 2>&1
pr --quiet service add web --team a && pr --quiet service enable web
pr --quiet service add pay --team b && pr --quiet service enable pay
capture() { # file tax
	{
		printf 'main;http.serve;checkout.handle;checkout.computeTax %d\n' "$2"
		printf 'main;http.serve;checkout.handle;db.query 3000\n'
		printf 'main;http.serve;render.page;<script>alert(1)</script> 700\n'
		printf 'main;gc.run;runtime.mallocgc 1000\n'
	} >"$1"
}
for i in 1 2 3 4; do
	capture "$T/v1-$i.folded" $((1000 + i * 7))
	pr --quiet ingest "$T/v1-$i.folded" --service web --release v1 --type cpu --host h1 \
		--time "2026-03-0${i}T06:00:00Z"
done
for i in 1 2 3; do
	capture "$T/v2-$i.folded" $((3300 + i * 11))
	pr --quiet ingest "$T/v2-$i.folded" --service web --release v2 --type cpu --host h2 \
		--time "2026-03-1${i}T06:00:00Z"
done
capture "$T/p.folded" 100
pr --quiet ingest "$T/p.folded" --service pay --release p1 --type cpu --time 2026-03-05T06:00:00Z
echo '{"serve": {"listen": "127.0.0.1:0"}}' >"$T/cfg.json"
TA=$(pr --config "$T/cfg.json" token create --team a 2>/dev/null)
"$PROFREG_BIN" --db "$DB" --home "$HOME_DIR" --config "$T/cfg.json" serve \
	--port-file "$T/port" >"$T/serve.out" 2>"$T/serve.err" &
SPID=$!
for _ in $(seq 1 100); do [ -s "$T/port" ] && break; sleep 0.1; done
U=http://127.0.0.1:$(cat "$T/port")

check=$(timeout 90 node "$(dirname "$0")/../node/compare_browser.js" "$CHROME" "$U/compare" alice \
	"$TA" "$T")
echo "# $check"
j() { jq -c "$1" <<<"$check"; }
[ -n "$check" ] && [ "$(j .error)" = null ] && ok "Chromium went through the page" ||
	not_ok "chromium" "$check"
[ "$(j .auth_challenges)" -ge 1 ] 2>/dev/null && [ "$(j .challenge_scheme)" = '"basic"' ] &&
	ok "the browser was challenged (401, Basic) and answered with the token" ||
	not_ok "challenge" "$check"
[ "$(j .services)" = '["web"]' ] && ok "the list shows team a's service only" || not_ok "services"
[ "$(j .releases)" = '["release:v2","release:v1"]' ] && ok "the picker lists the releases" ||
	not_ok "releases" "$(j .releases)"
url=$(jq -r .url <<<"$check")
[[ $url == "$U/compare?service=web&type=cpu&a=release%3Av1&b=release%3Av2" ]] &&
	[[ $url != *"$TA"* ]] && ok "the submit gives a shareable URL without the token ($url)" ||
	not_ok "url" "$url"
[[ $(j .title) == *"service=web,type=cpu,release=v1 vs service=web,type=cpu,release=v2"* ]] &&
	[ "$(j .frames)" -ge 8 ] && ok "the diff page renders ($(j .frames) frames)" || not_ok "render" "$check"
[ "$(j .reddest)" = '"checkout.computeTax"' ] && ok "the regressed frame is the reddest" ||
	not_ok "reddest" "$check"
[ "$(j .zoomed)" = true ] && [ "$(j .console_errors)" = '[]' ] &&
	ok "the page's script runs under its CSP (a click zooms) and nothing was refused or thrown" ||
	not_ok "script" "$(j .console_errors) zoomed=$(j .zoomed)"
[ "$(j .hostile_is_text)" = true ] && [ "$(j .scripts)" = 1 ] &&
	ok "a hostile function name is a frame's text, not a script" || not_ok "hostile" "$check"
if [ -s "$T/frame.png" ]; then
	read -r r g b < <(python3 "$(dirname "$0")/../support/pngpixel.py" "$T/frame.png" 1 1)
	[ "$r" -gt 180 ] && [ "$g" -lt 90 ] && [ "$b" -lt 90 ] &&
		ok "in the screenshot the regressed frame is red ($r,$g,$b)" || not_ok "red" "$r $g $b"
	mkdir -p "$OUTDIR" 2>/dev/null && cp "$T/compare.png" "$OUTDIR/compare.png" 2>/dev/null
else
	not_ok "screenshot"
fi
finish
