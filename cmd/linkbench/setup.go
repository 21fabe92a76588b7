package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/dist"
	"github.com/linkbench/linkbench/internal/run"
	"github.com/linkbench/linkbench/internal/secret"
	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/store/shard"
)

// zeroConfigDefaults is the laptop-scale benchmark used when no -c is
// given: the embedded SQLite store with the shipped 2017 workload.
var zeroConfigDefaults = map[string]string{
	"store":               "sqlite",
	"workload_file":       "config/FBWorkload.properties",
	"data_dir":            "./linkbench-data",
	"maxid1":              "100001",
	"loaders":             "4",
	"requesters":          "4",
	"maxtime":             "60",
	"warmup_time":         "5",
	"requests":            "0",
	"max_failed_requests": "100",
	"progressfreq":        "10",
}

func toolVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
}

// logger writes "LEVEL time msg" lines to stderr and, with -L, to a file,
// with every secret of the config hidden.
type logger struct {
	mu    sync.Mutex
	out   io.Writer
	f     *os.File
	scrub *secret.Scrubber
	// via, when set, takes the lines meant for out (a progress bar that
	// prints them above itself).
	via io.Writer
}

// redirect sends the lines meant for stderr through w (nil: back to stderr).
func (l *logger) redirect(w io.Writer) {
	l.mu.Lock()
	l.via = w
	l.mu.Unlock()
}

func (l *logger) logf(level, format string, args ...any) {
	line := fmt.Sprintf("%s %s: %s\n", level, time.Now().Format("2006-01-02 15:04:05.000"), fmt.Sprintf(format, args...))
	line = l.scrub.String(line)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.via != nil {
		io.WriteString(l.via, line)
	} else {
		io.WriteString(l.out, line)
	}
	if l.f != nil {
		io.WriteString(l.f, line)
	}
}

func (l *logger) Infof(format string, args ...any) { l.logf("INFO", format, args...) }
func (l *logger) Warnf(format string, args ...any) { l.logf("WARN", format, args...) }

// toFile copies a line of human output into the log file, if any.
func (l *logger) toFile(s string) {
	if l.f == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.f, l.scrub.String(s))
}

func (l *logger) close() {
	if l.f != nil {
		l.f.Close()
	}
}

// env is everything a command needs, built once from the flags.
type env struct {
	cfg  *config.Config
	log  *logger
	data *dist.DataFile
	drv  *store.Driver
	// progressEvery is the time between progress lines: the flag
	// --progress-interval, else progressfreq.
	progressEvery time.Duration
	// where says where the data and the server are, for resource
	// measurements (found once per command).
	where *dataLocation
	// desc is what the store said about itself before the phase, for
	// results written when it no longer answers; hung is set when the
	// store stopped answering.
	desc *store.Description
	hung bool
	// stuck receives the error of a store that did not close in time.
	stuck *error
}

// closeStore closes st within close_timeout: a disk that holds a write
// or an fsync (SQLite's Close waits for the statement in flight), or a
// server that does not answer the driver's goodbye, cannot hold the
// process; a store that did not close is logged and makes the command
// exit 1. When the store hung it waits at most a second and says nothing
// more (the command already failed, naming the server).
func (e *env) closeStore(st store.Store) {
	bound := e.cfg.CloseTimeout
	if bound <= 0 {
		bound = store.DefaultCloseTimeout
	}
	if e.hung {
		bound = min(bound, time.Second)
	}
	var cs *store.CloseStuckError
	if err := store.CloseWithin(st, bound); errors.As(err, &cs) && !e.hung {
		e.log.Warnf("%v (close_timeout); exiting without waiting for it", err)
		if e.stuck != nil {
			*e.stuck = err
		}
	}
}

