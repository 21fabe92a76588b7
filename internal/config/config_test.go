package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/dist"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestShippedConfigsLoad(t *testing.T) {
	files, _ := filepath.Glob("../../config/LinkConfig*.properties")
	if len(files) < 5 {
		t.Fatalf("found %d sample configs", len(files))
	}
	want := map[string]string{"Memory": "memory", "Sqlite": "sqlite", "Mysql": "mysql", "Pgsql": "postgres", "MongoDb2": "mongo", "Quick": "sqlite"}
	for _, f := range files {
		cfg, warns, err := Load(Source{ConfigFile: f, Strict: true, ExtraKeys: map[string]bool{"mysql_engine": true, "mysql_write_procedure": true, "sqlite_synchronous": true}})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(warns) > 0 {
			t.Errorf("%s: warnings %v", f, warns)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "LinkConfig"), ".properties")
		if cfg.Store != want[name] {
			t.Errorf("%s: store %q, want %q", f, cfg.Store, want[name])
		}
		if name == "Quick" {
			// The first look runs the 2011 workload of the paper.
			if !strings.HasSuffix(cfg.WorkloadFile, "FBWorkload2011.properties") || !strings.HasSuffix(cfg.DataFile, "Distribution2011.dat") {
				t.Errorf("%s: workload %s, data %s", f, cfg.WorkloadFile, cfg.DataFile)
			}
		} else if cfg.Mix[0] != 5.35038 || cfg.Read.Kind != dist.Zipf || cfg.Read.Shape != 0.8 || !cfg.Multiget.Enabled || cfg.WriteUncorr.Kind != dist.Zipf {
			t.Errorf("%s: workload not applied: %+v", f, cfg.Read)
		}
		if _, err := cfg.LoadData(); err != nil {
			t.Errorf("%s: data file: %v", f, err)
		}
	}
}

