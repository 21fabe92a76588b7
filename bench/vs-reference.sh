#!/usr/bin/env bash
# Fidelity check against the reference LinkBench (mdcallag/linkbench): loads
# a graph with each driver into the same PostgreSQL and MariaDB databases,
# runs both drivers' request phases on each graph (the same number of
# requests, from a copy of the freshly loaded graph every time), and prints
# side by side what the servers saw: op mix, rows per GET_LINKS_LIST,
# multiget size, found ratio, and the overlap of the 20 id1s most read and
# most written, then `linkbench check` after every run. docs/fidelity.md
# explains the measures and records the figures.
#
#   bash bench/vs-reference.sh [REFERENCE_SOURCE_DIR]
#
# The reference: `git clone https://github.com/mdcallag/linkbench` and give
# its directory as the argument or in LINKBENCH_REF_SRC. Its
# target/FacebookLinkBench.jar is used when present (LINKBENCH_REF_JAR names
# another), else built with `mvn -DskipTests package` (needs a JDK and
# Maven). Its config/ directory is its LINKBENCH_HOME.
#
# Settings (environment): STORES ("postgres mariadb"), MAXID1 (100001),
# REQUESTERS (4), REQUESTS per requester (50000), REF_RUNS (3) and LB_RUNS
# (3) on the reference's graph, CROSS_RUNS (1) of each driver on
# linkbench's graph, CORRECTED_RUNS (0) of linkbench with
# workload_semantics = corrected on the reference's graph, BASELINE_BIN
# (another linkbench binary, e.g. an older version, run BASELINE_RUNS
# times on the reference's graph), REUSE_LOADS=1 (keep the graphs that a
# previous run saved in the servers instead of loading again), OUT (a new
# temporary directory; every log, output and metrics file stays there).
#
# The functions can be sourced (`source bench/vs-reference.sh`) to drive
# other comparisons; run directly, the script runs main.
#
# The servers are those of scripts/postgres.sh and scripts/mariadb.sh
# (started if needed; their LINKBENCH_* port and directory variables
# apply). For the statement logs PostgreSQL is restarted once with a CSV
# log and auto_explain preloaded (both undone at the end); the statements
# are logged only for the user linkbench, only during the measured runs.
#
# With --perf first (bash bench/vs-reference.sh --perf [REFERENCE_SOURCE_DIR])
# it measures cost instead of shape: for every store and requester count,
# both drivers' request phases alternate (reference then linkbench in odd
# rounds, linkbench then reference in even ones) on a fresh copy of one
# graph, and a table gives each driver's
# requests/s, the statements the server ran per request (PostgreSQL's
# pg_stat_statements, which the script turns on; MariaDB's Com_ counters),
# its CPU per request over the measured part of the phase
# (after the warm-up, so the JVM's start and JIT are left out), its peak
# RSS, every op's mean and p99 latency, and each driver's history reads
# per 100 list requests (pages of 10,000 rows, whose share grows with the
# requests made: a longer PERF_WARMUP reaches the hour-long runs' state).
# Settings: STORES ("postgres
# mariadb mariadb-rocksdb"), PERF_REQUESTERS ("1 4 16 64"), PERF_ROUNDS
# (2), PERF_TIME (30 s measured), PERF_WARMUP (10 s), PERF_RESTORE (1: copy
# the graph back before every run, as files on InnoDB, rows on MyRocks; 0
# runs on what the previous run left; once copies it back before the first
# run only), PERF_COMPACT (1: on
# MyRocks, flush the memtables and compact the graph before every run, so
# that the rows the previous runs deleted, tombstones a range scan steps
# over until a compaction drops them, do not slow the next one; other
# stores ignore it),
# PERF_MIX (extra settings for both drivers, e.g. "addlink=0 getnode=100 ..."
# to price one op alone; with requestrate=N both drivers run at the same
# rate and the latencies compared are service times, from the actual
# send), PERF_LB_MIX (settings for linkbench alone, e.g. requestrate=N
# to run it at the reference's measured throughput while the reference
# runs flat out; its latencies are then service times too), PERF_LB_PACE
# (a ratio, e.g. 1.02: linkbench paced at that multiple of the requests/s
# of the reference's run just before it, so that it follows the
# reference's rate of the day, which moves by 10-18 % from one series to
# the next here),
# PERF_AGAINST=baseline (before against after: BASELINE_BIN, an
# older linkbench, runs in the reference's column with linkbench's
# settings; the reference is not needed), PERF_SUBJECT=reference (the
# reference against itself: it runs in linkbench's column too, with
# PERF_LB_MIX and PERF_LB_PACE, which shows how often two runs of one
# driver meet the bounds linkbench is held to). Each run also records the
# server's CPU per request and the machine's idle share over the same
# window, and the server's own counters per request (MariaDB's global
# status and InnoDB metrics, PostgreSQL's pg_stat_database, pg_stat_wal
# and pg_stat_bgwriter): `go run ./bench/vsref counterdiff
# OUT/perf-STORE/*/perf.json` puts the two drivers' side by side, to see
# whether a server's extra CPU comes with extra work. PERF_PROFILE=1 also
# samples every CPU with perf record over that window and writes each
# run's profile/profile.tsv: CPU µs per request of
# the driver, the server and anything else, function by function
# (`go run ./bench/vsref profdiff A B` sets two side by side).
# PERF_SCHED=1 records the scheduler's events on every CPU (perf sched
# record) over the first 3 s of that window and adds to the tables what
# woke the server's and the driver's threads, per request, and how long
# each then waited for a core (its sched/sched.data stays).
# No statement log is on. docs/performance.md records the figures.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PERF=0
if [ "${1:-}" = --perf ]; then
  PERF=1
  shift
  STORES="${STORES:-postgres mariadb mariadb-rocksdb}"
