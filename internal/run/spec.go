package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/dist"
	"github.com/linkbench/linkbench/internal/gen"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// Logger takes a phase's log lines.
type Logger interface {
	Infof(format string, args ...any)
	Warnf(format string, args ...any)
}

// Spec is what a phase runs with. It is a value: a phase that derives
// other settings returns a Spec of its own and leaves this one as it is.
type Spec struct {
	// Config is the effective configuration; it is never written.
	Config *config.Config
	Driver *store.Driver
	Store  store.Store
	// Data is the real-distribution data file (nil without one).
	Data *dist.DataFile
	Log  Logger
	// ToolVersion is recorded in the graph metadata a load writes.
	ToolVersion string
}

// With returns a copy of s running with cfg.
func (s Spec) With(cfg *config.Config) Spec {
	s.Config = cfg
	return s
}

// Retry is the retry policy of s's configuration (retry_attempts).
func (s Spec) Retry() store.RetryPolicy { return RetryPolicy(s.Config) }

// RetryPolicy is the store retry policy of cfg (retry_attempts).
func RetryPolicy(cfg *config.Config) store.RetryPolicy {
	p := store.DefaultRetryPolicy
	p.MaxAttempts = max(cfg.RetryAttempts, 1)
	return p
}

// DataHash is the SHA-256 of the data file ("" without one).
func (s Spec) DataHash() string {
	if s.Data == nil {
		return ""
	}
	return s.Data.Hash()
}

// Graph builds the deterministic graph generator of the configuration,
// with nowMs as the load time of its rows.
func (s Spec) Graph(nowMs int64) (*gen.Graph, error) {
	cfg := s.Config
	return gen.NewGraph(gen.GraphSpec{
		StartID1: cfg.StartID1, MaxID1: cfg.MaxID1, LinkTypeCount: cfg.LinkTypeCount,
		RandomID2Max: cfg.RandomID2Max, NLinks: cfg.NLinks, Data: s.Data,
		LinkDataSize: cfg.LinkDataSize, NodeDataSize: cfg.NodeDataSize,
		LinkGen: cfg.LinkAddGen, NodeGen: cfg.NodeAddGen,
		Seed: cfg.LoadRandomSeed, NowMs: nowMs,
	})
}

// where names the store in messages: "the NAME store at ADDR".
func (s Spec) where() string {
	w := "the " + s.Driver.Name + " store"
	if addr := store.AddrOf(s.Store); addr != "" {
		w += " at " + addr
	}
	return w
}

// CheckSchema reports missing or wrong tables before any work starts.
func CheckSchema(ctx context.Context, st store.Store) error {
	sc, ok := st.(store.SchemaChecker)
	if !ok {
		return nil
	}
	err := sc.CheckSchema(ctx)
	if err != nil && !errors.Is(err, graph.ErrSchema) {
		return fmt.Errorf("check the tables: %w", err)
	}
	return err
}

// PrepareSchema creates the store's schema (Init is idempotent). With
// keepExisting a schema that is already there is left as it is: after an
// interrupted load the deferred index is missing, and creating it here
// would build it over the partial tables before --truncate empties them or
// before --resume adds the rest; the load's end builds it once, over
// every row.
func PrepareSchema(ctx context.Context, st store.Store, keepExisting bool) error {
	if keepExisting {
		if sc, ok := st.(store.SchemaChecker); ok && sc.CheckSchema(ctx) == nil {
			return nil
		}
	}
	if in, ok := st.(store.Initializer); ok {
		if err := in.Init(ctx, false); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	return CheckSchema(ctx, st)
}
