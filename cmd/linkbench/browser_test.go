package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/report"
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

// inspectScript runs inside the page in the browser and measures what the
// reader sees: the rendered extents of every text of every chart (inside
// its drawing, legend entries not overlapping one another, tick labels of
// one axis not overlapping), the labelled ticks of every axis, and the
// colour every op is drawn in. It leaves its findings, base64 JSON, in
// #lb-verdict for --dump-dom.
const inspectScript = `<script>
(function () {
  var problems = [], colors = {}, charts = 0, texts = 0;
  // Extents as rendered (transforms included), in the SVG's own units.
  function box(el) {
    var svg = el.ownerSVGElement, s = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal, k = vb.width / s.width;
    var b = el.getBoundingClientRect();
    return {x: (b.left - s.left) * k + vb.x, y: (b.top - s.top) * k + vb.y, r: (b.right - s.left) * k + vb.x, b: (b.bottom - s.top) * k + vb.y, w: b.width};
  }
  function overlap(a, c) { return a.x < c.r - 0.5 && c.x < a.r - 0.5 && a.y < c.b - 0.5 && c.y < a.b - 0.5; }
  function name(svg) { return svg.id || svg.getAttribute('aria-label') || 'svg'; }
  document.querySelectorAll('svg').forEach(function (svg) {
    var vb = svg.viewBox.baseVal, id = name(svg);
    if (svg.classList.contains('chart')) charts++;
    svg.querySelectorAll('text').forEach(function (t) {
      texts++;
      var b = box(t);
      if (b.w <= 0) return;
      if (b.x < vb.x - 0.5 || b.y < vb.y - 0.5 || b.r > vb.x + vb.width + 0.5 || b.b > vb.y + vb.height + 0.5) {
        problems.push(id + ': text "' + t.textContent + '" is cut by the chart edge (' + [b.x, b.y, b.r, b.b].map(Math.round) + ' outside ' + vb.width + 'x' + vb.height + ')');
      }
    });
    var legends = Array.prototype.slice.call(svg.querySelectorAll('text.legend'));
    for (var i = 0; i < legends.length; i++) for (var j = i + 1; j < legends.length; j++) {
      if (overlap(box(legends[i]), box(legends[j]))) problems.push(id + ': legend "' + legends[i].textContent + '" overlaps "' + legends[j].textContent + '"');
    }
    var frame = svg.querySelector('rect.frame');
    if (frame) {
      var f = box(frame);
      legends.forEach(function (l) { if (overlap(box(l), f)) problems.push(id + ': legend "' + l.textContent + '" lies on the plot'); });
    }
    ['x', 'y'].forEach(function (axis) {
      var ticks = Array.prototype.slice.call(svg.querySelectorAll('text.tick[data-axis="' + axis + '"]'));
      var isLine = !!frame && !svg.querySelector('text.empty');
      var isBars = !!svg.querySelector('rect.bar');
      if ((isLine || (isBars && axis === 'x')) && ticks.length < 3) problems.push(id + ': ' + axis + ' axis has ' + ticks.length + ' labelled ticks');
      for (var i = 1; i < ticks.length; i++) if (overlap(box(ticks[i - 1]), box(ticks[i]))) problems.push(id + ': ' + axis + ' tick labels "' + ticks[i - 1].textContent + '" and "' + ticks[i].textContent + '" overlap');
    });
  });
  document.querySelectorAll('[data-op]').forEach(function (el) {
    var target = el.tagName === 'g' ? el.querySelector('line,circle,rect') : el;
    if (!target) return;
    var cs = getComputedStyle(target);
    var c = (target.tagName === 'rect') ? cs.fill : (cs.stroke !== 'none' ? cs.stroke : cs.fill);
    var op = el.getAttribute('data-op');
    colors[op] = colors[op] || {};
    colors[op][c] = (colors[op][c] || 0) + 1;
  });
  var out = document.createElement('pre');
  out.id = 'lb-verdict';
  out.textContent = btoa(JSON.stringify({problems: problems, colors: colors, charts: charts, texts: texts}));
  document.body.appendChild(out);
})();
</script>`

// pageVerdict is what inspectScript found on a page.
type pageVerdict struct {
	Problems []string                  `json:"problems"`
	Colors   map[string]map[string]int `json:"colors"`
	Charts   int                       `json:"charts"`
	Texts    int                       `json:"texts"`
}

var verdictRE = regexp.MustCompile(`<pre id="lb-verdict">([A-Za-z0-9+/=]+)</pre>`)

