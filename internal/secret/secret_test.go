package secret

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://u:secret@h:1/db", "postgres://u:******@h:1/db"},
		{"postgres://u:p@ss@h:1/db", "postgres://u:******@h:1/db"},
		{"postgres://u:p@ss/w?rd@h:1/db?sslmode=disable", "postgres://u:******@h:1/db?sslmode=disable"},
		{"postgres://u:p@ss@h:1/db?application_name=a@b", "postgres://u:******@h:1/db?application_name=a@b"},
		{"postgres://u@h:1/db", "postgres://u@h:1/db"},
		{"postgres://h:1/db?user=u&password=secret&sslmode=disable", "postgres://h:1/db?user=u&password=******&sslmode=disable"},
		{"mongodb://u:s3cr@t@h1:1,h2:2/?authSource=admin", "mongodb://u:******@h1:1,h2:2/?authSource=admin"},
		{"mongodb://[::1]:27017/?tls=true", "mongodb://[::1]:27017/?tls=true"},
		{"host=h port=5 user=u password=secret dbname=d", "host=h port=5 user=u password=****** dbname=d"},
		{"host=h password='a b c' dbname=d", "host=h password=****** dbname=d"},
		{"u:p@ss@tcp(127.0.0.1:3306)/db?charset=latin1", "u:******@tcp(127.0.0.1:3306)/db?charset=latin1"},
		{"cannot parse `postgres://u:secret@h/db`: failed", "cannot parse `postgres://u:******@h/db`: failed"},
		{"url (-D): user:pw@tcp(h:1)/d and sslpassword=x1", "url (-D): user:******@tcp(h:1)/d and sslpassword=******"},
		{"plain text = 3 @ noon", "plain text = 3 @ noon"},
		{"", ""},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRedactKeys(t *testing.T) {
	for _, k := range []string{"password", "password_file", "password_env", "sslpassword", "PASSWORD", "api_token", "secret_key"} {
		if Redact(k, "x") != Mask {
			t.Errorf("%s not hidden", k)
		}
	}
	if Redact("password", "") != "" || Redact("maxid1", "100") != "100" {
		t.Error("ordinary values changed")
	}
	if got := Redact("url", "mysql://u:pw@h/d"); strings.Contains(got, "pw@") {
		t.Errorf("url %q", got)
	}
}

// FuzzText: Text never panics and never lets through the password of a
// URL it recognises.
func FuzzText(f *testing.F) {
	f.Add("postgres://u:pw@h/db")
	f.Add("password='x")
	f.Add("a@tcp(")
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if !strings.Contains(s, "@") && !strings.Contains(s, "=") && out != s {
			t.Fatalf("changed text without secrets: %q -> %q", s, out)
		}
	})
}

func TestValues(t *testing.T) {
	got := Values("url", "postgres://u:p@ss@h/db?password=two&x=1")
	if len(got) != 2 || got[0] != "p@ss" || got[1] != "two" {
		t.Fatalf("%q", got)
	}
	if got := Values("password", "abc"); len(got) != 1 || got[0] != "abc" {
		t.Fatalf("%q", got)
	}
	if got := Values("maxid1", "5"); got != nil {
		t.Fatalf("%q", got)
	}
}