func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "config/W.properties", "maxid1 = 500\nloaders = 3\nrequesters = 9\nlink_type_count = 3\n")
	main := write(t, dir, "config/main.properties", "workload_file = config/W.properties\nstore = memory\nloaders = 5\nrequesters = 7\n")
	cfg, _, err := Load(Source{ConfigFile: main, Overrides: []string{"requesters=11"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxID1 != 500 || cfg.Loaders != 5 || cfg.Requesters != 11 || cfg.LinkTypeCount != 3 || cfg.StartID1 != 1 {
		t.Fatalf("maxid1 %d loaders %d requesters %d types %d", cfg.MaxID1, cfg.Loaders, cfg.Requesters, cfg.LinkTypeCount)
	}
	for key, want := range map[string]string{"maxid1": "workload", "loaders": "main.properties:3", "requesters": "-D", "startid1": "default"} {
		if w := cfg.Props.Where(key); !strings.Contains(w, want) {
			t.Errorf("%s from %q, want %q", key, w, want)
		}
	}
	// Relative to the parent of the config dir, as the reference resolves it.
	if !strings.HasSuffix(cfg.WorkloadFile, filepath.Join("config", "W.properties")) {
		t.Errorf("workload file %s", cfg.WorkloadFile)
	}
	// The embedded data file is used when none is on disk.
	if !strings.HasPrefix(cfg.DataFile, "embedded:") {
		t.Errorf("data file %s", cfg.DataFile)
	}
}

func TestPropertiesSyntax(t *testing.T) {
	kv, err := parseProperties("# c\n! c\n a = 1\nb:2\nc 3\nd = x\\\n   y\ne = tab\\tnew\\u0041\nf\n", "f")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range kv {
		got[p.key] = p.value
	}
	want := map[string]string{"a": "1", "b": "2", "c": "3", "d": "xy", "e": "tab\tnewA", "f": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if kv[2].line != 5 {
		t.Errorf("line of c: %d", kv[2].line)
	}
	if _, err := parseProperties("k = \\u12\n", "bad.properties"); err == nil || !strings.Contains(err.Error(), "bad.properties:1") {
		t.Errorf("bad escape: %v", err)
	}
}

func TestErrors(t *testing.T) {
	base := []string{"store=memory"}
	for _, c := range []struct {
		name      string
		overrides []string
		file      string
		want      []string
	}{
		{"malformed int", []string{"maxid1=abc"}, "", []string{"maxid1 = \"abc\" (-D)", "expected an integer"}},
		{"malformed in file", nil, "maxid1 = 12x\n", []string{"maxid1 = \"12x\"", "main.properties:1", "expected an integer"}},
		{"maxid1 <= startid1", []string{"startid1=10", "maxid1=10"}, "", []string{"maxid1 = 10 must be greater than startid1 = 10"}},
		{"startid1 0", []string{"startid1=0"}, "", []string{"startid1", "expected an integer >= 1"}},
		{"mix", []string{"getnode=50"}, "", []string{"operation mix sums to 106", "getnode=50 (-D)"}},
		{"mix off by 1e-3", []string{"getnode=43.9879"}, "", []string{"operation mix sums to 100.001"}},
		{"NaN", []string{"link_datasize=NaN"}, "", []string{"link_datasize", "finite number"}},
		{"Inf", []string{"requestrate=+Inf"}, "", []string{"requestrate", "finite number"}},
		{"negative", []string{"loaders=-1"}, "", []string{"loaders", ">= 1"}},
		{"huge payload", []string{"node_datasize=10000000000"}, "", []string{"node_datasize", "[0, 1048575]"}},
		{"debuglevel", []string{"debuglevel=LOUD"}, "", []string{"debuglevel = \"LOUD\"", "TRACE, DEBUG, INFO, WARN or ERROR"}},
		{"generate_nodes", []string{"generate_nodes=maybe"}, "", []string{"generate_nodes", "true or false"}},
		{"class name", []string{"read_function=com.facebook.LinkBench.distributions.Bogus"}, "", []string{"read_function", "unknown distribution"}},
		{"data file", []string{"data_file=/nonexistent/D.dat"}, "", []string{"data_file = \"/nonexistent/D.dat\"", "file not found"}},
		{"workload file", []string{"workload_file=nope.properties"}, "", []string{"workload_file = nope.properties", "file not found"}},
		{"bytes", []string{"link_add_datagen_endbyte=300"}, "", []string{"link_add_datagen_endbyte = 300", "<= 255"}},
		{"-D form", []string{"novalue"}, "", []string{"-D \"novalue\": expected key=value"}},
		{"strict", []string{"bogus_key=1"}, "", []string{"unknown key bogus_key (-D)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := Source{Overrides: append(append([]string(nil), base...), c.overrides...), Strict: true}
			if c.file != "" {
				src.ConfigFile = write(t, t.TempDir(), "main.properties", c.file)
			}
			_, _, err := Load(src)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	// Unknown keys only warn without --strict.
	_, warns, err := Load(Source{Overrides: []string{"bogus_key=1"}})
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0], "unknown key bogus_key") {
		t.Fatalf("warnings %v, err %v", warns, err)
	}
	if _, _, err := Load(Source{ConfigFile: "/nonexistent/x.properties"}); err == nil || !strings.Contains(err.Error(), "cannot read config file") {
		t.Fatalf("missing config file: %v", err)
	}
}

func TestClassNamesAndAliases(t *testing.T) {
	cfg, _, err := Load(Source{Overrides: []string{"linkstore=com.facebook.LinkBench.LinkStorePgsql",
		"node_delete_function=com.facebook.LinkBench.distributions.UniformDistribution",
		"node_read_function=ROUND_ROBIN", "node_read_config=1",
		"link_add_datagen=com.facebook.LinkBench.generators.UniformDataGenerator",
		"nlinks_func=perfect_squares", "nlinks_config=2", "nlinks_default=1"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store != "postgres" || cfg.NodeDelete.Kind != dist.Uniform || cfg.NodeRead.Kind != dist.RoundRobin ||
		cfg.LinkAddGen.Kind != "uniform" || cfg.NLinks.Func != "perfect_powers" || cfg.DataFile != "" {
		t.Fatalf("%+v", cfg)
	}
}

func TestUncorrelatedWritesPerSemantics(t *testing.T) {
	keys := []string{"write_uncorr_blend=50", "write_uncorr_function=uniform", "read_uncorr_function=zipf", "read_uncorr_shape=0.7", "read_uncorr_blend=10"}
	// The reference reads its uncorrelated write distribution and blend
	// from the read_uncorr_ keys; the user's write_uncorr_ keys get a warning.
	cfg, warnings, err := Load(Source{Overrides: keys})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Corrected() || cfg.WriteUncorr != cfg.ReadUncorr || cfg.WriteUncorrBlend != 10 || cfg.WriteUncorr.Shape != 0.7 {
		t.Fatalf("reference semantics: write_uncorr %+v blend %v, read_uncorr %+v", cfg.WriteUncorr, cfg.WriteUncorrBlend, cfg.ReadUncorr)
	}
	if w := strings.Join(warnings, "\n"); !strings.Contains(w, "write_uncorr_function (-D) is not read") || !strings.Contains(w, "write_uncorr_blend (-D)") {
		t.Fatalf("warnings %q", w)
	}
	// The 2017 workload file sets write_uncorr_ keys: no warning for those.
	if _, warnings, _ := Load(Source{}); len(warnings) > 0 {
		t.Fatalf("warnings without user keys: %q", warnings)
	}
	cfg, _, err = Load(Source{Overrides: append(keys, "workload_semantics=corrected")})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Corrected() || cfg.WriteUncorr.Kind != dist.Uniform || cfg.WriteUncorrBlend != 50 || cfg.ReadUncorr.Kind != dist.Zipf {
		t.Fatalf("corrected semantics: write_uncorr %+v blend %v", cfg.WriteUncorr, cfg.WriteUncorrBlend)
	}
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"workload_semantics=fixed"}, `workload_semantics = "fixed" (-D): expected reference`},
		{[]string{"read_uncorr_function=real", "read_uncorr_blend=5"}, "cannot sample a real distribution for uncorrelated link accesses"},
		{[]string{"node_delete_function=real"}, "cannot sample a real distribution for node deletes"},
	} {
		if _, _, err := Load(Source{Overrides: c.keys}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.keys, err, c.want)
		}
	}
	if _, _, err := Load(Source{Overrides: []string{"workload_semantics=corrected", "node_delete_function=real", "read_uncorr_function=real", "read_uncorr_blend=5"}}); err != nil {
		t.Errorf("corrected semantics refuse real distributions: %v", err)
	}
}

func TestPasswordFromEnvAndFile(t *testing.T) {
	t.Setenv("LB_TEST_PW", "s3cret")
	cfg, _, err := Load(Source{Overrides: []string{"password_env=LB_TEST_PW"}})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := cfg.Props.Get("password"); v != "s3cret" {
		t.Fatalf("password %q", v)
	}
	f := write(t, t.TempDir(), "pw", "fromfile\n")
	cfg, _, err = Load(Source{Overrides: []string{"password_file=" + f}})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := cfg.Props.Get("password"); v != "fromfile" {
		t.Fatalf("password %q", v)
	}
}

var update = flag.Bool("update", false, "rewrite docs/config.md")

// TestConfigDoc keeps docs/config.md equal to the key table.
func TestConfigDoc(t *testing.T) {
	want := RenderKeyDoc()
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
