package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/secret"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/sysmon"
)

// SchemaVersion is the version of the results JSON layout.
const SchemaVersion = 1

// ConfigEntry is one effective config value and where it came from.
type ConfigEntry struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Origin string `json:"origin"`
}

// Environment describes the machine that ran the driver and how.
type Environment struct {
	Hostname    string `json:"hostname"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	CPUs        int    `json:"cpus"`
	CPUModel    string `json:"cpu_model,omitempty"`
	Kernel      string `json:"kernel,omitempty"`
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	GoVersion   string `json:"go_version"`
	// Build is the linkbench binary; CommandLine how it was run
	// (passwords hidden).
	Build       *Build   `json:"build,omitempty"`
	CommandLine []string `json:"command_line,omitempty"`
	// DataFS is the file system under an embedded store's data.
	DataFS *DataFS `json:"data_fs,omitempty"`
}

// Totals are the phase-wide figures.
type Totals struct {
	Requests int64 `json:"requests,omitempty"`
	Errors   int64 `json:"errors"`
	// Reconnects are the requests that failed on a lost connection.
	Reconnects  int64   `json:"reconnects,omitempty"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	Nodes       int64   `json:"nodes,omitempty"`
	Links       int64   `json:"links,omitempty"`
	Counts      int64   `json:"counts,omitempty"`
	LinksPerSec float64 `json:"links_per_sec,omitempty"`
	// InsertSec is the part of a load spent inserting rows, FinishSec the
	// store's finishing work after it (index builds, statistics, flushes).
	InsertSec float64 `json:"insert_sec,omitempty"`
	FinishSec float64 `json:"finish_sec,omitempty"`
	// TimedOut counts the requests abandoned because the store did not
	// answer (op_timeout, or the phase's end): they are errors too.
	TimedOut int64 `json:"timed_out,omitempty"`
}

// Results is the machine-readable record of one phase.
type Results struct {
	SchemaVersion int               `json:"schema_version"`
	Phase         string            `json:"phase"` // "load" or "request"
	ToolVersion   string            `json:"tool_version"`
	StartedAt     time.Time         `json:"started_at"`
	ElapsedSec    float64           `json:"elapsed_sec"`
	Store         string            `json:"store"`
	StoreVersion  string            `json:"store_version,omitempty"`
	StoreSettings map[string]string `json:"store_settings,omitempty"`
	SizeOnDisk    int64             `json:"size_on_disk_bytes,omitempty"`
	Interrupted   bool              `json:"interrupted,omitempty"`
	Config        []ConfigEntry     `json:"config"`
	Environment   Environment       `json:"environment"`
	Totals        Totals            `json:"totals"`
	Ops           []stats.OpSummary `json:"ops"`
	Threads       any               `json:"threads,omitempty"`
	Intervals     []stats.Interval  `json:"intervals"`
	// Curves are per-op latency percentile curves: [percentile, ms] pairs.
	Curves map[string][][2]float64 `json:"percentile_curves,omitempty"`
	// Resources are the /proc samples taken during the phase.
	Resources []sysmon.Sample `json:"resources,omitempty"`
	// Usage is the total resource use and Efficiency the same per request
	// (per link for the load phase).
	Usage      *sysmon.Usage `json:"usage,omitempty"`
	Efficiency *sysmon.PerOp `json:"efficiency,omitempty"`
	// Stages are the per-stage results of a staged open-loop run.
	Stages []stats.SegmentSummary `json:"stages,omitempty"`
	// LoadStages are a load's stages: nodes, links and counts inserted
	// (overlapping) and each step of the store's finishing work.
	LoadStages []stats.Stage `json:"load_stages,omitempty"`
	// MaxBacklog is the largest open-loop backlog seen (requests due but
	// not started): non-zero when the store could not keep up.
	MaxBacklog float64 `json:"max_backlog,omitempty"`
	// PaceLagSec is the longest a paced or open-loop op waited between its
	// intended start and its send, and PaceUncounted the ops sent after
	// the warm-up that were due during it, which are not counted: the
	// store served Totals.Requests + PaceUncounted requests in the
	// measured time. PaceFellBehind says the requesters lost their
	// schedule (workload.RequestResult.FellBehind).
	PaceLagSec     float64 `json:"pace_lag_sec,omitempty"`
	PaceUncounted  int64   `json:"pace_uncounted,omitempty"`
	PaceFellBehind bool    `json:"pace_fell_behind,omitempty"`
	// SizeBefore is the store size on disk when the phase started.
	SizeBefore int64 `json:"size_before_bytes,omitempty"`
	// WorkloadSemantics is the request phase's workload_semantics:
	// "reference" (comparable with the reference's figures) or "corrected".
	WorkloadSemantics string `json:"workload_semantics,omitempty"`
	// GraphCheck is how the store's graph compared with the configuration
	// before a request phase.
	GraphCheck *GraphCheck `json:"graph_check,omitempty"`
	// AllOps is the latency of every request together (from the merged
	// histograms of the request ops).
	AllOps *stats.OpSummary `json:"all_ops,omitempty"`
	// WarmupSec is the unmeasured warm-up that preceded the intervals.
	WarmupSec float64 `json:"warmup_sec,omitempty"`
	// SummaryLines are the one-line summaries of the load or of every
	// request loop (also in summary.tsv).
	SummaryLines []SummaryLine `json:"summary_lines,omitempty"`
	// Loops are the per-loop results of a request phase with loops > 1.
	Loops []Loop `json:"loops,omitempty"`
	// LoadProgress is the load's cumulative row counts at every interval
	// (for rates in links/s).
	LoadProgress []LoadPoint `json:"load_progress,omitempty"`
}

