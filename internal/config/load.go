package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	configfiles "github.com/linkbench/linkbench/config"
	"github.com/linkbench/linkbench/internal/bounded"
	"github.com/linkbench/linkbench/internal/dist"
)

// Source is what Load reads.
type Source struct {
	// ConfigFile is the main config file; "" means none.
	ConfigFile string
	// Overrides are -D values, "key=value".
	Overrides []string
	// Strict makes unknown keys errors instead of warnings.
	Strict bool
	// ExtraKeys are store-specific keys known to the store registry.
	ExtraKeys map[string]bool
	// NameKeys are the store-specific keys whose values name a schema or
	// database in statements: they are checked as dbid is.
	NameKeys []string
	// Home is LINKBENCH_HOME, a directory relative paths may resolve against.
	Home string
	// Defaults are the command's presets (zero-config mode): they win over
	// the built-in defaults and the workload file, not over the user's files
	// or -D.
	Defaults map[string]string
}

// Error is a configuration error: one or more problems, each naming its
// key, origin and the expected form.
type Error struct {
	Problems []string
}

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return "config: " + e.Problems[0]
	}
	return fmt.Sprintf("config: %d problems:\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// Load reads the files, applies the overrides, and builds and validates
// the typed Config. Warnings (unknown keys) are returned separately.
func Load(src Source) (*Config, []string, error) {
	props := newProps()
	var warnings []string
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	// Built-in defaults, then the caller's.
	for _, k := range AllKeys() {
		if k.Default != "" {
			props.set(Entry{Key: k.Name, Value: k.Default, Origin: FromDefault})
		}
	}
	for k, v := range src.Defaults {
		props.m[k] = Entry{Key: k, Value: v, Origin: FromPreset}
	}

	var mainDir string
	fileKeys := map[string]Entry{}
	if src.ConfigFile != "" {
		abs, err := filepath.Abs(src.ConfigFile)
		if err == nil {
			src.ConfigFile = abs
		}
		mainDir = filepath.Dir(src.ConfigFile)
		b, err := bounded.ReadFile(src.ConfigFile, bounded.Config)
		if err != nil {
			return nil, nil, &Error{[]string{fmt.Sprintf("cannot read config file: %v", err)}}
		}
		kv, err := parseProperties(string(b), src.ConfigFile)
		if err != nil {
			return nil, nil, &Error{[]string{err.Error()}}
		}
		for _, p := range kv {
			e := Entry{Key: p.key, Value: p.value, Origin: FromMain, File: src.ConfigFile, Line: p.line}
			props.set(e)
			fileKeys[p.key] = e
		}
	}
	// -D overrides.
	for _, o := range src.Overrides {
		k, v, ok := strings.Cut(o, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			fail("-D %q: expected key=value", o)
			continue
		}
		e := Entry{Key: k, Value: strings.TrimSpace(v), Origin: FromOverride}
		props.set(e)
		fileKeys[k] = e
	}
	// Passwords may come from a file or the environment instead of the
	// command line.
	if e, ok := props.Lookup("password_file"); ok && e.Value != "" {
		if b, err := bounded.ReadFile(e.Value, bounded.Secret); err != nil {
			fail("password_file = %s (%s): %v", e.Value, e.OriginText(), err)
		} else {
			props.set(Entry{Key: "password", Value: strings.TrimRight(string(b), "\r\n"), Origin: e.Origin, File: e.File, Line: e.Line})
		}
	}
	if e, ok := props.Lookup("password_env"); ok && e.Value != "" {
		v, set := os.LookupEnv(e.Value)
		if !set {
			fail("password_env = %s (%s): the environment variable is not set", e.Value, e.OriginText())
		}
		props.set(Entry{Key: "password", Value: v, Origin: e.Origin, File: e.File, Line: e.Line})
	}
	// The workload file fills what is still missing (or only defaulted).
	workload := ""
	if e, ok := props.Lookup("workload_file"); ok && e.Value != "" {
		path, content, err := resolveFile(e.Value, mainDir, src.Home, bounded.Config)
		if err != nil {
			fail("workload_file = %s (%s): %v", e.Value, e.OriginText(), err)
		} else {
			workload = path
			kv, err := parseProperties(string(content), path)
			if err != nil {
				fail("%v", err)
			}
			for _, p := range kv {
				if p.key == "workload_file" {
					continue
				}
				props.set(Entry{Key: p.key, Value: p.value, Origin: FromWorkload, File: path, Line: p.line})
				if _, seen := fileKeys[p.key]; !seen {
					fileKeys[p.key] = props.m[p.key]
				}
			}
		}
	}
	// Unknown keys, with the nearest known one.
	var known []string
	for k, e := range fileKeys {
		if _, ok := knownKeys[k]; ok || src.ExtraKeys[k] {
			continue
		}
		if known == nil {
			known = KeyNames()
			for x := range src.ExtraKeys {
				known = append(known, x)
			}
		}
		msg := fmt.Sprintf("unknown key %s (%s)", Printable(k), e.OriginText())
		hint := ""
		if s, ok := Suggest(k, known); ok {
			hint = "did you mean " + s + "? "
		}
		if src.Strict {
			fail("%s; %sremove it or check its spelling", msg, hint)
		} else if hint != "" {
			warnings = append(warnings, msg+"; "+strings.TrimSuffix(hint, " ")+" (ignored)")
		} else {
			warnings = append(warnings, msg+"; ignored")
		}
	}
	cfg := &Config{Props: props, ConfigFile: src.ConfigFile, WorkloadFile: workload}
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	b := &builder{cfg: cfg, props: props, fail: fail, warn: warn, mainDir: mainDir, home: src.Home}
	b.build()
	for _, k := range src.NameKeys {
		b.identifier(k, true)
	}
	if len(problems) > 0 {
		return nil, warnings, &Error{Problems: problems}
	}
	return cfg, warnings, nil
}

// Printable returns s, or s quoted with Go escapes when it holds bytes
// that are not printable text (so messages never send a terminal escape
// sequences).
func Printable(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// resolveFile finds a relative path against the main config's directory,
// its parent (the reference's paths are relative to LINKBENCH_HOME, the
// parent of config/), LINKBENCH_HOME, and the current directory; then the
// copy embedded in the binary. It returns the path used (or
// "embedded:<name>") and the content. A file larger than limit is an
// error, not a reason to try the next place.
func resolveFile(name, mainDir, home string, limit int64) (string, []byte, error) {
	var tried []string
	var tooLarge error
	try := func(p string) (string, []byte, bool) {
		tried = append(tried, p)
		b, err := bounded.ReadFile(p, limit)
		var tl *bounded.TooLargeError
		if errors.As(err, &tl) && tooLarge == nil {
			tooLarge = err
		}
		if err != nil {
			return "", nil, false
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return p, b, true
	}
	if filepath.IsAbs(name) {
		if p, b, ok := try(name); ok {
			return p, b, nil
		}
		if tooLarge != nil {
			return "", nil, tooLarge
		}
		return "", nil, fmt.Errorf("file not found")
	}
	var dirs []string
	if mainDir != "" {
		dirs = append(dirs, mainDir, filepath.Dir(mainDir))
	}
	if home != "" {
		dirs = append(dirs, home)
	}
	dirs = append(dirs, ".")
	for _, d := range dirs {
		if p, b, ok := try(filepath.Join(d, name)); ok {
			return p, b, nil
		}
		if tooLarge != nil {
			return "", nil, tooLarge
		}
	}
	if configfiles.Has(name) {
		b, err := configfiles.ReadFile(name)
		if err == nil {
			return "embedded:" + filepath.Base(name), b, nil
		}
	}
	return "", nil, fmt.Errorf("file not found (tried %s)", strings.Join(tried, ", "))
}

// LoadData reads and parses the config's data file ("" = none: nil).
func (c *Config) LoadData() (*dist.DataFile, error) {
	if c.DataFile == "" {
		return nil, nil
	}
	if name, ok := strings.CutPrefix(c.DataFile, "embedded:"); ok {
		b, err := configfiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		return dist.ParseDataFile(bytes.NewReader(b), c.DataFile)
	}
	b, err := bounded.ReadFile(c.DataFile, bounded.Data)
	if err != nil {
		return nil, fmt.Errorf("cannot read distribution file: %w", err)
	}
	return dist.ParseDataFile(bytes.NewReader(b), c.DataFile)
}
