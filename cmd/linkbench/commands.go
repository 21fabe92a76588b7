package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/linkbench/linkbench/internal/check"
	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/report"
	"github.com/linkbench/linkbench/internal/run"
	"github.com/linkbench/linkbench/internal/secret"
	"github.com/linkbench/linkbench/internal/store"
)

// printConfig prints every effective key, its value and its origin, and
// the keys of the store in use with their defaults; with all (--all) also
// the keys left unset and the keys of every other store.
func (a *app) printConfig(all bool) error {
	e, err := a.setup()
	if err != nil {
		return err
	}
	defer e.log.close()
	type row struct{ key, value, from string }
	var rows []row
	set := map[string]bool{}
	for _, en := range e.cfg.Props.Entries() {
		rows = append(rows, row{config.Printable(en.Key), shortValue(secret.Redact(en.Key, en.Value)), en.OriginText()})
		set[en.Key] = true
	}
	// A store's key that is not set takes the store's default; a key that
	// stores share with one default is listed once.
	stores := map[int][]string{}
	listed := map[[2]string]int{}
	addStore := func(d *store.Driver) {
		for _, k := range d.Keys {
			if set[k.Name] {
				continue
			}
			i, ok := listed[[2]string{k.Name, k.Default}]
			if !ok {
				i = len(rows)
				listed[[2]string{k.Name, k.Default}] = i
				rows = append(rows, row{k.Name, docValue(k.Default), ""})
			}
			stores[i] = append(stores[i], d.Name)
		}
	}
	addStore(e.drv)
	for i := range stores {
		rows[i].from = "default of store " + e.drv.Name + " (in use)"
	}
	for _, k := range e.drv.Keys {
		set[k.Name] = true
	}
	if all {
		for _, k := range config.AllKeys() {
			if !set[k.Name] {
				rows = append(rows, row{k.Name, "-", "unset"})
			}
		}
		for _, d := range store.Drivers() {
			if d.Name != e.drv.Name {
				addStore(d)
			}
		}
		for i, names := range stores {
			if rows[i].from == "" {
				rows[i].from = "default of store " + strings.Join(names, ", ")
			}
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].key < rows[j].key })
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "# store resolves to %q", e.drv.Name)
	if !all {
		fmt.Fprint(tw, "; --all also lists the keys left unset and the keys of the other stores")
	}
	fmt.Fprintln(tw, "; docs/config.md says what each key does")
	fmt.Fprintln(tw, "KEY\tVALUE\tFROM")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.key, r.value, r.from)
	}
	return tw.Flush()
}

// docValue is a default as the config listing shows it ("-" for none).
func docValue(v string) string {
	if v == "" {
		return "-"
	}
	return v
}

// shortValue is a value as the config listing shows it: escaped when it
// holds control bytes, and cut when it is long (a 1 MB value would pad
// every line of the table to its width).
func shortValue(v string) string {
	v = config.Printable(v)
	if len(v) > 200 {
		return fmt.Sprintf("%s... (%d bytes)", v[:120], len(v))
	}
	return v
}

// initSchema creates (or with --drop recreates) the store's schema.
func (a *app) initSchema(ctx context.Context) error {
	e, err := a.setup()
	if err != nil {
		return err
	}
	defer e.log.close()
	st, err := e.open(ctx, 1, false)
	if err != nil {
		return err
	}
	defer e.closeStore(st)
	// The DDL may rightly take long; a server that stops answering ends it.
	ctx, stopWatch := store.WatchAlive(ctx, st, e.cfg.OpTimeout)
	defer stopWatch()
	if a.opts.drop {
		unlock, err := e.lock(ctx, st, store.LockLoad, "init --drop")
		if err != nil {
			return err
		}
		defer unlock()
	}
	in, ok := st.(store.Initializer)
	if !ok {
		fmt.Fprintf(a.stdout, "store %s needs no schema\n", e.drv.Name)
		return nil
	}
	if err := in.Init(ctx, a.opts.drop); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	fmt.Fprintf(a.stdout, "schema of store %s is ready\n", e.drv.Name)
	return nil
}

