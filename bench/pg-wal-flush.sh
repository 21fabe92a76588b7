#!/usr/bin/env bash
# How long PostgreSQL's WAL flushes take beside each driver: for every round,
# the reference's request phase then linkbench's (the graph copied back
# before each, as `bench/vs-reference.sh --perf` does with PERF_RESTORE=1),
# and over 15 s of each measured phase the flushes per request and the
# wall time of one (pg_stat_wal, with track_wal_io_timing on for the
# script's runs), the WAL written per request, and what the disk itself
# took per write and per flush (/proc/diskstats of the data directory's
# device). A commit waits for its flush, so the node writes (an autocommit
# statement each) take about what a flush takes beside them.
#
#   bash bench/pg-wal-flush.sh /path/to/mdcallag-linkbench
#
# Settings (environment): REQUESTERS (16), ROUNDS (2), RATE (requests per
# second per requester for both drivers; empty: closed loop), OUT (a new
# temporary directory). The graph is the snapshot `--perf` saved
# (lbsnap_perf), loaded first if it is missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REQUESTERS="${REQUESTERS:-16}"
ROUNDS="${ROUNDS:-2}"
RATE="${RATE:-}"
source "$here/vs-reference.sh" "${1:-${LINKBENCH_REF_SRC:-}}"
reference_jar
build_linkbench
store_start postgres
REUSE_LOADS=1 perf_graph postgres
pg_admin -c "ALTER SYSTEM SET track_wal_io_timing = on" -c "SELECT pg_reload_conf()" >/dev/null
trap 'pg_admin -c "ALTER SYSTEM RESET track_wal_io_timing" -c "SELECT pg_reload_conf()" >/dev/null' EXIT
dev="$(basename "$(df --output=source "$PGDIR" | tail -1)")"

# wal: flushes, their time (ms) and bytes of WAL so far.
wal() { pg_admin -F' ' -c "SELECT wal_sync, wal_sync_time, wal_bytes FROM pg_stat_wal"; }
# disk: writes, their ms, flushes, their ms, of the device so far.
disk() { awk -v d="$dev" '$3 == d { print $8, $11, $19, $20 }' /proc/diskstats; }

echo "postgres, $REQUESTERS requesters${RATE:+ at $RATE requests/s each}, 15 s of each measured phase" | tee "$OUT/wal-flush.txt"
for r in $(seq 1 "$ROUNDS"); do
  for driver in reference linkbench; do
    snapshot_restore postgres "$PERF_GRAPH"
    args=(-D requesters="$REQUESTERS" -D requests=1000000000 -D maxtime=30 -D warmup_time=5)
    [ -n "$RATE" ] && args+=(-D requestrate="$RATE")
    log="$OUT/$driver-$r.out"
    if [ "$driver" = reference ]; then reference postgres "${args[@]}" -r >"$log" 2>&1 &
    else linkbench postgres run "${args[@]}" >"$log" 2>&1 &
    fi
    pid=$!
    sleep 10
    w0="$(wal)" d0="$(disk)"
    sleep 15
    w1="$(wal)" d1="$(disk)"
    wait "$pid" || die "$driver failed; see $log"
    rate="$(sed -n 's/.*REQUEST PHASE COMPLETED.*Requests\/second = \([0-9]*\).*/\1/p' "$log")"
    [ -n "$rate" ] || die "$driver: no REQUEST PHASE COMPLETED line in $log"
    awk -v who="$driver" -v r="$r" -v rate="$rate" -v w0="$w0" -v w1="$w1" -v d0="$d0" -v d1="$d1" 'BEGIN {
      split(w0, a, " "); split(w1, b, " "); split(d0, c, " "); split(d1, e, " ")
      n = rate * 15; syncs = b[1] - a[1]; writes = e[1] - c[1]; flushes = e[3] - c[3]
      printf "%-9s round %d: %6d req/s | WAL flushes %.3f per request, %.3f ms each, %.0f %% of the time | WAL %.0f B per request | disk: %.3f ms per write, %.3f ms per flush\n",
        who, r, rate, syncs / n, (b[2] - a[2]) / (syncs > 0 ? syncs : 1), (b[2] - a[2]) / 150, (b[3] - a[3]) / n,
        (e[2] - c[2]) / (writes > 0 ? writes : 1), (e[4] - c[4]) / (flushes > 0 ? flushes : 1)
    }' | tee -a "$OUT/wal-flush.txt"
  done
done
