#!/usr/bin/env bash
# A --shard fleet against one process: the same graph loaded into the
# PostgreSQL of scripts/postgres.sh by one process with L loaders, then
# by N processes started together with L/N loaders each, in R rounds
# that alternate which goes first; then the time shard 0 of 1000 of a
# 10^9-id graph takes to write its first row.
#
#   bash bench/fleet-load.sh [maxid1] [N] [L] [R]     (defaults 10000001 4 4 3)
#
# Further -D settings for every load may be given in $LINKBENCH_EXTRA;
# with FLEET_LOGS=dir every process's output is kept there.
#
# Prints, each round, the wall time of both loads, the fleet's over one
# process's, the slowest bulk call of any shard (a shard that waited on
# another's index build shows it here) and which process built the
# index; then the median of the rounds' ratios, and the first-row time.
# The schemas lbfleet_one, lbfleet_n and lbfleet_start are replaced.
set -euo pipefail
cd "$(dirname "$0")/.."
maxid1="${1:-10000001}"
n="${2:-4}"
loaders="${3:-4}"
rounds="${4:-3}"
CGO_ENABLED=0 go build -o bin/linkbench ./cmd/linkbench
url="$(bash scripts/postgres.sh url)"
if [ -n "${FLEET_LOGS:-}" ]; then
  tmp="$FLEET_LOGS"
  mkdir -p "$tmp"
else
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
fi
read -r -a extra <<<"${LINKBENCH_EXTRA:-}"
cfg=(-c config/LinkConfigPgsql.properties -D "url=$url" -D load_random_seed=7 -D load_time_ms=1700000000000 --no-results "${extra[@]}")
psql=(psql "$url" -v ON_ERROR_STOP=1 -qAt -c "SET client_min_messages = warning")
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
per=$(( (loaders + n - 1) / n ))

one() { # round: one process into lbfleet_one; prints its seconds
  local t s
  "${psql[@]}" -c "DROP SCHEMA IF EXISTS lbfleet_one CASCADE" -c CHECKPOINT
  t="$(now)"
  bin/linkbench load "${cfg[@]}" -D pg_schema=lbfleet_one -D "maxid1=$maxid1" -D "loaders=$loaders" >"$tmp/one-$1.log" 2>&1 || { cat "$tmp/one-$1.log" >&2; exit 1; }
  s="$(since "$t")"
  "${psql[@]}" -c "DROP SCHEMA lbfleet_one CASCADE"
  echo "$s"
}

fleet() { # round: N shards into lbfleet_n; prints seconds, slowest bulk call, builder
  local t s i pids=() worst builder
  "${psql[@]}" -c "DROP SCHEMA IF EXISTS lbfleet_n CASCADE" -c CHECKPOINT
  bin/linkbench init --drop "${cfg[@]}" -D pg_schema=lbfleet_n >/dev/null 2>&1
  t="$(now)"
  for i in $(seq 0 $((n - 1))); do
    bin/linkbench load --shard "$i/$n" "${cfg[@]}" -D pg_schema=lbfleet_n -D "maxid1=$maxid1" -D "loaders=$per" >"$tmp/shard$i-$1.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { cat "$tmp/shard$i-$1.log" >&2; exit 1; }
  done
  s="$(since "$t")"
  # The slowest LOAD_*_BULK call of any shard (the per-op table's max ms).
  worst="$(grep -h '^LOAD_' "$tmp"/shard*-"$1".log | awk '{ if ($(NF - 1) + 0 > m) m = $(NF - 1) + 0 } END { print m + 0 }')"
  builder="$(grep -l 'stage build index id1_type: started' "$tmp"/shard*-"$1".log | xargs -n1 basename | sed 's/shard\([0-9]*\)-.*/shard \1/' | tr '\n' ' ')"
  "${psql[@]}" -c "DROP SCHEMA lbfleet_n CASCADE"
  echo "$s $worst $builder"
}

ratios=()
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then a="$(one "$r")"; read -r b worst builder <<<"$(fleet "$r")"
  else read -r b worst builder <<<"$(fleet "$r")"; a="$(one "$r")"; fi
  ratio="$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')"
  ratios+=("$ratio")
  echo "round $r, maxid1=$maxid1: one process with $loaders loaders $a s; $n shards with $per each $b s (${ratio}x); slowest bulk call ${worst} ms; index built by: $builder"
done
echo "median of $rounds rounds: $n shards took $(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')x one process's time"

# Shard 0 of 1000 of a 10^9-id graph: from the start of the process to
# its first link row in the database.
"${psql[@]}" -c "DROP SCHEMA IF EXISTS lbfleet_start CASCADE"
bin/linkbench init --drop "${cfg[@]}" -D pg_schema=lbfleet_start >/dev/null 2>&1
t="$(now)"
bin/linkbench load --shard 0/1000 "${cfg[@]}" -D pg_schema=lbfleet_start -D maxid1=1000000001 -D loaders=1 >"$tmp/start.log" 2>&1 &
pid=$!
first=""
for _ in $(seq 1 600); do
  if [ "$("${psql[@]}" -c "SELECT EXISTS (SELECT 1 FROM lbfleet_start.linktable)" | tail -1)" = t ]; then first="$(since "$t")"; break; fi
  sleep 0.05
done
kill -INT "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
echo "shard 0/1000 of maxid1=1000000001: first link row after ${first:-more than 30} s"
"${psql[@]}" -c "DROP SCHEMA lbfleet_start CASCADE"
