# linkbench build and test entry points. `make test` is what CI runs: it
# starts throwaway PostgreSQL, MariaDB and FerretDB servers on 127.0.0.1 (installing
# them with apt when missing), runs every test against them, and stops them.

GO       ?= go
BIN      := bin/linkbench
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
export CGO_ENABLED ?= 0

.PHONY: build run test test-unit test-outage test-tidb bench perf-vs-reference vet clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/linkbench

# The zero-config quick start: load the laptop-scale graph into SQLite
# (./linkbench-data), then run the 2017 request mix for 60 seconds.
run: build
	./$(BIN) load --truncate
	./$(BIN) run

vet:
	$(GO) vet ./...

test-unit:
	$(GO) test -count=1 ./...

# test starts the servers the store tests need and exports their URLs.
test: build vet
	bash scripts/test.sh

# The server-outage tests alone (needs LINKBENCH_TEST_PG_URL / _MYSQL_URL).
test-outage:
	LINKBENCH_OUTAGE_TESTS=1 $(GO) test -p 1 -count=1 -run 'TestServerOutageMidRun|TestLoadResumesAfterServerKill|TestReconnectAfterRestart|TestHungServer|TestLostServerExitsNonZero' -v ./cmd/linkbench ./internal/store/postgres ./internal/store/mysql

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...
	bash bench/driver-overhead.sh

# The side-by-side table of docs/performance.md: both drivers' request
# phases alternating on PostgreSQL, InnoDB and MyRocks at 1, 4, 16 and 64
# requesters, 3 rounds each (about 70 minutes on 2 cores). REF is the
# reference's source (git clone https://github.com/mdcallag/linkbench),
# built with mvn when its jar is missing; OUT keeps every run.
REF ?= $(LINKBENCH_REF_SRC)
OUT ?= /tmp/linkbench-perf
perf-vs-reference:
	OUT=$(OUT)/postgres STORES=postgres PERF_ROUNDS=3 PERF_RESTORE=1 bash bench/vs-reference.sh --perf $(REF)
	OUT=$(OUT)/innodb STORES=mariadb PERF_ROUNDS=3 PERF_RESTORE=1 bash bench/vs-reference.sh --perf $(REF)
	OUT=$(OUT)/myrocks STORES=mariadb-rocksdb PERF_ROUNDS=3 PERF_RESTORE=once PERF_COMPACT=1 bash bench/vs-reference.sh --perf $(REF)
	cat $(OUT)/*/perf-tables.txt

clean:
	rm -rf bin linkbench-data linkbench-results

# test-tidb is opt-in (TiDB takes about 8 minutes to build the first time):
# the store conformance suite and a load, run and check against TiDB.
test-tidb:
	bash scripts/tidb.sh start
	LINKBENCH_TEST_TIDB="$$(bash scripts/tidb.sh url)" $(GO) test -count=1 -run 'TiDB' -v ./internal/store/mysql ./cmd/linkbench; \
	rc=$$?; bash scripts/tidb.sh stop; exit $$rc
