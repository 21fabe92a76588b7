package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Props gives a store its configuration keys as strings.
type Props interface {
	// Get returns the value of key and whether it is set.
	Get(key string) (string, bool)
	// Where names the origin of key for error messages ("file:line", "-D",
	// "default").
	Where(key string) string
}

// Options are what a store is opened with.
type Options struct {
	Props Props
	// Concurrency is the largest number of goroutines that will use the
	// store at once (loaders+1 or requesters); pools are sized to it.
	Concurrency int
	// Requests is set when those goroutines are the requesters of a
	// request phase run alone (no load in the same command), paced or flat
	// out: each waits for one answer at a time, and a store that chooses
	// how it waits from the count may allow more of them than of loaders.
	// What a store asks the server never depends on Concurrency or
	// Requests (SPEC, "What the server sees").
	Requests bool
	// Logf receives diagnostic messages; may be nil.
	Logf func(format string, args ...any)
}

// KeyDoc documents one store-specific config key.
type KeyDoc struct {
	Name    string
	Default string
	Doc     string
	// IsName is set for a key whose value names a schema or database:
	// the config checks it as it checks dbid.
	IsName bool
}

// Driver registers one kind of store.
type Driver struct {
	// Name is the value of `store` (e.g. "sqlite").
	Name string
	// Aliases are other accepted names, such as the reference's Java class
	// names (com.facebook.LinkBench.LinkStoreMysql).
	Aliases []string
	// Keys are the config keys this store reads beyond the common ones.
	Keys []KeyDoc
	// Open connects to the store.
	Open func(ctx context.Context, opts Options) (Store, error)
	// FilesPerWorker is how many file descriptors the store may hold per
	// unit of Options.Concurrency (sockets of its pools, or database
	// files per connection); the runner checks the total against the
	// process's limit before any work. 0 means none.
	FilesPerWorker int
	// Embedded is set for a store that lives in the driver's process and
	// keeps its files under the config key data_dir (no server).
	Embedded bool
	// PerProcess is set for a store whose data lives only as long as the
	// process: a graph loaded by another process is never there.
	PerProcess bool
	// Abilities are the optional interfaces the store implements (the
	// conformance suite checks them against the store's methods).
	Abilities Ability
	// CheckTargets, when set, refuses settings of the store that cannot
	// be combined with a list of hosts to shard over, naming the fix.
	CheckTargets func(props Props) error
}

var (
	mu      sync.RWMutex
	drivers = map[string]*Driver{}
)

// Register makes a driver available by its name and aliases. It is called
// from the init function of each store package.
func Register(d Driver) {
	mu.Lock()
	defer mu.Unlock()
	for _, n := range append([]string{d.Name}, d.Aliases...) {
		k := strings.ToLower(n)
		if _, dup := drivers[k]; dup {
			panic("store: driver registered twice: " + n)
		}
		dd := d
		drivers[k] = &dd
	}
}

// Lookup finds a driver by name or alias, case-insensitively.
func Lookup(name string) (*Driver, error) {
	mu.RLock()
	defer mu.RUnlock()
	if d, ok := drivers[strings.ToLower(strings.TrimSpace(name))]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("unknown store %q (known: %s)", name, strings.Join(namesLocked(), ", "))
}

// Names lists the registered store names (aliases excluded), sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range drivers {
		if !seen[d.Name] {
			seen[d.Name] = true
			out = append(out, d.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Drivers lists the registered drivers, one per name, sorted by name.
func Drivers() []*Driver {
	mu.RLock()
	defer mu.RUnlock()
	var out []*Driver
	for _, n := range namesLocked() {
		out = append(out, drivers[n])
	}
	return out
}
