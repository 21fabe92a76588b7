package store

import (
	"fmt"
	"strconv"
	"strings"
)

// MapProps is a Props backed by a map, for tests and programmatic use.
type MapProps map[string]string

// Get implements Props.
func (m MapProps) Get(key string) (string, bool) { v, ok := m[key]; return v, ok }

// Where implements Props.
func (m MapProps) Where(key string) string { return "options" }

// String returns the trimmed value of key, or def when unset or empty.
func String(p Props, key, def string) string {
	if v, ok := p.Get(key); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

// Int returns key as an integer, def when unset or empty, and an error
// naming the key and its origin when malformed.
func Int(p Props, key string, def int64) (int64, error) {
	v := String(p, key, "")
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s (%s): %q is not an integer", key, p.Where(key), v)
	}
	return n, nil
}

// Bool returns key as a boolean (true/false/1/0/yes/no/on/off), def when unset.
func Bool(p Props, key string, def bool) (bool, error) {
	v := strings.ToLower(String(p, key, ""))
	if v == "" {
		return def, nil
	}
	if b, ok := ParseBool(v); ok {
		return b, nil
	}
	return false, fmt.Errorf("%s (%s): %q is not a boolean (expected true or false)", key, p.Where(key), v)
}

// LinkWritesKey is the key that says how a SQL store sends a link write.
const LinkWritesKey = "link_writes"

// LinkWritesDoc documents LinkWritesKey for the stores that read it.
const LinkWritesDoc = "reference: the reference's statements from the client, in its transactions, on each requester's second connection; routine: one call of a server-side routine that init creates (fewer round trips; not what the reference sends, so results are not comparable with its)"

// LinkWrites reads link_writes: false for reference (the default), true
// for routine. It is the only key that changes how a link write reaches
// the server, and nothing else (requesters, pacing, CPUs) does.
func LinkWrites(p Props) (routine bool, err error) {
	switch v := strings.ToLower(String(p, LinkWritesKey, "reference")); v {
	case "reference":
		return false, nil
	case "routine":
		return true, nil
	default:
		return false, fmt.Errorf("%s (%s): %q is not a choice; use reference (the default) or routine", LinkWritesKey, p.Where(LinkWritesKey), v)
	}
}

// Removed fails when key, a key an earlier linkbench read, is set, with
// what replaced it.
func Removed(p Props, key, instead string) error {
	if _, ok := p.Get(key); !ok {
		return nil
	}
	return fmt.Errorf("%s (%s) was removed: %s", key, p.Where(key), instead)
}

// ParseBool reads the boolean spellings Bool accepts (true, 1, yes, on and
// their opposites, any case); ok is false for anything else.
func ParseBool(v string) (b, ok bool) {
	switch strings.ToLower(v) {
	case "true", "1", "yes", "on":
		return true, true
	case "false", "0", "no", "off":
		return false, true
	}
	return false, false
}

// Tables are the table (or collection) names, from the keys linktable,
// counttable and nodetable, with the reference's defaults.
type Tables struct {
	Link, Count, Node string
}

// TableNames reads the table-name keys.
func TableNames(p Props) Tables {
	return Tables{
		Link:  String(p, "linktable", "linktable"),
		Count: String(p, "counttable", "counttable"),
		Node:  String(p, "nodetable", "nodetable"),
	}
}

// DatabaseName is the database (or schema) the reference would use: dbid
// when set, else dbprefix followed by 0 (the first of dbcount databases),
// else def.
func DatabaseName(p Props, def string) string {
	if v := String(p, "dbid", ""); v != "" {
		return v
	}
	if v := String(p, "dbprefix", ""); v != "" {
		return v + "0"
	}
	return def
}

// URLHint ends the message of a url that does not parse: the usual cause
// is a password with a reserved character in it.
const URLHint = "percent-encode the characters @ : / ? # % of the user name and password (@ as %40, / as %2F)"
