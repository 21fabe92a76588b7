#!/usr/bin/env bash
# Measures the driver's own overhead against the in-memory store: load of
# maxid1=100001 with 2 loaders, then the 2017 request mix with 4 requesters.
# Prints load seconds, requests/s and the peak RSS of the process.
#
#   bash bench/driver-overhead.sh [maxtime-seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
maxtime="${1:-20}"
CGO_ENABLED=0 go build -o bin/linkbench ./cmd/linkbench
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
command -v /usr/bin/time >/dev/null || { apt-get install -y -q time >/dev/null 2>&1 || true; }
run() {
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f 'peak_rss_kb=%M' "$@"
  else
    "$@"
  fi
}
run ./bin/linkbench -c config/LinkConfigMemory.properties \
  -D maxid1=100001 -D loaders=2 -D requesters=4 -D maxtime="$maxtime" -D warmup_time=0 \
  -D requests=0 --results-dir "$out" -l -r >"$out/stdout" 2>"$out/stderr"
grep -E 'LOAD PHASE COMPLETED|REQUEST PHASE COMPLETED' "$out/stdout"
grep -E 'peak_rss_kb' "$out/stderr" || true
