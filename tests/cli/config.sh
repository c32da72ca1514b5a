#!/bin/bash
# The configuration file's paging, metrics, reports and retention
# sections: a full file is accepted, and each kind of mistake is named by
# its JSON path with exit 2.
. "$(dirname "$0")/lib.sh"
T=$PROFREG_TEST_TMP/cli_config
rm -rf "$T" && mkdir -p "$T"
# The secret files the configurations name: config check reads them.
printf 'k\n' >"$T/hook.secret"
chmod 600 "$T/hook.secret"

cat >"$T/good.json" <<'JSON'
{"paging": {"min_severity": "critical", "max_attempts": 3, "backoff_ms": 10,
  "targets": {"pd": {"type": "pagerduty", "secret_env": "PD_KEY"},
              "am": {"type": "alertmanager", "url": "http://127.0.0.1:9093"},
              "hook": {"type": "webhook", "url": "https://chat.example/hook", "secret_file": "HOOK_SECRET"}},
  "default": ["am"], "teams": {"payments": ["pd", "am"]}},
 "metrics": {"pushgateway": "http://127.0.0.1:9091", "instance": "batch-1"},
 "reports": {"dir": "/tmp/r", "base_url": "https://reports.example"},
 "retention": {"hot_days": 3, "summary_days": 30, "summary_top": 50,
               "budget_bytes": 1000000000, "budget_rows": 5000000, "after_nightly": true},
 "services": {"checkout": {"team": "payments", "page": [], "retention": {"hot_days": 1}}}}
JSON
sed -i "s|HOOK_SECRET|$T/hook.secret|" "$T/good.json"
run "$PROFREG_BIN" config check "$T/good.json"
[ $RC -eq 0 ] && ok "a file with every section is valid" || not_ok "good config" "rc=$RC $ERR"
echo '{"nope": 1}' >"$T/other.json"
run "$PROFREG_BIN" --config "$T/other.json" config check "$T/good.json"
if [ $RC -eq 2 ] && [[ $ERR == *"--config and FILE name two files"* ]] && [ -z "$OUT" ]; then
	run "$PROFREG_BIN" --config "$T/good.json" config check "$T/good.json"
	[ $RC -eq 0 ] && ok "--config and a FILE naming another file are refused, the same file is checked" ||
		not_ok "the same file twice" "rc=$RC $ERR"
else
	not_ok "--config a config check b checked b alone" "rc=$RC $OUT $ERR"
fi

# bad CONFIG-TEXT EXPECTED-MESSAGE-PART DESCRIPTION
bad() {
	printf '%s\n' "$1" >"$T/bad.json"
	run "$PROFREG_BIN" config check "$T/bad.json"
	if [ $RC -eq 2 ] && [[ $ERR == *"$2"* ]] && [ "$(grep -c . <<<"$ERR")" -eq 1 ]; then
		ok "$3"
	else
		not_ok "$3" "rc=$RC $ERR"
	fi
}
bad '{"paging": {"targets": {"pd": {"type": "pagerduty"}}}}' \
	"paging.targets.pd: a PagerDuty target needs secret_env or secret_file" \
	"a PagerDuty target without a routing key source is refused"
bad '{"paging": {"targets": {"pd": {"type": "pagerduty", "secret_env": "A", "secret_file": "/b"}}}}' \
	"set secret_env or secret_file, not both" "a target with two secret sources is refused"
bad '{"paging": {"default": ["nope"]}}' "paging.default: names a target not under paging.targets" \
	"a default route to an unknown target is refused"
bad '{"services": {"a": {"page": ["zz"]}}}' "services.a.page: names a target not under paging.targets" \
	"a service routed to an unknown target is refused"
bad '{"paging": {"teams": {"t": "x"}}}' "paging.teams.t: expected an array of target names" \
	"a team route must be a list"
# The bounds as written, not rounded to six digits ("1 to 4.29497e+09").
bad '{"limits": {"max_samples": 4294967296}}' \
	"limits.max_samples: expected a value from 1 to 4294967295" \
	"a limit out of range is refused, naming the exact range"
bad '{"limits": {"max_depth": 0}}' "limits.max_depth: expected a value from 1 to 1048576" \
	"a depth limit of 0 is refused, naming the exact range"
bad '{"paging": {"min_severity": "loud"}}' "paging.min_severity: expected low, medium, high or critical" \
	"an unknown severity is refused"
bad '{"paging": {"targets": {"x": {"type": "sms", "url": "http://a"}}}}' \
	"paging.targets.x.type: expected pagerduty, alertmanager or webhook" "an unknown target type is refused"
