package dist

import (
	"bytes"
	"testing"
)

// FuzzParseDataFile checks that no input makes the parser panic, and that
// whatever it accepts yields usable distributions.
// Reliability(input): empty or garbled Distribution.dat | the file, line and problem
func FuzzParseDataFile(f *testing.F) {
	f.Add([]byte("nlinks\n1 50\n2 100\n"))
	f.Add([]byte("nlinks\n0 10\n5 100\nlink_nreads\n1 100\n"))
	f.Add([]byte("nlinks\n1 -5\n"))
	f.Add([]byte("\x00\xff garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDataFile(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		for _, s := range d.sections {
			_ = s.Quantile(0)
			_ = s.Quantile(1)
			_ = newRealAccess(s, 10)
		}
	})
}
