// Package config turns the reference's Java .properties files and -D
// overrides into one typed, validated Config. It knows every key the
// reference reads, with its meaning and default; it resolves workload_file
// and data_file like the reference (falling back to the copies embedded in
// the binary); and every error names the key, the file and line, and the
// expected form.
package config
