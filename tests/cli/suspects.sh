#!/bin/bash
# Suspect commits from a real repository as teams keep them: a branch
# merged into the release branch, a commit written in ISO-8859-1, a
# subject of one huge paragraph; and a nightly that has no repository
# configured after post-deploy was given one.
. "$(dirname "$0")/lib.sh"
fresh_db cli_suspects
pr --quiet db init
BUILD=${BUILD:-build}
T=$PROFREG_TEST_TMP/cli_suspects
rm -rf "$T" && mkdir -p "$T"

"$BUILD/sim/fleetgen" --out "$T/fleet" --services 3 --functions 60 --factors 2 \
	--bands 10-30 --regressed 0.34 --seed 31 >"$T/gen.txt"
at=$(sed -n 's/^at: //p' "$T/gen.txt")
rel=$(sed -n 's/^release: //p' "$T/gen.txt")
line=$(grep '"regressed":true' "$T/fleet/truth.jsonl" | head -n 1)
svc=$(sed 's/.*"service":"\([^"]*\)".*/\1/' <<<"$line")
fn=$(sed 's/.*"function":"\([^"]*\)".*/\1/' <<<"$line")
# A second, independent regression in the same release: the service's
# busiest other leaf costs three times as much in the new release (the
# busiest other leaf, on no call path of the first (which would join them
# as one incident for that reason).
other=$(cat "$T/fleet/$svc"/*.folded | FN=$fn perl -ne '
	my $f = $ENV{FN}; next if /(^|;)\Q$f\E(;| \d+$)/; s/ \d+\n$//; s/.*;//; print "$_\n"' |
	sort | uniq -c | sort -rn | head -n 1 | sed 's/^ *[0-9]* //')
cat "$T/fleet/$svc"/*.folded | grep -F "$fn" | grep -qF ";$other;" &&
	not_ok "the second function is on the first's call path" "$other"
# Each function gets its source file, as a profile with file names gives.
cur=$(grep "\"service\":\"$svc\",\"release\":\"$rel\"" "$T/fleet/manifest.jsonl" |
	sed 's/.*"path":"\([^"]*\)".*/\1/')
for f in "$T/fleet/$svc"/*.folded; do
	case " $(echo $cur) " in *" $svc/$(basename "$f") "*) current=1 ;; *) current=0 ;; esac
	FN=$fn OTHER=$other CUR=$current perl -i -pe '
		my ($fn, $o) = ($ENV{FN}, $ENV{OTHER});
		if ($ENV{CUR} && /;\Q$o\E (\d+)$/) { my $n = $1 * 3; s/ \d+$/ $n/ }
		s/(^|;)\Q$fn\E(?=;| \d+$)/$1$fn (\/src\/acme\/svc\/pkg\/ledger.go:42)/g;
		s/(^|;)\Q$o\E(?=;| \d+$)/$1$o (\/src\/acme\/svc\/pkg\/api.go:7)/g;' "$f"
done
[ "$(echo $cur | wc -w)" -ge 4 ] || not_ok "the release's captures" "$cur"
while read -r s; do pr --quiet service add "$s" && pr --quiet service enable "$s"; done <"$T/fleet/services.txt"
pr --quiet ingest --manifest "$T/fleet/manifest.jsonl"

# The release branch gets the develop branch's two causes through a merge.
R=$T/repo
git init -q -b release "$R"
g() { git -C "$R" -c user.name=Rel -c user.email=r@example.com "$@"; }
mkdir -p "$R/pkg"
echo a >"$R/pkg/ledger.go" && echo a >"$R/pkg/api.go" && echo a >"$R/README.md"
g add . && g commit -qm "start" && g tag v-prev
g checkout -q -b develop
for i in $(seq 120); do echo "$i" >>"$R/pkg/ledger.go" && g commit -qam "ledger: step $i"; done
echo b >>"$R/pkg/ledger.go" && g add . &&
	printf 'ledger: caf\xe9 path\n' >"$T/msg" &&
	GIT_AUTHOR_NAME=$'Jos\xe9' g -c i18n.commitEncoding=ISO-8859-1 commit -q -F "$T/msg"
latin=$(g rev-parse HEAD)
echo c >>"$R/pkg/api.go" && g commit -qam "api: add an endpoint"
api=$(g rev-parse HEAD)
head -c 5000 /dev/zero | tr '\0' 'x' >"$T/long"
echo d >>"$R/pkg/ledger.go" && g commit -qa -F "$T/long"
long=$(g rev-parse HEAD)
g checkout -q release
echo e >>"$R/README.md" && g commit -qam "docs"
g merge -q --no-ff -m "Merge branch 'develop' into release" develop
merge=$(g rev-parse HEAD)
g tag "$rel"

run pr post-deploy --service "$svc" --release "$rel" --commit "$rel" --repo "$R" --previous v-prev \
	--at "$at" --json
echo "$OUT" >"$T/pd.json"
[ $RC -eq 1 ] && ok "post-deploy finds the regressions" || not_ok "post-deploy" "rc=$RC $ERR"
sus() { jq -r --arg fn "$1" '.findings[] | select(.function == $fn) | .suspects.commits[]?.sha' "$2"; }
mine=$(sus "$fn" "$T/pd.json")
[ "$(wc -l <<<"$mine")" = 122 ] && grep -qx "$latin" <<<"$mine" && grep -qx "$long" <<<"$mine" &&
	! grep -qx "$merge" <<<"$mine" && [ "$(sus "$other" "$T/pd.json")" = "$api" ] &&
	ok "a merge is no suspect of the files its branch's own commits changed" ||
	not_ok "merge suspects" "$(sus "$fn" "$T/pd.json") / $(sus "$other" "$T/pd.json") (merge $merge) other=$other $(jq -c ".findings[] | [.function,.direction,.suspects.note]" "$T/pd.json")"
author=$(jq -r --arg s "$latin" '.findings[].suspects.commits[] | select(.sha == $s) | .author + "|" + .subject' "$T/pd.json" | head -n 1)
[ "$author" = "José|ledger: café path" ] &&
	ok "a commit written in ISO-8859-1 is a suspect, its text converted" ||
	not_ok "latin-1 commit" "$author"
subj=$(jq -r --arg s "$long" '.commits[] | select(.sha == $s) | .subject' "$T/pd.json")
[ "${#subj}" -le 203 ] && [ "${#subj}" -ge 200 ] && [[ $subj == *... ]] &&
	[ "$(wc -c <"$T/pd.json")" -lt 100000 ] &&
	ok "a subject of 5,000 characters is cut to 200" || not_ok "long subject" "${#subj} $(wc -c <"$T/pd.json")"

# The CI summary names the suspects and lists the range's newest 100 commits.
run pr post-deploy --service "$svc" --release "$rel" --commit "$rel" --repo "$R" --previous v-prev --at "$at"
total=$(git -C "$R" rev-list --count v-prev.."$rel")
listed=$(sed -n '/^<details>/,/^<\/details>/p' <<<"$OUT" | grep -c '^- `')
[ $RC -eq 1 ] && [[ $OUT == *"<summary>$total commits since the start given</summary>"* ]] &&
	[ "$listed" = 100 ] && [[ $OUT == *"- and $((total - 100)) older (\`--json\` lists the newest $total)"* ]] &&
	ok "the summary lists the range's newest 100 of $total commits, and says how many more" ||
	not_ok "range list" "rc=$RC total=$total listed=$listed $(grep -A3 '<details>' <<<"$OUT")"
# And a finding's suspects: 20 of them, and how many more.
shown=$(awk -v f="Suspect commits for " 'index($0, f) == 1 && index($0, "ledger.go") { on = 1; next }
	on && /^- / { n++ } on && /^$/ && n { exit } END { print n + 0 }' <<<"$OUT")
[ "$shown" = 21 ] && [[ $OUT == *"- and 102 older (\`--json\` and the report list them all)"* ]] &&
	[ "$(wc -c <<<"$OUT")" -lt 100000 ] &&
	ok "a finding's suspects in the summary: the newest 20, and how many more" ||
	not_ok "suspects list" "shown=$shown $(grep -c . <<<"$OUT")"

# The nightly, with the repository in its configuration: two causes, two incidents.
printf '{"services": {"%s": {"repo": "%s"}}}' "$svc" "$R" >"$T/repo.json"
run pr --config "$T/repo.json" nightly --at "$at"
nid=$(sql "select max(id) from runs where kind = 'nightly'")
inc=$(sql "select count(distinct coalesce(f.incident_id, -f.id)) from findings f join services s on s.id = f.service_id
	where s.name = '$svc' and f.function in ('$fn', '$other')")
[ "$inc" = 2 ] && ok "two regressions whose only shared commit is a merge stay two incidents" ||
	not_ok "incidents" "$inc $(sql "select f.id, f.function, f.incident_id, f.direction from findings f join services s on s.id = f.service_id where s.name = '$svc' and f.direction = 'regression'")"

# A nightly that names no repository keeps what was computed with one.
run pr nightly --at "$at"
nid2=$(sql "select max(id) from runs where kind = 'nightly'")
run pr report --run "$nid2" --format json --out -
got=$(jq -r --arg fn "$fn" '.findings[] | select(.function == $fn) | [.suspects[].sha] | sort | join(" ")' <<<"$OUT")
[ "$nid2" != "$nid" ] && [ "$(wc -w <<<"$got")" = 122 ] && [[ " $got " == *" $latin "* ]] &&
	[[ " $got " == *" $long "* ]] &&
	ok "a nightly without the repository keeps the suspects post-deploy stored" ||
	not_ok "suspects kept" "run $nid2: $(wc -w <<<"$got") $(jq -r '.findings[0].suspect_note' <<<"$OUT")"
finish