bad '{"paging": {"targets": {"x": {"type": "webhook"}}}}' "paging.targets.x.url: required" \
	"a webhook without a URL is refused"
bad '{"paging": {"targets": {"x": {"type": "webhook", "url": "file:///etc/passwd"}}}}' \
	"paging.targets.x.url: expected an http:// or https:// URL" "a target URL must be http or https"
bad '{"paging": {"targets": {"x": {"type": "webhook", "url": "http://hooks.example/x", "secret_env": "T"}}}}' \
	"paging.targets.x.url: a target with a secret needs an https:// URL" \
	"a bearer token over plain http to another host is refused"
bad '{"paging": {"targets": {"pd": {"type": "pagerduty", "url": "http://events.example", "secret_file": "/k"}}}}' \
	"paging.targets.pd.url: a target with a secret needs an https:// URL" \
	"a routing key over plain http is refused"
bad '{"paging": {"targets": {"x": {"type": "webhook", "url": "http://127.0.0.1@evil.example/", "secret_env": "T"}}}}' \
	"paging.targets.x.url: a target with a secret needs an https:// URL" \
	"user info that looks like loopback does not make a host loopback"
bad '{"paging": {"targets": {"x": {"type": "webhook", "url": "http://127.0.0.1.evil.example/", "secret_env": "T"}}}}' \
	"paging.targets.x.url: a target with a secret needs an https:// URL" \
	"a host name that starts with 127.0.0.1 is not loopback"
bad '{"paging": {"targets": {"x": {"type": "webhook", "url": "http://localhostx:80/", "secret_env": "T"}}}}' \
	"paging.targets.x.url: a target with a secret needs an https:// URL" \
	"a host name that starts with localhost is not loopback"
# A password in a URL's user info goes out as Authorization: Basic, in
# cleartext over plain http: refused but to loopback, by its JSON path,
# and the message never shows it.
bad_pw() {
	bad "$@"
	[[ $ERR != *hunter2* ]] && ok "$3: the password is not shown" || not_ok "$3: shown" "$ERR"
}
bad_pw '{"paging": {"targets": {"w": {"type": "webhook", "url": "http://bob:hunter2@hooks.example.com/x"}}, "default": ["w"]}}' \
	"paging.targets.w.url: a password in the URL needs https://" \
	"a webhook URL with a password over plain http is refused"
bad_pw '{"paging": {"targets": {"a": {"type": "alertmanager", "url": "http://bob:hunter2@am.example:9093"}}}}' \
	"paging.targets.a.url: a password in the URL needs https://" \
	"an Alertmanager URL with a password over plain http is refused"
bad_pw '{"paging": {"targets": {"w": {"type": "webhook", "url": "http://bob:hunter2@127.0.0.1@evil.example/"}}}}' \
	"paging.targets.w.url: a password in the URL needs https://" \
	"user info that looks like loopback does not make a password's host loopback"
bad_pw '{"services": {"search": {"sources": [{"type": "pyroscope", "url": "http://alice:hunter2@10.0.0.5:4040"}]}}}' \
	"services.search.sources[0].url: a password in the URL needs https://" \
	"a Pyroscope URL with a password over plain http is refused"
bad_pw '{"services": {"search": {"sources": [{"type": "parca", "url": "http://alice:hunter2@parca.example", "selector": "{comm=\"s\"}"}]}}}' \
	"services.search.sources[0].url: a password in the URL needs https://" \
	"a Parca URL with a password over plain http is refused"
bad_pw '{"metrics": {"pushgateway": "http://u:hunter2@push.example:9091"}}' \
	"metrics.pushgateway: a password in the URL needs https://" \
	"a Pushgateway URL with a password over plain http is refused"
cat >"$T/userinfo.json" <<'JSON'
{"paging": {"targets": {
  "a": {"type": "webhook", "url": "https://bob:pw@hooks.example.com/x"},
  "b": {"type": "alertmanager", "url": "http://bob:pw@127.0.0.1:9093"},
  "c": {"type": "webhook", "url": "http://bob@hooks.example.com/x"},
  "d": {"type": "webhook", "url": "http://hooks.example.com/x?next=a:b@c"}}},
 "services": {"search": {"sources": [{"type": "pyroscope", "url": "http://alice:pw@[::1]:4040"}]}}}
JSON
run "$PROFREG_BIN" config check "$T/userinfo.json"
[ $RC -eq 0 ] && ok "a URL's password is fine over https or to loopback; a user name alone anywhere" ||
	not_ok "userinfo allowed" "rc=$RC $ERR"
# Each object of entries by name: not an object, and a bad entry after a good one.
bad '{"services": []}' "services: expected an object of services by name" \
	"services must be an object of services by name"
