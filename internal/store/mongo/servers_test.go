package mongo

import (
	"testing"

	"github.com/linkbench/linkbench/internal/store/storetest"
)

// TestServersFindsTheLocalServer: the pid serverStatus reports is the test
// server's process.
func TestServersFindsTheLocalServer(t *testing.T) { storetest.CheckLocalServer(t, fresh(t, nil)) }