// check verifies the count invariant and exits 1 on any mismatch; a check
// that Ctrl-C stops says that it verified nothing.
func (a *app) check(ctx context.Context) error {
	err := a.checkStore(ctx)
	if err != nil && ctx.Err() != nil {
		return &exitError{code: 130, err: errors.New("check interrupted before it finished: nothing was verified")}
	}
	return err
}

func (a *app) checkStore(ctx context.Context) error {
	e, err := a.setup()
	if err != nil {
		return err
	}
	defer e.log.close()
	if err := a.checkDataExists(e, "check"); err != nil {
		return err
	}
	st, err := e.open(ctx, 2, false)
	if err != nil {
		return err
	}
	defer e.closeStore(st)
	// The scans may rightly take long; a server that stops answering (no
	// answer to a ping within op_timeout) ends them.
	ctx, stopWatch := store.WatchAlive(ctx, st, e.cfg.OpTimeout)
	defer stopWatch()
	unlock, err := e.lock(ctx, st, store.LockRun, "check")
	if err != nil {
		return err
	}
	defer unlock()
	if err := run.CheckSchema(ctx, st); err != nil {
		return err
	}
	sc, ok := st.(store.Scanner)
	if !ok {
		return fmt.Errorf("store %s cannot be checked (it has no scan ability)", e.drv.Name)
	}
	if err := a.checkGraph(ctx, e, st, "check"); err != nil {
		return err
	}
	res, err := check.Run(ctx, sc, check.Options{})
	if err != nil && store.NoAnswer(ctx) {
		e.hung = true
		return fmt.Errorf("check: %s did not answer a ping within op_timeout = %s: the server is stopped, hung or cut off", store.AddrOf(st), e.cfg.OpTimeout)
	}
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	return a.printCheck(res)
}

func (a *app) printCheck(res *check.Result) error {
	fmt.Fprintf(a.stdout, "checked %d (id1, link_type) keys", res.Keys)
	if res.Nodes {
		fmt.Fprintf(a.stdout, ", node ids %d..%d", res.MinNode, res.MaxNode)
	}
	fmt.Fprintln(a.stdout)
	for _, m := range res.First {
		fmt.Fprintf(a.stdout, "MISMATCH %s\n", m)
	}
	if extra := res.Mismatches - int64(len(res.First)); extra > 0 {
		fmt.Fprintf(a.stdout, "... and %d more mismatches\n", extra)
	}
	for _, n := range res.NodeIssues {
		fmt.Fprintf(a.stdout, "NODE %s\n", n)
	}
	if !res.OK() {
		return &exitError{code: 1, err: fmt.Errorf("check failed: %d count mismatches, %d node issues", res.Mismatches, len(res.NodeIssues))}
	}
	fmt.Fprintln(a.stdout, "check passed: every count equals its visible links")
	return nil
}

// report renders one bundle's report again, or compares several sides
// (a bundle each, or a directory of bundles each): a table of deltas with
// their noise on stdout and a comparison page.
func (a *app) report(dirs []string, out string) error {
	sides, err := readSides(dirs)
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join(besideAll(dirs), "comparison.html")
		if len(dirs) == 1 {
			out = filepath.Join(dirs[0], "report.html")
		}
	}
	var page bytes.Buffer
	if len(sides) > 1 {
		if err := report.WriteSidesText(a.stdout, sides); err != nil {
			return err
		}
		err = report.WriteComparisonHTML(&page, sides)
	} else {
		err = report.WriteHTML(&page, sides[0].Runs, sides[0].RunNames)
	}
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, page.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	fmt.Fprintf(a.stdout, "report written to %s\n", out)
	return nil
}

// besideAll is the directory the bundles dirs are in: their common
// parent (the results directory, when they share one), else the first's.
func besideAll(dirs []string) string {
	parent := filepath.Dir(filepath.Clean(dirs[0]))
	for _, d := range dirs[1:] {
		if filepath.Dir(filepath.Clean(d)) != parent {
			return commonDir(dirs)
		}
	}
	return parent
}

