package store

import (
	"fmt"
	"strings"
)

// URL returns the key url (trimmed; "" when unset) after checking that
// it says unambiguously where its host begins: after the scheme's "//",
// an unescaped '@' may only end the user name and password, once, and
// they may not hold an unescaped '/', '?' or '#'. Otherwise the parsers
// (Go's, pgx's, the MongoDB driver's) end the user info at the first '/'
// and take a piece of the password for the host, which then goes to the
// DNS resolver and into error messages. The error names the key and how
// to fix it, never a piece of the URL.
func URL(p Props) (string, error) {
	u := String(p, "url", "")
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u, nil
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return u, nil
	}
	if i := strings.IndexAny(rest[:at], "@/?#"); i >= 0 {
		what := map[byte]string{'@': "more than one '@'", '/': "a '/' before the '@'", '?': "a '?' before the '@'", '#': "a '#' before the '@'"}[rest[i]]
		return "", fmt.Errorf("url (%s): it has %s, so it does not say where the host begins (an '@' or '/' in a password?); %s, ? as %%3F, # as %%23 (and an '@' elsewhere in the url as %%40)",
			p.Where("url"), what, URLHint)
	}
	return u, nil
}