bad '{"services": {"a": {}, "b": []}}' "services.b: expected an object" \
	"a bad service after a good one is named"
bad '{"paging": {"targets": ["pd"]}}' "paging.targets: expected an object of targets by name" \
	"paging.targets must be an object of targets by name"
bad '{"paging": {"targets": {"a": {"type": "webhook", "url": "http://x"}, "b": 3}}}' \
	"paging.targets.b: expected an object" "a bad target after a good one is named"
bad '{"paging": {"teams": ["t"]}}' "paging.teams: expected an object of target lists by team" \
	"paging.teams must be an object of target lists by team"
bad '{"paging": {"targets": {"a": {"type": "webhook", "url": "http://x"}}, "teams": {"t": ["a"], "u": "a"}}}' \
	"paging.teams.u: expected an array of target names" "a bad team after a good one is named"
bad '{"snapshot": {"services": "checkout"}}' "snapshot.services: expected an object of services by name" \
	"snapshot.services must be an object of services by name"
bad '{"snapshot": {"services": {"a": {"processes": ["x"]}, "b": {"processes": "x"}}}}' \
	"snapshot.services.b.processes: expected an array of process names" \
	"a bad snapshot service after a good one is named"
bad '{"escalate": {"services": 1}}' "escalate.services: expected an object of services by name" \
	"escalate.services must be an object of services by name"
bad '{"escalate": {"services": {"a": {"signals": {"up": "up"}}, "b": {"signals": {"Bad-Name": "up"}}}}}' \
	"escalate.services.b.signals.Bad-Name: a signal name is 1 to 64 of [a-z0-9_]" \
	"a bad escalate service after a good one is named"
cat >"$T/loop.json" <<'JSON'
{"paging": {"targets": {
  "a": {"type": "webhook", "url": "http://127.0.0.1:8080/hook", "secret_env": "T"},
  "b": {"type": "webhook", "url": "http://127.9.8.7/hook", "secret_env": "T"},
  "c": {"type": "webhook", "url": "http://[::1]:9/hook", "secret_file": "HOOK_SECRET"},
  "d": {"type": "webhook", "url": "http://LocalHost/hook", "secret_env": "T"},
  "e": {"type": "webhook", "url": "http://hooks.example/open"},
  "f": {"type": "webhook", "url": "https://hooks.example/x", "secret_env": "T"}}}}
JSON
sed -i "s|HOOK_SECRET|$T/hook.secret|" "$T/loop.json"
run "$PROFREG_BIN" config check "$T/loop.json"
[ $RC -eq 0 ] && ok "plain http with a secret is fine to loopback (127/8, [::1], localhost); without a secret anywhere" || not_ok "loopback http" "rc=$RC $ERR"
bad '{"metrics": {"pushgateway": "ftp://x"}}' "metrics.pushgateway: expected an http:// or https:// URL" \
	"a Pushgateway URL must be http or https"
bad '{"retention": {"summary_days": 7}}' \
	"retention.summary_days: keeps 7 days, less than the 14-day baseline window" \
	"a summary tier shorter than the baseline window is refused"
bad '{"services": {"a": {"retention": {"summary_days": 10}}}}' \
	"services.a.retention.summary_days: keeps 10 days" \
	"a service's summary tier shorter than the baseline window is refused"
bad '{"retention": {"summary_days": 14}}' "retention.summary_days: keeps 14 days, less than the 14-day baseline window plus the night" \
	"a summary tier exactly as long as the window is refused: the night adds a day"
printf '{"analysis": {"window_days": 20}, "retention": {"summary_days": 21}}\n' >"$T/edge.json"
run "$PROFREG_BIN" config check "$T/edge.json"
[ $RC -eq 0 ] && ok "a summary tier of the window plus one day is enough" || not_ok "window + 1" "rc=$RC $ERR"
bad '{"retention": {"hot_days": 30, "summary_days": 20}}' "summary_days must be at least hot_days" \
	"a summary tier shorter than the hot tier is refused"
bad '{"retention": {"after_nightly": 1}}' "retention.after_nightly: expected true or false" \
	"a switch must be a boolean"
bad '{"reports": {"dirx": "a"}}' "reports.dirx: unknown key" "an unknown key in reports is named"
bad '{"servics": {}}' "servics: unknown key (did you mean 'services'?)" \
	"a misspelt section is named with the one meant"
bad '{"analysis": {"window_day": 7}}' "analysis.window_day: unknown key (did you mean 'window_days'?)" \
	"a misspelt key is named with the one meant"