// setup parses the config and opens the log file.
func (a *app) setup() (*env, error) {
	lg := &logger{out: a.stderr}
	if a.opts.logFile != "" {
		f, err := os.OpenFile(a.opts.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("-L %s: %w", a.opts.logFile, err)
		}
		lg.f = f
	}
	src := config.Source{
		ConfigFile: a.opts.configFile,
		Overrides:  a.opts.overrides,
		Strict:     a.opts.strict,
		Home:       os.Getenv("LINKBENCH_HOME"),
		ExtraKeys:  map[string]bool{},
	}
	for _, d := range store.Drivers() {
		for _, k := range d.Keys {
			src.ExtraKeys[k.Name] = true
			if k.IsName {
				src.NameKeys = append(src.NameKeys, k.Name)
			}
		}
	}
	if src.ConfigFile == "" {
		src.Defaults = zeroConfigDefaults
	}
	cfg, warnings, err := config.Load(src)
	if err != nil {
		lg.close()
		return nil, err
	}
	a.hideSecrets(cfg, lg)
	for _, w := range warnings {
		lg.Warnf("%s", w)
	}
	drv, err := store.Lookup(cfg.Store)
	if err != nil {
		lg.close()
		return nil, fmt.Errorf("store %q (%s): %w", cfg.Store, cfg.Props.Where("store"), err)
	}
	e := &env{cfg: cfg, log: lg, drv: drv, progressEvery: cfg.ProgressFreq, stuck: &a.stuck}
	a.stopBound.Store(int64(cfg.CloseTimeout))
	if a.opts.progressEvery < 0 || a.opts.progressEvery > 1e6 {
		lg.close()
		return nil, fmt.Errorf("--progress-interval %g: expected seconds between progress lines, e.g. 10", a.opts.progressEvery)
	}
	if a.opts.progressEvery > 0 {
		e.progressEvery = time.Duration(a.opts.progressEvery * float64(time.Second))
	}
	if e.data, err = cfg.LoadData(); err != nil {
		lg.close()
		return nil, fmt.Errorf("data_file: %w", err)
	}
	return e, nil
}

// hideSecrets makes every later output of this command (stdout, log
// lines, the -L file, error messages) hide the passwords of cfg.
func (a *app) hideSecrets(cfg *config.Config, lg *logger) {
	var secrets, public []string
	for _, en := range cfg.Props.Entries() {
		if v := secret.Values(en.Key, en.Value); len(v) > 0 {
			secrets = append(secrets, v...)
		} else {
			public = append(public, en.Value)
		}
	}
	a.scrub = secret.NewScrubber(secrets, public)
	lg.scrub = a.scrub
	if a.plainStdout == nil {
		a.plainStdout = a.stdout
	}
	a.stdout = a.scrub.Writer(a.plainStdout)
}

// open connects to the store, sized for concurrency goroutines, which are
// the requesters of a request phase alone when requests is set
// (store.Options.Requests).
func (e *env) open(ctx context.Context, concurrency int, requests bool) (store.Store, error) {
	st, err := shard.Open(ctx, e.drv, store.Options{Props: e.cfg.Props, Concurrency: concurrency, Requests: requests, Logf: e.log.Infof})
	if err != nil {
		return nil, fmt.Errorf("open %s store: %w", e.drv.Name, err)
	}
	return st, nil
}

// spec is what a phase runs with on st: the env's configuration, driver,
// data file and logger.
func (e *env) spec(st store.Store) run.Spec {
	return run.Spec{Config: e.cfg, Driver: e.drv, Store: st, Data: e.data, Log: e.log, ToolVersion: toolVersion()}
}

// lock takes the store's one-writer lock for command in mode (a load
// needs the store alone, runs share it): another process holding a lock
// that conflicts makes the command fail at once, naming it. On a store
// that hung the release is not waited for (the session's end frees the
// lock when the process exits).
func (e *env) lock(ctx context.Context, st store.Store, mode store.LockMode, command string) (func(), error) {
	l, ok := st.(store.Locker)
	if !ok {
		return func() {}, nil
	}
	// The lock's connection and statements get a deadline: a server that
	// stops answering after the open must not hold the command.
	connect := e.cfg.ConnectTimeout
	if connect <= 0 {
		connect = store.DefaultConnectTimeout
	}
	bound := connect + max(e.cfg.OpTimeout, connect)
	lctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	release, err := l.Lock(lctx, mode, store.Holder(command))
	var le *store.LockedError
	if err != nil && ctx.Err() == nil && errors.Is(lctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("take the store's one-writer lock: no answer from %s within %s (connect_timeout + op_timeout): the server is stopped, hung or cut off", store.AddrOf(st), store.Seconds(bound))
	}
	if err != nil && !errors.As(err, &le) {
		return nil, fmt.Errorf("take the store's one-writer lock: %w", err)
	}
	if err != nil {
		return nil, err
	}
	return func() {
		if e.hung {
			go release()
			return
		}
		release()
	}, nil
}
