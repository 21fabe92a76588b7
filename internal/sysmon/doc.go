// Package sysmon samples resource use from /proc while a phase runs: the
// driver's CPU, the machine's CPU (user, sys, iowait), disk operations and
// bytes, context switches, and the CPU and RSS of a local database server.
// From the samples it derives the per-operation efficiency figures
// experienced LinkBench users compute by hand from vmstat and iostat.
//
// On systems without /proc every figure is zero and Available is false.
package sysmon
