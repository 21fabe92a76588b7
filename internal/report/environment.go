package report

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// Build describes the linkbench binary.
type Build struct {
	Version      string `json:"version"`
	Revision     string `json:"revision,omitempty"`
	RevisionTime string `json:"revision_time,omitempty"`
	// Modified is set when the binary was built from a tree with
	// uncommitted changes.
	Modified bool `json:"modified,omitempty"`
}

// DataFS is the file system under an embedded store's data.
type DataFS struct {
	Path       string `json:"path"`
	MountPoint string `json:"mount_point,omitempty"`
	Type       string `json:"type,omitempty"`
	Device     string `json:"device,omitempty"`
}

// ReadBuild reads the version control facts the Go toolchain stamps into
// the binary.
func ReadBuild(version string) Build {
	b := Build{Version: version}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.RevisionTime = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	return b
}

// machineFacts fills what the operating system says about the machine;
// facts it cannot read stay empty.
func machineFacts(e *Environment) {
	e.CPUModel = cpuModel()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(b))
	}
	e.MemoryBytes = memTotal()
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// FileSystemOf finds the mount that holds path (or its nearest existing
// parent): its mount point, file system type and device. Linux only; an
// empty result elsewhere.
func FileSystemOf(path string) DataFS {
	fs := DataFS{Path: path}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fs
	}
	for {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
			break
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			break
		}
		abs = parent
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fs
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - type source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 2 {
			continue
		}
		mp := unescapeMount(fields[4])
		if !within(abs, mp) || len(mp) < len(fs.MountPoint) {
			continue
		}
		fs.MountPoint, fs.Type, fs.Device = mp, tail[0], tail[1]
	}
	return fs
}

func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// unescapeMount decodes the octal escapes (\040 for a space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// RedactArgs hides the secrets of a command line: -D password=... and the
// password of a -D url=....
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		kv := a
		prefix := ""
		if strings.HasPrefix(a, "-D") && len(a) > 2 {
			prefix, kv = "-D", a[2:]
		} else if i == 0 || (args[i-1] != "-D" && args[i-1] != "--define") {
			continue
		}
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[i] = prefix + k + "=" + Redact(strings.TrimSpace(k), v)
		}
	}
	return out
}
