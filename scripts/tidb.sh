#!/usr/bin/env bash
# Throwaway TiDB for the opt-in distributed-SQL test: tidb-server with its
# embedded unistore, on 127.0.0.1 only, built from the Go module proxy.
#
#   scripts/tidb.sh start     # build (once, about 8 minutes; cached) and start
#   scripts/tidb.sh url       # mysql://root@127.0.0.1:PORT/linkdb0
#   scripts/tidb.sh stop      # stop and delete the data
#   scripts/tidb.sh status
#   scripts/tidb.sh build     # only build the cached binary
#
# TiDB publishes no semver module versions, so the build pins a pseudo-
# version of github.com/pingcap/tidb. Its go.mod replaces its parser (a
# nested module, absent from the module zip) with a local directory and two
# archived dependencies with forks; a dependent module does not inherit
# replace directives, so the throwaway wrapper module repeats them, taking
# the parser module of the same commit from the proxy.
#
# The binary is cached in ${XDG_CACHE_HOME:-~/.cache}/linkbench; state lives
# in $LINKBENCH_TIDB_DIR (default /tmp/linkbench-tidb); the port is
# $LINKBENCH_TIDB_PORT (default 24000), the status port the next one.
set -euo pipefail

VERSION=v1.1.0-beta.0.20251126154744-e4e814fdc0af
PARSER=v0.0.0-20251126154744-e4e814fdc0af # the nested parser module at the same commit
DIR="${LINKBENCH_TIDB_DIR:-/tmp/linkbench-tidb}"
PORT="${LINKBENCH_TIDB_PORT:-24000}"
STATUS_PORT=$((PORT + 1))
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/linkbench"
BIN="$CACHE/tidb-server-${VERSION##*-}"

build() {
  if [ -x "$BIN" ]; then return; fi
  command -v go >/dev/null || { echo "tidb.sh: go is needed to build TiDB" >&2; exit 1; }
  echo "tidb.sh: building TiDB ($VERSION; once, about 8 minutes; cached in $CACHE)" >&2
  local w
  w="$(mktemp -d)"
  (
    cd "$w"
    export GOFLAGS=-mod=mod CGO_ENABLED=0 GOWORK=off
    cat >go.mod <<EOF
module tidbwrapper

go 1.26

require github.com/pingcap/tidb $VERSION

replace (
	github.com/go-ldap/ldap/v3 => github.com/YangKeao/ldap/v3 v3.4.5-0.20230421065457-369a3bab1117
	github.com/pingcap/tidb/pkg/parser => github.com/pingcap/tidb/pkg/parser $PARSER
	sourcegraph.com/sourcegraph/appdash => github.com/sourcegraph/appdash v0.0.0-20190731080439-ebfcffb1b5c0
	sourcegraph.com/sourcegraph/appdash-data => github.com/sourcegraph/appdash-data v0.0.0-20151005221446-73f23eafcf67
)
EOF
    printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/pingcap/tidb/cmd/tidb-server"\n' >tools.go
    go mod tidy >/dev/null 2>&1 || go mod tidy
    mkdir -p "$CACHE"
    go build -trimpath -o "$BIN.tmp" github.com/pingcap/tidb/cmd/tidb-server
    mv "$BIN.tmp" "$BIN"
  ) || { rm -rf "$w"; exit 1; }
  rm -rf "$w"
}

# shellcheck source=scripts/pidfile.sh
. "$(dirname "$0")/pidfile.sh"

client() {
  local c
  c="$(command -v mariadb || command -v mysql || true)"
  if [ -z "$c" ]; then
    echo "tidb.sh: installing mariadb-client with apt (for CREATE DATABASE)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q mariadb-client >/dev/null
    c="$(command -v mariadb || command -v mysql)"
  fi
  "$c" --protocol=tcp -h 127.0.0.1 -P "$PORT" -u root "$@"
}

start_server() {
  mkdir -p "$DIR/data"
  setsid "$BIN" -store=unistore -path="$DIR/data" -host=127.0.0.1 -P "$PORT" \
    -status="$STATUS_PORT" -status-host=127.0.0.1 -log-file="$DIR/tidb.log" \
    -log-slow-query="$DIR/slow.log" -report-status=true \
    </dev/null >>"$DIR/server.log" 2>&1 &
  echo $! >"$DIR/pid"
  for _ in $(seq 1 600); do
    if client -e "SELECT 1" >/dev/null 2>&1; then
      client -e "CREATE DATABASE IF NOT EXISTS linkdb0"
      return 0
    fi
    if ! running; then
      echo "tidb.sh: TiDB exited; log:" >&2
      tail -20 "$DIR/server.log" "$DIR/tidb.log" >&2 || true
      exit 1
    fi
    sleep 0.2
  done
  echo "tidb.sh: TiDB did not answer on 127.0.0.1:$PORT within 120 s" >&2
  exit 1
}

case "${1:-}" in
  build) build ;;
  start) build; running || start_server ;;
  stop) stop_server; rm -rf "$DIR" ;;
  url) echo "mysql://root@127.0.0.1:$PORT/linkdb0" ;;
  status) if running; then echo "running on 127.0.0.1:$PORT (pid $(pid))"; else echo stopped; exit 1; fi ;;
  *) echo "usage: $0 start|stop|url|status|build" >&2; exit 2 ;;
esac
