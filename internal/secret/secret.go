// Package secret hides passwords in everything linkbench prints or writes:
// config listings, results bundles, logs and error messages. It knows the
// forms a password takes in a config: a key of its own (password,
// password_file, ...), the userinfo of a URL (also with an unescaped '@'
// or '/' in it), a URL query parameter (?password=...), a key=value DSN
// (password=... in a PostgreSQL conninfo) and a go-sql-driver DSN
// (user:pass@tcp(host)/db).
package secret

import (
	"io"
	"strings"
)

// Mask replaces a hidden value.
const Mask = "******"

// IsSecretKey reports whether a config key or URL parameter names a secret.
func IsSecretKey(key string) bool {
	k := strings.ToLower(strings.TrimSpace(key))
	for _, w := range []string{"password", "passwd", "pwd", "secret", "token"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return k == "pass" || k == "pw"
}

// Redact hides the value of a config key that holds a secret, and any
// password inside the value of any other key (a url, a DSN).
func Redact(key, value string) string {
	if value != "" && IsSecretKey(key) {
		return Mask
	}
	return Text(value)
}

// Text hides every password it finds in free text: URL userinfo, URL
// query parameters, key=value pairs and go-sql-driver DSNs. Text without
// them is returned unchanged.
func Text(s string) string { return scan(s, nil) }

// Values returns the secrets that Redact(key, value) hides.
func Values(key, value string) []string {
	if value == "" {
		return nil
	}
	if IsSecretKey(key) {
		return []string{value}
	}
	var out []string
	scan(value, func(v string) { out = append(out, v) })
	return out
}

// scan masks the secrets of s, passing each to found when it is not nil.
func scan(s string, found func(string)) string {
	if !strings.ContainsAny(s, "@=") {
		return s
	}
	if found == nil {
		found = func(string) {}
	}
	return params(userinfo(s, found), found)
}

// userinfo hides the password of every "scheme://user:password@host" and
// "user:password@tcp(host)" in s. The password ends at the last '@' of
// the URL before its path, query or the end of the word, so an unescaped
// '@' (or '/', '?', ':') in it is hidden too.
func userinfo(s string, found func(string)) string {
	var b strings.Builder
	for {
		start, ok := credStart(s)
		if !ok {
			b.WriteString(s)
			return b.String()
		}
		// The URL runs to the next white space or quote.
		end := strings.IndexAny(s[start:], " \t\r\n\"'`<>")
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		word := s[start:end]
		at := hostAt(word)
		colon := strings.IndexByte(word, ':')
		if at < 0 || colon < 0 || colon > at {
			b.WriteString(s[:end])
			s = s[end:]
			continue
		}
		b.WriteString(s[:start+colon+1])
		b.WriteString(Mask)
		found(word[colon+1 : at])
		s = s[start+at:]
	}
}

// credStart finds where the userinfo of the next URL or DSN in s begins:
// after "://", or at the start of a word followed by "@tcp(", "@unix(".
func credStart(s string) (int, bool) {
	best := -1
	if i := strings.Index(s, "://"); i >= 0 {
		best = i + 3
	}
	for _, m := range []string{"@tcp(", "@unix(", "@("} {
		i := strings.Index(s, m)
		if i < 0 {
			continue
		}
		w := strings.LastIndexAny(s[:i], " \t\r\n\"'`<>=") + 1
		if best < 0 || w < best {
			best = w
		}
	}
	return best, best >= 0
}

// hostAt returns the index of the '@' that ends the userinfo of word,
// -1 when there is none: the last '@' followed by a host ("h:1,h2",
// "[::1]" or "tcp(...)") up to a '/', '?', '#' or the end, and not inside
// a query parameter (?application_name=a@b). An '@', '/', '?' or ':' in
// the password itself does not end it early.
func hostAt(word string) int {
	for at := strings.LastIndexByte(word, '@'); at >= 0; at = strings.LastIndexByte(word[:at], '@') {
		tail := word[at+1:]
		if strings.HasPrefix(tail, "tcp(") || strings.HasPrefix(tail, "unix(") || strings.HasPrefix(tail, "(") {
			return at
		}
		if i := strings.IndexAny(tail, "/?#"); i >= 0 {
			tail = tail[:i]
		}
		if !hostLike(tail) {
			continue
		}
		if q := strings.LastIndexAny(word[:at], "?&"); q >= 0 && strings.Contains(word[q:at], "=") {
			continue // a query value
		}
		return at
	}
	return -1
}

// hostLike reports whether s can be a host[:port] list.
func hostLike(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '.' || c == '-' || c == ':' || c == ',' || c == '[' || c == ']' || c == '_' || c == '%' ||
			(c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			return false
		}
	}
	return true
}