// inspectPage opens a copy of page (with inspectScript) in headless
// Chromium, returns the verdict and saves a full-page screenshot as
// artifacts/<name>.png.
func inspectPage(t *testing.T, bin, page, name string) pageVerdict {
	t.Helper()
	src, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(t.TempDir(), "probe.html")
	if err := os.WriteFile(probe, []byte(strings.Replace(string(src), "</body>", inspectScript+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dom, err := exec.CommandContext(ctx, bin, headless(bin, t.TempDir(), "--window-size=1280,900", "--dump-dom", "file://"+probe)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v", name, err)
	}
	m := verdictRE.FindSubmatch(dom)
	if m == nil {
		t.Fatalf("%s: the inspection script left no verdict (did the page run it?)", name)
	}
	raw, err := base64.StdEncoding.DecodeString(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	var v pageVerdict
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(artifactsDir(t), name+".png")
	cmd := exec.CommandContext(ctx, bin, headless(bin, t.TempDir(), "--screenshot="+shot, "--window-size=1280,6000", "file://"+page)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	if strings.Contains(string(out), ":CONSOLE(") {
		t.Errorf("%s: console messages while rendering:\n%s", name, out)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10_000 {
		t.Fatalf("screenshot %s missing or blank: %v", shot, err)
	}
	t.Logf("%s: %d charts, %d texts measured; screenshot %s", name, v.Charts, v.Texts, shot)
	return v
}

func artifactsDir(t *testing.T) string {
	dir := os.Getenv("LINKBENCH_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "linkbench-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReportsReadInHeadlessChromium renders the five kinds of page a user
// reads (a load report, a request report, a comparison of three runs, a
// sweep, a 3-loop run) in a real browser and checks what the browser laid
// out: no legend or label cut or overlapping, at least three labelled
// ticks on every axis, and every op drawn in one colour, the same on
// every chart of every page, at least report.MinOpColorDistance (CIEDE2000)
// from every other op's.
func TestReportsReadInHeadlessChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	graph := []string{"-c", repoConfig(t, "LinkConfigMemory.properties"), "-D", "maxid1=3001", "-D", "nlinks_func=const", "-D", "nlinks_default=5", "-D", "requesters=2"}
	// Three runs and a sweep, side by side (paths are absolute).
	jobs := [][]string{
		{"-D", "maxtime=6", "-D", "warmup_time=1", "-l", "-r"},
		{"-D", "maxtime=6", "-D", "requesters=1", "-l", "-r"},
		{"-D", "maxtime=2", "-D", "loops=3", "-l", "-r"},
		// The memory store is empty in a new process: the sweep measures
		// it anyway (the test is about the report).
		{"sweep", "--rates", "300,600,1200", "--point-time", "1", "--ignore-graph"},
	}
	dirs := make([]string, len(jobs))
	errs := make([]string, len(jobs))
	var wg sync.WaitGroup
	for i, extra := range jobs {
		dirs[i] = filepath.Join(dir, fmt.Sprint("job", i))
		args := append(append([]string{}, graph...), "--results-dir", dirs[i])
		if extra[0] == "sweep" {
			args = append(append([]string{"sweep"}, args...), extra[1:]...)
		} else {
			args = append(args, extra...)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, errOut, err := runApp(args...); err != nil {
				errs[i] = fmt.Sprintf("%v\n%s", err, errOut)
			}
		}()
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Fatalf("%v: %s", jobs[i], e)
		}
	}
	bundles := []string{onlyBundle(t, dirs[0]), onlyBundle(t, dirs[1]), onlyBundle(t, dirs[2])}
	comparison := filepath.Join(dir, "comparison.html")
	if out, errOut, err := runApp("report", bundles[0], bundles[1], bundles[2], "-o", comparison); err != nil || !strings.Contains(out, "B against A") {
		t.Fatalf("report: %v %s\n%s", err, out, errOut)
	}
	sweeps, _ := filepath.Glob(filepath.Join(dirs[3], "*-sweep", "report.html"))
	if len(sweeps) != 1 {
		t.Fatalf("sweep reports %v", sweeps)
	}
	loads, _ := filepath.Glob(filepath.Join(dirs[0], "*-load", "report.html"))
	if len(loads) != 1 {
		t.Fatalf("load reports %v", loads)
	}
	pages := []struct{ name, path string }{
		{"load-report", loads[0]},
		{"request-report", filepath.Join(bundles[0], "report.html")},
		{"comparison-of-three", comparison},
		{"sweep", sweeps[0]},
		{"three-loops", filepath.Join(bundles[2], "report.html")},
	}
	verdicts := make([]pageVerdict, len(pages))
	for i, p := range pages {
		verdicts[i] = inspectPage(t, bin, p.path, p.name)
	}
	colorOf := map[string]map[string]bool{}
	for i, p := range pages {
		v := verdicts[i]
		if v.Charts < 3 || v.Texts < 50 {
			t.Errorf("%s: only %d charts and %d texts rendered", p.name, v.Charts, v.Texts)
		}
		for _, pr := range v.Problems {
			t.Errorf("%s: %s", p.name, pr)
		}
		for op, cs := range v.Colors {
			if colorOf[op] == nil {
				colorOf[op] = map[string]bool{}
			}
			for c := range cs {
				colorOf[op][c] = true
			}
		}
	}
	if len(colorOf) < 12 {
		t.Errorf("only %d ops carry their colour: %v", len(colorOf), colorOf)
	}
	for _, p := range colourProblems(colorOf) {
		t.Error(p)
	}
	// The 3-loop run's page shows the loops.
	page, _ := os.ReadFile(filepath.Join(bundles[2], "report.html"))
	for _, want := range []string{"Loops (3)", `id="loops-throughput"`, `id="loops-p99"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the 3-loop report lacks %s", want)
		}
	}
}

// colourProblems lists the ops drawn in more than one colour and the
// pairs of ops whose colours are closer than report.MinOpColorDistance.
func colourProblems(colorOf map[string]map[string]bool) []string {
	var out []string
	owner := map[string]string{}
	ops := make([]string, 0, len(colorOf))
	for op := range colorOf {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		var list []string
		for c := range colorOf[op] {
			list = append(list, c)
		}
		sort.Strings(list)
		if len(list) != 1 {
			out = append(out, fmt.Sprintf("%s is drawn in %d colours: %v", op, len(list), list))
			continue
		}
		for c, other := range owner {
			d, err := report.ColorDistance(c, list[0])
			switch {
			case err != nil:
				out = append(out, err.Error())
			case d < report.MinOpColorDistance:
				out = append(out, fmt.Sprintf("%s (%s) and %s (%s) are %.1f apart (CIEDE2000), under %d", op, list[0], other, c, d, report.MinOpColorDistance))
			}
		}
		owner[list[0]] = op
	}
	sort.Strings(out)
	return out
}
