#!/usr/bin/env bash
# linkbench's load time against the database's own floor: the graph that
# linkbench loaded, exported in the server's bulk format, loaded again in
# one session into fresh tables made with the same DDL (linkbench init),
# the list index built after the rows as linkbench does, and ANALYZE.
#
#   bash bench/load-floor.sh [maxid1] [postgres|mariadb|both]
#
# PostgreSQL: binary COPY (psql \copy ... WITH (FORMAT binary)) out and in.
# MariaDB: SELECT ... INTO OUTFILE and LOAD DATA INFILE (the format
# linkbench's own LOAD DATA LOCAL INFILE sends). Needs the servers of
# scripts/postgres.sh and scripts/mariadb.sh running (their ports and
# directories as exported for them); the schemas / databases lbfloor_src
# and lbfloor_dst are replaced. Prints, per server:
#   postgres maxid1=... linkbench load 203.1 s | floor 186.0 s (rows 150.2, index 31.5, analyze 4.3) | 1.09x the floor
set -euo pipefail
cd "$(dirname "$0")/.."
maxid1="${1:-10000001}"
which="${2:-both}"
CGO_ENABLED=0 go build -o bin/linkbench ./cmd/linkbench
tmp="$(mktemp -d)"
chmod 777 "$tmp" # the MariaDB server writes and reads its files here
trap 'rm -rf "$tmp"' EXIT
graph=(-D "maxid1=$maxid1" -D load_random_seed=7 -D load_time_ms=1700000000000 --no-results)
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
report() { # server load rows index analyze
  awk -v s="$1" -v m="$maxid1" -v l="$2" -v r="$3" -v i="$4" -v a="$5" 'BEGIN {
    f = r + i + a
    printf "%-8s maxid1=%d linkbench load %.1f s | floor %.1f s (rows %.1f, index %.1f, analyze %.1f) | %.2fx the floor\n", s, m, l, f, r, i, a, l / f }'
}

floor_postgres() {
  local url cfg t psql
  url="$(bash scripts/postgres.sh url)"
  cfg=(-c config/LinkConfigPgsql.properties -D "url=$url")
  psql=(psql "$url" -v ON_ERROR_STOP=1 -qAt -c "SET client_min_messages = warning")
  "${psql[@]}" -c "DROP SCHEMA IF EXISTS lbfloor_src CASCADE" -c "DROP SCHEMA IF EXISTS lbfloor_dst CASCADE"
  t="$(now)"
  bin/linkbench load "${cfg[@]}" -D pg_schema=lbfloor_src "${graph[@]}" >"$tmp/pg-load.log" 2>&1 || { cat "$tmp/pg-load.log"; exit 1; }
  local load; load="$(since "$t")"
  for tb in linktable counttable nodetable; do
    "${psql[@]}" -c "\\copy lbfloor_src.$tb TO '$tmp/pg-$tb.bin' WITH (FORMAT binary)"
  done
  bin/linkbench init --drop "${cfg[@]}" -D pg_schema=lbfloor_dst "${graph[@]}" >/dev/null 2>&1
  "${psql[@]}" -c "DROP INDEX lbfloor_dst.id1_type" -c CHECKPOINT
  t="$(now)"
  for tb in linktable counttable nodetable; do
    "${psql[@]}" -c "\\copy lbfloor_dst.$tb FROM '$tmp/pg-$tb.bin' WITH (FORMAT binary)"
  done
  local rows; rows="$(since "$t")"
  t="$(now)"
  "${psql[@]}" -c "CREATE INDEX id1_type ON lbfloor_dst.linktable (id1, link_type, visibility, time, id2, version, data)"
  local index; index="$(since "$t")"
  t="$(now)"
  "${psql[@]}" -c "ANALYZE lbfloor_dst.linktable" -c "ANALYZE lbfloor_dst.counttable" -c "ANALYZE lbfloor_dst.nodetable"
  local analyze; analyze="$(since "$t")"
  report postgres "$load" "$rows" "$index" "$analyze"
  "${psql[@]}" -c "DROP SCHEMA lbfloor_src CASCADE" -c "DROP SCHEMA lbfloor_dst CASCADE" 2>/dev/null
  rm -f "$tmp"/pg-*
}

floor_mariadb() {
  local url base port my t dir
  url="$(bash scripts/mariadb.sh url)"
  base="${url%/*}"
  port="${base##*:}"
  my=(mariadb --no-defaults -h127.0.0.1 -P"$port" -ulinkbench -plinkbench -N -B)
  "${my[@]}" -e "DROP DATABASE IF EXISTS lbfloor_src; DROP DATABASE IF EXISTS lbfloor_dst; CREATE DATABASE lbfloor_src; CREATE DATABASE lbfloor_dst"
  # The server writes the export where secure_file_priv allows.
  dir="$("${my[@]}" -e "SELECT coalesce(@@secure_file_priv, '')")"
  dir="${dir%/}"
  [ -n "$dir" ] || dir="$tmp"
  t="$(now)"
  bin/linkbench load -c config/LinkConfigMysql.properties -D "url=$base/lbfloor_src" "${graph[@]}" >"$tmp/my-load.log" 2>&1 || { cat "$tmp/my-load.log"; exit 1; }
  local load; load="$(since "$t")"
  for tb in linktable counttable nodetable; do
    rm -f "$dir/lbfloor-$tb.txt"
    "${my[@]}" -e "SELECT * INTO OUTFILE '$dir/lbfloor-$tb.txt' CHARACTER SET binary FROM lbfloor_src.$tb"
  done
  bin/linkbench init --drop -c config/LinkConfigMysql.properties -D "url=$base/lbfloor_dst" "${graph[@]}" >/dev/null 2>&1
  "${my[@]}" lbfloor_dst -e "ALTER TABLE linktable DROP INDEX id1_type"
  t="$(now)"
  for tb in linktable counttable nodetable; do
    "${my[@]}" lbfloor_dst -e "LOAD DATA INFILE '$dir/lbfloor-$tb.txt' INTO TABLE $tb CHARACTER SET binary"
  done
  local rows; rows="$(since "$t")"
  t="$(now)"
  "${my[@]}" lbfloor_dst -e "ALTER TABLE linktable ADD INDEX id1_type (id1, link_type, visibility, time, id2, version, data)"
  local index; index="$(since "$t")"
  t="$(now)"
  "${my[@]}" lbfloor_dst -e "ANALYZE TABLE linktable, counttable, nodetable" >/dev/null
  local analyze; analyze="$(since "$t")"
  report mariadb "$load" "$rows" "$index" "$analyze"
  "${my[@]}" -e "DROP DATABASE lbfloor_src; DROP DATABASE lbfloor_dst"
  rm -f "$dir"/lbfloor-*.txt
}

case "$which" in
  postgres) floor_postgres ;;
  mariadb) floor_mariadb ;;
  both) floor_postgres; floor_mariadb ;;
  *) echo "usage: $0 [maxid1] [postgres|mariadb|both]" >&2; exit 2 ;;
esac
