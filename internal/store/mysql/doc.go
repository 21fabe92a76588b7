// Package mysql is the MySQL / MariaDB store on go-sql-driver/mysql, with
// the InnoDB or RocksDB (MyRocks) engine (key mysql_engine).
//
// The schema is the reference's DDL: linktable with primary key
// (link_type, id1, id2) and the covering id1_type index, latin1 columns,
// optionally PARTITION BY KEY(id1) PARTITIONS n (mysql_partitions). As the
// reference, reads use an autocommit pool and writes a transactional one,
// with server-side prepared statements but for the multiget, which goes as
// text with its ids written in, as the reference's does (MultigetLinks says
// why); a requester's session keeps one connection of each pool between
// its operations (session.go). A link write is one READ COMMITTED
// transaction of the reference's statements:
// ADD_LINK inserts the link and reads it for update when the key exists,
// UPDATE_LINK and DELETE_LINK read it for update first; the count row is
// upserted last, when the link is inserted or its visibility changes, so
// every writer locks the link row before the count row. Link writes run in
// the server as one CALL of a stored procedure (proc.go).
// Deadlocks (1213), lock-wait timeouts (1205) and failed commits (1180)
// are transient. Bulk loads use multi-row INSERTs of 4096 rows.
//
// Keys: url (mysql://user:pass@host:port/db or a go-sql-driver DSN), host,
// port (3306), user, password, dbid / dbprefix, mysql_engine, mysql_partitions,
// defer_index, mysql_disable_binlog_load, tls (a go-sql-driver tls value),
// and the table names.
package mysql
