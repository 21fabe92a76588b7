package main

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/linkbench/linkbench/internal/store"
	"github.com/linkbench/linkbench/internal/sysmon"
)

// dataLocation is where a store keeps its data on this machine, as far as
// resource measurements need it.
type dataLocation struct {
	dataPath   string // a local path on the data's disk ("" = every disk)
	serverPIDs []int  // the local server's main processes
	// embedded: the data lives inside the driver process, whose memory is
	// then the "server" memory of the summary lines.
	embedded bool
	// unknown says why a server's figures cannot be measured ("" = they can).
	unknown string
}

// locateData asks a server store where its server is and keeps the servers
// that run on this machine; an embedded store's data is in data_dir.
func locateData(ctx context.Context, e *env, st store.Store) *dataLocation {
	loc, ok := st.(store.ServerLocator)
	if !ok {
		dir, _ := e.cfg.Props.Get("data_dir")
		return &dataLocation{dataPath: dir, embedded: true}
	}
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	servers, err := loc.Servers(qctx)
	if err != nil {
		w := &dataLocation{unknown: "the server did not say where it runs (" + err.Error() + ")"}
		e.log.Infof("server CPU, memory and disk not measured: %s", w.unknown)
		return w
	}
	w := &dataLocation{}
	var why []string
	for _, s := range servers {
		pid, reason := sysmon.Locate("", sysmon.Server{Addr: s.Addr, PID: s.PID, PIDFile: s.PIDFile, DataDir: s.DataDir})
		if pid == 0 {
			why = append(why, reason)
			continue
		}
		w.serverPIDs = append(w.serverPIDs, pid)
		if w.dataPath == "" {
			w.dataPath = s.DataDir
		}
	}
	switch {
	case len(servers) == 0:
		w.unknown = "the store names no server"
	case len(why) > 0:
		w.unknown = strings.Join(why, "; ")
	}
	if w.unknown != "" {
		e.log.Infof("server CPU and memory not measured: %s", w.unknown)
	}
	return w
}

// monitor samples resource use: the disk that holds the data, and the
// database server's processes when it runs on this machine.
func (e *env) monitor(ctx context.Context, st store.Store, skip time.Duration) *sysmon.Monitor {
	if e.where == nil {
		e.where = locateData(ctx, e, st)
	}
	return sysmon.Start(ctx, sysmon.Options{Skip: skip, DataPath: e.where.dataPath, ServerPIDs: e.where.serverPIDs})
}

func sizeOf(ctx context.Context, st store.Store) int64 {
	if s, ok := st.(store.Sizer); ok {
		if n, err := s.SizeOnDisk(ctx); err == nil {
			return n
		}
	}
	return 0
}

// logStoreSettings prints what the store reports about itself (server
// version, consistency mode and the like) so the text results say which
// guarantees the figures were measured under; the bundle has them too.
func logStoreSettings(ctx context.Context, e *env, st store.Store) {
	d, ok := st.(store.Describer)
	if !ok {
		return
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	desc, err := d.Describe(dctx)
	cancel()
	if err != nil {
		return
	}
	e.desc = &desc
	keys := make([]string, 0, len(desc.Settings))
	for k := range desc.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys)+1)
	if desc.Version != "" {
		parts = append(parts, "server "+desc.Version)
	}
	for _, k := range keys {
		parts = append(parts, k+" = "+desc.Settings[k])
	}
	if len(parts) > 0 {
		e.log.Infof("store %s: %s", e.drv.Name, strings.Join(parts, ", "))
	}
}
