// Package workload drives a store: the load phase (loaders writing the
// deterministic graph of package gen in parallel chunks, with a concurrent
// node loader) and the request phase (requesters issuing the configured
// operation mix with skewed id choice, optional throttling measured from
// intended start times, transient-error retries and failure limits).
//
// The workload talks to stores only through package store and reports
// through package stats; it prints nothing itself but progress lines sent
// to the Progress callback.
package workload
