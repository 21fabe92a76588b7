package postgres

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every identifier the store sends goes through one quoting function
// (ident.Quote, by way of qualified): pgx's own Sanitize quotes too, but
// by other rules (it drops NUL bytes where ident refuses the name), so a
// name would reach some statements other than it reaches the rest.
func TestIdentifiersGoThroughOneQuoting(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, ".Sanitize()") {
				t.Errorf("%s:%d quotes an identifier with pgx's Sanitize, not ident.Quote: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
