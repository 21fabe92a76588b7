package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Samples of perf script -F comm,pid,ip,sym,dso: a JVM thread whose name
// has a space, a backend, and another process.
const samples = `            java 100      7f95b5f7e9b4 Interpreter (/usr/lib/jvm/libjvm.so)
 C2 CompilerThre 100  ffffffff81c40e4e tcp_sendmsg+0x1f ([kernel.kallsyms])
        postgres 200  ffffffff81c40e4e tcp_sendmsg+0x2a ([kernel.kallsyms])
        postgres 200  ffffffff81c40e4e tcp_sendmsg ([kernel.kallsyms])
        postgres 201      55d0a1 ExecScan (/usr/lib/postgresql/15/bin/postgres)
         swapper 0  ffffffff822018b1 pv_native_safe_halt ([kernel.kallsyms])
not a sample line
`

func TestProfileCountsSamplesPerRequest(t *testing.T) {
	prog := func(pid int, comm string) string {
		switch pid {
		case 100:
			return "driver"
		case 200, 201:
			return "server"
		}
		return comm
	}
	// One sample is 1/profileHz s of CPU: over 1e6/profileHz requests,
	// 1 µs per request.
	rows, err := parseSamples(strings.NewReader(samples), 1e6/profileHz, prog)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rows {
		got[r.prog+" "+r.dso+" "+r.sym] = r.us
	}
	want := map[string]float64{
		"driver libjvm.so Interpreter":                  1,
		"driver [kernel.kallsyms] tcp_sendmsg":          1,
		"server [kernel.kallsyms] tcp_sendmsg":          2,
		"server postgres ExecScan":                      1,
		"swapper [kernel.kallsyms] pv_native_safe_halt": 1,
	}
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for k, v := range want {
		if math.Abs(got[k]-v) > 1e-9 {
			t.Errorf("%s: %v µs per request, want %v", k, got[k], v)
		}
	}
	if math.Abs(rows[0].us-2) > 1e-9 {
		t.Errorf("first row %+v, want the largest", rows[0])
	}
	if _, err := parseSamples(strings.NewReader(samples), 0, prog); err == nil {
		t.Error("no requests: want an error")
	}

	// Written and read back, two profiles compare function by function.
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := writeProfile(&buf, rows); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.tsv"), filepath.Join(dir, "b.tsv")
	os.WriteFile(a, buf.Bytes(), 0o644)
	os.WriteFile(b, []byte("us_per_request\tprogram\tobject\tsymbol\n3.500\tserver\tpostgres\tExecScan\n"), 0o644)
	var out bytes.Buffer
	if err := profDiff(&out, a, b, 1); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, line := range []string{
		"3.00       3.50      +0.50  server",
		"1.000      3.500     +2.500  server postgres ExecScan",
		// Kernel and user time, A then B: the driver's sendmsg and its
		// JVM's interpreter; the server's two sendmsg and ExecScan.
		"1.00       1.00       0.00       0.00  driver",
		"2.00       1.00       0.00       3.50  server",
	} {
		if !strings.Contains(s, line) {
			t.Errorf("profdiff output lacks %q:\n%s", line, s)
		}
	}
	if strings.Contains(s, "pv_native_safe_halt") {
		t.Errorf("profdiff -n 1 printed more than one function:\n%s", s)
	}
	os.WriteFile(b, []byte("nonsense\n"), 0o644)
	if err := profDiff(&out, a, b, 1); err == nil || !strings.Contains(err.Error(), "not a profile row") {
		t.Errorf("bad profile: err %v", err)
	}
}
