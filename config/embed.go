// Package configfiles embeds the shipped workload files, distribution data
// and sample configs, so the binary works on a machine that has nothing
// else: a relative workload_file or data_file that is not found on disk
// falls back to the copy embedded here.
package configfiles

import (
	"embed"
	"io/fs"
	"path"
)

// FS holds every shipped .properties and .dat file at its base name.
//
//go:embed *.properties *.dat NOTICE
var FS embed.FS

// Open returns the embedded file whose base name matches name's.
func Open(name string) (fs.File, error) { return FS.Open(path.Base(name)) }

// ReadFile returns the content of the embedded file with name's base name.
func ReadFile(name string) ([]byte, error) { return FS.ReadFile(path.Base(name)) }

// Has reports whether a file with name's base name is embedded.
func Has(name string) bool {
	_, err := fs.Stat(FS, path.Base(name))
	return err == nil
}
