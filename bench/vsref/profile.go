package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// profileHz is perf record's sampling rate per CPU: each sample stands for
// 1/profileHz s of CPU time.
const profileHz = 999

// profiler samples every CPU of the machine (perf record -a) over the
// server's window of a run, so the driver's and the server's time can be
// split by function and set against the requests of the same window.
type profiler struct{ *recording }

// startProfile starts perf record for window; the data goes to dir.
func startProfile(dir string, window time.Duration, driver int, server []int) (*profiler, error) {
	r, err := startRecording(dir, "perf-record.out", "PERF_PROFILE", window, driver, server,
		"record", "-q", "-a", "-F", strconv.Itoa(profileHz), "-o", filepath.Join(dir, "perf.data"))
	if err != nil {
		return nil, err
	}
	return &profiler{r}, nil
}

// finish waits for the recording and writes profile.tsv: CPU µs per
// request of every (program, object, symbol), the largest first, after a
// total per program. requests is the number served in the window.
func (p *profiler) finish(requests float64) error {
	if err := p.wait(); err != nil {
		return err
	}
	sc := exec.Command("perf", "script", "-i", filepath.Join(p.dir, "perf.data"), "-F", "comm,pid,ip,sym,dso")
	out, err := sc.StdoutPipe()
	if err != nil {
		return err
	}
	if err := sc.Start(); err != nil {
		return fmt.Errorf("perf script: %w", err)
	}
	rows, perr := parseSamples(out, requests, p.program)
	io.Copy(io.Discard, out)
	if err := sc.Wait(); err != nil {
		return fmt.Errorf("perf script: %w", err)
	}
	if perr != nil {
		return perr
	}
	f, err := os.Create(filepath.Join(p.dir, "profile.tsv"))
	if err != nil {
		return err
	}
	defer f.Close()
	return writeProfile(f, rows)
}

// program names who ran a sample: the driver, the server, or (anything
// else on the machine) the thread's command name.
func (p *profiler) program(pid int, comm string) string {
	if w := p.whose(pid); w != "" {
		return w
	}
	return comm
}

// kernelObject is perf's object name for the kernel's own code.
const kernelObject = "[kernel.kallsyms]"

// profRow is one line of a profile: CPU µs per request.
type profRow struct {
	us             float64
	prog, dso, sym string
}

// reSample is a line of perf script -F comm,pid,ip,sym,dso: the thread's
// command name (which may hold spaces), the process id, the address, the
// symbol and, in parentheses, the object.
var reSample = regexp.MustCompile(`^\s*(.*?)\s+(\d+)\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$`)

// parseSamples adds up perf script's samples into µs per request by
// (program, object, symbol); prog names the program of a process id and
// thread name.
func parseSamples(r io.Reader, requests float64, prog func(pid int, comm string) string) ([]profRow, error) {
	if requests <= 0 {
		return nil, fmt.Errorf("profile: no requests in the window")
	}
	n := map[[3]string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		m := reSample.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[2])
		sym := m[3]
		if i := strings.LastIndex(sym, "+0x"); i > 0 {
			sym = sym[:i]
		}
		n[[3]string{prog(pid, m[1]), filepath.Base(m[4]), sym}]++
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	rows := make([]profRow, 0, len(n))
	for k, c := range n {
		rows = append(rows, profRow{float64(c) / profileHz * 1e6 / requests, k[0], k[1], k[2]})
	}
	slices.SortFunc(rows, func(a, b profRow) int {
		return cmp.Or(cmp.Compare(b.us, a.us), cmp.Compare(a.prog, b.prog), cmp.Compare(a.dso, b.dso), cmp.Compare(a.sym, b.sym))
	})
	return rows, nil
}

// writeProfile writes the per-program totals, then every row.
func writeProfile(w io.Writer, rows []profRow) error {
	tot := map[string]float64{}
	for _, r := range rows {
		tot[r.prog] += r.us
	}
	progs := make([]string, 0, len(tot))
	for c := range tot {
		progs = append(progs, c)
	}
	slices.SortFunc(progs, func(a, b string) int { return cmp.Or(cmp.Compare(tot[b], tot[a]), cmp.Compare(a, b)) })
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# CPU µs per request by program (every CPU, sampled at %d Hz)\n", profileHz)
	for _, c := range progs {
		fmt.Fprintf(bw, "#\t%.2f\t%s\n", tot[c], c)
	}
	fmt.Fprintln(bw, "us_per_request\tprogram\tobject\tsymbol")
	for _, r := range rows {
		fmt.Fprintf(bw, "%.3f\t%s\t%s\t%s\n", r.us, r.prog, r.dso, r.sym)
	}
	return bw.Flush()
}

