#!/usr/bin/env bash
# Runs the whole test suite with real servers: starts throwaway PostgreSQL,
# MariaDB and FerretDB (MongoDB protocol) instances on 127.0.0.1 (the first
# two installed with apt when missing, FerretDB built once from the Go module
# proxy), exports their URLs for the store tests, runs go test, and stops
# the servers whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."

cleanup() {
  [ -x scripts/postgres.sh ] && bash scripts/postgres.sh stop >/dev/null 2>&1 || true
  [ -x scripts/mariadb.sh ] && bash scripts/mariadb.sh stop >/dev/null 2>&1 || true
  [ -f scripts/ferretdb.sh ] && bash scripts/ferretdb.sh stop >/dev/null 2>&1 || true
}
trap cleanup EXIT

if [ -f scripts/postgres.sh ]; then
  bash scripts/postgres.sh start
  LINKBENCH_TEST_PG_URL="$(bash scripts/postgres.sh url)"
  export LINKBENCH_TEST_PG_URL
fi
if [ -f scripts/mariadb.sh ]; then
  bash scripts/mariadb.sh start
  LINKBENCH_TEST_MYSQL_URL="$(bash scripts/mariadb.sh url)"
  export LINKBENCH_TEST_MYSQL_URL
fi
if [ -f scripts/ferretdb.sh ]; then
  bash scripts/ferretdb.sh start
  LINKBENCH_TEST_MONGO_URL="$(bash scripts/ferretdb.sh url)"
  export LINKBENCH_TEST_MONGO_URL
fi

go test -count=1 -timeout 40m ./... 2>&1 | tee /tmp/linkbench-test.log
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || exit "$rc"

# A short fuzz run of each parser of user input (the seed corpora also run
# as plain tests above). The runs are bounded by a count of inputs, not by
# -fuzztime's wall clock: Go 1.26's coordinator can fail a timed run at its
# deadline without any failing input (go.dev/issue/75804). Shrinking a new
# interesting input is capped at 100 runs of it (by default it may take a
# minute, which stalled these runs for up to 30 s). A failure prints the
# whole output, which names the input it wrote under testdata/fuzz.
fuzz() {
  local out
  if ! out=$(go test -run '^$' -fuzz "^$1\$" -fuzztime "$2" -fuzzminimizetime 100x -timeout 5m "$3" 2>&1); then
    printf '%s\n' "$out"
    return 1
  fi
  printf '%s\n' "$out" | tail -1
}
fuzz FuzzParseProperties 100000x ./internal/config || exit 1
fuzz FuzzParseDataFile 300000x ./internal/dist || exit 1
fuzz FuzzCommandLine 20000x ./cmd/linkbench || exit 1

# The tests that kill or restart the servers run alone, one package at a time.
LINKBENCH_OUTAGE_TESTS=1 go test -p 1 -count=1 -timeout 10m -run 'TestServerOutageMidRun|TestLoadResumesAfterServerKill|TestReconnectAfterRestart|TestHungServer|TestLostServerExitsNonZero' -v ./cmd/linkbench ./internal/store/postgres ./internal/store/mysql 2>&1 | tee -a /tmp/linkbench-test.log | grep -E '^(---|===|ok|FAIL|PASS)|outage_test|_test.go'
exit "${PIPESTATUS[0]}"
