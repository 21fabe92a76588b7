package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// filesUnder returns the content of every file under dir, by path.
func filesUnder(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil {
			out[p] = string(b)
		}
		return nil
	})
	return out
}

// TestSecretsNeverWritten gives the password in every form a config can
// hold it, runs config, load and run with every output (results bundle
// with summary.json, report.html and CSVs, --csvstats, --csvstream, -L),
// then connects a real-server store with it, and reads back every file
// written and everything printed: neither the password nor any piece of
// it around an unescaped '@', '/' or '?' may appear.
// Reliability(secret): a password as a key (`password`, `password_file`, `sslpassword`, `*_token`), in a URL's userinfo (also with an unescaped `@`, `/` or `?`), a URL query parameter, a key=value DSN or a go-sql-driver DSN | `******` in `config`, summary.json, report.html, logs, `-L`, CSVs and error messages; a url that does not parse gets our message with the percent-encoding hint instead of the driver's
func TestSecretsNeverWritten(t *testing.T) {
	// Every piece is at least 5 characters: the results bundle holds
	// base64 histograms, where a 3-character piece ("Kp2") turned up by
	// chance in a fresh-clone run (histograms.hlog, 2026-11-28).
	const pw = "Zq7-s3cr@tW/x9?Kp2vRm8"
	pieces := []string{pw, "Zq7-s3cr", "tW/x9", "Kp2vRm8"}
	const plain = "Qp4ssw0rdQ" // for the forms where '&' or ' ' would end it
	for _, c := range []struct {
		name, secret string
		def          []string // -D values holding it
		store        string   // a store that reads the form, for its errors
	}{
		{"password key", pw, []string{"password=" + pw}, "postgres"},
		{"url userinfo with @ / ?", pw, []string{"url=postgres://linkbench:" + pw + "@127.0.0.1:1/db"}, "postgres"},
		{"url userinfo, mysql", pw, []string{"url=mysql://linkbench:" + pw + "@127.0.0.1:1/db"}, "mysql"},
		{"url userinfo, mongodb", pw, []string{"url=mongodb://linkbench:" + pw + "@127.0.0.1:1/"}, "mongodb"},
		{"url query parameter", plain, []string{"url=postgres://127.0.0.1:1/db?user=u&password=" + plain + "&sslmode=disable"}, "postgres"},
		{"key=value DSN", plain, []string{"url=host=127.0.0.1 port=1 user=u password=" + plain + " dbname=d"}, "postgres"},
		{"go-sql-driver DSN", pw, []string{"url=linkbench:" + pw + "@tcp(127.0.0.1:1)/db"}, "mysql"},
		// Keys no store reads: an unknown -D key is refused, so they come
		// from a file (where they are warnings).
		{"other secret keys", plain, []string{"workload_file=" + filepath.Join(t.TempDir(), "secrets.properties")}, ""},
		{"password_file", pw, nil, "postgres"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			def := c.def
			if def == nil {
				f := filepath.Join(t.TempDir(), "pw")
				os.WriteFile(f, []byte(pw+"\n"), 0o600)
				def = []string{"password_file=" + f}
			}
			if f, ok := strings.CutPrefix(def[0], "workload_file="); ok {
				os.WriteFile(f, []byte("sslpassword = "+plain+"\napi_token = "+plain+"\n"), 0o600)
			}
			var args []string
			for _, d := range def {
				args = append(args, "-D", d)
			}
			var printed strings.Builder
			collect := func(a ...string) int {
				out, errOut, code := runCLI(t, dir, append(a, args...)...)
				printed.WriteString(out + errOut)
				return code
			}
			small := []string{"-D", "store=memory", "-D", "maxid1=501", "-D", "nlinks_func=const", "-D", "nlinks_default=2",
				"-D", "maxtime=5", "-D", "requests=300", "-D", "warmup_time=0", "-D", "requesters=1", "-L", filepath.Join(dir, "log.txt")}
			if code := collect("config"); code != 0 {
				t.Fatalf("config: exit %d\n%s", code, printed.String())
			}
			// The memory store keeps its graph only in its process: load and
			// run in one.
			if code := collect(append([]string{"-l", "-r", "--csvstats", filepath.Join(dir, "s.csv"), "--csvstream", filepath.Join(dir, "i.csv")}, small...)...); code != 0 {
				t.Fatalf("-l -r: exit %d\n%s", code, printed.String())
			}
			if c.store != "" {
				// The store parses the form and fails to connect (or to
				// parse): its message must not carry the password either.
				if code := collect("load", "-D", "store="+c.store, "-D", "port=1", "--no-results"); code != 1 {
					t.Fatalf("%s with a closed port: exit %d", c.store, code)
				}
			}
			files := filesUnder(t, dir)
			if len(files) < 8 {
				t.Fatalf("only %d files written: %v", len(files), files)
			}
			files["(printed)"] = printed.String()
			for path, text := range files {
				for _, p := range append(pieces, c.secret) {
					if strings.Contains(text, p) {
						t.Errorf("%s holds %q:\n%s", path, p, excerpt(text, p))
					}
				}
			}
			if !strings.Contains(files["(printed)"], "******") {
				t.Error("the config listing does not show the hidden value")
			}
		})
	}
}

// excerpt is the text around the first occurrence of s.
func excerpt(text, s string) string {
	i := strings.Index(text, s)
	return text[max(0, i-200):min(len(text), i+len(s)+200)]
}
