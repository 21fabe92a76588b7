package config

import (
	"fmt"
	"sort"
	"strings"

	configfiles "github.com/linkbench/linkbench/config"
)

// RenderKeyDoc renders docs/config.md from the key table and the keys of
// each store (their registry entries). Its default column is what a run
// without -c uses, read by loading the zero-config benchmark as such a
// run does; the reference file's values are shown beside it where they
// differ.
func RenderKeyDoc(stores []StoreKeys) (string, error) {
	zero, _, err := Load(Source{Defaults: ZeroConfig()})
	if err != nil {
		return "", fmt.Errorf("the zero-config benchmark: %w", err)
	}
	ref, err := referenceValues()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(`# Configuration keys

Generated from internal/config/keys.go and the stores' registrations
(` + "`go test ./internal/config -run TestConfigDoc -update`" + `).

Values come from, in increasing precedence: the built-in defaults, the
` + "`workload_file`" + ` (its keys only fill missing ones), the main config file (` + "`-c`" + `),
and ` + "`-D key=value`" + `. ` + "`linkbench config`" + ` prints the effective value of every key
and where it came from; ` + "`linkbench config --all`" + ` also lists the keys left unset and
the keys of every store. An unknown key is an error on the command line (` + "`-D`" + `) and a
warning in a file (an error with ` + "`--strict`" + `).

**default** is what a run without ` + "`-c`" + ` uses: the zero-config benchmark on SQLite,
which reads the shipped ` + "`config/FBWorkload.properties`" + ` and presets a laptop-sized
graph and run. With ` + "`-c FILE`" + `, a key that neither the file nor its ` + "`workload_file`" + `
sets takes the built-in value, given as "else" where it differs. **reference file** is
the value in the reference's ` + "`config/LinkConfigMysql.properties`" + ` and its
` + "`FBWorkload.properties`" + `, where it differs from the default.

`)
	groups := []struct{ id, title string }{
		{"driver", "Driver"}, {"store", "Store connection"}, {"load", "Load phase"},
		{"request", "Request phase"}, {"output", "Output"}, {"compat", "Accepted for compatibility"},
	}
	all := AllKeys()
	for _, g := range groups {
		fmt.Fprintf(&b, "## %s\n\n| key | default | reference file | meaning |\n|---|---|---|---|\n", g.title)
		for _, k := range all {
			if k.Group != g.id {
				continue
			}
			v, _ := zero.Props.Get(k.Name)
			def := docValue(v)
			if !sameSetting(k.Default, v) {
				def += " (else " + docValue(k.Default) + ")"
			}
			r := ""
			// The reference file's connection settings are placeholders.
			if rv, ok := ref[k.Name]; ok && !sameSetting(rv, v) && g.id != "store" {
				r = docValue(rv)
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Name, def, r, k.Doc)
		}
		b.WriteString("\n")
	}
	sort.Slice(stores, func(i, j int) bool { return stores[i].Store < stores[j].Store })
	for _, s := range stores {
		if len(s.Keys) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## Store %s\n\nRead by the %s store (`store = %s`) beside the keys above.\n\n| key | default | meaning |\n|---|---|---|\n", s.Store, s.Store, s.Store)
		keys := append([]Key(nil), s.Keys...)
		sort.Slice(keys, func(i, j int) bool { return keys[i].Name < keys[j].Name })
		for _, k := range keys {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Name, docValue(k.Default), k.Doc)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// sameSetting reports whether a and b select the same thing: equal, or
// the reference's class name of a distribution or generator and its short
// name (com.facebook.LinkBench.distributions.ZipfDistribution and zipf).
func sameSetting(a, b string) bool {
	short := func(v string) string {
		v = strings.ToLower(v)
		if !strings.HasPrefix(v, "com.facebook.linkbench.") {
			return v
		}
		v = v[strings.LastIndexByte(v, '.')+1:]
		return strings.TrimSuffix(strings.TrimSuffix(v, "distribution"), "datagenerator")
	}
	return a == b || short(a) == short(b)
}

// docValue is a value as the tables show it ("-" for none).
func docValue(v string) string {
	if v == "" {
		return "-"
	}
	return "`" + v + "`"
}

// referenceValues are the keys of the shipped copy of the reference's
// MySQL config and of its workload file (the main file wins).
func referenceValues() (map[string]string, error) {
	out := map[string]string{}
	for _, name := range []string{"FBWorkload.properties", "LinkConfigMysql.properties"} {
		b, err := configfiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		kv, err := parseProperties(string(b), name)
		if err != nil {
			return nil, err
		}
		for _, p := range kv {
			out[p.key] = p.value
		}
	}
	return out, nil
}
