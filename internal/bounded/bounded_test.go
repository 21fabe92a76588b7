package bounded

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReadFileLimits(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("abc"), 0o644)
	if b, err := ReadFile(small, 3); err != nil || string(b) != "abc" {
		t.Fatalf("%q %v", b, err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(small, 2); !errors.As(err, &tl) || tl.Limit != 2 {
		t.Fatalf("regular file over the limit: %v", err)
	}
	// Devices are read only up to the limit: no hang, no memory growth.
	for _, dev := range []string{"/dev/zero", "/dev/urandom"} {
		if _, err := os.Stat(dev); err != nil {
			continue
		}
		if _, err := ReadFile(dev, 1<<20); !errors.As(err, &tl) {
			t.Errorf("%s: %v", dev, err)
		}
	}
	if _, err := ReadFile(dir, 10); err == nil {
		t.Error("a directory was read")
	}
}
