#!/usr/bin/env bash
# What one query costs a client on this machine, whatever the client does
# with it: the CPU per query of the servers' own C benchmark clients
# (pgbench, mariadb-slap) against the throwaway servers, next to linkbench
# doing the same single-row primary-key read (GET_NODE only), and the
# 2017 mix. Unthrottled and at a fixed rate (the rate the 2017 mix reaches,
# so the client sleeps and wakes between answers as it does in the mix).
#
#   bash bench/client-floor.sh [rate-per-second] [seconds]
#
# Needs a graph loaded by linkbench at maxid1=100001 in both servers
# (docs/performance.md has the load commands) and the servers of
# scripts/postgres.sh and scripts/mariadb.sh running.
set -euo pipefail
cd "$(dirname "$0")/.."
rate="${1:-15000}"
secs="${2:-10}"
CGO_ENABLED=0 go build -o bin/linkbench ./cmd/linkbench
pg="$(bash scripts/postgres.sh url)"
my="$(bash scripts/mariadb.sh url)"
pgbin=/usr/lib/postgresql/15/bin
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# cpu_of CMD...: runs CMD, prints its user+system CPU in seconds.
cpu_of() {
  /usr/bin/time -f '%U %S' -o "$tmp/time" "$@" >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
  awk '{print $1 + $2}' "$tmp/time"
}
report() { # name queries cpu-seconds
  awk -v n="$1" -v q="$2" -v c="$3" -v s="$secs" 'BEGIN { printf "%-44s %9.0f queries/s %7.2f us CPU per query\n", n, q / s, c * 1e6 / q }'
}

cat >"$tmp/getnode.sql" <<'EOF'
\set id random(1, 100000)
SELECT id, type, version, time, data FROM linkdb0.nodetable WHERE id = :id;
EOF
for r in 0 "$rate"; do
  throttle=""; label="unthrottled"
  if [ "$r" != 0 ]; then throttle="-R $r"; label="at $r/s"; fi
  c=$(PGPASSWORD=linkbench cpu_of "$pgbin/pgbench" -n -h 127.0.0.1 -p "$(sed -E 's|.*:([0-9]+)/.*|\1|' <<<"$pg")" \
    -U linkbench -M prepared -c 4 -j 4 -T "$secs" $throttle -f "$tmp/getnode.sql" linkdb0)
  q=$(awk '/number of transactions actually processed/ {print $NF}' "$tmp/out")
  report "pgbench, 4 connections, $label" "$q" "$c"
done

getnode=(-D addlink=0 -D deletelink=0 -D updatelink=0 -D countlink=0 -D getlink=0 -D getlinklist=0
  -D addnode=0 -D updatenode=0 -D deletenode=0 -D getnode=100)
lb() { # label store-config url extra...
  local label="$1" conf="$2" url="$3"; shift 3
  ./bin/linkbench run -c "$conf" -D url="$url" -D requesters=4 -D maxtime="$secs" -D requests=0 \
    -D warmup_time=0 --no-results "$@" >"$tmp/lb" 2>&1 || { cat "$tmp/lb"; exit 1; }
  awk -v n="$label" '/REQUEST PHASE COMPLETED/ {rps=$(NF)} /per request: driver CPU/ {for (i=1;i<=NF;i++) if ($i=="CPU") {cpu=$(i+1); break}}
    END { printf "%-44s %9.0f queries/s %7.2f us CPU per query\n", n, rps, cpu }' "$tmp/lb"
}
lb "linkbench PostgreSQL GET_NODE, unthrottled" config/LinkConfigPgsql.properties "$pg" "${getnode[@]}"
lb "linkbench PostgreSQL GET_NODE, at $rate/s" config/LinkConfigPgsql.properties "$pg" "${getnode[@]}" -D requestrate=$((rate / 4))
lb "linkbench PostgreSQL 2017 mix, unthrottled" config/LinkConfigPgsql.properties "$pg"

# mariadb-slap has no time limit or rate: a fixed number of queries.
c=$(cpu_of mariadb-slap --no-defaults -h 127.0.0.1 -P "$(sed -E 's|.*:([0-9]+)/.*|\1|' <<<"$my")" -u linkbench -plinkbench \
  --create-schema=linkdb0 --concurrency=4 --iterations=1 --number-of-queries=400000 \
  --query="SELECT id, type, version, time, data FROM nodetable WHERE id = 4242")
awk -v c="$c" 'BEGIN { printf "%-44s %9s queries/s %7.2f us CPU per query\n", "mariadb-slap, 4 connections, unthrottled", "-", c * 1e6 / 400000 }'
lb "linkbench MariaDB GET_NODE, unthrottled" config/LinkConfigMysql.properties "$my" "${getnode[@]}"
lb "linkbench MariaDB GET_NODE, at $rate/s" config/LinkConfigMysql.properties "$my" "${getnode[@]}" -D requestrate=$((rate / 4))
lb "linkbench MariaDB 2017 mix, unthrottled" config/LinkConfigMysql.properties "$my"
