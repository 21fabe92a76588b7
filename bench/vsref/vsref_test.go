package main

import (
	"strings"
	"testing"
)

// pgLog is csvlog as PostgreSQL 15 writes it with log_statement = all and
// auto_explain in JSON: a reference write that switches from insert to
// update (error, rollback, begin, lock), a reference list and multiget,
// linkbench's function call and ANY() multiget, and a line of another user.
const pgLog = `2026-11-23 18:41:52.936 UTC,"linkbench","linkbench",11,"127.0.0.1:1","x",1,"INSERT",,,0,LOG,00000,"execute S_3: INSERT INTO linkdb0.linktable (id1, id2, link_type, visibility, data, version, time) VALUES ($1, $2, $3, $4, $5, $6, $7)","parameters: $1 = '7701', $2 = '7701', $3 = '123456789', $4 = '1', $5 = '\x34', $6 = '0', $7 = '1'",,,,,,,,"client backend",,0
2026-11-23 18:41:52.937 UTC,"linkbench","linkbench",11,"127.0.0.1:1","x",2,"INSERT",,,0,ERROR,23505,"duplicate key value violates unique constraint ""linktable_pkey""","Key (link_type, id1, id2)=(123456789, 7701, 7701) already exists.",,,,,,,,"client backend",,0
2026-11-23 18:41:52.938 UTC,"linkbench","linkbench",11,"127.0.0.1:1","x",3,"ROLLBACK",,,0,LOG,00000,"execute S_7: ROLLBACK",,,,,,,,,"client backend",,0
2026-11-23 18:41:52.939 UTC,"linkbench","linkbench",11,"127.0.0.1:1","x",4,"BEGIN",,,0,LOG,00000,"execute S_2: BEGIN",,,,,,,,,"client backend",,0
2026-11-23 18:41:52.940 UTC,"linkbench","linkbench",11,"127.0.0.1:1","x",5,"SELECT",,,0,LOG,00000,"execute S_5: SELECT visibility FROM linkdb0.linktable WHERE id1 = $1 AND id2 = $2 AND link_type = $3 FOR UPDATE","parameters: $1 = '7701', $2 = '7701', $3 = '123456789'",,,,,,,,"client backend",,0
2026-11-23 18:41:52.941 UTC,"linkbench","linkbench",12,"127.0.0.1:2","y",1,"SELECT",,,0,LOG,00000,"execute <unnamed>: SELECT id1, id2, link_type, visibility, data, version, time FROM linkdb0.linktable WHERE id1 = $1 AND link_type = $2  AND time >= $3 AND time <= $4 AND visibility = 1 ORDER BY time DESC LIMIT $5 OFFSET $6","parameters: $1 = '14337', $2 = '123456789', $3 = '0', $4 = '9223372036854775807', $5 = '10000', $6 = '0'",,,,,,,,"client backend",,0
2026-11-23 18:41:52.942 UTC,"linkbench","linkbench",12,"127.0.0.1:2","y",2,"SELECT",,,0,LOG,00000,"duration: 0.187 ms  plan:
{
  ""Query Text"": ""SELECT ..."",
  ""Plan"": {
    ""Node Type"": ""Limit"",
    ""Actual Rows"": 10000,
    ""Plans"": [ { ""Actual Rows"": 10000 } ]
  }
}",,,,,,,,,"client backend",,0
2026-11-23 18:41:52.943 UTC,"linkbench","linkbench",12,"127.0.0.1:2","y",3,"SELECT",,,0,LOG,00000,"statement: SELECT id1, id2, link_type, visibility, data, version, time FROM linkdb0.linktable WHERE id1 = 4102 AND link_type = 123456790 and id2 IN (4102,9779,929)",,,,,,,,,"client backend",,0
2026-11-23 18:41:52.944 UTC,"linkbench","linkbench",12,"127.0.0.1:2","y",4,"SELECT",,,0,LOG,00000,"duration: 0.1 ms  plan:
{ ""Plan"": { ""Actual Rows"": 1 } }",,,,,,,,,"client backend",,0
2026-11-23 18:41:52.945 UTC,"linkbench","linkbench",13,"127.0.0.1:3","z",1,"SELECT",,,0,LOG,00000,"execute stmtcache_1: SELECT ""linkdb0"".""linkbench_write_linktable""($1, $2, $3, $4, $5, $6, $7, $8, $9)","parameters: $1 = '86017', $2 = '123456790', $3 = '5', $4 = '1', $5 = '\x41', $6 = '1', $7 = '0', $8 = '1', $9 = '0'",,,,,,,,"client backend",,0
2026-11-23 18:41:52.946 UTC,"linkbench","linkbench",13,"127.0.0.1:3","z",2,"SELECT",,,0,LOG,00000,"execute stmtcache_2: SELECT id2, visibility, data, time, version FROM linkdb0.linktable WHERE link_type = $1 AND id1 = $2 AND id2 = ANY($3)","parameters: $1 = '123456790', $2 = '86017', $3 = '{86017,5,7,86017}'",,,,,,,,"client backend",,0
2026-11-23 18:41:52.947 UTC,"linkbench","linkbench",13,"127.0.0.1:3","z",3,"SELECT",,,0,LOG,00000,"duration: 0.1 ms  plan:
{ ""Plan"": { ""Actual Rows"": 2 } }",,,,,,,,,"client backend",,0
2026-11-23 18:41:52.948 UTC,"postgres","postgres",14,"[local]","w",1,"SELECT",,,0,LOG,00000,"statement: SELECT count from linkdb0.counttable WHERE id = 1 AND link_type = 2",,,,,,,,,"client backend",,0
`

