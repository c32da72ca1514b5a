# Start and stop a throwaway PostgreSQL on a Unix socket in a temporary
# folder, for the test suite and the benchmarks. Source it, then call
# pg_tmp_start DIR (sets PG_CONNINFO) and pg_tmp_stop DIR.

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)

pg_as_owner() {
	# initdb refuses to run as root: as root, the cluster belongs to postgres.
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

pg_tmp_start() {
	local dir=$1
	if [ -z "$PGBIN" ]; then
		echo "no PostgreSQL server found under /usr/lib/postgresql (run 'make deps')" >&2
		return 1
	fi
	mkdir -p "$dir/pg" "$dir/sock" "$dir/log"
	chmod 755 "$dir"
	[ "$(id -u)" -eq 0 ] && chown postgres "$dir/pg" "$dir/sock" "$dir/log"
	if ! pg_as_owner "$PGBIN/initdb" -D "$dir/pg" -U postgres --auth=trust \
		--no-sync -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1; then
		echo "initdb failed:" >&2
		cat "$dir/initdb.log" >&2
		return 1
	fi
	if ! pg_as_owner "$PGBIN/pg_ctl" -D "$dir/pg" -w -t 60 -l "$dir/log/pg.log" \
		-o "-c listen_addresses= -c unix_socket_directories=$dir/sock -c fsync=off -c max_connections=100" \
		start >/dev/null; then
		echo "PostgreSQL did not start:" >&2
		cat "$dir/log/pg.log" >&2
		return 1
	fi
	PG_CONNINFO="host=$dir/sock user=postgres dbname=postgres"
}

pg_tmp_stop() {
	local dir=$1
	if [ -f "$dir/pg/postmaster.pid" ]; then
		pg_as_owner "$PGBIN/pg_ctl" -D "$dir/pg" -m immediate -w -t 30 stop >/dev/null 2>&1
	fi
}
