package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		cfg, warns, err := Load(Source{ConfigFile: f, Strict: true, ExtraKeys: map[string]bool{"mysql_engine": true, "link_writes": true, "sqlite_synchronous": true}})
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

// Reliability(input): malformed value, unknown key (`--strict`), percentages off by 1e-3, NaN/Inf, negative or zero sizes, `maxid1 <= startid1`, 10 GB payloads, bad class names, missing workload or data file | one message naming the key, its file and line (or -D) and the expected form, exit 1, before anything is written
// Reliability(input): `-c`, `workload_file`, `data_file` or `password_file` naming /dev/zero, /dev/urandom or a huge file; `config -c` with a 50 MB line | refused within a second: the file is larger than its limit (1 MiB, 1 MiB, 64 MiB, 64 KiB)
// Reliability(input): `maxid1=1e18` or 2^63-1, `nlinks_default=1e15`, `requesters=100000`, and the other sizes above their bounds | refused before any work, naming the bound and its reason (see the limits below)
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
		// Hostile sizes and files: refused before any work, naming the bound.
		{"maxid1 1e18", []string{"maxid1=1e18"}, "", []string{"maxid1 = \"1e18\"", "at most 1,000,000,000,000"}},
		{"maxid1 2^63-1", []string{"maxid1=9223372036854775807"}, "", []string{"maxid1", "at most 1,000,000,000,000"}},
		{"requesters", []string{"requesters=100000"}, "", []string{"requesters = \"100000\"", "at most 10,000"}},
		{"loaders", []string{"loaders=5000"}, "", []string{"loaders = \"5000\"", "at most 1,024"}},
		{"batch memory", []string{"loaders=1000", "bulk_insert_count=1000000"}, "", []string{"need 237 GiB for link batches"}},
		{"nlinks_default", []string{"nlinks_func=const", "nlinks_default=1e15"}, "", []string{"nlinks_default = \"1e15\"", "at most 10,000,000"}},
		{"nlinks_config", []string{"nlinks_func=multiples", "nlinks_default=1", "nlinks_config=1e12"}, "", []string{"nlinks_config", "at most 10,000,000"}},
		{"multiget", []string{"link_multiget_dist=geometric", "link_multiget_dist_max=1e9"}, "", []string{"link_multiget_dist_max", "at most 10,000"}},
		{"table name", []string{"linktable=x; DROP TABLE nodetable; --"}, "", []string{"linktable = \"x; DROP TABLE nodetable; --\"", "letters, digits"}},
		{"dbid", []string{"dbid=a'b"}, "", []string{"dbid", "letters, digits, '_', '-'"}},
		{"binary config", nil, "maxid1 = 10\n\x7fELF\x02\x01\x00\x00", []string{"main.properties:2: byte 0x7f", "binary data"}},
		{"password_file /dev/zero", []string{"password_file=/dev/zero"}, "", []string{"password_file = /dev/zero", "larger than 64 KiB"}},
		{"workload_file /dev/zero", []string{"workload_file=/dev/zero"}, "", []string{"workload_file = /dev/zero", "larger than 1 MiB"}},
		{"data_file /dev/zero", []string{"data_file=/dev/zero"}, "", []string{"data_file = \"/dev/zero\"", "larger than 64 MiB"}},
		{"data_file /dev/urandom", []string{"data_file=/dev/urandom"}, "", []string{"data_file = \"/dev/urandom\"", "larger than 64 MiB"}},
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
	if _, _, err := Load(Source{ConfigFile: "/dev/zero"}); err == nil || !strings.Contains(err.Error(), "/dev/zero is larger than 1 MiB") {
		t.Fatalf("-c /dev/zero: %v", err)
	}
	// An escape byte in a -D key is quoted in the warning, never echoed.
	_, warns, _ = Load(Source{Overrides: []string{"bad\x1b[2Jkey=1"}})
	if len(warns) != 1 || strings.Contains(warns[0], "\x1b") || !strings.Contains(warns[0], `"bad\x1b[2Jkey"`) {
		t.Fatalf("warning %q", warns)
	}
}

