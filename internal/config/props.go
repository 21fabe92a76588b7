package config

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Origin says where a value came from, in increasing precedence.
type Origin int

// Origins.
const (
	FromDefault Origin = iota
	FromWorkload
	// FromPreset are the command's own defaults (the zero-config
	// benchmark): they win over the workload file, not over the user's.
	FromPreset
	FromMain
	FromOverride
	// FromPhase is a value a phase set for itself (a sweep point's rate
	// and length): Entry.Why names the phase. See Config.Derive.
	FromPhase
)

func (o Origin) String() string {
	return [...]string{"default", "workload file", "zero-config default", "config file", "-D", "phase"}[o]
}

// Entry is one resolved key.
type Entry struct {
	Key    string
	Value  string
	Origin Origin
	File   string // for workload and main files
	Line   int
	Why    string // for FromPhase: the phase that set the value
}

// OriginText is a human-readable origin: "default", "-D", or "file:line".
func (e Entry) OriginText() string {
	switch e.Origin {
	case FromDefault:
		return "default"
	case FromPreset:
		return "zero-config default"
	case FromOverride:
		return "-D"
	case FromPhase:
		return e.Why
	case FromWorkload:
		return fmt.Sprintf("workload %s:%d", e.File, e.Line)
	default:
		return fmt.Sprintf("%s:%d", e.File, e.Line)
	}
}

// Props are the resolved properties with their origins. They implement
// store.Props. A Props is immutable once Load returns it.
type Props struct {
	m map[string]Entry
}

func newProps() *Props { return &Props{m: map[string]Entry{}} }

// set stores e unless a value of higher precedence is already there.
func (p *Props) set(e Entry) {
	if old, ok := p.m[e.Key]; ok && old.Origin > e.Origin {
		return
	}
	p.m[e.Key] = e
}

// Get returns the value of key and whether it is set.
func (p *Props) Get(key string) (string, bool) {
	e, ok := p.m[key]
	return e.Value, ok
}

// Where names the origin of key ("default" when unset).
func (p *Props) Where(key string) string {
	if e, ok := p.m[key]; ok {
		return e.OriginText()
	}
	return "default"
}

// Lookup returns the whole entry of key.
func (p *Props) Lookup(key string) (Entry, bool) {
	e, ok := p.m[key]
	return e, ok
}

// Entries lists every resolved key, sorted.
func (p *Props) Entries() []Entry {
	out := make([]Entry, 0, len(p.m))
	for _, e := range p.m {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// parsed is one key of a properties file.
type parsed struct {
	key, value string
	line       int
}

// parseProperties reads Java .properties text: # and ! comments, key and
// value separated by '=', ':' or white space, backslash line continuation
// and escapes (\t \n \r \f \uXXXX, and \ before any other character). It
// never panics; malformed \u escapes are errors naming the line.
func parseProperties(text, file string) ([]parsed, error) {
	if err := checkText(text, file); err != nil {
		return nil, err
	}
	if !utf8.ValidString(text) {
		// Java reads ISO-8859-1; map bytes one to one so nothing is lost.
		b := []byte(text)
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		text = string(r)
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []parsed
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// Join continuation lines: an odd number of trailing backslashes.
		for endsWithContinuation(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		if endsWithContinuation(line) {
			line = line[:len(line)-1]
		}
		key, rest := splitKey(line)
		k, err := unescape(key)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, start, err)
		}
		v, err := unescape(rest)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: key %s: %v", file, start, k, err)
		}
		out = append(out, parsed{key: k, value: strings.TrimSpace(v), line: start})
	}
	return out, nil
}

// checkText refuses binary data: a control byte other than tab, line
// feed, carriage return and form feed cannot be in a .properties file, and
// echoing one into a terminal would send it escape sequences.
func checkText(text, file string) error {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') || c == 0x7f {
			line := 1 + strings.Count(text[:i], "\n")
			return fmt.Errorf("%s:%d: byte 0x%02x: this is binary data, not a .properties text file", file, line, c)
		}
	}
	return nil
}

func endsWithContinuation(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKey splits at the first unescaped '=', ':' or white space.
func splitKey(line string) (key, rest string) {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			key = line[:i]
			rest = strings.TrimLeft(line[i:], " \t\f")
			if c == ' ' || c == '\t' || c == '\f' {
				if rest != "" && (rest[0] == '=' || rest[0] == ':') {
					rest = strings.TrimLeft(rest[1:], " \t\f")
				}
			} else {
				rest = strings.TrimLeft(rest[1:], " \t\f")
			}
			return key, rest
		}
	}
	return line, ""
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("malformed \\u escape")
			}
			var r rune
			for _, h := range s[i+1 : i+5] {
				var d rune
				switch {
				case h >= '0' && h <= '9':
					d = h - '0'
				case h >= 'a' && h <= 'f':
					d = h - 'a' + 10
				case h >= 'A' && h <= 'F':
					d = h - 'A' + 10
				default:
					return "", fmt.Errorf("malformed \\u escape %q", s[i-1:i+5])
				}
				r = r*16 + d
			}
			b.WriteRune(r)
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}
