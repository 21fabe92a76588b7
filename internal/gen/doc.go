// Package gen generates the workload's data: payload bytes (the motif and
// uniform generators) and the load phase's graph. The graph is a pure
// function of its spec and seed: every node and every link is derived from
// (seed, id1, link type, index) alone, so any number of loaders, any chunk
// order and any split of a large adjacency list produce identical rows.
package gen