fi
REF_SRC="${1:-${LINKBENCH_REF_SRC:-}}"
STORES="${STORES:-postgres mariadb}"
MAXID1="${MAXID1:-100001}"
REQUESTERS="${REQUESTERS:-4}"
REQUESTS="${REQUESTS:-50000}"
REF_RUNS="${REF_RUNS:-3}"
LB_RUNS="${LB_RUNS:-3}"
CROSS_RUNS="${CROSS_RUNS:-1}"
CORRECTED_RUNS="${CORRECTED_RUNS:-0}"
BASELINE_BIN="${BASELINE_BIN:-}"
BASELINE_RUNS="${BASELINE_RUNS:-1}"
REUSE_LOADS="${REUSE_LOADS:-0}"
OUT="${OUT:-$(mktemp -d /tmp/vs-reference.XXXXXX)}"
mkdir -p "$OUT"
LB="$OUT/linkbench"
PGBIN="${LINKBENCH_PG_BIN:-/usr/lib/postgresql/15/bin}"

say() { echo "vs-reference: $*" >&2; }
die() { say "$*"; exit 1; }

# reference_jar sets JAR and REF_HOME, building the reference if needed.
reference_jar() {
  [ -n "$REF_SRC" ] || die "give the reference's source directory (git clone https://github.com/mdcallag/linkbench) as the argument or in LINKBENCH_REF_SRC"
  REF_HOME="$(cd "$REF_SRC" && pwd)"
  [ -f "$REF_HOME/config/FBWorkload.properties" ] || die "$REF_HOME has no config/FBWorkload.properties: is it a LinkBench checkout?"
  JAR="${LINKBENCH_REF_JAR:-$REF_HOME/target/FacebookLinkBench.jar}"
  if [ ! -f "$JAR" ]; then
    command -v mvn >/dev/null || die "$JAR is missing and mvn is not installed to build it"
    say "building the reference in $REF_HOME (mvn -DskipTests package)"
    (cd "$REF_HOME" && mvn -q -DskipTests package) >"$OUT/mvn.log" 2>&1 || die "the build failed; see $OUT/mvn.log"
  fi
  command -v java >/dev/null || die "java is not installed"
}

build_linkbench() {
  CGO_ENABLED=0 go build -o "$LB" ./cmd/linkbench
  go build -o "$OUT/vsref" ./bench/vsref
}

# store_start STORE: starts the throwaway server and sets PORT.
store_start() {
  case "$1" in
    postgres)
      bash scripts/postgres.sh start
      PORT="$(bash scripts/postgres.sh url | sed -E 's|.*:([0-9]+)/.*|\1|')"
      PGDIR="${LINKBENCH_PG_DIR:-/tmp/linkbench-pg}"
      pg_admin -c "SELECT 1 FROM pg_database WHERE datname = 'linkbench'" | grep -q 1 ||
        pg_admin -c "CREATE DATABASE linkbench OWNER linkbench" ;;
    mariadb | mariadb-rocksdb)
      bash scripts/mariadb.sh start
      PORT="$(bash scripts/mariadb.sh url | sed -E 's|.*:([0-9]+)/.*|\1|')"
      MYDIR="${LINKBENCH_MARIADB_DIR:-/tmp/linkbench-mariadb}" ;;
    *) die "unknown store $1 (postgres, mariadb or mariadb-rocksdb)" ;;
  esac
}

