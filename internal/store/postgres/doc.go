// Package postgres is the PostgreSQL store, on pgx v5: a pool sized to the
// workers; the request statements run on pgconn, below pgx's query layer,
// prepared once per connection, with binary parameters and rows decoded
// from their wire bytes (decode.go); a requester holds one connection for
// its session (session.go).
//
// Layout, as the reference's PostgreSQL DDL: database <dbprefix>0 (or
// dbid) holding a schema of the same name (key pg_schema) with linktable,
// counttable and nodetable; ids are bigint and payloads bytea, so the
// reference driver and this one can run against each other's databases.
//
// A request sends what the reference's PostgreSQL store sends (SPEC,
// "What the server sees"): a requester's session keeps two connections,
// its link writes on one in the reference's transactions (refwrite.go,
// sqlstore.RefUpsert and RefDelete: BEGIN with the first statement, one
// round trip per statement, the duplicate-key error, rollbacks and retries
// of the reference's loop) and everything else on the other. With
// link_writes = routine a link write is one call of a PL/pgSQL function
// that init creates instead. Bulk loads use binary COPY, with the id1_type
// index built after the load (defer_index) and ANALYZE at the end.
//
// Keys: url (postgres://...; wins over the rest), host, port (5432), user,
// password, dbid / dbprefix, pg_schema, sslmode, sslrootcert, defer_index,
// link_writes, the table names.
package postgres
