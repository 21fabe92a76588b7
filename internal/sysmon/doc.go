// Package sysmon samples resource use from /proc while a phase runs: the
// driver's CPU and memory, the machine's CPU (user, sys, iowait), disk
// operations and bytes, context switches, and the CPU and memory of a
// database server running on the same machine (found by its pid, with the
// processes it started). From the samples it derives the per-operation
// efficiency figures experienced LinkBench users compute by hand from
// vmstat and iostat, for a whole phase or for consecutive windows of it.
//
// On systems without /proc every figure is zero and Available is false.
package sysmon