// readProfile reads a profile.tsv back.
func readProfile(path string) ([]profRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []profRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "us_per_request\t") {
			continue
		}
		fs := strings.SplitN(line, "\t", 4)
		if len(fs) != 4 {
			return nil, fmt.Errorf("%s: %q is not a profile row (us, program, object, symbol)", path, line)
		}
		us, err := strconv.ParseFloat(fs[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %v", path, line, err)
		}
		rows = append(rows, profRow{us, fs[1], fs[2], fs[3]})
	}
	return rows, sc.Err()
}

// profDiff prints two profiles side by side: each program's total, then
// the n functions whose µs per request differ most.
func profDiff(w io.Writer, pathA, pathB string, n int) error {
	a, err := readProfile(pathA)
	if err != nil {
		return err
	}
	b, err := readProfile(pathB)
	if err != nil {
		return err
	}
	type pair struct{ a, b float64 }
	progs := map[string]*pair{}
	funcs := map[[3]string]*pair{}
	// inKernel: each program's time in the kernel (system calls, the
	// network stack, context switches), where no client library helps.
	inKernel := map[string]*pair{}
	add := func(rows []profRow, second bool) {
		for _, r := range rows {
			ms := []*pair{get(progs, r.prog), get(funcs, [3]string{r.prog, r.dso, r.sym})}
			if r.dso == kernelObject {
				ms = append(ms, get(inKernel, r.prog))
			}
			for _, m := range ms {
				if second {
					m.b += r.us
				} else {
					m.a += r.us
				}
			}
		}
	}
	add(a, false)
	add(b, true)
	fmt.Fprintf(w, "CPU µs per request: A %s, B %s\n%10s %10s %10s  %s\n", pathA, pathB, "A", "B", "B-A", "program")
	pk := slices.Collect(maps.Keys(progs))
	slices.SortFunc(pk, func(x, y string) int {
		return cmp.Or(cmp.Compare(progs[y].a+progs[y].b, progs[x].a+progs[x].b), cmp.Compare(x, y))
	})
	for _, k := range pk {
		fmt.Fprintf(w, "%10.2f %10.2f %+10.2f  %s\n", progs[k].a, progs[k].b, progs[k].b-progs[k].a, k)
	}
	fmt.Fprintf(w, "\nof which in the kernel / in user space\n%10s %10s %10s %10s  %s\n", "A kernel", "A user", "B kernel", "B user", "program")
	for _, k := range []string{"driver", "server"} {
		p, kp := get(progs, k), get(inKernel, k)
		fmt.Fprintf(w, "%10.2f %10.2f %10.2f %10.2f  %s\n", kp.a, p.a-kp.a, kp.b, p.b-kp.b, k)
	}
	fk := slices.Collect(maps.Keys(funcs))
	d := func(k [3]string) float64 { return math.Abs(funcs[k].b - funcs[k].a) }
	slices.SortFunc(fk, func(x, y [3]string) int {
		return cmp.Or(cmp.Compare(d(y), d(x)), cmp.Compare(x[0], y[0]), cmp.Compare(x[2], y[2]), cmp.Compare(x[1], y[1]))
	})
	fmt.Fprintf(w, "\n%10s %10s %10s  %s\n", "A", "B", "B-A", "program object symbol")
	for _, k := range fk[:min(n, len(fk))] {
		fmt.Fprintf(w, "%10.3f %10.3f %+10.3f  %s %s %s\n", funcs[k].a, funcs[k].b, funcs[k].b-funcs[k].a, k[0], k[1], k[2])
	}
	return nil
}

// get is m[k], made when absent.
func get[K comparable, V any](m map[K]*V, k K) *V {
	v, ok := m[k]
	if !ok {
		v = new(V)
		m[k] = v
	}
	return v
}
