package main

import (
	"context"

	"github.com/linkbench/linkbench/internal/store"
)

// prepare reads the config (setup) and checks, before any work, that the
// results can be written; close closes the log.
func (a *app) prepare() (e *env, close func(), err error) {
	e, err = a.setup()
	if err != nil {
		return nil, nil, err
	}
	if err := a.checkResultsDir(e); err != nil {
		e.log.close()
		return nil, nil, err
	}
	return e, e.log.close, nil
}

// connect opens the store for conc workers, requesters alone or not, flat
// out or not (after checking the file limit for value noun), takes its
// one-writer lock in mode for command and serves live metrics; close
// undoes them in reverse order.
func (a *app) connect(ctx context.Context, e *env, conc int, requests bool, noun string, value int, mode store.LockMode, command string) (st store.Store, close func(), err error) {
	if err := e.checkFiles(conc, noun, value); err != nil {
		return nil, nil, err
	}
	st, release, err := e.attach(ctx, conc, requests, mode, command)
	if err != nil {
		return nil, nil, err
	}
	stopMetrics, err := a.startMetrics(e)
	if err != nil {
		release()
		return nil, nil, err
	}
	return st, func() {
		stopMetrics()
		release()
	}, nil
}

// attach opens the store for conc workers, requesters alone or not, flat
// out or not, and takes its one-writer lock in mode for command; release
// unlocks and closes it.
func (e *env) attach(ctx context.Context, conc int, requests bool, mode store.LockMode, command string) (st store.Store, release func(), err error) {
	if st, err = e.open(ctx, conc, requests); err != nil {
		return nil, nil, err
	}
	unlock, err := e.lock(ctx, st, mode, command)
	if err != nil {
		e.closeStore(st)
		return nil, nil, err
	}
	return st, func() {
		unlock()
		e.closeStore(st)
	}, nil
}
