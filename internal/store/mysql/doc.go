// Package mysql is the MySQL / MariaDB store on go-sql-driver/mysql, with
// the InnoDB or RocksDB (MyRocks) engine (key mysql_engine).
//
// The schema is the reference's DDL: linktable with primary key
// (link_type, id1, id2) and the covering id1_type index, latin1 columns,
// optionally PARTITION BY KEY(id1) PARTITIONS n (mysql_partitions).
//
// A request sends what the reference's MySQL store sends (SPEC, "What the
// server sees"): a requester's session keeps a connection of the read
// pool, autocommit, for the reads and node writes, and one of the write
// pool with autocommit off for the link writes, which run the reference's
// transactions (sqlstore.RefUpsert and RefDelete: the duplicate-key error,
// rollbacks and retries of its loop, COMMIT or ROLLBACK as text). Statements
// are prepared in the server but for the multiget, which goes as text with
// its ids written in, as the reference's does. With link_writes = routine
// a link write is one CALL of a stored procedure that init creates
// (proc.go). Deadlocks (1213), lock-wait timeouts (1205) and failed
// commits (1180) are transient. Bulk loads send nodes, links and counts
// with LOAD DATA LOCAL INFILE, or multi-row INSERTs where the server
// refuses it (and on TiDB).
//
// Keys: url (mysql://user:pass@host:port/db or a go-sql-driver DSN), host,
// port (3306), user, password, dbid / dbprefix, mysql_engine, mysql_partitions,
// defer_index, mysql_disable_binlog_load, tls (a go-sql-driver tls value),
// link_writes and the table names.
package mysql
