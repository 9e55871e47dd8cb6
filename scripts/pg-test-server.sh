#!/bin/sh
# A throwaway PostgreSQL server for tests and local trials (docs/postgres.md).
#
#   scripts/pg-test-server.sh start [DIR]   a new cluster in DIR (default: a new temp dir), start on a free
#                                           port of 127.0.0.1; prints the URL on stdout, the dir on stderr
#   scripts/pg-test-server.sh down DIR      stop the server, keep its data (fault tests)
#   scripts/pg-test-server.sh up DIR        start it again, on the same port
#   scripts/pg-test-server.sh restart DIR   fast stop, then start
#   scripts/pg-test-server.sh stop DIR      stop the server and remove DIR
#
# Trust authentication, listening on 127.0.0.1 only, the unix socket inside DIR, fsync on (the
# durability promises are tested as they run in production) unless PG_TEST_FSYNC=off (a server
# that is never crashed: the one the test files of a pass share). PostgreSQL refuses to run as root, so
# under root everything runs as the `postgres` user. The binaries come from PG_BIN, or the newest
# /usr/lib/postgresql/*/bin.
set -eu

pg_bin() {
  if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return; fi
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$found" ]; then
    echo "pg-test-server: no PostgreSQL found (install postgresql, or set PG_BIN)" >&2
    exit 3
  fi
  echo "$found"
}

# Runs a command as the owner of the cluster: `postgres` when we are root.
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# A port nobody listens on now (a race with another process remains; `start` retries).
free_port() {
  node -e 'const s=require("node:net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

server_start() {
  dir=$1
  port=$(cat "$dir/port")
  as_owner "$BIN/pg_ctl" start -w -t 30 -s -D "$dir/data" -l "$dir/server.log" \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=${PG_TEST_FSYNC:-on} -c max_connections=200" >/dev/null
}

server_stop() {
  as_owner "$BIN/pg_ctl" stop -w -t 30 -s -m fast -D "$1/data" >/dev/null
}

# A cluster as initdb makes it, made once per PostgreSQL version and user, and copied for each
# server: initdb takes about a second of CPU, a copy a tenth of that, and the tests start dozens.
# Made aside and renamed into place, so a copy is never taken of a half-made one; of two made at
# once, the second is dropped.
template() {
  tpl="${TMPDIR:-/tmp}/url-shortener-pg-template-1-$(echo "$BIN" | cksum | cut -d" " -f1)-$(id -u)"
  if [ ! -f "$tpl/data/PG_VERSION" ]; then
    made=$(mktemp -d "$tpl.XXXXXX")
    if [ "$(id -u)" = 0 ]; then chown postgres "$made"; fi
    # initdb's own final sync only: the server runs with fsync on.
    as_owner "$BIN/initdb" -D "$made/data" -U postgres --auth=trust --no-sync --no-instructions -E UTF8 --locale=C >"$made/initdb.log" 2>&1 ||
      { cat "$made/initdb.log" >&2; rm -rf "$made"; exit 1; }
    mv -T "$made" "$tpl" 2>/dev/null || rm -rf "$made"
    [ -f "$tpl/data/PG_VERSION" ] || { echo "pg-test-server: $tpl is not a whole cluster: remove it" >&2; exit 1; }
  fi
  echo "$tpl"
}

usage() {
  echo "usage: pg-test-server.sh start [DIR] | down DIR | up DIR | restart DIR | stop DIR" >&2
  exit 2
}

BIN=$(pg_bin)
cmd=${1:-start}
case "$cmd" in
  start)
    dir=${2:-$(mktemp -d -t pg-test.XXXXXX)}
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
    tpl=$(template)
    as_owner cp -a "$tpl/data" "$dir/data"
    tries=0
    until free_port >"$dir/port" && server_start "$dir" 2>/dev/null; do
      tries=$((tries + 1))
      if [ "$tries" -ge 5 ]; then cat "$dir/server.log" >&2; exit 1; fi
    done
    echo "postgres://postgres@127.0.0.1:$(cat "$dir/port")/postgres"
    echo "$dir" >&2
    ;;
  down) [ $# -eq 2 ] || usage; server_stop "$2" ;;
  up) [ $# -eq 2 ] || usage; server_start "$2" ;;
  restart) [ $# -eq 2 ] || usage; server_stop "$2"; server_start "$2" ;;
  stop)
    [ $# -eq 2 ] || usage
    [ -f "$2/port" ] || { echo "pg-test-server: $2 is not a test server's dir" >&2; exit 1; }
    if [ -f "$2/data/postmaster.pid" ]; then server_stop "$2" || true; fi
    rm -rf "$2"
    ;;
  *) usage ;;
esac