// commonDir is the deepest directory that holds every one of dirs (their
// first's parent when they share none but the root or the current one).
func commonDir(dirs []string) string {
	abs := make([]string, len(dirs))
	for i, d := range dirs {
		a, err := filepath.Abs(d)
		if err != nil {
			return filepath.Dir(filepath.Clean(dirs[0]))
		}
		abs[i] = a
	}
	common := filepath.Dir(abs[0])
	for _, a := range abs[1:] {
		for common != filepath.Dir(common) && !strings.HasPrefix(a, common+string(filepath.Separator)) {
			common = filepath.Dir(common)
		}
	}
	if common == filepath.Dir(common) {
		return filepath.Dir(filepath.Clean(dirs[0]))
	}
	return common
}

// expandBundles replaces each directory that is not itself a bundle by the
// request-phase bundles found under it (up to three levels down, e.g.
// DIR/shard-3/<stamp>-request), so one path can name a whole fleet's
// results.
func expandBundles(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "summary.json")); err == nil {
			out = append(out, d)
			continue
		}
		var found []string
		root := filepath.Clean(d)
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.IsDir() {
				return nil
			}
			if strings.Count(strings.TrimPrefix(p, root), string(filepath.Separator)) > 3 || strings.HasPrefix(e.Name(), ".tmp-") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "summary.json")); err != nil {
				return nil
			}
			if r, err := report.ReadBundle(p); err == nil && r.Phase == "request" {
				found = append(found, p)
			}
			return filepath.SkipDir
		})
		if err != nil {
			return nil, fmt.Errorf("report --merge: %w", err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("report --merge: %s is not a results bundle and holds no request-phase bundles", d)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// mergeBundles combines shard bundles into one new bundle.
func (a *app) mergeBundles(dirs []string) error {
	dirs, err := expandBundles(dirs)
	if err != nil {
		return err
	}
	var runs []*report.Results
	var hists []map[graph.Op]*hdr.Histogram
	for _, d := range dirs {
		r, err := report.ReadBundle(d)
		if err != nil {
			return err
		}
		h, err := report.ReadHistograms(d)
		if err != nil {
			return err
		}
		runs, hists = append(runs, r), append(hists, h)
	}
	merged, mh, err := report.Merge(runs, hists)
	if err != nil {
		return err
	}
	parent := a.opts.resultsDir
	if parent == "" {
		parent = filepath.Dir(filepath.Clean(dirs[0]))
	}
	merged.Phase += "-merged"
	dir, err := report.WriteBundle(parent, merged, mh, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "merged %d bundles: %d requests, %.0f requests/s; written to %s\n", len(dirs), merged.Totals.Requests, merged.Totals.OpsPerSec, dir)
	return nil
}

// printVersion prints the version and what the results record about the
// build and the machine.
func (a *app) printVersion() error {
	b := report.ReadBuild(toolVersion())
	env := report.CurrentEnvironment()
	fmt.Fprintf(a.stdout, "linkbench %s\n", b.Version)
	if b.Revision != "" {
		rev := b.Revision
		if b.RevisionTime != "" {
			rev += " (" + b.RevisionTime + ")"
		}
		if b.Modified {
			rev += " with uncommitted changes"
		}
		fmt.Fprintf(a.stdout, "revision: %s\n", rev)
	}
	fmt.Fprintf(a.stdout, "go: %s %s/%s\n", env.GoVersion, env.OS, env.Arch)
	cpu := env.CPUModel
	if cpu == "" {
		cpu = "unknown model"
	}
	fmt.Fprintf(a.stdout, "cpu: %d x %s\n", env.CPUs, cpu)
	if env.Kernel != "" {
		fmt.Fprintf(a.stdout, "kernel: %s\n", env.Kernel)
	}
	if env.MemoryBytes > 0 {
		fmt.Fprintf(a.stdout, "memory: %.1f GiB\n", float64(env.MemoryBytes)/(1<<30))
	}
	// The zero-config data directory, or the current one.
	dir := config.ZeroConfig()["data_dir"]
	if _, err := os.Stat(dir); err != nil {
		dir = "."
	}
	if fs := report.FileSystemOf(dir); fs.Type != "" {
		fmt.Fprintf(a.stdout, "file system of %s: %s on %s (mounted at %s)\n", dir, fs.Type, fs.Device, fs.MountPoint)
	}
	return nil
}