// params hides the value of every key=value pair (URL query or
// space-separated DSN) whose key names a secret. A quoted value
// (password='a b') is hidden up to its closing quote.
func params(s string, found func(string)) string {
	var b strings.Builder
	for {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			b.WriteString(s)
			return b.String()
		}
		ks := strings.LastIndexAny(s[:eq], " \t\r\n?&;,(\"'") + 1
		key := s[ks:eq]
		b.WriteString(s[:eq+1])
		s = s[eq+1:]
		if !IsSecretKey(key) || strings.HasPrefix(s, Mask) {
			continue
		}
		end := valueEnd(s)
		if end == 0 {
			continue
		}
		b.WriteString(Mask)
		found(strings.Trim(s[:end], `'"`))
		s = s[end:]
	}
}

// valueEnd is the length of the value at the start of s.
func valueEnd(s string) int {
	if s == "" {
		return 0
	}
	if q := s[0]; q == '\'' || q == '"' {
		for i := 1; i < len(s); i++ {
			if s[i] == '\\' {
				i++
				continue
			}
			if s[i] == q {
				return i + 1
			}
		}
		return len(s)
	}
	if i := strings.IndexAny(s, "& \t\r\n;#\"'"); i >= 0 {
		return i
	}
	return len(s)
}

// Scrubber hides, in any text, the structural forms of Text and the
// known secret values of one config wherever they appear (a driver's
// error message may quote a password in a form of its own).
type Scrubber struct {
	values []string
}

// minScrubbed is the shortest secret value replaced wherever it appears:
// replacing a shorter one would garble ordinary words.
const minScrubbed = 4

// NewScrubber keeps the secret values that can be replaced safely: at
// least minScrubbed bytes, and not inside a public value (a password equal
// to the user name, as on throwaway test servers, is not news, and hiding
// it everywhere would garble every line that names the user).
func NewScrubber(secrets, public []string) *Scrubber {
	s := &Scrubber{}
	// A parser that fails on a password with an unescaped '@', '/', '?'
	// or ':' may quote the piece after it: hide the pieces too.
	for _, v := range secrets {
		if f := strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune("@/?#:&=", r) }); len(f) > 1 {
			secrets = append(secrets, f...)
		}
	}
	for _, v := range secrets {
		if len(v) < minScrubbed {
			continue
		}
		inPublic := false
		for _, p := range public {
			if strings.Contains(p, v) {
				inPublic = true
				break
			}
		}
		if !inPublic {
			s.values = append(s.values, v)
		}
	}
	return s
}

// String hides the secrets of text. A nil Scrubber hides the structural
// forms only.
func (s *Scrubber) String(text string) string {
	text = Text(text)
	if s == nil {
		return text
	}
	for _, v := range s.values {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Mask)
		}
	}
	return text
}

// Writer returns a writer that hides the secrets of every write to w.
// Each write must be whole text (a line or more), as fmt and the loggers
// do; a secret split over two writes is not seen.
func (s *Scrubber) Writer(w io.Writer) io.Writer { return scrubWriter{s: s, w: w} }

type scrubWriter struct {
	s *Scrubber
	w io.Writer
}

func (sw scrubWriter) Write(p []byte) (int, error) {
	t := string(p)
	out := sw.s.String(t)
	if out == t {
		return sw.w.Write(p)
	}
	if _, err := io.WriteString(sw.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}
