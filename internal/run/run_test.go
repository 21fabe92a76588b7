package run

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/memory"
	"github.com/linkbench/linkbench/internal/store/sqlite"
	"github.com/linkbench/linkbench/internal/workload"
)

var ctx = context.Background()

type quiet struct{}

func (quiet) Infof(string, ...any) {}
func (quiet) Warnf(string, ...any) {}

func load(t *testing.T, overrides ...string) *config.Config {
	t.Helper()
	cfg, _, err := config.Load(config.Source{
		Defaults:  map[string]string{"store": "memory", "workload_file": "config/FBWorkload.properties"},
		Overrides: append([]string{"maxid1=101", "nlinks_func=const", "nlinks_default=2", "loaders=2", "requesters=1"}, overrides...),
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func spec(t *testing.T, cfg *config.Config, st store.Store) Spec {
	t.Helper()
	drv, err := store.Lookup(cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	return Spec{Config: cfg, Driver: drv, Store: st, Log: quiet{}, ToolVersion: "test"}
}

// TestLoadDecisions: what a load refuses before it writes, and what
// --truncate empties.
func TestLoadDecisions(t *testing.T) {
	cfg := load(t)
	st := memory.New()
	for _, c := range []struct {
		o    LoadOptions
		want string
	}{
		{LoadOptions{Resume: true, Truncate: true, Shards: 1}, "give one of them"},
		{LoadOptions{Resume: true, Shards: 1}, "cannot resume a load (it keeps no load journal)"},
		{LoadOptions{Truncate: true, Shard: 1, Shards: 2}, "empty the store once"},
		{LoadOptions{Shard: 1, Shards: 2}, "--shard needs the same -D load_random_seed"},
	} {
		if _, err := PrepareLoad(ctx, spec(t, cfg, st), c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	l := graph.Link{ID1: 1, LinkType: graph.DefaultLinkType, ID2: 2, Visibility: graph.VisibilityDefault}
	if _, err := st.AddLink(ctx, &l); err != nil {
		t.Fatal(err)
	}
	if _, err := PrepareLoad(ctx, spec(t, cfg, st), LoadOptions{Shards: 1}); err == nil || !strings.Contains(err.Error(), "already holds a graph") {
		t.Errorf("a load over a graph: %v", err)
	}
	ld, err := PrepareLoad(ctx, spec(t, cfg, st), LoadOptions{Truncate: true, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	if empty, _ := st.IsEmpty(ctx); !empty {
		t.Error("--truncate left the graph")
	}
	if meta, _ := st.GetMeta(ctx); meta[workload.MetaComplete] != "false" {
		t.Errorf("the load under way is not recorded: %v", meta)
	}
	if ld.Spec.Config != cfg || ld.Resuming || ld.CanResume {
		t.Errorf("a new load on the memory store: derived config %v, resuming %v, can resume %v", ld.Spec.Config != cfg, ld.Resuming, ld.CanResume)
	}
}

// TestResumeAdoptsTheRecordInACopy: a resumed load takes the interrupted
// load's seed and load time into a derived config; the given one is not
// written.
func TestResumeAdoptsTheRecordInACopy(t *testing.T) {
	cfg := load(t)
	st, err := sqlite.Open(ctx, store.Options{Props: store.MapProps{"sqlite_path": filepath.Join(t.TempDir(), "lb.db")}, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Init(ctx, false); err != nil {
		t.Fatal(err)
	}
	seed := cfg.LoadRandomSeed + 7
	recorded := *cfg
	recorded.LoadRandomSeed = seed
	const nowMs = 1_700_000_000_000
	prefix := workload.JournalPrefix(0, 1)
	err = st.PutMeta(ctx, map[string]string{
		workload.MetaSeed: strconv.FormatInt(seed, 10), workload.MetaLoadTimeMs: strconv.Itoa(nowMs),
		workload.MetaLoadParams: workload.LoadParams(&recorded, "", nowMs), prefix + workload.JournalState: workload.JournalOpen,
	})
	if err != nil {
		t.Fatal(err)
	}
	ld, err := PrepareLoad(ctx, spec(t, cfg, st), LoadOptions{Resume: true, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !ld.Resuming || ld.Spec.Config.LoadRandomSeed != seed || ld.NowMs != nowMs {
		t.Errorf("resuming %v, seed %d, load time %d; want the record's %d and %d", ld.Resuming, ld.Spec.Config.LoadRandomSeed, ld.NowMs, seed, nowMs)
	}
	if cfg.LoadRandomSeed == seed {
		t.Error("the given config was written")
	}
}

// TestRequestDerivesItsMaxTime: the loops' and the stages' maxtime are
// in the phase's derived config; the given config is not written.
func TestRequestDerivesItsMaxTime(t *testing.T) {
	for _, c := range []struct {
		loops            string
		phase, loop, was time.Duration
	}{
		{"1", 5 * time.Second, 5 * time.Second, 100 * time.Second},
		{"2", 5 * time.Second, 100 * time.Second, 100 * time.Second},
	} {
		cfg := load(t, "maxtime=100", "stages=10:2,20:3", "loops="+c.loops)
		r, err := PrepareRequest(ctx, spec(t, cfg, memory.New()), 0, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if r.Spec.Config.MaxTime != c.phase || r.Phase.Config.MaxTime != c.phase || r.Loop.MaxTime != c.loop || cfg.MaxTime != c.was {
			t.Errorf("loops %s: phase %s (%s), loop %s, given %s; want %s, %s, %s",
				c.loops, r.Spec.Config.MaxTime, r.Phase.Config.MaxTime, r.Loop.MaxTime, cfg.MaxTime, c.phase, c.loop, c.was)
		}
		if r.Phase.Schedule == nil {
			t.Error("no arrival schedule for stages")
		}
	}
}