bad '{"services": {"s": {"sources": [{"type": "pprof_http", "targets": ["h:1"], "secnds": 5}]}}}' \
	"services.s.sources[0].secnds: unknown key (did you mean 'seconds'?)" \
	"a misspelt key of a source is named with the one meant"
bad '{"reports": {"colour": "red"}}' "reports.colour: unknown key" "a key like none stays a plain unknown key"
bad '{"analysis": {"weekend": "sat-tue"}}' "analysis.weekend: expected one to three days in a row" \
	"a weekend of four days is refused"
bad '{"analysis": {"weekend": "saturday"}}' "analysis.weekend: expected one to three days in a row" \
	"a weekend day not by its first three letters is refused"
bad '{"analysis": {"weekend": "sat-sat"}}' "analysis.weekend: expected one to three days in a row" \
	"a range of one day is refused (a day alone is named alone)"
bad '{"services": {"s": {"weekend": ["fri", "sat"]}}}' \
	"services.s.weekend: expected one to three days in a row" "a service's weekend as a list is refused"
bad '{"services": {"s": {"utc_offset_hours": 15}}}' \
	"services.s.utc_offset_hours: expected a number from -12 to 14" \
	"a service's clock beyond UTC+14 is refused"
bad '{"services": {"s": {"utc_offset_hours": "+3"}}}' \
	"services.s.utc_offset_hours: expected a number from -12 to 14" \
	"a service's clock as text is refused"
bad '{"services": {"s": {"warmup_s": -5}}}' "services.s.warmup_s: expected a value from 0 to 86400" \
	"a negative warm-up is refused"
bad '{"analysis": {"warmup_s": "5m"}}' "analysis.warmup_s: expected an integer" \
	"a warm-up as text is refused"
printf '{"analysis": {"weekend": "Fri-Sat", "utc_offset_hours": 4},
 "services": {"s": {"weekend": "thu-fri"}, "t": {"utc_offset_hours": -5.5}}}\n' >"$T/week.json"
run "$PROFREG_BIN" config check "$T/week.json"
[ $RC -eq 0 ] && ok "weekends and clocks, the analysis' and each service's own, are valid" ||
	not_ok "weekends" "rc=$RC $ERR"
bad '{"reports": {"dir": ""}}' "reports.dir: expected a non-empty string" "an empty path is refused"
# The configuration reference: written from the loader's own tables, so
# docs/config.md is exactly what `config reference` prints.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
run "$PROFREG_BIN" config reference
printf '%s\n' "$OUT" >"$T/reference.md"
[ $RC -eq 0 ] && cmp -s "$T/reference.md" "$ROOT/docs/config.md" &&
	ok "docs/config.md is what 'config reference' prints" ||
	not_ok "docs/config.md differs: regenerate it with 'profreg config reference'" \
		"$(diff "$ROOT/docs/config.md" "$T/reference.md" | head -5)"
# Every scalar key it lists, set to the default it shows, is a key the
# loader takes: the reference names no key that does not exist, and its
# defaults are values the loader accepts.
# The keys and their files are made by one awk and one jq (a few
# processes per key made this test slow); a default given as another
# key's value ("analysis.fdr") has no literal to set and is left out.
n=0 refused=
while IFS=$'\t' read -r key json; do
	printf '%s\n' "$json" >"$T/one.json"
	"$PROFREG_BIN" config check "$T/one.json" >/dev/null 2>&1 || refused="$refused $key"
	n=$((n + 1))
done < <(awk -F'|' '/^\| `/ {
		key = $2; type = $3; def = $4
		sub(/^ *`/, "", key); sub(/` *$/, "", key)
		sub(/^ *`/, "", def); sub(/` *$/, "", def)
		if (key ~ /^services\.|NAME|\[\]/ || type !~ /integer|number|boolean/) next
		printf "%s\t%s\n", key, def
	}' "$T/reference.md" |
	jq -Rr 'split("\t") as [$k, $d] | try (($d | fromjson) as $v
		| "\($k)\t\(null | setpath($k | split("."); $v) | tojson)") catch empty')
[ "$n" -gt 60 ] && [ -z "$refused" ] &&
	ok "each of the reference's $n scalar keys, at its default, is accepted" ||
	not_ok "reference keys refused" "n=$n:$refused"
printf '{"analysis": {"window_dayz": 3}}\n' >"$T/typo.json"
run "$PROFREG_BIN" config check "$T/typo.json"
[ $RC -eq 2 ] && ! grep -q 'window_dayz' "$T/reference.md" && [[ $ERR == *"analysis.window_dayz: unknown key"* ]] &&
	ok "a key the reference does not list is refused by name" || not_ok "typo" "rc=$RC $ERR"
