package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromium finds the browser, installing Debian's package under CI=true.
func chromium(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CI") != "true" {
		t.Skip("chromium is not installed (apt-get install chromium); CI installs it")
	}
	for _, args := range [][]string{{"update", "-q"}, {"install", "-y", "-q", "chromium"}} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("apt-get %v: %v\n%s", args, err, out)
		}
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium still missing after apt-get install")
	}
	return p
}

func headless(bin, userDir string, extra ...string) []string {
	return append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + userDir, "--enable-logging=stderr", "--v=0"}, extra...)
}

// TestReportInHeadlessChromium opens the report of a real run in a browser:
// every chart is present and drawn, the console shows no error, and a
// screenshot is kept as an artifact.
func TestReportInHeadlessChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	if _, errOut, code := runCLI(t, dir, "-c", repoConfig(t, "LinkConfigMemory.properties"), "-D", "maxid1=3001",
		"-D", "nlinks_func=const", "-D", "nlinks_default=5", "-D", "maxtime=3", "-D", "requesters=2", "-l", "-r"); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	reports, _ := filepath.Glob(filepath.Join(dir, "linkbench-results", "*-request", "report.html"))
	if len(reports) != 1 {
		t.Fatalf("reports: %v", reports)
	}
	url := "file://" + reports[0]
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dom, err := exec.CommandContext(ctx, bin, headless(bin, t.TempDir(), "--dump-dom", url)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	page := string(dom)
	for _, id := range []string{"throughput", "p50", "p99", "max", "distribution", "mix", "errors", "cpu", "disk"} {
		i := strings.Index(page, `id="`+id+`"`)
		if i < 0 {
			t.Errorf("chart %s missing from the rendered page", id)
			continue
		}
		end := strings.Index(page[i:], "</svg>")
		if chart := page[i : i+end]; !strings.Contains(chart, "<polyline") && !strings.Contains(chart, `class="bar"`) && id != "errors" {
			t.Errorf("chart %s is empty", id)
		}
	}
	artifacts := os.Getenv("LINKBENCH_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(os.TempDir(), "linkbench-artifacts")
	}
	os.MkdirAll(artifacts, 0o755)
	shot := filepath.Join(artifacts, "report.png")
	cmd := exec.CommandContext(ctx, bin, headless(bin, t.TempDir(), "--screenshot="+shot, "--window-size=1100,3000", url)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	if strings.Contains(string(out), ":CONSOLE(") {
		t.Errorf("console messages while rendering the report:\n%s", out)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10_000 {
		t.Fatalf("screenshot %s missing or blank: %v", shot, err)
	}
	t.Logf("screenshot saved to %s", shot)
}
