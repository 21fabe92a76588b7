package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagSet is every flag of the command tree, by long name and shorthand.
type flagSet struct {
	long  map[string]*pflag.Flag
	short map[string]*pflag.Flag
	names []string
}

func collectFlags(root *cobra.Command) flagSet {
	fs := flagSet{long: map[string]*pflag.Flag{}, short: map[string]*pflag.Flag{}}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(f *pflag.Flag) {
			if _, ok := fs.long[f.Name]; !ok {
				fs.long[f.Name] = f
				fs.names = append(fs.names, f.Name)
			}
			if f.Shorthand != "" {
				fs.short[f.Shorthand] = f
			}
		}
		c.Flags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	sort.Strings(fs.names)
	return fs
}

// takesValue reports whether f reads the next argument as its value.
func takesValue(f *pflag.Flag) bool { return f.NoOptDefVal == "" }

// configKeys are the keys of this build and of its stores.
func configKeys() []string {
	keys := config.KeyNames()
	for _, d := range store.Drivers() {
		for _, k := range d.Keys {
			keys = append(keys, k.Name)
		}
	}
	return keys
}

func isConfigKey(name string) bool {
	for _, k := range configKeys() {
		if k == name {
			return true
		}
	}
	return false
}

// dashed renders a flag as the user should type it: the reference's
// single-dash long options keep their single dash.
func dashed(name string) string {
	if _, ok := legacyLongFlags["-"+name]; ok {
		return "-" + name
	}
	return "--" + name
}

// normalizeArgs rewrites the reference's single-dash long options
// (-csvstats) and any single-dash spelling of a long flag (-truncate) to
// the double-dash form, and refuses a single-dash word that is close to a
// flag (-csvstreams, as the reference's README spells it) or is a config
// key (-maxtime), naming what was meant. pflag would otherwise read such a
// word as a cluster of short flags: -csvstreams as -c svstreams.
func normalizeArgs(root *cobra.Command, args []string) ([]string, error) {
	fs := collectFlags(root)
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if strings.HasPrefix(a, "--") {
			out = append(out, a)
			name, _, hasVal := strings.Cut(a[2:], "=")
			if f, ok := fs.long[name]; ok && takesValue(f) && !hasVal && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
			continue
		}
		if !strings.HasPrefix(a, "-") || len(a) < 2 {
			out = append(out, a)
			continue
		}
		name, val, hasVal := strings.Cut(a[1:], "=")
		if f, ok := fs.long[name]; ok && len(name) > 1 {
			long := "--" + name
			if hasVal {
				long += "=" + val
			}
			out = append(out, long)
			if takesValue(f) && !hasVal && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
			continue
		}
		if f, ok := fs.short[a[1:2]]; ok && takesValue(f) {
			// -c FILE, -cFILE, -D key=value, -Dkey=value, -L FILE.
			attached := a[2:]
			if attached == "" {
				out = append(out, a)
				if i+1 < len(args) {
					i++
					out = append(out, args[i])
				}
				continue
			}
			if f.Shorthand != "c" || fileExists(attached) {
				out = append(out, a)
				continue
			}
		}
		if len(name) > 2 {
			if s, ok := config.Suggest(name, fs.names); ok {
				return nil, usageError(fmt.Errorf("unknown flag %s: did you mean %s?", a, dashed(s)))
			}
			if isConfigKey(name) {
				v := val
				if !hasVal {
					v = nextValue(args, i)
				}
				return nil, usageError(fmt.Errorf("unknown flag %s: config keys are set with -D, e.g. -D %s=%s", a, name, v))
			}
		}
		out = append(out, a)
	}
	return out, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// nextValue is the argument after args[i] when it looks like a value.
func nextValue(args []string, i int) string {
	if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
		return args[i+1]
	}
	return "VALUE"
}

var unknownFlag = regexp.MustCompile(`^unknown flag: --([^ =]+)`)

// flagError adds to pflag's error what was probably meant: a nearby flag,
// or -D for a config key given as a flag (--maxtime 10).
func flagError(cmd *cobra.Command, args []string, err error) error {
	m := unknownFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return usageError(err)
	}
	name := m[1]
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if s, ok := config.Suggest(name, names); ok {
		return usageError(fmt.Errorf("%v: did you mean --%s?", err, s))
	}
	v := "VALUE"
	for i, a := range args {
		if a == "--"+name {
			v = nextValue(args, i)
		} else if k, val, ok := strings.Cut(a, "="); ok && k == "--"+name {
			v = val
		}
	}
	if isConfigKey(name) {
		return usageError(fmt.Errorf("%v: config keys are set with -D: -D %s=%s", err, name, v))
	}
	if s, ok := config.Suggest(name, configKeys()); ok {
		return usageError(fmt.Errorf("%v: did you mean the config key %s (-D %s=%s)?", err, s, s, v))
	}
	return usageError(err)
}

// unknownCommand names the command meant by a mistyped one, if any.
func unknownCommand(root *cobra.Command, word string) error {
	var names []string
	for _, c := range root.Commands() {
		names = append(names, c.Name())
	}
	if s, ok := config.Suggest(word, names); ok {
		return fmt.Errorf("unknown command %q: did you mean %s?", word, s)
	}
	return errors.New("invalid trailing arguments: " + word)
}
