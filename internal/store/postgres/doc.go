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
// Each link write is one round trip: a PL/pgSQL function (created by init)
// runs the reference's statements: ADD_LINK inserts the link and reads it
// for update when the key exists, UPDATE_LINK and DELETE_LINK read it for
// update first; the count row is upserted last, when the link is inserted
// or its visibility changes, all in one transaction. Bulk loads use binary
// COPY, with the id1_type index built after the load (defer_index) and
// ANALYZE at the end.
//
// Keys: url (postgres://...; wins over the rest), host, port (5432), user,
// password, dbid / dbprefix, pg_schema, sslmode, sslrootcert, defer_index,
// the table names.
package postgres
