package config_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/store"
	_ "github.com/linkbench/linkbench/internal/store/memory"
	_ "github.com/linkbench/linkbench/internal/store/mongo"
	_ "github.com/linkbench/linkbench/internal/store/mysql"
	_ "github.com/linkbench/linkbench/internal/store/pebble"
	_ "github.com/linkbench/linkbench/internal/store/postgres"
	_ "github.com/linkbench/linkbench/internal/store/sqlite"
)

var update = flag.Bool("update", false, "rewrite docs/config.md")

// storeKeys are the keys of every registered store, as their registry
// entries give them.
func storeKeys() []config.StoreKeys {
	var out []config.StoreKeys
	for _, d := range store.Drivers() {
		sk := config.StoreKeys{Store: d.Name}
		for _, k := range d.Keys {
			sk.Keys = append(sk.Keys, config.Key{Name: k.Name, Default: k.Default, Doc: k.Doc})
		}
		out = append(out, sk)
	}
	return out
}

// TestConfigDoc keeps docs/config.md equal to the key table and the
// stores' keys.
func TestConfigDoc(t *testing.T) {
	want, err := config.RenderKeyDoc(storeKeys())
	if err != nil {
		t.Fatal(err)
	}
	path := "../../docs/config.md"
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Fatalf("docs/config.md is out of date: run go test ./internal/config -run TestConfigDoc -update")
	}
}

// TestConfigDocNamesEveryKey: every key a store reads is in docs/config.md
// with its default, and the documented defaults of linkbench's own keys
// are what a run without -c uses (maxid1 100001, maxtime 60, progressfreq
// 10, warmup_time 5), the reference file's shown as such.
func TestConfigDocNamesEveryKey(t *testing.T) {
	doc, err := config.RenderKeyDoc(storeKeys())
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(doc, "\n") {
		if name, ok := strings.CutPrefix(l, "| `"); ok {
			name, _, _ = strings.Cut(name, "`")
			rows[name] += l + "\n"
		}
	}
	for _, s := range storeKeys() {
		for _, k := range s.Keys {
			want := "| `" + k.Name + "` | -"
			if k.Default != "" {
				want = "| `" + k.Name + "` | `" + k.Default + "` |"
			}
			if !strings.Contains(rows[k.Name], want) {
				t.Errorf("store %s's key %s: no row %q in docs/config.md:\n%s", s.Store, k.Name, want, rows[k.Name])
			}
		}
	}
	for _, c := range []struct{ key, row string }{
		{"maxid1", "| `maxid1` | `100001` (else `10000001`) | `10000001` |"},
		{"maxtime", "| `maxtime` | `60` (else `100000`) | `100000` |"},
		{"progressfreq", "| `progressfreq` | `10` (else `6`) | `300` |"},
		{"warmup_time", "| `warmup_time` | `5` (else `0`) | `0` |"},
		{"requesters", "| `requesters` | `4` | `100` |"},
		{"getlinklist_history", "| `getlinklist_history` | `0.3` (else `0`) |  |"},
	} {
		if !strings.Contains(rows[c.key], c.row) {
			t.Errorf("%s: want a row starting %q, have:\n%s", c.key, c.row, rows[c.key])
		}
	}
}
