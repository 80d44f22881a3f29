#!/usr/bin/env bash
# A throwaway PostgreSQL server for the store package's tests.
#
#   .ci/postgres.sh [start] [ENVFILE]   start it (installing Debian's postgresql if needed),
#                                       print "export HYPERFLAT_TEST_POSTGRES=..." on stdout
#                                       and, given ENVFILE, write that line to it too
#   .ci/postgres.sh stop                stop it
#   .ci/postgres.sh restart [SECONDS]   stop it, wait SECONDS (default 3), start it again on the
#                                       same port (a test of clients riding out a restart)
#   .ci/postgres.sh clean               stop it and delete its data
#
# Typical use:  eval "$(bash .ci/postgres.sh start)" && go test ./store/...
#
# Idempotent: a second start reuses the running server and its database. The cluster lives in
# $HYPERFLAT_PG_DIR (default /tmp/hyperflat-postgres), listens on 127.0.0.1 only, on the first
# free port from $HYPERFLAT_PG_PORT (default 54329), trusts every loopback connection, and runs
# with fsync off: it is for tests, never for data that matters. Run as root (initdb and the
# server run as the postgres user) or as an ordinary user who owns the directory. Progress goes
# to stderr, so stdout is only the export line.
set -euo pipefail

dir="${HYPERFLAT_PG_DIR:-/tmp/hyperflat-postgres}"
port="${HYPERFLAT_PG_PORT:-54329}"
db=hyperflat_test
data="$dir/data"
log="$dir/server.log"

say() { echo "postgres.sh: $*" >&2; }

# bindir prints the newest /usr/lib/postgresql/*/bin that has initdb and pg_ctl.
bindir() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r); do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

install_postgres() {
	if bindir >/dev/null; then
		return 0
	fi
	say "installing postgresql with apt-get"
	export DEBIAN_FRONTEND=noninteractive
	local attempt
	for attempt in 1 2 3; do
		if apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2; then
			bindir >/dev/null && return 0
		fi
		sleep 10
	done
	say "could not install postgresql"
	exit 1
}

# as_pg runs a command as the postgres user when we are root, else as ourselves.
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		(cd / && runuser -u postgres -- "$@")
	else
		(cd / && "$@")
	fi
}

running() {
	[ -f "$data/PG_VERSION" ] && as_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1
}

port_busy() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start() {
	install_postgres
	bin=$(bindir)
	mkdir -p "$dir"
	if [ "$(id -u)" = 0 ]; then
		chown postgres:postgres "$dir"
	fi
	chmod 700 "$dir"
	if [ ! -f "$data/PG_VERSION" ]; then
		say "initdb $data"
		rm -rf "$data"
		as_pg "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1 ||
			{ cat "$dir/initdb.log" >&2; exit 1; }
		as_pg sh -c "printf '%s\n' 'local all all trust' 'host all all 127.0.0.1/32 trust' >'$data/pg_hba.conf'"
	fi
	if running; then
		port=$(cat "$dir/port")
		say "already running on 127.0.0.1:$port"
	else
		while port_busy "$port"; do
			port=$((port + 1))
		done
		echo "$port" >"$dir/port"
		say "starting on 127.0.0.1:$port (log $log)"
		as_pg "$bin/pg_ctl" -D "$data" -l "$log" -w -t 60 start -o \
			"-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >&2 ||
			{ tail -n 30 "$log" >&2; exit 1; }
	fi
	if ! as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc \
		"SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1; then
		as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db"
	fi
	local line="export HYPERFLAT_TEST_POSTGRES='postgres://postgres@127.0.0.1:$port/$db?sslmode=disable'"
	if [ -n "${1:-}" ]; then
		echo "$line" >"$1"
	fi
	echo "$line"
}

stop() {
	bin=$(bindir) || return 0
	if running; then
		say "stopping"
		as_pg "$bin/pg_ctl" -D "$data" -m fast -w stop >&2
	fi
}

case "${1:-start}" in
start)
	start "${2:-}"
	;;
stop)
	stop
	;;
restart)
	port=$(cat "$dir/port")
	stop
	sleep "${2:-3}"
	start >/dev/null
	;;
clean)
	stop
	rm -rf "$dir"
	;;
*)
	if [ "$#" = 1 ] && [ "${1#-}" = "$1" ]; then
		start "$1" # a lone ENVFILE
	else
		echo "usage: $0 [start [ENVFILE] | stop | clean]" >&2
		exit 2
	fi
	;;
esac