func TestPostgresLog(t *testing.T) {
	st, err := readPostgresCSV(strings.NewReader(pgLog), "linkbench")
	if err != nil {
		t.Fatal(err)
	}
	m := measure(st)
	if m.Lists != 1 || m.ListRows.P50 != 10000 || m.Multigets != 2 || m.MultigetMean != 3.5 || m.UnknownRows != 0 {
		t.Fatalf("%+v", m)
	}
	// Rows 1 + 2 of 3 + 4 id2s asked.
	if m.FoundRatio != 3.0/7 {
		t.Fatalf("found ratio %v", m.FoundRatio)
	}
	// The switched reference write counts once; linkbench's call once.
	if m.LinkWrites != 2 || len(m.TopWritten) != 2 || m.TopWritten[0] != 7701 || m.TopWritten[1] != 86017 {
		t.Fatalf("%d writes, top %v", m.LinkWrites, m.TopWritten)
	}
	// Reads: 14337, 4102, 86017 (the postgres user's count is not ours).
	if m.LinkReads != 3 || m.Overlap != 1 {
		t.Fatalf("%d reads, overlap %d", m.LinkReads, m.Overlap)
	}
}

// myLog is a MariaDB slow log (long_query_time = 0): the reference's
// statements with their values, linkbench's procedure call and multiget.
const myLog = `mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:
Tcp port: 33417  Unix socket: /tmp/x.sock
Time		    Id Command	Argument
# Time: 261123 18:43:24
# User@Host: linkbench[linkbench] @  [127.0.0.1]
# Thread_id: 32  Schema:   QC_hit: No
# Query_time: 0.000314  Lock_time: 0.000074  Rows_sent: 7  Rows_examined: 7
# Rows_affected: 0  Bytes_sent: 0
SET timestamp=1795459404;
SELECT id1, id2, link_type, visibility, data, version, time FROM linkdb0.linktable FORCE INDEX(id1_type)  WHERE id1 = 6405 AND link_type = 123456790  AND time >= 0 AND time <= 9223372036854775807 AND visibility = 1 ORDER BY time DESC LIMIT 10000 OFFSET 0;
# User@Host: linkbench[linkbench] @  [127.0.0.1]
# Thread_id: 31  Schema:   QC_hit: No
# Query_time: 0.000631  Lock_time: 0.000026  Rows_sent: 0  Rows_examined: 1
# Rows_affected: 0  Bytes_sent: 0
SET timestamp=1795459404;
SELECT visibility FROM linkdb0.linktable WHERE id1 = 65 AND id2 = 65 AND link_type = 123456789 FOR UPDATE;
# User@Host: linkbench[linkbench] @  [127.0.0.1]
# Thread_id: 31  Schema:   QC_hit: No
# Query_time: 0.000022  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0
# Rows_affected: 0  Bytes_sent: 11
SET timestamp=1795459404;
rollback;
# User@Host: linkbench[linkbench] @  [127.0.0.1]
# Thread_id: 31  Schema:   QC_hit: No
# Query_time: 0.000327  Lock_time: 0.000029  Rows_sent: 0  Rows_examined: 0
# Rows_affected: 1  Bytes_sent: 0
SET timestamp=1795459404;
INSERT INTO linkdb0.linktable (id1, id2, link_type, visibility, data, version, time) VALUES (65, 65, 123456789, 1, 'c>0N', 0, 1795459404725);
# User@Host: linkbench[linkbench] @  [127.0.0.1]
# Thread_id: 36  Schema: linkdb0  QC_hit: No
# Query_time: 0.004616  Lock_time: 0.000000  Rows_sent: 1  Rows_examined: 1
# Rows_affected: 3  Bytes_sent: 59
use ` + "`linkdb0`" + `;
SET timestamp=1795459405;
CALL ` + "`linkbench_write_linktable`" + `(8193, 123456789, 9385, 1, 'OV0W', 1795459405563, 0, 1795459405563, 0);
# User@Host: linkbench[linkbench] @  [127.0.0.1]
# Thread_id: 38  Schema: linkdb0  QC_hit: No
# Query_time: 0.000100  Lock_time: 0.000009  Rows_sent: 1  Rows_examined: 1
# Rows_affected: 0  Bytes_sent: 0
SET timestamp=1795459405;
SELECT id2, visibility, data, time, version FROM ` + "`linktable`" + ` WHERE link_type = 123456790 AND id1 = 7005 AND id2 IN (9345, 2889);
# User@Host: root[root] @ localhost []
# Thread_id: 40  Schema:   QC_hit: No
# Query_time: 0.000100  Lock_time: 0.000009  Rows_sent: 1  Rows_examined: 1
SET timestamp=1795459405;
SELECT count FROM linkdb0.counttable WHERE id = 1 AND link_type = 2;
`

