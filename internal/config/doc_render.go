package config

import (
	"fmt"
	"strings"
)

// RenderKeyDoc renders docs/config.md from the key table.
func RenderKeyDoc() string {
	var b strings.Builder
	b.WriteString(`# Configuration keys

Generated from internal/config/keys.go (` + "`go test ./internal/config -run TestConfigDoc -update`" + `).

Values come from, in increasing precedence: the defaults below, the
` + "`workload_file`" + ` (its keys only fill missing ones), the main config file (` + "`-c`" + `),
and ` + "`-D key=value`" + `. ` + "`linkbench config`" + ` prints the effective value of every key
and where it came from. Store-specific keys are listed in the store's documentation
and accepted as known keys. An unknown key is an error on the command line (` + "`-D`" + `) and a
warning in a file (an error with ` + "`--strict`" + `).

`)
	groups := []struct{ id, title string }{
		{"driver", "Driver"}, {"store", "Store connection"}, {"load", "Load phase"},
		{"request", "Request phase"}, {"output", "Output"}, {"compat", "Accepted for compatibility"},
	}
	all := AllKeys()
	for _, g := range groups {
		fmt.Fprintf(&b, "## %s\n\n| key | default | meaning |\n|---|---|---|\n", g.title)
		for _, k := range all {
			if k.Group != g.id {
				continue
			}
			def := k.Default
			if def == "" {
				def = "-"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Name, def, k.Doc)
		}
		b.WriteString("\n")
	}
	return b.String()
}
