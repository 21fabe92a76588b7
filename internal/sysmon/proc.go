package sysmon

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of CPU times in /proc (100 on every
// Linux architecture Go supports).
const clockTicks = 100

// counters is one reading of the cumulative counters.
type counters struct {
	driverCPU                    float64 // seconds
	user, sys, iowait, idle, all float64 // seconds, all CPUs
	ctxt                         uint64
	reads, writes                uint64 // completed operations
	readKB, writeKB              float64
	driverRSS                    int64   // bytes
	serverCPU                    float64 // seconds
	serverRSS                    int64   // bytes
	serverOK                     bool    // the server's processes were read
}

func readFile(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// readStat parses /proc/stat's first cpu line and ctxt.
func readStat(root string, c *counters) bool {
	b := readFile(filepath.Join(root, "stat"))
	if len(b) == 0 {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "cpu":
			var v [10]float64
			for i := 1; i < len(f) && i <= 10; i++ {
				x, _ := strconv.ParseFloat(f[i], 64)
				v[i-1] = x / clockTicks
			}
			c.user = v[0] + v[1] // user + nice
			c.sys = v[2] + v[5] + v[6]
			c.idle = v[3]
			c.iowait = v[4]
			for _, x := range v[:8] {
				c.all += x
			}
		case "ctxt":
			if len(f) > 1 {
				c.ctxt, _ = strconv.ParseUint(f[1], 10, 64)
			}
		}
	}
	return true
}

// statFields returns the fields of /proc/<pid>/stat after the command
// name (which may contain spaces): state, ppid, ... (nil when unreadable).
func statFields(root, pid string) []string {
	b := readFile(filepath.Join(root, pid, "stat"))
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// procCPU returns utime+stime in seconds and RSS in bytes of /proc/<pid>.
func procCPU(root, pid string) (cpu float64, rss int64, ok bool) {
	// After ')': state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14) ... rss(21)
	f := statFields(root, pid)
	if len(f) < 22 {
		return 0, 0, false
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	pages, _ := strconv.ParseInt(f[21], 10, 64)
	return (ut + st) / clockTicks, pages * int64(os.Getpagesize()), true
}

// reapedCPU is the CPU time of the children pid has waited for (cutime +
// cstime), in seconds: the work of server processes that already exited.
func reapedCPU(root, pid string) float64 {
	f := statFields(root, pid)
	if len(f) < 15 {
		return 0
	}
	cu, _ := strconv.ParseFloat(f[13], 64)
	cs, _ := strconv.ParseFloat(f[14], 64)
	return (cu + cs) / clockTicks
}

// treeCPU is the CPU time of root and its live descendants plus the time
// of the descendants root reaped, and the sum of their resident sizes.
func treeCPU(root string, pid int) (cpu float64, rss int64, ok bool) {
	for i, p := range tree(root, pid) {
		c, r, alive := procCPU(root, strconv.Itoa(p))
		if !alive {
			continue
		}
		if i == 0 {
			ok = true
			c += reapedCPU(root, strconv.Itoa(p))
		}
		cpu += c
		rss += r
	}
	return cpu, rss, ok
}

// readDisks sums /proc/diskstats over the named devices (all whole
// devices when devices is empty). Sectors are 512 bytes.
func readDisks(root string, devices map[string]bool, c *counters) {
	b := readFile(filepath.Join(root, "diskstats"))
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 {
			continue
		}
		name := f[2]
		if len(devices) > 0 {
			if !devices[name] {
				continue
			}
		} else if !wholeDisk(name) {
			continue
		}
		r, _ := strconv.ParseUint(f[3], 10, 64)
		rs, _ := strconv.ParseFloat(f[5], 64)
		w, _ := strconv.ParseUint(f[7], 10, 64)
		ws, _ := strconv.ParseFloat(f[9], 64)
		c.reads += r
		c.writes += w
		c.readKB += rs / 2
		c.writeKB += ws / 2
	}
}

// wholeDisk keeps real whole devices and skips partitions and virtual ones,
// so that bytes are not counted twice.
func wholeDisk(name string) bool {
	for _, p := range []string{"loop", "ram", "dm-", "sr", "zram"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	if _, err := os.Stat(filepath.Join("/sys/block", name)); err == nil {
		return true
	}
	// Without /sys, treat names not ending in a digit (sda, vda) as whole disks.
	last := name[len(name)-1]
	return last < '0' || last > '9' || strings.HasPrefix(name, "nvme") && !strings.Contains(name, "p")
}

// deviceOf returns the block device names that hold path (the device and,
// for a partition, its parent disk), or nil when unknown.
func deviceOf(path string) map[string]bool {
	if path == "" {
		return nil
	}
	var st syscallStat
	if !statDev(path, &st) {
		return nil
	}
	link, err := os.Readlink(filepath.Join("/sys/dev/block", strconv.FormatUint(uint64(st.major), 10)+":"+strconv.FormatUint(uint64(st.minor), 10)))
	if err != nil {
		return nil
	}
	dev := filepath.Base(link)
	out := map[string]bool{}
	// A partition's sysfs path is .../<disk>/<partition>: count the disk only.
	parent := filepath.Base(filepath.Dir(link))
	if _, err := os.Stat(filepath.Join("/sys/block", parent)); err == nil {
		out[parent] = true
	} else {
		out[dev] = true
	}
	return out
}
