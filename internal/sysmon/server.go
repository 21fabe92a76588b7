package sysmon

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Server is what a store says about where its database server runs.
type Server struct {
	Addr    string // host:port or a Unix socket directory
	PID     int    // as the server reports it, when it does
	PIDFile string // the server's pid file (a path on its machine)
	DataDir string // the server's data directory (a path on its machine)
}

// isLocalAddr reports whether addr names this machine: a loopback address,
// localhost, or a Unix socket path.
func isLocalAddr(addr string) bool {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	if strings.HasPrefix(host, "/") || strings.HasPrefix(host, "@") {
		return true
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Locate returns the pid of s when it runs on this machine, or 0 and the
// reason it cannot be measured from here. A server reached over the
// network is never taken for a local process, even when a file of the same
// name exists here.
func Locate(procRoot string, s Server) (int, string) {
	if procRoot == "" {
		procRoot = "/proc"
	}
	if !isLocalAddr(s.Addr) {
		return 0, fmt.Sprintf("the server at %s is not on this machine", s.Addr)
	}
	pid := s.PID
	if pid == 0 && s.PIDFile != "" {
		b, err := os.ReadFile(s.PIDFile)
		if err != nil {
			return 0, fmt.Sprintf("the server's pid file %s cannot be read here (%v)", s.PIDFile, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		var lines []string
		for sc.Scan() && len(lines) < 2 {
			lines = append(lines, strings.TrimSpace(sc.Text()))
		}
		if len(lines) == 0 {
			return 0, fmt.Sprintf("the server's pid file %s is empty", s.PIDFile)
		}
		pid, _ = strconv.Atoi(lines[0])
		// PostgreSQL's postmaster.pid names its data directory on line 2:
		// a pid file left by another server is not this one.
		if len(lines) > 1 && strings.HasPrefix(lines[1], "/") && s.DataDir != "" &&
			filepath.Clean(lines[1]) != filepath.Clean(s.DataDir) {
			return 0, fmt.Sprintf("the pid file %s belongs to the server of %s, not %s", s.PIDFile, lines[1], s.DataDir)
		}
	}
	if pid <= 0 {
		return 0, fmt.Sprintf("the server at %s does not say its pid or pid file", s.Addr)
	}
	if _, _, ok := procCPU(procRoot, strconv.Itoa(pid)); !ok {
		return 0, fmt.Sprintf("the server's pid %d is not a process here", pid)
	}
	return pid, ""
}

// tree returns root and every process descended from it. It reads the
// kernel's children lists and falls back to scanning every process's parent.
func tree(procRoot string, root int) []int {
	out := []int{root}
	if _, err := os.Stat(filepath.Join(procRoot, strconv.Itoa(root), "task")); err == nil {
		if kids, ok := childrenOf(procRoot, root); ok {
			for i := 0; i < len(out); i++ {
				if i > 0 {
					kids, _ = childrenOf(procRoot, out[i])
				}
				out = append(out, kids...)
			}
			return out
		}
	}
	parent := map[int][]int{}
	ents, _ := os.ReadDir(procRoot)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp := ppid(procRoot, pid); pp > 0 {
			parent[pp] = append(parent[pp], pid)
		}
	}
	for i := 0; i < len(out); i++ {
		out = append(out, parent[out[i]]...)
	}
	return out
}

// childrenOf reads /proc/<pid>/task/*/children.
func childrenOf(procRoot string, pid int) ([]int, bool) {
	tasks, err := os.ReadDir(filepath.Join(procRoot, strconv.Itoa(pid), "task"))
	if err != nil {
		return nil, false
	}
	var out []int
	found := false
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "task", t.Name(), "children"))
		if err != nil {
			continue
		}
		found = true
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, found
}

// ppid is the parent pid of pid (0 when unknown).
func ppid(procRoot string, pid int) int {
	f := statFields(procRoot, strconv.Itoa(pid))
	if len(f) < 2 {
		return 0
	}
	p, _ := strconv.Atoi(f[1])
	return p
}

// pss is the proportional set size of pid in bytes (its share of memory
// shared with other processes counted once over them all), from
// smaps_rollup; ok is false when it cannot be read.
func pss(procRoot string, pid int) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "smaps_rollup"))
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "Pss:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024, err == nil
		}
	}
	return 0, false
}

// TreeMemory is the memory of root and its descendants: the sum of their
// proportional set sizes (shared memory counted once, as a multi-process
// server such as PostgreSQL uses it), or of their resident sizes when
// smaps_rollup cannot be read. It returns 0 when root is gone.
func TreeMemory(procRoot string, root int) int64 {
	if procRoot == "" {
		procRoot = "/proc"
	}
	var total, rssTotal int64
	pssOK := true
	for _, pid := range tree(procRoot, root) {
		_, rss, ok := procCPU(procRoot, strconv.Itoa(pid))
		if !ok {
			continue
		}
		rssTotal += rss
		if p, ok := pss(procRoot, pid); ok && pssOK {
			total += p
		} else {
			pssOK = false
		}
	}
	if !pssOK {
		return rssTotal
	}
	return total
}
