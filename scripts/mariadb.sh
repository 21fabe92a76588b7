#!/usr/bin/env bash
# Throwaway MariaDB (InnoDB and the RocksDB engine) for tests and local
# benchmarks, on 127.0.0.1 only.
#
#   scripts/mariadb.sh start     # install (apt) if missing, initialise, start
#   scripts/mariadb.sh url       # mysql://linkbench:linkbench@127.0.0.1:PORT/linkdb0
#   scripts/mariadb.sh restart   # stop and start (data kept)
#   scripts/mariadb.sh kill      # kill -9 the server (fault tests)
#   scripts/mariadb.sh pause     # SIGSTOP the server (hung-server tests)
#   scripts/mariadb.sh resume    # SIGCONT it
#   scripts/mariadb.sh stop      # stop and delete everything
#   scripts/mariadb.sh status
#
# The RocksDB plugin is loaded at startup (loading it into a running
# MariaDB 10.11 crashes it). State lives in $LINKBENCH_MARIADB_DIR (default
# /tmp/linkbench-mariadb); the port is $LINKBENCH_MARIADB_PORT (default 33069).
set -euo pipefail

DIR="${LINKBENCH_MARIADB_DIR:-/tmp/linkbench-mariadb}"
PORT="${LINKBENCH_MARIADB_PORT:-33069}"
DATA="$DIR/data"
SOCK="$DIR/mysqld.sock"
PIDF="$DIR/mysqld.pid"
LOG="$DIR/server.log"

install() {
  if command -v mariadbd >/dev/null && [ -n "$(find /usr/lib -name ha_rocksdb.so 2>/dev/null | head -1)" ]; then return; fi
  echo "mariadb.sh: installing mariadb-server and mariadb-plugin-rocksdb with apt" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q mariadb-server mariadb-plugin-rocksdb >/dev/null
  # The package may start the system server; ours does not need it.
  (service mariadb stop >/dev/null 2>&1 || true)
}

running() {
  [ -f "$PIDF" ] && kill -0 "$(cat "$PIDF")" 2>/dev/null
}

# MyRocks keeps its tables' index and filter blocks with the open tables,
# outside the block cache. In the cache (MariaDB's default), an index block
# of a 64 MB table file (about 1.7 MB here: the keys of id1_type carry the
# link's data) nearly fills one of the cache's 64 shards of 2 MB; from 16
# requesters on, readers then evicted one another's index blocks, and each
# miss read and parsed one again: 2-3.5 misses and 3.4-5.9 MB per request,
# 3-6 ms of server CPU per request, a tenth of the throughput, with either
# driver (docs/performance.md, "MyRocks's collapses").
# MyRocks also detects deadlocks here (off by default there): without it, a
# deadlock between link writes waits out rocksdb_lock_wait_timeout (1 s).
# The reference's statements name no index, and on a table whose
# statistics are new MariaDB plans a link UPDATE as a range of its list,
# which MyRocks locks row by row: writers of one list then deadlock, and
# the conformance suite's concurrent writers took minutes instead of
# seconds. Detected, a deadlock fails one writer at once, which retries.
start_server() {
  mariadbd --no-defaults --user=mysql --datadir="$DATA" --socket="$SOCK" --pid-file="$PIDF" \
    --bind-address=127.0.0.1 --port="$PORT" --skip-name-resolve --log-error="$LOG" \
    --plugin-load-add=ha_rocksdb --innodb-buffer-pool-size=256M --max-connections=300 \
    --innodb-flush-log-at-trx-commit=1 --sync-binlog=0 --skip-log-bin \
    --rocksdb-block-cache-size=128M --rocksdb-cache-index-and-filter-blocks=0 --rocksdb-deadlock-detect=1 >/dev/null 2>&1 &
  for _ in $(seq 1 120); do
    if mariadb-admin --no-defaults --socket="$SOCK" -uroot ping >/dev/null 2>&1; then return; fi
    sleep 0.5
  done
  echo "mariadb.sh: the server did not start; see $LOG" >&2
  tail -20 "$LOG" >&2 || true
  exit 1
}

start() {
  install
  if running; then return; fi
  if [ ! -d "$DATA/mysql" ]; then
    rm -rf "$DIR"
    mkdir -p "$DATA"
    chown -R mysql:mysql "$DIR" 2>/dev/null || true
    mariadb-install-db --no-defaults --user=mysql --datadir="$DATA" --auth-root-authentication-method=socket \
      --skip-test-db >"$DIR/install.log" 2>&1 || { cat "$DIR/install.log" >&2; exit 1; }
    start_server
    mariadb --no-defaults --socket="$SOCK" -uroot -e "
      CREATE USER 'linkbench'@'127.0.0.1' IDENTIFIED BY 'linkbench';
      CREATE USER 'linkbench'@'localhost' IDENTIFIED BY 'linkbench';
      GRANT ALL ON *.* TO 'linkbench'@'127.0.0.1' WITH GRANT OPTION;
      GRANT ALL ON *.* TO 'linkbench'@'localhost' WITH GRANT OPTION;
      CREATE DATABASE linkdb0;"
  else
    start_server
  fi
}

stop_server() {
  if running; then
    mariadb-admin --no-defaults --socket="$SOCK" -uroot shutdown >/dev/null 2>&1 || kill "$(cat "$PIDF")" 2>/dev/null || true
    for _ in $(seq 1 60); do running || break; sleep 0.5; done
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop_server; rm -rf "$DIR" ;;
  restart) stop_server; start_server ;;
  kill) if running; then kill -9 "$(cat "$PIDF")"; fi ;;
  pause) kill -STOP "$(cat "$PIDF")" ;;
  resume) kill -CONT "$(cat "$PIDF")" ;;
  url) echo "mysql://linkbench:linkbench@127.0.0.1:$PORT/linkdb0" ;;
  status) if running; then echo "running on 127.0.0.1:$PORT ($DATA)"; else echo "not running"; exit 1; fi ;;
  *) echo "usage: $0 start|stop|restart|kill|pause|resume|url|status" >&2; exit 2 ;;
esac