pg_admin() { PGOPTIONS='-c client_min_messages=warning' "$PGBIN/psql" -h "$PGDIR" -p "$PORT" -U postgres -d postgres -q -t -A -v ON_ERROR_STOP=1 "$@"; }
my_admin() { mariadb --no-defaults --socket="$MYDIR/mysqld.sock" -uroot -N -B "$@"; }

# Both drivers connect the same way: database linkbench (PostgreSQL) or
# linkdb0 (MariaDB), schema linkdb0, user linkbench.
conn() { echo -D host=127.0.0.1 -D port="$PORT" -D user=linkbench -D password=linkbench -D maxid1="$MAXID1"; }
lb_config() { case "$1" in postgres) echo config/LinkConfigPgsql.properties ;; mariadb*) echo config/LinkConfigMysql.properties ;; esac; }
ref_config() { case "$1" in postgres) echo "$REF_HOME/config/LinkConfigPgsql.properties" ;; mariadb*) echo "$REF_HOME/config/LinkConfigMysql.properties" ;; esac; }
# engine STORE: the MariaDB engine linkbench creates the tables with.
engine() { case "$1" in mariadb-rocksdb) echo -D mysql_engine=rocksdb ;; esac; }

reference() { # STORE ARGS...: runs the reference driver
  local store="$1"; shift
  LINKBENCH_HOME="$REF_HOME" java -cp "$JAR" com.facebook.LinkBench.LinkBenchDriver -c "$(ref_config "$store")" $(conn) "$@"
}
linkbench() { # STORE COMMAND ARGS...: runs linkbench (the binary in LBBIN, default ours)
  local store="$1" cmd="$2"; shift 2
  "${LBBIN:-$LB}" "$cmd" -c "$(lb_config "$store")" $(conn) $(engine "$store") --no-results "$@"
}

# load_with STORE DRIVER: an empty schema, then DRIVER's load, saved as a
# snapshot named after DRIVER (kept when REUSE_LOADS=1 finds it).
load_with() {
  local store="$1" driver="$2" log="$OUT/$1-load-$2.out"
  if [ "$REUSE_LOADS" = 1 ] && snapshot_exists "$store" "$driver"; then
    say "$store: reusing the graph loaded by $driver earlier"
    return
  fi
  say "$store: loading maxid1=$MAXID1 with $driver"
  if [ "$driver" = reference ]; then
    linkbench "$store" init --drop >"$log" 2>&1
    reference "$store" -l >>"$log" 2>&1 || die "reference load failed; see $log"
  else
    linkbench "$store" load --truncate >"$log" 2>&1 || die "linkbench load failed; see $log"
  fi
  grep -h 'LOAD PHASE COMPLETED' "$log" | sed 's/^.*LOAD PHASE/LOAD PHASE/' >&2
  snapshot_save "$store" "$driver"
}

