# An S3-compatible server on loopback for the CLI tests and the benchmarks:
# s3rver (installed by scripts/install-deps into tests/node) behind
# s3_sigcheck, which checks every request's SigV4 signature with the
# tests' own computation (tests/support/sigv4.c) and logs it. Source it,
# then:
#   s3_start DIR [PROXY FLAGS...]   start both; sets S3_ENDPOINT
#                                   (http://127.0.0.1:PORT, the proxy),
#                                   S3_VHOST_ENDPOINT (http://s3.localhost:PORT),
#                                   S3_DATA (s3rver's folder), S3_LOG
#   s3_proxy_restart [FLAGS...]     the proxy again, with other flags
#   s3_counts                       prints "TOTAL BAD": requests logged,
#                                   and how many failed the check
#   s3_stop                         stop both
# The key id is S3RVER (s3rver knows no other); the secret is $S3_SECRET.
# Both servers stop by themselves after 15 minutes at most.

S3_KEY_ID=S3RVER
S3_SECRET='cli-S3-secret/with+chars=='
S3_REGION=eu-central-1
S3_BUCKET=profreg-cli

s3_proxy_start() {
	rm -f "$S3_DIR/proxy.port"
	"${BUILD:-build}/servers/s3_sigcheck" --upstream "$S3_UPSTREAM" \
		--port-file "$S3_DIR/proxy.port" --log "$S3_LOG" --key-id "$S3_KEY_ID" \
		--secret-file "$S3_DIR/proxy.secret" --region "$S3_REGION" --timeout 900 "$@" \
		>>"$S3_DIR/proxy.out" 2>&1 &
	S3_PROXY_PID=$!
	for _ in $(seq 1 200); do
		[ -s "$S3_DIR/proxy.port" ] && break
		sleep 0.05
	done
	S3_PORT=$(cat "$S3_DIR/proxy.port" 2>/dev/null)
	[ -n "$S3_PORT" ] || { echo "s3_sigcheck did not start" >&2; return 1; }
	S3_ENDPOINT=http://127.0.0.1:$S3_PORT
	S3_VHOST_ENDPOINT=http://s3.localhost:$S3_PORT
}

s3_start() {
	S3_DIR=$1
	shift
	S3_DATA=$S3_DIR/data
	S3_LOG=$S3_DIR/requests.log
	mkdir -p "$S3_DATA"
	(umask 077 && printf '%s\n' "$S3_SECRET" >"$S3_DIR/proxy.secret")
	if [ ! -f tests/node/node_modules/s3rver/bin/s3rver.js ]; then
		echo "s3rver is missing: run 'make deps'" >&2
		return 1
	fi
	# s3rver's continuation tokens use DES, in OpenSSL 3's legacy provider.
	timeout 900 node --openssl-legacy-provider tests/node/node_modules/s3rver/bin/s3rver.js \
		--directory "$S3_DATA" --address 127.0.0.1 --port 0 \
		--configure-bucket "$S3_BUCKET" --service-endpoint localhost \
		>"$S3_DIR/s3rver.out" 2>&1 &
	S3RVER_PID=$!
	for _ in $(seq 1 600); do
		S3_UPSTREAM=$(sed -n 's/^S3rver listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' \
			"$S3_DIR/s3rver.out")
		[ -n "$S3_UPSTREAM" ] && break
		kill -0 "$S3RVER_PID" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$S3_UPSTREAM" ] || { echo "s3rver did not start:" >&2; cat "$S3_DIR/s3rver.out" >&2; return 1; }
	s3_proxy_start "$@"
}

s3_proxy_restart() {
	kill "$S3_PROXY_PID" 2>/dev/null
	wait "$S3_PROXY_PID" 2>/dev/null
	s3_proxy_start "$@"
}

s3_counts() {
	local total bad
	total=$(wc -l <"$S3_LOG" 2>/dev/null || echo 0)
	bad=$(grep -c '"ok":false' "$S3_LOG" 2>/dev/null)
	echo "$total ${bad:-0}"
}

s3_stop() {
	[ -n "${S3_PROXY_PID:-}" ] && kill "$S3_PROXY_PID" 2>/dev/null && wait "$S3_PROXY_PID" 2>/dev/null
	[ -n "${S3RVER_PID:-}" ] && kill "$S3RVER_PID" 2>/dev/null && wait "$S3RVER_PID" 2>/dev/null
	S3_PROXY_PID=
	S3RVER_PID=
}
