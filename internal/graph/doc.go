// Package graph holds the data model of the LinkBench workload: nodes, typed
// directed links, per-(id1, link_type) counts, the operation enum and the
// error kinds every store maps its driver errors to.
package graph