# snapshot_save STORE NAME / snapshot_restore STORE NAME: a copy of the
# loaded graph, so every run starts from the same state.
snapshot_save() {
  case "$1" in
    postgres)
      pg_admin -c "DROP DATABASE IF EXISTS lbsnap_$2" -c "CREATE DATABASE lbsnap_$2 TEMPLATE linkbench STRATEGY FILE_COPY" ;;
    mariadb*)
      my_admin -e "DROP DATABASE IF EXISTS lbsnap_$2; CREATE DATABASE lbsnap_$2"
      rm -rf "$(my_export_dir "$2")"
      my_copy linkdb0 "lbsnap_$2" ;;
  esac
}
snapshot_exists() {
  case "$1" in
    postgres) pg_admin -c "SELECT 1 FROM pg_database WHERE datname = 'lbsnap_$2'" | grep -q 1 ;;
    mariadb*) [ -n "$(my_admin -e "SHOW DATABASES LIKE 'lbsnap_$2'")" ] ;;
  esac
}
snapshot_restore() {
  case "$1" in
    postgres)
      pg_admin -c "DROP DATABASE IF EXISTS linkbench WITH (FORCE)" -c "CREATE DATABASE linkbench OWNER linkbench TEMPLATE lbsnap_$2 STRATEGY FILE_COPY" ;;
    mariadb*)
      if [ "$(my_admin -e "SELECT engine FROM information_schema.tables WHERE table_schema = 'lbsnap_$2' AND table_name = 'linktable'")" = ROCKSDB ]; then
        my_copy "lbsnap_$2" linkdb0
        # The copy's memtables go to disk now, not during the next run.
        my_admin -e "SET GLOBAL rocksdb_force_flush_memtable_now = 1"
      else
        my_import "$2"
      fi ;;
  esac
}
# my_import NAME: InnoDB's copy of snapshot NAME goes back as files
# (transportable tablespaces): each table's exported .ibd replaces
# linkdb0's. Copying rows instead (INSERT ... SELECT, about 45 s) wrote
# about 1 GB of redo through a 96 MB log, and the page cleaner then
# flushed at rates set by that burst during the next run: how many pages a
# run wrote depended on when it started, not on its driver
# (docs/performance.md, "The graph copied back as files"). An import
# writes almost no redo and takes seconds.
my_import() {
  local dir t
  dir="$(my_export_dir "$1")"
  [ -f "$dir/linktable.ibd" ] || my_export "$1" "$dir"
  local data owner
  data="$(my_admin -e "SELECT @@datadir")"
  owner="$(stat -c %U:%G "$data")"
  for t in $(my_tables "lbsnap_$1"); do
    my_admin -e "DROP TABLE IF EXISTS linkdb0.$t; CREATE TABLE linkdb0.$t LIKE lbsnap_$1.$t; ALTER TABLE linkdb0.$t DISCARD TABLESPACE"
    install -o "${owner%:*}" -g "${owner#*:}" -m 660 "$dir/$t.ibd" "$dir/$t.cfg" "$data/linkdb0/"
    my_admin -e "ALTER TABLE linkdb0.$t IMPORT TABLESPACE" || die "importing linkdb0.$t from $dir failed"
    rm -f "$data/linkdb0/$t.cfg"
  done
}
# my_export NAME DIR: snapshot NAME's tables exported as files into DIR
# (FLUSH TABLES ... FOR EXPORT holds them still while they are copied).
my_export() {
  local t data
  data="$(my_admin -e "SELECT @@datadir")"
  rm -rf "$2" && mkdir -p "$2"
  local list="" files=""
  for t in $(my_tables "lbsnap_$1"); do
    list="$list${list:+, }lbsnap_$1.$t"
    files="$files $data/lbsnap_$1/$t.ibd $data/lbsnap_$1/$t.cfg"
  done
  printf 'FLUSH TABLES %s FOR EXPORT;\nsystem cp %s %s/\nUNLOCK TABLES;\n' "$list" "$files" "$2" | my_admin &&
    [ -f "$2/linktable.cfg" ] || die "exporting lbsnap_$1 into $2 failed"
}
my_export_dir() { echo "$MYDIR/vsref-snap/$1"; }
my_copy() { # FROM TO: the graph's tables, rows included
  local t
  for t in $(my_tables "$1"); do
    # RocksDB refuses one transaction of millions of row locks: it
    # commits as it goes (a variable only its plugin knows).
    local big=""
    [ "$(my_admin -e "SELECT engine FROM information_schema.tables WHERE table_schema = '$1' AND table_name = '$t'")" = ROCKSDB ] &&
      big="SET SESSION rocksdb_commit_in_the_middle = 1;"
    my_admin -e "$big DROP TABLE IF EXISTS $2.$t; CREATE TABLE $2.$t LIKE $1.$t; INSERT INTO $2.$t SELECT * FROM $1.$t"
  done
}
# my_tables DB: those of the graph's tables that DB has.
my_tables() {
  local t
  for t in linktable counttable nodetable linkbench_meta; do
    [ -n "$(my_admin -e "SHOW TABLES FROM $1 LIKE '$t'")" ] && echo "$t"
  done
  return 0
}

