// Package bounded reads the files a user names (config, workload, data,
// password and certificate files) with a size limit, so that a path such
// as /dev/zero or a multi-gigabyte file by mistake is refused at once with
// one clear line instead of filling memory.
package bounded

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Limits of the files linkbench reads, with room far beyond the shipped
// ones (config files of about 2 KB, a Distribution.dat of 565 KB).
const (
	// Config is the limit of .properties files (config and workload).
	Config = 1 << 20
	// Data is the limit of a distribution data file (data_file).
	Data = 64 << 20
	// Secret is the limit of a password file.
	Secret = 64 << 10
	// Cert is the limit of a PEM certificate or key file.
	Cert = 1 << 20
)

// TooLargeError is returned when a file is larger than its limit.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the limit of this kind of file (is it the right file?)", e.Path, Size(e.Limit))
}

// Size prints a byte count as KiB, MiB or bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads path, failing with a *TooLargeError when it holds more
// than limit bytes. Devices and pipes are read up to limit+1 bytes only.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, &os.PathError{Op: "read", Path: path, Err: errors.New("is a directory")}
	} else if err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return b, nil
}
