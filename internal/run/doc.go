// Package run owns the protocol of each phase of a benchmark: what a load
// checks and decides before it writes (schema, truncate or refuse a
// non-empty store, shards, resuming an interrupted load from its journal),
// the graph metadata it records before and after, what a request phase
// checks and builds before it runs (schema, graph record, arrival
// schedule), and how a phase's failure is told apart (interrupted, store
// lost or hung, a resumable load).
//
// A phase is built from a Spec: the effective configuration, the store,
// its driver, the data file and a logger. The Spec's configuration is
// never written: a phase that needs other settings (the seed of an
// interrupted load, the parameters adopted from the loaded graph, the
// length of all loops, a sweep point's rate) works on a derived copy,
// which it returns.
//
// The command line (cmd/linkbench) keeps the flags, the terminal output,
// the results files and the exit codes.
package run
