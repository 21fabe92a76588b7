// Package store defines the contract every backing database implements
// (SPEC section 2), the optional abilities a store may add (bulk load,
// schema management, metadata, consistency scans, size and version), the
// registry that maps config names and Java class names to stores, and the
// shared retry policy for transient errors.
//
// Stores know nothing about workloads or statistics; the workload package
// drives them only through these interfaces.
package store
