#!/usr/bin/env bash
# Throwaway PostgreSQL 15 for tests and local benchmarks, on 127.0.0.1 only.
#
#   scripts/postgres.sh start     # install (apt) if missing, initdb, start
#   scripts/postgres.sh url       # postgres://linkbench:linkbench@127.0.0.1:PORT/linkdb0?sslmode=disable
#   scripts/postgres.sh restart   # stop and start the same cluster (data kept)
#   scripts/postgres.sh kill      # kill -9 the server (fault tests)
#   scripts/postgres.sh pause     # SIGSTOP the server and its backends (hung-server tests)
#   scripts/postgres.sh resume    # SIGCONT them
#   scripts/postgres.sh stop      # stop and delete everything
#   scripts/postgres.sh status
#
# State lives in $LINKBENCH_PG_DIR (default /tmp/linkbench-pg); the port is
# $LINKBENCH_PG_PORT (default 54329). When run as root, the server runs as
# the unprivileged user "postgres" (created by the Debian package).
set -euo pipefail

DIR="${LINKBENCH_PG_DIR:-/tmp/linkbench-pg}"
PORT="${LINKBENCH_PG_PORT:-54329}"
BIN="${LINKBENCH_PG_BIN:-/usr/lib/postgresql/15/bin}"
DATA="$DIR/data"
LOG="$DIR/server.log"

as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

install() {
  if [ -x "$BIN/initdb" ]; then return; fi
  echo "postgres.sh: installing postgresql-15 with apt" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q postgresql-15 >/dev/null
  # The package starts its own cluster on 5432; ours does not need it.
  (pg_ctlcluster 15 main stop >/dev/null 2>&1 || true)
  [ -x "$BIN/initdb" ] || { echo "postgres.sh: $BIN/initdb still missing after install" >&2; exit 1; }
}

running() {
  [ -f "$DATA/postmaster.pid" ] && as_owner "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

start_server() {
  as_owner "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$DIR -c max_connections=200 -c shared_buffers=256MB -c fsync=on -c synchronous_commit=on" start >/dev/null
}

start() {
  install
  if running; then return; fi
  if [ ! -f "$DATA/PG_VERSION" ]; then
    rm -rf "$DIR"
    mkdir -p "$DIR"
    if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$DIR"; fi
    echo "postgres" > "$DIR/pw"
    if [ "$(id -u)" = 0 ]; then chown postgres "$DIR/pw"; fi
    as_owner "$BIN/initdb" -D "$DATA" -U postgres --pwfile="$DIR/pw" --auth-local=trust --auth-host=scram-sha-256 -E UTF8 >/dev/null
    start_server
    as_owner "$BIN/psql" -h "$DIR" -p "$PORT" -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
      -c "CREATE ROLE linkbench LOGIN SUPERUSER PASSWORD 'linkbench'" \
      -c "CREATE DATABASE linkdb0 OWNER linkbench" >/dev/null
  else
    start_server
  fi
}

stop() {
  if running; then as_owner "$BIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true; fi
  rm -rf "$DIR"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart)
    as_owner "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null 2>&1 || true
    start_server ;;
  kill)
    if [ -f "$DATA/postmaster.pid" ]; then kill -9 "$(head -1 "$DATA/postmaster.pid")" || true; fi ;;
  pause|resume)
    # Every backend is a session of its own: signal each child of the
    # postmaster, then the postmaster (first on resume).
    sig=STOP; [ "$1" = resume ] && sig=CONT
    pm="$(head -1 "$DATA/postmaster.pid")"
    if [ "$sig" = CONT ]; then kill -CONT "$pm"; fi
    for c in $(pgrep -P "$pm" || true); do kill -"$sig" "$c" 2>/dev/null || true; done
    if [ "$sig" = STOP ]; then kill -STOP "$pm"; fi ;;
  url) echo "postgres://linkbench:linkbench@127.0.0.1:$PORT/linkdb0?sslmode=disable" ;;
  status) if running; then echo "running on 127.0.0.1:$PORT ($DATA)"; else echo "not running"; exit 1; fi ;;
  *) echo "usage: $0 start|stop|restart|kill|pause|resume|url|status" >&2; exit 2 ;;
esac
