package storetest

import (
	"fmt"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
)

// testClaimMeta: of claims of one key made at once, exactly one wins and
// every claimer reads the winner's value; a later claim changes nothing.
func testClaimMeta(t *testing.T, s store.Store) {
	j, ok := s.(store.Journaler)
	if !ok {
		t.Skip("store keeps no load journal")
	}
	const n = 8
	held := make([]string, n)
	err := AtOnce(n, func(i int) error {
		v, err := j.ClaimMeta(ctx, "fleet.finisher", fmt.Sprintf("claimer %d", i))
		held[i] = v
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	won := 0
	for i, v := range held {
		if v != held[0] {
			t.Fatalf("claimers read different holders: %q and %q", held[0], v)
		}
		if v == fmt.Sprintf("claimer %d", i) {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d claimers won, want exactly 1 (holder %q)", won, held[0])
	}
	if v, err := j.ClaimMeta(ctx, "fleet.finisher", "late"); err != nil || v != held[0] {
		t.Fatalf("a later claim read %q (%v), want the holder %q", v, err, held[0])
	}
	meta, err := j.GetMeta(ctx)
	if err != nil || meta["fleet.finisher"] != held[0] {
		t.Fatalf("GetMeta has fleet.finisher = %q (%v), want %q", meta["fleet.finisher"], err, held[0])
	}
}