# Statement logs. log_setup/log_teardown change the server once; log_on
# returns the log's current size, log_off stops logging, log_cut copies
# what was logged since an offset.
log_file() { case "$1" in postgres) echo "$PGDIR/data/vsref/vsref.csv" ;; mariadb) echo "$MYDIR/vsref-slow.log" ;; esac; }
log_setup() {
  case "$1" in
    postgres)
      pg_admin -c "ALTER SYSTEM SET logging_collector = on" -c "ALTER SYSTEM SET log_destination = 'stderr,csvlog'" \
        -c "ALTER SYSTEM SET log_directory = 'vsref'" -c "ALTER SYSTEM SET log_filename = 'vsref.log'" \
        -c "ALTER SYSTEM SET log_rotation_size = 0" -c "ALTER SYSTEM SET session_preload_libraries = 'auto_explain'"
      bash scripts/postgres.sh restart ;;
    mariadb) : ;;
  esac
}
log_teardown() {
  case "$1" in
    postgres)
      pg_admin -c "ALTER ROLE linkbench RESET ALL"
      for k in logging_collector log_destination log_directory log_filename log_rotation_size session_preload_libraries; do
        pg_admin -c "ALTER SYSTEM RESET $k"
      done
      bash scripts/postgres.sh restart ;;
    mariadb) my_admin -e "SET GLOBAL slow_query_log = 0; SET GLOBAL long_query_time = 10" ;;
  esac
}
log_on() {
  local f; f="$(log_file "$1")"
  case "$1" in
    postgres)
      pg_admin -c "ALTER ROLE linkbench SET log_statement = 'all'" -c "ALTER ROLE linkbench SET auto_explain.log_min_duration = 0" \
        -c "ALTER ROLE linkbench SET auto_explain.log_analyze = on" -c "ALTER ROLE linkbench SET auto_explain.log_timing = off" \
        -c "ALTER ROLE linkbench SET auto_explain.log_format = 'json'" ;;
    mariadb)
      my_admin -e "SET GLOBAL log_output = 'FILE'; SET GLOBAL slow_query_log_file = '$f'; SET GLOBAL log_slow_verbosity = '';
        SET GLOBAL long_query_time = 0; SET GLOBAL slow_query_log = 1" ;;
  esac
  stat -c %s "$f" 2>/dev/null || echo 0
}
log_off() {
  case "$1" in
    postgres) pg_admin -c "ALTER ROLE linkbench RESET ALL" ;;
    mariadb) my_admin -e "SET GLOBAL slow_query_log = 0; SET GLOBAL long_query_time = 10" ;;
  esac
}
log_cut() { tail -c +"$(($2 + 1))" "$(log_file "$1")" >"$3"; }

# run_once STORE GRAPH DRIVER N: one measured request phase on a fresh
# copy of GRAPH, then linkbench check, then the metrics. DRIVER is
# reference, linkbench, corrected (linkbench with workload_semantics =
# corrected) or baseline (the binary BASELINE_BIN).
run_once() {
  local store="$1" graph="$2" driver="$3" n="$4"
  local dir="$OUT/$store-$graph-graph-$driver-$n" off
  mkdir -p "$dir"
  say "$store: $driver request phase $n on the graph loaded by $graph ($REQUESTERS x $REQUESTS requests)"
  snapshot_restore "$store" "$graph"
  off="$(log_on "$store")"
  local args=(-D requesters="$REQUESTERS" -D requests="$REQUESTS" -D maxtime=100000 -D warmup_time=0)
  local ok=0
  case "$driver" in
    reference) reference "$store" "${args[@]}" -r >"$dir/driver.out" 2>&1 || ok=$? ;;
    linkbench) linkbench "$store" run "${args[@]}" >"$dir/driver.out" 2>&1 || ok=$? ;;
    corrected) linkbench "$store" run "${args[@]}" -D workload_semantics=corrected >"$dir/driver.out" 2>&1 || ok=$? ;;
    baseline) LBBIN="$BASELINE_BIN" linkbench "$store" run "${args[@]}" >"$dir/driver.out" 2>&1 || ok=$? ;;
  esac
  [ "$ok" = 0 ] || { log_off "$store"; die "$driver run failed; see $dir/driver.out"; }
  log_off "$store"
  log_cut "$store" "$off" "$dir/statements.log"
  linkbench "$store" check >"$dir/check.out" 2>&1 || true
  local format=pg
  [ "$store" = mariadb ] && format=mysql
  "$OUT/vsref" measure -format "$format" -log "$dir/statements.log" -driver-out "$dir/driver.out" \
    -check-out "$dir/check.out" -label "$driver $n" -o "$dir/metrics.json"
  rm -f "$dir/statements.log" # large; the metrics keep what matters
  echo "$dir/metrics.json"
}

# table TITLE METRICS...: the runs side by side (nothing without runs).
table() {
  local title="$1"; shift
  [ "$#" -gt 0 ] || return 0
  "$OUT/vsref" table -title "$title (maxid1=$MAXID1, $REQUESTERS x $REQUESTS requests per run)" "$@" | tee -a "$OUT/tables.txt"
}

