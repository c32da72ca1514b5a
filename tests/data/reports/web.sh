#!/bin/bash
# Writes the captures the report tests use: service "web", ten folded CPU
# captures of release v1 (one a day, 2026-03-01..10) and three of v2
# (2026-03-10T18..20), where checkout.computeTax goes from about 10% to
# about 25% of the samples, db.query and render stay put, and one frame
# has a hostile name. Each capture's counts differ a little, so every file
# is a distinct blob. Usage: web.sh DIR; prints "FILE RELEASE TIME" lines.
set -eu
dir=$1
mkdir -p "$dir"
capture() { # name release time tax noise
	local f="$dir/$1.folded"
	{
		printf 'main;http.serve;checkout.handle;checkout.computeTax %d\n' "$4"
		printf 'main;http.serve;checkout.handle;db.query %d\n' $((3000 + $5))
		printf 'main;http.serve;<script>alert(1)</script> %d\n' $((1500 - $5))
		printf 'main;http.serve;render.page;tmpl.exec %d\n' $((2500 + $5 / 2))
		printf 'main;http.serve;checkout.handle;json.encode %d\n' 1000
		printf 'main;gc.run %d\n' $((1000 + $5 / 3))
	} >"$f"
	echo "$f $2 $3"
}
for i in 1 2 3 4 5 6 7 8 9 10; do
	capture "v1-$i" v1 "2026-03-$(printf %02d "$i")T06:00:00Z" $((1000 + (i * 37) % 90)) $(((i * 53) % 120))
done
for i in 1 2 3; do
	capture "v2-$i" v2 "2026-03-10T$((17 + i)):00:00Z" $((3300 + i * 41)) $((i * 29))
done