// GraphCheck records the comparison of the store's graph with the
// configuration.
type GraphCheck struct {
	// Adopted are the graph parameters taken from the store's record
	// because the user did not set them ("maxid1=20001").
	Adopted []string `json:"adopted,omitempty"`
	// Unrecorded is set when the graph had no record to compare with.
	Unrecorded bool `json:"unrecorded,omitempty"`
	// Ignored is set when the run went ahead despite Problems
	// (--ignore-graph): its figures describe another graph than configured.
	Ignored  bool     `json:"ignored,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

// LoadPoint is how far a load was at a time.
type LoadPoint struct {
	Sec    float64 `json:"sec"`
	Links  int64   `json:"links"`
	Nodes  int64   `json:"nodes"`
	Counts int64   `json:"counts"`
}

// curvePercentiles are the points of a latency percentile curve.
var curvePercentiles = []float64{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97, 99, 99.5, 99.7, 99.9, 99.95, 99.99, 99.995, 99.999, 100}

// PercentileCurves computes the curve of every op's histogram (ns -> ms).
func PercentileCurves(hists map[graph.Op]*hdr.Histogram) map[string][][2]float64 {
	out := map[string][][2]float64{}
	for op, h := range hists {
		if op == graph.RangeSize || h.TotalCount() == 0 {
			continue
		}
		vals := h.ValueAtPercentilesSlice(curvePercentiles)
		curve := make([][2]float64, len(vals))
		for i, v := range vals {
			curve[i] = [2]float64{curvePercentiles[i], float64(v) / 1e6}
		}
		out[op.String()] = curve
	}
	return out
}

// CurrentEnvironment reads the facts of this machine.
func CurrentEnvironment() Environment {
	h, _ := os.Hostname()
	e := Environment{Hostname: h, OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	machineFacts(&e)
	return e
}

// Redact hides the value of any key that holds a secret (see package
// secret, which owns the rules).
func Redact(key, value string) string { return secret.Redact(key, value) }

// RedactURL hides the password of a URL or DSN.
func RedactURL(u string) string { return secret.Text(u) }

// WriteBundle writes the results (NonNegative first: r is changed) into a
// new directory under parent named <timestamp>-<phase>: summary.json, report.html, histograms.hlog (the
// cumulative per-op histograms in the HdrHistogram log format, tagged with
// the op name, values in ns) and the extra files given (CSV copies). It writes into a temporary directory and renames it
// at the end, so a bundle is never half-written. It returns the directory.
func WriteBundle(parent string, r *Results, hists map[graph.Op]*hdr.Histogram, extra map[string][]byte) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("results_dir %s: %w", parent, err)
	}
	name := r.StartedAt.Format("20060102-150405") + "-" + r.Phase
	tmp, err := os.MkdirTemp(parent, ".tmp-"+name+"-")
	if err != nil {
		return "", fmt.Errorf("results_dir %s: %w", parent, err)
	}
	defer os.RemoveAll(tmp)
	NonNegative(r)
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "summary.json"), append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	if len(hists) > 0 {
		if err := writeHistLog(filepath.Join(tmp, "histograms.hlog"), r.StartedAt, hists); err != nil {
			return "", err
		}
	}
	if len(r.Loops) > 0 {
		if err := writeHlog(filepath.Join(tmp, "loops.hlog"), r.StartedAt, loopsLogEntries(r.Loops)); err != nil {
			return "", err
		}
	}
	if len(r.SummaryLines) > 0 {
		var tsv strings.Builder
		if err := WriteSummaryTSV(&tsv, r.SummaryLines); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(tmp, "summary.tsv"), []byte(tsv.String()), 0o644); err != nil {
			return "", err
		}
	}
	var page strings.Builder
	if err := WriteHTML(&page, []*Results{r}, []string{name}); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "report.html"), []byte(page.String()), 0o644); err != nil {
		return "", err
	}
	for n, data := range extra {
		if err := os.WriteFile(filepath.Join(tmp, n), data, 0o644); err != nil {
			return "", err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	// Another process (a --shard sibling) may finish a bundle of the same
	// name at the same time: take the next free suffix.
	for i := 1; ; i++ {
		final := filepath.Join(parent, name)
		if i > 1 {
			final = filepath.Join(parent, fmt.Sprintf("%s-%d", name, i))
		}
		if _, err := os.Stat(final); err == nil {
			continue
		}
		err := os.Rename(tmp, final)
		if err == nil {
			return final, nil
		}
		if _, serr := os.Stat(final); serr != nil || i > 100 {
			return "", err
		}
	}
}

// hlogEntry is one histogram of an HdrHistogram log.
type hlogEntry struct {
	tag        string
	h          *hdr.Histogram
	start, end time.Time
}

// writeHlog writes histograms to path in the HdrHistogram log format.
func writeHlog(path string, start time.Time, entries []hlogEntry) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	lw := hdr.NewHistogramLogWriter(f)
	werr := lw.OutputLogFormatVersion()
	if werr == nil {
		werr = lw.OutputStartTime(start.UnixMilli())
	}
	if werr == nil {
		werr = lw.OutputLegend()
	}
	for _, e := range entries {
		if werr != nil {
			break
		}
		h := e.h.Clone()
		h.SetTag(e.tag)
		h.SetStartTimeMs(e.start.UnixMilli())
		h.SetEndTimeMs(e.end.UnixMilli())
		werr = lw.OutputIntervalHistogram(h)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// writeHistLog writes the cumulative histogram of every op, tagged with
// the op's name.
func writeHistLog(path string, start time.Time, hists map[graph.Op]*hdr.Histogram) error {
	var entries []hlogEntry
	now := time.Now()
	for op := graph.Op(0); op < graph.NumOps; op++ {
		if h, ok := hists[op]; ok {
			entries = append(entries, hlogEntry{tag: op.String(), h: h, start: start, end: now})
		}
	}
	return writeHlog(path, start, entries)
}

// ReadBundle reads the summary.json of a bundle directory.
func ReadBundle(dir string) (*Results, error) {
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, fmt.Errorf("%s is not a results bundle: %w", dir, err)
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s/summary.json: %w", dir, err)
	}
	if r.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s/summary.json has schema version %d; this linkbench reads version %d", dir, r.SchemaVersion, SchemaVersion)
	}
	return &r, nil
}
