#!/usr/bin/env bash
# Before against after for `linkbench sweep`: two linkbench binaries sweep
# one PostgreSQL graph at the same arrival rates, alternately (A then B,
# then B then A, ...), and every point is printed with the io_mode its
# store chose, the rate achieved, the driver's CPU per request and the mean
# latency (from each request's intended start) of four ops.
#
#   bash bench/sweep-ab.sh OLD_BINARY NEW_BINARY
#
# Settings (environment): RATES (4000,8000), REQUESTERS (16), POINT_TIME
# (20 s per point, after 5 s of warm-up), ROUNDS (2), MAXID1 (100001), OUT
# (a new temporary directory). The graph is loaded once, by NEW_BINARY,
# into the schema lbsweepab of the server of scripts/postgres.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
die() { echo "sweep-ab: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: bash bench/sweep-ab.sh OLD_BINARY NEW_BINARY"
A="$(realpath "$1")" B="$(realpath "$2")"
for bin in "$A" "$B"; do [ -x "$bin" ] || die "$bin is not an executable linkbench binary"; done
RATES="${RATES:-4000,8000}"
REQUESTERS="${REQUESTERS:-16}"
POINT_TIME="${POINT_TIME:-20}"
ROUNDS="${ROUNDS:-2}"
MAXID1="${MAXID1:-100001}"
OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"

bash "$root/scripts/postgres.sh" start >/dev/null
url="$(bash "$root/scripts/postgres.sh" url)"
common=(-c "$root/config/LinkConfigPgsql.properties" -D "url=$url" -D pg_schema=lbsweepab -D "maxid1=$MAXID1")
echo "sweep-ab: loading maxid1=$MAXID1 into schema lbsweepab (log: $OUT/load.out)"
"$B" load --truncate --no-results "${common[@]}" >"$OUT/load.out" 2>&1 || die "load failed; see $OUT/load.out"

# sweep runs one binary's sweep in its own directory.
sweep() {
  local who="$1" bin="$2" dir="$OUT/$1-$3"
  mkdir -p "$dir"
  echo "sweep-ab: $who (round $3)"
  (cd "$dir" && "$bin" sweep --rates "$RATES" --point-time "$POINT_TIME" -D "requesters=$REQUESTERS" \
    -D warmup_time=5 "${common[@]}" >out.txt 2>&1) || die "$who's sweep failed; see $dir/out.txt"
}
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then sweep old "$A" "$r"; sweep new "$B" "$r"
  else sweep new "$B" "$r"; sweep old "$A" "$r"
  fi
done

# Each point's lines in a sweep's output: the op table, then the phase's
# line and the driver's CPU; its io_mode is in the point's summary.json.
{
  printf '%-4s %5s %9s %9s %9s %10s | %s\n' binary round offered achieved io_mode "driver us" "mean ms: GET_NODE GET_LINKS_LIST UPDATE_NODE ADD_LINK"
  for r in $(seq 1 "$ROUNDS"); do
    for who in old new; do
      dir="$OUT/$who-$r"
      mapfile -t modes < <(grep -ho '"io_mode": *"[a-z]*"' "$dir"/linkbench-results/*-request/summary.json | sed 's/.*"\([a-z]*\)"$/\1/')
      awk -v who="$who" -v r="$r" -v modes="${modes[*]}" '
        BEGIN { n = split(modes, m, " ") }
        /sweep point [0-9]+ of [0-9]+: / { p++; offered = $(NF - 2) }
        $1 == "GET_NODE" || $1 == "GET_LINKS_LIST" || $1 == "UPDATE_NODE" || $1 == "ADD_LINK" { mean[$1] = $NF }
        /REQUEST PHASE COMPLETED/ { achieved = $NF }
        /per request: driver CPU/ {
          for (i = NF; i >= 1; i--) if ($i == "driver" && $(i + 1) == "CPU") cpu = $(i + 2)
          printf "%-6s %5d %9s %9s %9s %10s | %s %s %s %s\n", who, r, offered, achieved, m[p], cpu,
            mean["GET_NODE"], mean["GET_LINKS_LIST"], mean["UPDATE_NODE"], mean["ADD_LINK"]
        }' "$dir/out.txt"
    done
  done
} | tee "$OUT/sweep-ab.txt"
