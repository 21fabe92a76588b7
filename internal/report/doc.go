// Package report renders results: the reference-compatible text lines and
// per-op table, the -csvstats and -csvstream files, and the JSON results
// file of a run.
package report
