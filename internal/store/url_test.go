package store

import (
	"strings"
	"testing"
)

// TestURLSaysWhereTheHostBegins: a url whose user info holds an unescaped
// '@', '/', '?' or '#' is refused before any network use, naming the key
// and the fix and no piece of the url; before,
// postgres://u:Zq9@Secr3t/pw@127.0.0.1:5432/db sent "Secr3t" to the DNS
// resolver as the host. Well-formed urls and go-sql-driver DSNs pass.
func TestURLSaysWhereTheHostBegins(t *testing.T) {
	for _, ok := range []string{
		"", "postgres://u:Zq9%40Secr3t%2Fpw@127.0.0.1:5432/db?sslmode=disable", "postgres://127.0.0.1/db",
		"mysql://root@[::1]:3306/linkdb0", "mongodb://u:p@h1:27017,h2:27017/?authSource=admin",
		"u:p@ss/w@tcp(127.0.0.1:3306)/db", // a go-sql-driver DSN is not a url
	} {
		if got, err := URL(MapProps{"url": ok}); err != nil || got != ok {
			t.Errorf("%q: %q, %v", ok, got, err)
		}
	}
	for _, c := range []struct{ url, want string }{
		{"postgres://u:Zq9@Secr3t/pw@127.0.0.1:5432/db", "more than one '@'"},
		{"postgres://u:Zq9/Secr3t@127.0.0.1:5432/db", "a '/' before the '@'"},
		{"mysql://u:Zq9?Secr3t@127.0.0.1:3306/db", "a '?' before the '@'"},
		{"mongodb://u:Zq9#Secr3t@127.0.0.1:27017/", "a '#' before the '@'"},
		{"postgres://127.0.0.1/db?application_name=Zq9@Secr3t", "a '/' before the '@'"},
	} {
		_, err := URL(MapProps{"url": c.url})
		if err == nil {
			t.Errorf("%q accepted", c.url)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, "url (options)") || !strings.Contains(msg, "@ as %40") {
			t.Errorf("%q: %s", c.url, msg)
		}
		for _, piece := range []string{"Zq9", "Secr3t", "127.0.0.1"} {
			if strings.Contains(msg, piece) {
				t.Errorf("%q: the message shows %q: %s", c.url, piece, msg)
			}
		}
	}
}
