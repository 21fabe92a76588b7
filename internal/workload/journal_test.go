package workload

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// silentJournal is a store that never answers a journal write.
type silentJournal struct{}

func (silentJournal) GetMeta(context.Context) (map[string]string, error) { return nil, nil }
func (silentJournal) PutMeta(context.Context, map[string]string) error   { return nil }
func (silentJournal) UpdateMeta(ctx context.Context, _ map[string]string, _ string) error {
	<-ctx.Done()
	return ctx.Err()
}
func (silentJournal) ClaimMeta(ctx context.Context, _, _ string) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

// TestSilentJournalWriteIsATimeout: a journal write the store never
// answers fails as a silence, like a bulk call's (a TimeoutError, so the
// load says a resume will continue it), not as an error the resume would
// meet again (a hung server under TestHungServerDuringLoad got that).
func TestSilentJournalWriteIsATimeout(t *testing.T) {
	p := &LoadPhase{Config: &config.Config{OpTimeout: 50 * time.Millisecond}, Retry: store.RetryPolicy{MaxAttempts: 1}, Journal: silentJournal{}}
	err := p.mark(context.Background(), "chunk-0", JournalStarted)
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, graph.ErrConnection) || !errors.Is(err, ErrOpTimeout) {
		t.Fatalf("err = %v (%T), want a TimeoutError for op_timeout", err, err)
	}
	if !strings.Contains(err.Error(), "recording load progress abandoned after 50ms without an answer from the store (op_timeout)") {
		t.Fatalf("message %q", err)
	}
}