# compare STORE: both loads, the runs, the tables.
compare() {
  local store="$1" i
  store_start "$store"
  log_setup "$store"
  trap "log_teardown $store" EXIT
  load_with "$store" reference
  load_with "$store" linkbench
  local on_ref=() on_lb=()
  for i in $(seq 1 "$REF_RUNS"); do on_ref+=("$(run_once "$store" reference reference "$i")"); done
  for i in $(seq 1 "$LB_RUNS"); do on_ref+=("$(run_once "$store" reference linkbench "$i")"); done
  for i in $(seq 1 "$CORRECTED_RUNS"); do on_ref+=("$(run_once "$store" reference corrected "$i")"); done
  if [ -n "$BASELINE_BIN" ]; then
    for i in $(seq 1 "$BASELINE_RUNS"); do on_ref+=("$(run_once "$store" reference baseline "$i")"); done
  fi
  for i in $(seq 1 "$CROSS_RUNS"); do on_lb+=("$(run_once "$store" linkbench reference "$i")"); done
  for i in $(seq 1 "$CROSS_RUNS"); do on_lb+=("$(run_once "$store" linkbench linkbench "$i")"); done
  log_teardown "$store"
  trap - EXIT
  table "$store, graph loaded by the reference" "${on_ref[@]}"
  table "$store, graph loaded by linkbench" "${on_lb[@]}"
}

# perf_once STORE DRIVER REQUESTERS ROUND: one measured request phase of
# DRIVER (reference or linkbench) on the graph; prints its figures' file.
perf_once() {
  local store="$1" driver="$2" n="$3" round="$4"
  local dir="$OUT/perf-$store/$n-$driver-$round"
  # What runs in DRIVER's column: the reference or a baseline in the
  # reference's (PERF_AGAINST), linkbench or the reference in linkbench's
  # (PERF_SUBJECT).
  local runner="${PERF_AGAINST:-reference}"
  [ "$driver" = linkbench ] && runner="${PERF_SUBJECT:-linkbench}"
  mkdir -p "$dir"
  [ "${PERF_RESTORE:-1}" = 1 ] && snapshot_restore "$store" "$PERF_GRAPH"
  [ "${PERF_COMPACT:-0}" = 1 ] && [ "$store" = mariadb-rocksdb ] && rocks_compact
  say "$store: $driver, $n requesters, round $round (${PERF_TIME:-30} s after ${PERF_WARMUP:-10} s of warm-up)"
  local args=(-D requesters="$n" -D requests=1000000000 -D maxtime="${PERF_TIME:-30}" -D warmup_time="${PERF_WARMUP:-10}")
  local d
  for d in ${PERF_MIX:-}; do args+=(-D "$d"); done
  local mix="${PERF_MIX:-}"
  if [ "$driver" = linkbench ]; then
    for d in ${PERF_LB_MIX:-}; do args+=(-D "$d"); done
    mix="$mix ${PERF_LB_MIX:-}"
    if [ -n "${PERF_LB_PACE:-}" ]; then
      # The reference's run just before this one: this round's when it
      # went first, the previous round's when linkbench goes first.
      local prev="$OUT/perf-$store/$n-reference-$round/perf.json" rate
      [ -f "$prev" ] || prev="$OUT/perf-$store/$n-reference-$((round - 1))/perf.json"
      rate="$("$OUT/vsref" pace -ratio "$PERF_LB_PACE" -requesters "$n" "$prev")" ||
        die "PERF_LB_PACE: no rate from the reference's run before ($prev)"
      # The reference reads requestrate as a whole number.
      [ "$runner" = reference ] && rate="$(printf '%.0f' "$rate")"
      say "$store: $runner paced at $n × $rate/s, $PERF_LB_PACE times the reference's run before"
      args+=(-D requestrate="$rate")
      mix="$mix requestrate=$rate"
    fi
  fi
  local cmd
  case "$runner" in
    reference) cmd=(env LINKBENCH_HOME="$REF_HOME" java -cp "$JAR" com.facebook.LinkBench.LinkBenchDriver -c "$(ref_config "$store")" $(conn) "${args[@]}" -r) ;;
    baseline|linkbench)
      local bin="$LB"
      [ "$runner" = baseline ] && bin="$BASELINE_BIN"
      cmd=("$bin" run -c "$(lb_config "$store")" $(conn) $(engine "$store") "${args[@]}") ;;
  esac
  # Throttled (requestrate in PERF_MIX or PERF_LB_MIX), linkbench times an
  # op from its intended start and the reference from its actual one: the
  # table then takes linkbench's service times from its results bundle.
  local service=()
  if [ "$runner" != reference ]; then
    case " $mix " in
      *" requestrate="*) rm -rf "$dir/results"; cmd+=(--results-dir "$dir/results"); service=(-service-from "$dir/results") ;;
      *) cmd+=(--no-results) ;;
    esac
  fi
  local server=postgres
  [ "$store" = postgres ] || server=mariadbd
  [ "${PERF_PROFILE:-0}" = 1 ] && service+=(-profile "$dir/profile")
  [ "${PERF_SCHED:-0}" = 1 ] && service+=(-sched "$dir/sched")
  # The server's counters over the server's window (vsref counterdiff);
  # MariaDB's levels (pages held, memory, threads) are left out, their
  # change per request meaning nothing.
  local counters
  local gauges='PAGES_(DATA|DIRTY|FREE|MISC|OLD|TOTAL)|BYTES_(DATA|DIRTY)|CHECKPOINT_AGE|HISTORY_LIST_LENGTH|^MEMORY_USED|^THREADS_|^OPEN_|^MAX_USED_|^UPTIME|THREADPOOL_(IDLE_)?THREADS'
  case "$store" in
    postgres) counters="PGOPTIONS='-c client_min_messages=warning' '$PGBIN/psql' -h '$PGDIR' -p '$PORT' -U postgres -d postgres -q -t -A -F ' ' -v ON_ERROR_STOP=1 -c \"SELECT 'db.' || key, value FROM pg_stat_database d, json_each_text(row_to_json(d)) WHERE datname = 'linkbench' UNION ALL SELECT 'wal.' || key, value FROM pg_stat_wal w, json_each_text(row_to_json(w)) UNION ALL SELECT 'bgwriter.' || key, value FROM pg_stat_bgwriter b, json_each_text(row_to_json(b)) UNION ALL SELECT 'stmt.' || upper(split_part(btrim(query), ' ', 1)), sum(calls)::text FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'linkbench') GROUP BY 1\"" ;;
    *) counters="mariadb --no-defaults --socket='$MYDIR/mysqld.sock' -uroot -N -B -e \"SELECT CONCAT('status.', VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME NOT REGEXP '$gauges' UNION ALL SELECT CONCAT('innodb.', NAME), COUNT FROM information_schema.INNODB_METRICS WHERE ENABLED = 1 AND (TYPE <> 'value' OR NAME IN ('lock_deadlocks', 'lock_timeouts'))\"" ;;
  esac
  service+=(-counters "$counters")
  "$OUT/vsref" perf -label "$driver" -requesters "$n" -server "$server" -server-window "$(( ${PERF_TIME:-30} * 2 / 3 ))s" -log "$dir/driver.out" -o "$dir/perf.json" ${service[@]+"${service[@]}"} -- "${cmd[@]}" >&2 ||
    die "$driver run failed; see $dir/driver.out"
  echo "$dir/perf.json"
}

