package pebble

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/linkbench/linkbench/internal/store"
)

// stallFS is the disk under a database whose fsyncs hang while stall is
// set (as a failing disk's or a hung network file system's do) until
// release is closed; waiting gets a value when a sync starts to hang.
type stallFS struct {
	vfs.FS
	stall   atomic.Bool
	waiting chan struct{}
	release chan struct{}
}

func newStallFS() *stallFS {
	return &stallFS{FS: vfs.Default, waiting: make(chan struct{}, 1), release: make(chan struct{})}
}

func (fs *stallFS) hang() {
	if fs.stall.Load() {
		select {
		case fs.waiting <- struct{}{}:
		default:
		}
		<-fs.release
	}
}

func (fs *stallFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return stallFile{f, fs}, nil
}

func (fs *stallFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.Create(name, c))
}

func (fs *stallFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, o ...vfs.OpenOption) (vfs.File, error) {
	return fs.wrap(fs.FS.OpenReadWrite(name, c, o...))
}

func (fs *stallFS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.ReuseForWrite(old, name, c))
}

func (fs *stallFS) OpenDir(name string) (vfs.File, error) { return fs.wrap(fs.FS.OpenDir(name)) }

type stallFile struct {
	vfs.File
	fs *stallFS
}

func (f stallFile) Sync() error     { f.fs.hang(); return f.File.Sync() }
func (f stallFile) SyncData() error { f.fs.hang(); return f.File.SyncData() }
func (f stallFile) SyncTo(n int64) (bool, error) {
	f.fs.hang()
	return f.File.SyncTo(n)
}

// stallDir is a database directory that outlives the test's own cleanup
// checks: a database left to finish on a released disk may still write.
func stallDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "lbstall")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "db")
}

// TestStalledDiskOpen: opening a database on a disk whose fsync hangs
// says every while that it waits for the disk, and a cancelled context
// (SIGTERM, Ctrl-C) ends the wait at once. Before, Pebble opening on such a
// disk printed nothing for 10 minutes and ignored SIGTERM.
// Reliability(store): opening a Pebble database on a disk whose fsync hangs | a line every 5 s: "opening the Pebble database DIR: still waiting for the disk after N s (Ctrl-C stops)"; Ctrl-C or SIGTERM ends the wait at once, naming the directory
func TestStalledDiskOpen(t *testing.T) {
	fs := newStallFS()
	fs.stall.Store(true)
	defer close(fs.release)
	var mu sync.Mutex
	var lines []string
	logged := make(chan struct{}, 1)
	logf := func(format string, args ...any) {
		mu.Lock()
		lines = append(lines, format)
		mu.Unlock()
		select {
		case logged <- struct{}{}:
		default:
		}
	}
	path := stallDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := openFS(ctx, store.Options{Props: store.MapProps{"pebble_path": path}, Logf: logf}, fs, 20*time.Millisecond)
		errc <- err
	}()
	<-fs.waiting
	<-logged
	cancel()
	start := time.Now()
	var err error
	select {
	case err = <-errc:
	case <-time.After(5 * time.Second):
		t.Fatal("the open did not end after the cancellation")
	}
	if time.Since(start) > time.Second || err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "waiting for the disk") {
		t.Fatalf("after %v: %v", time.Since(start), err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(lines[0], "still waiting for the disk") {
		t.Fatalf("log %q", lines)
	}
}

// TestStalledDiskClose: a store whose disk holds a commit's fsync does not
// close (Pebble's Close syncs the WAL); closing within a bound returns at
// the bound, naming the database.
// Reliability(store): closing a SQLite or Pebble store while its disk holds an fsync (a statement or commit in flight) | `store.CloseWithin` returns at its bound with "the store at PATH did not close in N s (disk or server stuck)" (the command's `close_timeout`); the store finishes closing on its own if the disk comes back
func TestStalledDiskClose(t *testing.T) {
	fs := newStallFS()
	path := stallDir(t)
	s, err := openFS(context.Background(), store.Options{Props: store.MapProps{"pebble_path": path}}, fs, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Set([]byte("k0"), []byte("v"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	fs.stall.Store(true)
	defer close(fs.release)
	go s.db.Set([]byte("k1"), []byte("v"), pebble.Sync) // hangs in its fsync
	<-fs.waiting
	start := time.Now()
	err = store.CloseWithin(s, 300*time.Millisecond)
	var stuck *store.CloseStuckError
	if took := time.Since(start); took > 1500*time.Millisecond || !errors.As(err, &stuck) ||
		err.Error() != "the store at "+path+" did not close in 0.3 s (disk or server stuck)" {
		t.Fatalf("after %v: %v", took, err)
	}
}
