// Package mysql is the MySQL / MariaDB store on go-sql-driver/mysql, with
// the InnoDB or RocksDB (MyRocks) engine (key mysql_engine).
//
// The schema is the reference's DDL: linktable with primary key
// (link_type, id1, id2) and the covering id1_type index, latin1 columns,
// optionally PARTITION BY KEY(id1) PARTITIONS n (mysql_partitions). As the
// reference, reads use an autocommit pool and writes a transactional one,
// with server-side prepared statements. A link write locks the
// (id1, link_type) count row first (INSERT ... ON DUPLICATE KEY UPDATE),
// which serialises writers of that key, then reads the old link, writes
// the new one and adjusts the count, in one READ COMMITTED transaction.
// Deadlocks (1213), lock-wait timeouts (1205) and failed commits (1180)
// are transient. Bulk loads use multi-row INSERTs of 4096 rows.
//
// Keys: url (mysql://user:pass@host:port/db or a go-sql-driver DSN), host,
// port (3306), user, password, dbid / dbprefix, mysql_engine, mysql_partitions,
// defer_index, mysql_disable_binlog_load, tls (a go-sql-driver tls value),
// and the table names.
package mysql