# rocks_compact: MyRocks's memtables flushed and its column family
# compacted (the tables' default one), timed.
rocks_compact() {
  local t0=$SECONDS
  my_admin -e "SET GLOBAL rocksdb_force_flush_memtable_now = 1; SET GLOBAL rocksdb_compact_cf = 'default'"
  say "mariadb-rocksdb: compacted in $((SECONDS - t0)) s"
}

# perf_graph STORE: the graph of the request-phase runs (loaded by
# linkbench: the same graph as the reference's, docs/fidelity.md), saved
# as the snapshot named PERF_GRAPH, or the one saved earlier when
# REUSE_LOADS=1 finds it.
PERF_GRAPH=perf
perf_graph() {
  local store="$1"
  if [ "$REUSE_LOADS" = 1 ] && snapshot_exists "$store" "$PERF_GRAPH"; then
    say "$store: reusing the graph loaded earlier"
  else
    say "$store: loading maxid1=$MAXID1 with linkbench"
    # init --drop first: a truncate keeps the tables' engine.
    { linkbench "$store" init --drop && linkbench "$store" load --truncate; } >"$OUT/$store-perf-load.out" 2>&1 ||
      die "load failed; see $OUT/$store-perf-load.out"
    snapshot_save "$store" "$PERF_GRAPH"
  fi
  # init keeps the tables and replaces the write procedure (or function)
  # with this linkbench's, which a graph loaded earlier may predate.
  linkbench "$store" init >"$OUT/$store-perf-init.out" 2>&1 || die "init failed; see $OUT/$store-perf-init.out"
}

# pg_statements_on: PostgreSQL counts the statements it runs
# (pg_stat_statements, every statement, BEGIN, COMMIT and ROLLBACK
# included; a statement that failed is not counted), so the table shows
# whether both drivers had it run the same per request. Loaded once (a
# restart), then kept; both drivers run with it.
pg_statements_on() {
  case "$(pg_admin -c "SHOW shared_preload_libraries")" in
    *pg_stat_statements*) ;;
    *)
      pg_admin -c "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"
      bash scripts/postgres.sh restart ;;
  esac
  # The server knows the library's settings only once it has loaded it.
  pg_admin -c "ALTER SYSTEM SET pg_stat_statements.track = 'all'" -c "SELECT pg_reload_conf()" >/dev/null
  pg_admin -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
}

