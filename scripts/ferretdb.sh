#!/usr/bin/env bash
# Throwaway MongoDB-protocol server for tests: FerretDB v1.24.0 on SQLite,
# on 127.0.0.1 only, telemetry off.
#
#   scripts/ferretdb.sh start     # build (once, cached) and start
#   scripts/ferretdb.sh url       # mongodb://linkbench:linkbench@127.0.0.1:PORT/?authSource=linkbench
#   scripts/ferretdb.sh stop      # stop and delete the data
#   scripts/ferretdb.sh kill      # kill -9 the server (fault tests)
#   scripts/ferretdb.sh pause     # SIGSTOP the server (hung-server tests)
#   scripts/ferretdb.sh resume    # SIGCONT it
#   scripts/ferretdb.sh restart   # stop and start on the same data
#   scripts/ferretdb.sh status
#   scripts/ferretdb.sh build     # only build the cached binary
#
# Debian has no MongoDB server and none can be downloaded here, so FerretDB
# is built from the Go module proxy. `go install` of it fails (its go.mod has
# replace directives), so the build goes through a throwaway wrapper module
# that requires it; its module zip lacks build/version/version.txt, without
# which the binary panics at start, so the wrapper replaces the module with
# a local copy that has the file.
#
# The binary is cached in ${XDG_CACHE_HOME:-~/.cache}/linkbench; state lives
# in $LINKBENCH_FERRETDB_DIR (default /tmp/linkbench-ferretdb); the port is
# $LINKBENCH_FERRETDB_PORT (default 27029).
set -euo pipefail

VERSION=v1.24.0
DIR="${LINKBENCH_FERRETDB_DIR:-/tmp/linkbench-ferretdb}"
PORT="${LINKBENCH_FERRETDB_PORT:-27029}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/linkbench"
BIN="$CACHE/ferretdb-$VERSION"
USER_NAME=linkbench
USER_PW=linkbench

build() {
  if [ -x "$BIN" ]; then return; fi
  command -v go >/dev/null || { echo "ferretdb.sh: go is needed to build FerretDB" >&2; exit 1; }
  echo "ferretdb.sh: building FerretDB $VERSION (once; cached in $CACHE)" >&2
  local w
  w="$(mktemp -d)"
  (
    cd "$w"
    export GOFLAGS=-mod=mod CGO_ENABLED=0 GOWORK=off
    cat >go.mod <<EOF
module ferretdbwrapper

go 1.22

require github.com/FerretDB/FerretDB $VERSION
EOF
    src="$(go mod download -json "github.com/FerretDB/FerretDB@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [ -n "$src" ] || { echo "ferretdb.sh: go mod download of FerretDB $VERSION failed" >&2; exit 1; }
    cp -r "$src" ferretdb
    chmod -R u+w ferretdb
    echo "$VERSION" >ferretdb/build/version/version.txt
    echo "replace github.com/FerretDB/FerretDB => ./ferretdb" >>go.mod
    printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/FerretDB/FerretDB/cmd/ferretdb"\n' >tools.go
    go mod tidy >/dev/null 2>&1 || go mod tidy
    mkdir -p "$CACHE"
    go build -trimpath -o "$BIN.tmp" github.com/FerretDB/FerretDB/cmd/ferretdb
    mv "$BIN.tmp" "$BIN"
  ) || { chmod -R u+w "$w"; rm -rf "$w"; exit 1; }
  chmod -R u+w "$w"
  rm -rf "$w"
}

# shellcheck source=scripts/pidfile.sh
. "$(dirname "$0")/pidfile.sh"

# wait_port returns 0 once the server listens, 1 when it exited.
wait_port() {
  for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then return 0; fi
    if ! running; then return 1; fi
    sleep 0.1
  done
  echo "ferretdb.sh: FerretDB did not listen on 127.0.0.1:$PORT within 30 s" >&2
  exit 1
}

launch() {
  # setsid: the server outlives the shell that started it (make test runs
  # the tests after this script returns).
  setsid "$BIN" --handler=sqlite --sqlite-url="file:$DIR/data/" \
    --listen-addr="127.0.0.1:$PORT" --debug-addr=- --state-dir="$DIR" \
    --telemetry=disable --log-level=WARN --test-enable-new-auth "$@" \
    </dev/null >>"$DIR/server.log" 2>&1 &
  echo $! >"$DIR/pid"
  wait_port
}

# start_server starts FerretDB on the data in $DIR/data. The user is set up
# only on new data: FerretDB sets it up again whenever the setup database
# is not listed (after an unclean exit its empty SQLite file may be gone),
# and then fails on the user that admin.sqlite still holds. Data it cannot
# start on (killed mid-setup) is moved aside and set up afresh.
start_server() {
  mkdir -p "$DIR/data"
  if [ ! -f "$DIR/data/admin.sqlite" ]; then
    launch --setup-database=linkbench --setup-username="$USER_NAME" --setup-password="$USER_PW" && return
  elif launch; then
    return
  else
    echo "ferretdb.sh: FerretDB did not start on the data left in $DIR/data; keeping it in $DIR/data.broken and starting afresh" >&2
    rm -rf "$DIR/data.broken"
    mv "$DIR/data" "$DIR/data.broken"
    mkdir -p "$DIR/data"
    launch --setup-database=linkbench --setup-username="$USER_NAME" --setup-password="$USER_PW" && return
  fi
  echo "ferretdb.sh: FerretDB exited; log:" >&2
  tail -20 "$DIR/server.log" >&2
  exit 1
}

start() {
  build
  if running; then return; fi
  mkdir -p "$DIR"
  start_server
}

case "${1:-}" in
  build) build ;;
  start) start ;;
  stop) stop_server; rm -rf "$DIR" ;;
  restart) stop_server; start_server ;;
  kill) p="$(pid)"; [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; rm -f "$DIR/pid" ;;
  pause) kill -STOP "$(pid)" ;;
  resume) kill -CONT "$(pid)" ;;
  url) echo "mongodb://$USER_NAME:$USER_PW@127.0.0.1:$PORT/?authSource=linkbench" ;;
  status) if running; then echo "running on 127.0.0.1:$PORT (pid $(pid))"; else echo stopped; exit 1; fi ;;
  *) echo "usage: $0 start|stop|restart|kill|pause|resume|url|status|build" >&2; exit 2 ;;
esac
