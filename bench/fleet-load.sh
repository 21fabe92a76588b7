#!/usr/bin/env bash
# A --shard fleet against one process: the same graph loaded into the
# PostgreSQL of scripts/postgres.sh by one process with L loaders, then
# by N processes started together with L/N loaders each (the same
# connections in all), and the time shard 0 of 1000 of a 10^9-id graph
# takes to write its first row.
#
#   bash bench/fleet-load.sh [maxid1] [N] [L]     (defaults 10000001 4 4)
#
# Further -D settings for every load may be given in $LINKBENCH_EXTRA.
#
# Prints the wall time of each load, the slowest bulk call of any shard
# (a shard that waited on another's index build shows it here), which
# process built the index, and the first-row time. The schemas lbfleet_one,
# lbfleet_n and lbfleet_start are replaced.
set -euo pipefail
cd "$(dirname "$0")/.."
maxid1="${1:-10000001}"
n="${2:-4}"
loaders="${3:-4}"
CGO_ENABLED=0 go build -o bin/linkbench ./cmd/linkbench
url="$(bash scripts/postgres.sh url)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
read -r -a extra <<<"${LINKBENCH_EXTRA:-}"
cfg=(-c config/LinkConfigPgsql.properties -D "url=$url" -D load_random_seed=7 -D load_time_ms=1700000000000 --no-results "${extra[@]}")
psql=(psql "$url" -v ON_ERROR_STOP=1 -qAt -c "SET client_min_messages = warning")
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

"${psql[@]}" -c "DROP SCHEMA IF EXISTS lbfleet_one CASCADE" -c "DROP SCHEMA IF EXISTS lbfleet_n CASCADE" -c "DROP SCHEMA IF EXISTS lbfleet_start CASCADE"
t="$(now)"
bin/linkbench load "${cfg[@]}" -D pg_schema=lbfleet_one -D "maxid1=$maxid1" -D "loaders=$loaders" >"$tmp/one.log" 2>&1 || { cat "$tmp/one.log"; exit 1; }
one="$(since "$t")"
echo "one process, $loaders loaders, maxid1=$maxid1: $one s"
"${psql[@]}" -c "DROP SCHEMA lbfleet_one CASCADE"

bin/linkbench init --drop "${cfg[@]}" -D pg_schema=lbfleet_n >/dev/null 2>&1
per=$(( (loaders + n - 1) / n ))
t="$(now)"
pids=()
for i in $(seq 0 $((n - 1))); do
  bin/linkbench load --shard "$i/$n" "${cfg[@]}" -D pg_schema=lbfleet_n -D "maxid1=$maxid1" -D "loaders=$per" >"$tmp/shard$i.log" 2>&1 &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { cat "$tmp/shard$i.log"; exit 1; }
done
fleet="$(since "$t")"
# The slowest LOAD_LINKS_BULK call of any shard (the per-op table's max ms).
worst="$(grep -h '^LOAD_LINKS_BULK' "$tmp"/shard*.log | awk '{ if ($(NF - 1) + 0 > m) m = $(NF - 1) + 0 } END { print m + 0 }')"
builder="$(grep -l 'stage build index id1_type: started' "$tmp"/shard*.log | xargs -n1 basename | sed 's/shard\(.*\).log/shard \1/' | tr '\n' ' ')"
echo "$n shards, $per loaders each, maxid1=$maxid1: $fleet s ($(awk -v a="$fleet" -v b="$one" 'BEGIN { printf "%.2f", a / b }')x one process); slowest bulk call ${worst} ms; index built by: $builder"
"${psql[@]}" -c "DROP SCHEMA lbfleet_n CASCADE"

# Shard 0 of 1000 of a 10^9-id graph: from the start of the process to
# its first link row in the database.
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
