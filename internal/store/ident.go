package store

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Identifier is how one SQL dialect writes a name from the configuration
// (a table, a schema, a routine named after a table) into a statement.
// Every SQL store writes every such name through Quote and checks it with
// Check when it opens, so no name, whatever its characters, ends its
// quotes or changes a statement. (The config allows only letters, digits,
// '_' and '-' in the names it reads; a store opened directly, as tests
// and tools do, quotes whatever it is given.)
type Identifier struct {
	// Mark is the dialect's quote: '"' or '`'.
	Mark byte
	// MaxBytes is the server's longest name (PostgreSQL 63 bytes, MySQL
	// 64 characters; 0: none). A longer one is refused: PostgreSQL would
	// cut it, and two names could become one.
	MaxBytes int
	// Server names the dialect in messages.
	Server string
}

// Quote writes name between the dialect's quotes, each quote in it
// doubled.
func (d Identifier) Quote(name string) string {
	q := string(d.Mark)
	return q + strings.ReplaceAll(name, q, q+q) + q
}

// Check reports a name the server cannot take as an identifier: empty,
// with a NUL byte or bytes that are not UTF-8, or longer than MaxBytes
// (counted in characters for MySQL, in bytes for PostgreSQL: the stricter
// is used). key names where the name comes from; prefix is what the
// store writes before it (the write routine's "linkbench_write_").
func (d Identifier) Check(key, where, prefix, name string) error {
	full := prefix + name
	switch {
	case name == "":
		return fmt.Errorf("%s (%s) is empty: expected a name", key, where)
	case strings.IndexByte(name, 0) >= 0 || !utf8.ValidString(name):
		return fmt.Errorf("%s (%s) holds a NUL byte or bytes that are not UTF-8: %s cannot name a table or schema with it", key, where, d.Server)
	case d.MaxBytes > 0 && len(full) > d.MaxBytes:
		what := "it is"
		if prefix != "" {
			what = "with " + prefix + " before it, it is"
		}
		return fmt.Errorf("%s (%s) is too long: %s %d bytes, and %s names are at most %d", key, where, what, len(full), d.Server, d.MaxBytes)
	}
	return nil
}

// CheckTables checks the table names t (read from the keys linktable,
// counttable and nodetable of p) with d, the link table's with routine
// before it: the store names its write routine so ("" for none).
func (d Identifier) CheckTables(p Props, t Tables, routine string) error {
	for _, c := range []struct{ key, prefix, name string }{
		{"linktable", routine, t.Link}, {"counttable", "", t.Count}, {"nodetable", "", t.Node},
	} {
		if err := d.Check(c.key, p.Where(c.key), c.prefix, c.name); err != nil {
			return err
		}
	}
	return nil
}

// DatabaseKey names the key DatabaseName took its name from, for messages.
func DatabaseKey(p Props) string {
	if String(p, "dbid", "") != "" {
		return "dbid"
	}
	return "dbprefix"
}