# perf_compare STORE: one graph (perf_graph), then the runs, alternating
# drivers.
perf_compare() {
  local store="$1" n r runs=()
  store_start "$store"
  [ "$store" = postgres ] && pg_statements_on
  perf_graph "$store"
  # once: one copy back before the first run (a graph an interrupted
  # run left behind), then each run goes on from the previous one's.
  [ "${PERF_RESTORE:-1}" = once ] && snapshot_restore "$store" "$PERF_GRAPH"
  case "$store" in
    mariadb*)
      local want=InnoDB have
      [ "$store" = mariadb-rocksdb ] && want=ROCKSDB
      have="$(my_admin -e "SELECT engine FROM information_schema.tables WHERE table_schema = 'linkdb0' AND table_name = 'linktable'")"
      [ "$have" = "$want" ] || die "$store: linkdb0.linktable uses $have, not $want (run without REUSE_LOADS)" ;;
  esac
  for n in ${PERF_REQUESTERS:-1 4 16 64}; do
    for r in $(seq 1 "${PERF_ROUNDS:-2}"); do
      # Odd rounds start with the reference, even ones with linkbench: a
      # graph that changes under the runs (PERF_RESTORE=0 or once, the
      # hot lists grow) then favours neither driver.
      if [ $((r % 2)) = 1 ]; then
        runs+=("$(perf_once "$store" reference "$n" "$r")")
        runs+=("$(perf_once "$store" linkbench "$n" "$r")")
      else
        runs+=("$(perf_once "$store" linkbench "$n" "$r")")
        runs+=("$(perf_once "$store" reference "$n" "$r")")
      fi
    done
  done
  local against=""
  [ "${PERF_AGAINST:-reference}" = baseline ] && against=" (the \"ref\" column is the baseline $BASELINE_BIN)"
  [ "${PERF_SUBJECT:-linkbench}" = reference ] && against="$against (the \"lb\" column is the reference too)"
  "$OUT/vsref" perftable -title "$store: maxid1=$MAXID1, ${PERF_TIME:-30} s measured after ${PERF_WARMUP:-10} s of warm-up, medians of ${PERF_ROUNDS:-2} alternating rounds$against" "${runs[@]}" |
    tee -a "$OUT/perf-tables.txt"
  # The server's counters that differ most (all of them: vsref counterdiff).
  "$OUT/vsref" counterdiff -n 15 "${runs[@]}" | tee -a "$OUT/perf-tables.txt"
}

perf_main() {
  case " ${PERF_MIX:-} ${PERF_LB_MIX:-} " in
    *" requestrate="*) [ -z "${PERF_LB_PACE:-}" ] || die "PERF_LB_PACE sets linkbench's requestrate; leave requestrate out of PERF_MIX and PERF_LB_MIX" ;;
  esac
  case "${PERF_AGAINST:-reference}" in
    reference|baseline) ;;
    *) die "PERF_AGAINST is reference (the default) or baseline, not ${PERF_AGAINST}" ;;
  esac
  case "${PERF_SUBJECT:-linkbench}" in
    linkbench) ;;
    reference) [ "${PERF_AGAINST:-reference}" = reference ] || die "PERF_SUBJECT=reference runs the reference against itself; leave PERF_AGAINST out" ;;
    *) die "PERF_SUBJECT is linkbench (the default) or reference, not ${PERF_SUBJECT}" ;;
  esac
  if [ "${PERF_AGAINST:-reference}" = baseline ]; then
    [ -x "$BASELINE_BIN" ] || die "PERF_AGAINST=baseline needs BASELINE_BIN, an executable linkbench binary"
  else
    reference_jar
  fi
  build_linkbench
  say "results in $OUT"
  local store
  for store in $STORES; do
    perf_compare "$store"
  done
  say "tables in $OUT/perf-tables.txt"
}

main() {
  reference_jar
  build_linkbench
  say "results in $OUT"
  local store
  for store in $STORES; do
    compare "$store"
  done
  say "tables in $OUT/tables.txt"
}

# The exit keeps bash from reading on in this file after the run: an edit
# made while a comparison runs would otherwise run from a stale offset.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  if [ "$PERF" = 1 ]; then perf_main; else main; fi
  exit
fi