mkdir -p "$T/folder.json"
run "$PROFREG_BIN" config check "$T/folder.json"
[ $RC -eq 2 ] && [[ $ERR == *"cannot read config '$T/folder.json': not a regular file (a directory)"* ]] &&
	[ "$(grep -c . <<<"$ERR")" -eq 1 ] &&
	ok "a folder given as the config file is named as one" || not_ok "folder" "rc=$RC $ERR"

# A key is quoted in the error's JSON path, so payment data in one is cut.
printf '{"services": {"card 4111111111111111": {}}}' >"$T/cardname.json"
printf '{"collect": {"4111111111111111": 1}}' >"$T/cardkey.json"
run "$PROFREG_BIN" config check "$T/cardname.json"
rc1=$RC err1=$ERR
run "$PROFREG_BIN" config check "$T/cardkey.json"
[ $rc1 -eq 2 ] && [[ $err1 == *"services.card #: not a valid service name"* ]] &&
	[ $RC -eq 2 ] && [[ $ERR == *"collect.#: unknown key"* ]] &&
	[[ "$err1$ERR" != *4111111111111111* ]] &&
	ok "a card number in a key is cut from the error's path" ||
	not_ok "card in key" "$rc1 $err1 / $RC $ERR"

# The secret files a configuration names are checked as collect and the
# pager read them at night (owner-only, a file, one line, not empty):
# config check called each of these valid. One that is not on this
# machine, or is another user's, is the running host's to judge (CI,
# sudo): only its kind and mode are checked.
printf 'hunter2\n' >"$T/secret.ok"
chmod 600 "$T/secret.ok"
printf 'hunter2\n' >"$T/secret.open"
chmod 644 "$T/secret.open"
: >"$T/secret.empty"
chmod 600 "$T/secret.empty"
printf 'a\nb\n' >"$T/secret.2"
chmod 600 "$T/secret.2"
ln -sf "$T/secret.ok" "$T/secret.link"
secret_conf() { # $1: the file, $2: where it is named
	case $2 in
	source) printf '{"services": {"x": {"sources": [{"type": "pyroscope", "url": "http://127.0.0.1:9", "auth": "basic", "username": "u", "secret_file": "%s"}]}}}' "$1" ;;
	paging) printf '{"paging": {"targets": {"am": {"type": "alertmanager", "url": "http://127.0.0.1:9", "secret_file": "%s"}}}}' "$1" ;;
	esac >"$T/secret.json"
}
secret_conf "$T/secret.ok" source
run "$PROFREG_BIN" config check "$T/secret.json"
[ $RC -eq 0 ] && ok "config check: an owner-only secret file is valid" ||
	not_ok "secret ok" "rc=$RC $ERR"
refused=""
for f in open empty 2 link; do
	for where in source paging; do
		secret_conf "$T/secret.$f" $where
		run "$PROFREG_BIN" config check "$T/secret.json"
		[ $RC -eq 2 ] && [[ $ERR == *"secret_file: "*"secret.$f"* ]] && [[ $ERR != *hunter2* ]] ||
			refused="$refused $f/$where:rc=$RC:${ERR:0:200}"
	done
done
[ -z "$refused" ] &&
	ok "config check refuses a secret file collect or the pager would refuse (mode, empty, two lines, link)" ||
	not_ok "secret files" "$refused"
secret_conf "$T/secret.missing" source
run "$PROFREG_BIN" config check "$T/secret.json"
rc1=$RC
if [ "$(id -u)" -eq 0 ]; then
	: >"$T/secret.theirs"
	chmod 600 "$T/secret.theirs"
	chown nobody "$T/secret.theirs"
	secret_conf "$T/secret.theirs" source
	run "$PROFREG_BIN" config check "$T/secret.json"
else
	RC=0
fi
[ $rc1 -eq 0 ] && [ $RC -eq 0 ] &&
	ok "a secret file not on this machine, or another user's, is left to the host that runs" ||
	not_ok "secret elsewhere" "$rc1 $RC $ERR"

# 100,000 services (2.8 MB): each one's retention tiers were found by a
# search of all the services, 46 s of loading before any command ran.
awk 'BEGIN { printf "{\"services\": {"
	for (i = 0; i < 100000; i++) printf "%s\"svc%06d\": {\"team\": \"t\"}", i ? ", " : "", i
	print "}}" }' >"$T/many.json"
run timeout 15 "$PROFREG_BIN" config check "$T/many.json"
[ $RC -eq 0 ] && ok "a file of 100,000 services is checked within 15 s" ||
	not_ok "many services" "rc=$RC" "${ERR:0:300}"
rm -f "$T/many.json"
finish
