package memory

import (
	"testing"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return New() })
}
