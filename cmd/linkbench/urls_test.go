package main

import (
	"strings"
	"testing"
	"time"
)

// TestAmbiguousURLRefusedBeforeNetwork: a url with an unescaped '@' or
// '/' in its password is refused by every server store before any network
// use, with the percent-encoding hint and no piece of the password;
// before, postgres://u:Zq9@Secr3t/pw@127.0.0.1:5432/db looked "Secr3t" up
// as a host name ("lookup ****** on <resolver>") and gave no hint.
// Reliability(secret): a url whose password has an unescaped `@`, `/`, `?` or `#` that still parses (`postgres://u:Zq9@Secr3t/pw@127.0.0.1:5432/db`: Go's parser takes `Secr3t` for the host) | refused before any network use, for load, run and check on PostgreSQL, MySQL and MongoDB: one line naming the key, what is ambiguous and how to percent-encode it, no piece of the url, exit 1
func TestAmbiguousURLRefusedBeforeNetwork(t *testing.T) {
	for store, url := range map[string]string{
		"postgres": "postgres://u:Zq9@Secr3t/pw@127.0.0.1:5432/db",
		"mysql":    "mysql://u:Zq9@Secr3t/pw@127.0.0.1:3306/db",
		"mongodb":  "mongodb://u:Zq9/Secr3t@127.0.0.1:27017/",
	} {
		for _, command := range []string{"load", "run", "check"} {
			dir := t.TempDir()
			start := time.Now()
			_, errOut, code := runCLI(t, dir, command, "-D", "store="+store, "-D", "url="+url, "-D", "maxid1=1001")
			if code != 1 || time.Since(start) > 5*time.Second || !strings.Contains(errOut, "url (-D): it has ") || !strings.Contains(errOut, "@ as %40, / as %2F") {
				t.Errorf("%s %s: exit %d after %v: %s", store, command, code, time.Since(start), errOut)
			}
			for _, piece := range []string{"Zq9", "Secr3t", "lookup", "******"} {
				if strings.Contains(errOut, piece) {
					t.Errorf("%s %s: stderr shows %q: %s", store, command, piece, errOut)
				}
			}
		}
	}
}
