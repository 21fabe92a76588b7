package pebble

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/storetest"
)

func open(t testing.TB, props store.MapProps) *Store {
	t.Helper()
	if props["pebble_path"] == "" {
		props["pebble_path"] = filepath.Join(t.TempDir(), "db")
	}
	s, err := Open(context.Background(), store.Options{Props: props})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := open(t, store.MapProps{"pebble_sync": "false", "pebble_cache_mb": "8"})
		if err := s.Init(context.Background(), false); err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestReopenKeepsDataAndIDs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	ctx := context.Background()
	s, err := Open(ctx, store.Options{Props: store.MapProps{"pebble_path": dir}})
	if err != nil {
		t.Fatal(err)
	}
	n := graph.Node{Type: graph.NodeType, Version: 1}
	id, _ := s.AddNode(ctx, &n)
	l := graph.Link{ID1: 5, LinkType: graph.DefaultLinkType, ID2: 6, Visibility: 1, Time: 9}
	s.AddLink(ctx, &l)
	s.Close()
	s2 := open(t, store.MapProps{"pebble_path": dir})
	if c, _ := s2.CountLinks(ctx, 5, graph.DefaultLinkType); c != 1 {
		t.Fatalf("count after reopen %d", c)
	}
	if id2, _ := s2.AddNode(ctx, &n); id2 <= id {
		t.Fatalf("node id %d after reopen, earlier %d", id2, id)
	}
}

// Reliability(store): corrupt or foreign SQLite file, path under a regular file, foreign Pebble directory | one line naming the path and the fix
func TestForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644)
	_, err := Open(context.Background(), store.Options{Props: store.MapProps{"pebble_path": dir}})
	if err == nil || !strings.Contains(err.Error(), "not a Pebble database") {
		t.Fatalf("foreign directory: %v", err)
	}
}

func BenchmarkBulkLoadLinks(b *testing.B) {
	s := open(b, store.MapProps{"pebble_sync": "false"})
	ctx := context.Background()
	links := make([]graph.Link, 1024)
	data := []byte("0123456789abcdefghijklmnop")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range links {
			links[j] = graph.Link{ID1: int64(i), LinkType: graph.DefaultLinkType, ID2: int64(j), Visibility: 1, Time: int64(j), Data: data}
		}
		if err := s.LoadLinks(ctx, links); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(links))/b.Elapsed().Seconds(), "links/s")
}

// TestSecondProcessIsRefused: Pebble lets one process open a database;
// another process is refused with one line naming the holder's pid
// instead of a raw lock error.
// Reliability(writer): a second process on a Pebble database | one line naming the holder's pid (Pebble lets one process open a database)
func TestSecondProcessIsRefused(t *testing.T) {
	if path := os.Getenv("LB_PEBBLE_HOLD"); path != "" {
		s, err := Open(context.Background(), store.Options{Props: store.MapProps{"pebble_path": path}})
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		defer s.Close()
		fmt.Println("open")
		io.Copy(io.Discard, os.Stdin) // until the parent closes it
		return
	}
	path := filepath.Join(t.TempDir(), "db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondProcessIsRefused$")
	cmd.Env = append(os.Environ(), "LB_PEBBLE_HOLD="+path)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "open\n" {
		t.Fatalf("the holder process said %q", line)
	}
	_, err := Open(context.Background(), store.Options{Props: store.MapProps{"pebble_path": path}})
	var le *store.LockedError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", cmd.Process.Pid)) || !strings.Contains(err.Error(), "one process") {
		t.Fatalf("second open: %v", err)
	}
}