func TestMySQLSlowLog(t *testing.T) {
	st, err := readMySQLSlowLog(strings.NewReader(myLog), "linkbench")
	if err != nil {
		t.Fatal(err)
	}
	m := measure(st)
	if m.Lists != 1 || m.ListRows.P50 != 7 || m.Multigets != 1 || m.MultigetMean != 2 || m.FoundRatio != 0.5 {
		t.Fatalf("%+v", m)
	}
	// The reference's update that switched to an insert counts once.
	if m.LinkWrites != 2 || m.TopWritten[0] != 65 || m.TopWritten[1] != 8193 || m.LinkReads != 2 {
		t.Fatalf("%d writes %v, %d reads", m.LinkWrites, m.TopWritten, m.LinkReads)
	}
}

func TestDriverOutputs(t *testing.T) {
	ref := "INFO 2026-11-23 18:41:53.801 [main]: ADD_LINK count = 70  p25 = [2,3]ms\n" +
		"INFO 2026-11-23 18:41:53.809 [main]: REQUEST PHASE COMPLETED. 1000 requests done in 1 seconds. Requests/second = 722\n"
	ops, rate := driverOps(ref)
	if ops["ADD_LINK"] != 70 || rate != 722 {
		t.Fatalf("%v %v", ops, rate)
	}
	// linkbench's standard output: its table (the vs-reference op mix of
	// linkbench read as empty before).
	lb := "op                    count   errors  retries      ops/s    p25 ms\n" +
		"ADD_LINK              10731        0        0        442     0.643\n" +
		"GET_NODE              87841        0        0       3617     0.139\n" +
		"REQUEST PHASE COMPLETED. 200000 requests done in 24 seconds. Requests/second = 8234\n"
	if ops, rate := driverOps(lb); ops["ADD_LINK"] != 10731 || ops["GET_NODE"] != 87841 || len(ops) != 2 || rate != 8234 {
		t.Fatalf("linkbench: %v %v", ops, rate)
	}
	if n, s := checkResult("check passed: every count equals its visible links"); n != 0 || s != "passed" {
		t.Fatal(n, s)
	}
	if n, _ := checkResult("linkbench: check failed: 3 count mismatches, 0 node issues"); n != 3 {
		t.Fatal(n)
	}
	if q := quantiles([]int64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}); q.P50 != 5 || q.P90 != 9 || q.P99 != 10 || q.Mean != 5.5 {
		t.Fatalf("%+v", q)
	}
}