// TestLinkstoreOverridesPreset: -D linkstore=...Mysql without -c selects
// MySQL, not the zero-config preset's SQLite.
// Reliability(input): `-D linkstore=...LinkStoreMysql` without `-c` | MySQL is used (linkstore from -D beats the zero-config store=sqlite)
func TestLinkstoreOverridesPreset(t *testing.T) {
	preset := map[string]string{"store": "sqlite"}
	cfg, _, err := Load(Source{Defaults: preset, Overrides: []string{"linkstore=com.facebook.LinkBench.LinkStoreMysql"}})
	if err != nil || cfg.Store != "mysql" {
		t.Fatalf("store %v, %v", cfg, err)
	}
	cfg, _, err = Load(Source{Defaults: preset})
	if err != nil || cfg.Store != "sqlite" {
		t.Fatalf("preset alone: %v, %v", cfg, err)
	}
	// In one file, store wins over linkstore, as documented.
	f := write(t, t.TempDir(), "m.properties", "store = memory\nlinkstore = com.facebook.LinkBench.LinkStoreMysql\n")
	cfg, _, err = Load(Source{ConfigFile: f})
	if err != nil || cfg.Store != "memory" {
		t.Fatalf("store beside linkstore: %v, %v", cfg, err)
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
		{[]string{"request_pacing=java"}, `request_pacing = "java" (-D): expected exact`},
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

// TestDerive: a phase's settings are a derived copy whose Props record
// them with the phase as origin; the loaded config is not written, and a
// bad value or a key no phase may set is an error.
func TestDerive(t *testing.T) {
	cfg, _, err := Load(Source{Overrides: []string{"store=memory", "maxtime=7", "arrival_rate=50"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := cfg.Derive("sweep point 2 of 3", map[string]string{"maxtime": "1.5", "arrival_rate": "400", "requests": "0"})
	if err != nil {
		t.Fatal(err)
	}
	if d.MaxTime != 1500*time.Millisecond || d.ArrivalRate != 400 || d.Requests != 0 {
		t.Errorf("derived maxtime %s rate %g requests %d", d.MaxTime, d.ArrivalRate, d.Requests)
	}
	if v, _ := d.Props.Get("arrival_rate"); v != "400" || d.Props.Where("arrival_rate") != "sweep point 2 of 3" {
		t.Errorf("derived arrival_rate %q from %q", v, d.Props.Where("arrival_rate"))
	}
	if v, _ := cfg.Props.Get("maxtime"); cfg.MaxTime != 7*time.Second || cfg.ArrivalRate != 50 || v != "7" || cfg.Props.Where("maxtime") != "-D" {
		t.Errorf("the loaded config was written: maxtime %s (%q from %s), rate %g", cfg.MaxTime, v, cfg.Props.Where("maxtime"), cfg.ArrivalRate)
	}
	if _, err := cfg.Derive("x", map[string]string{"arrival_rate": "-1"}); err == nil || !strings.Contains(err.Error(), "arrival_rate") {
		t.Errorf("negative rate: %v", err)
	}
	if _, err := cfg.Derive("x", map[string]string{"maxid1": "5"}); err == nil {
		t.Error("a load key derived for a phase")
	}
}

// Paced is set by any of the three keys that pace a request phase, and by
// none of them is not.
func TestPaced(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want bool
	}{
		{Config{}, false},
		{Config{RequestRate: 100}, true},
		{Config{ArrivalRate: 8000}, true},
		{Config{Stages: "1000:10"}, true},
	} {
		if got := c.cfg.Paced(); got != c.want {
			t.Errorf("requestrate %v, arrival_rate %v, stages %q: Paced %v, want %v", c.cfg.RequestRate, c.cfg.ArrivalRate, c.cfg.Stages, got, c.want)
		}
	}
}
