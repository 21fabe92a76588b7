package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/sysmon"
)

// SummaryLine is the one-line record LinkBench users keep of a load and of
// every request loop (the form of Mark Callaghan's "All about Linkbench"
// helper scripts, measured here from /proc instead of vmstat and iostat):
// the rate, disk I/O and CPU per operation, database size, server memory,
// the p99 of the four most frequent requests, and the machine's disk and
// CPU rates. A nil figure is unknown: it cannot be measured from this
// machine (a remote server) or was not reported.
type SummaryLine struct {
	Phase string  `json:"phase"`
	Loop  int     `json:"loop,omitempty"`
	Secs  float64 `json:"secs"`
	// Rate is tps (requests/s) of a loop or ips (links/s) of a load.
	Rate         float64  `json:"ops_per_sec"`
	ReadsPerOp   *float64 `json:"disk_reads_per_op"`
	ReadKBPerOp  *float64 `json:"disk_read_kb_per_op"`
	WriteKBPerOp *float64 `json:"disk_write_kb_per_op"`
	// MCPUPerOp is vmstat's us + sy divided by the rate, times 1e6.
	MCPUPerOp *float64 `json:"mcpu_per_op"`
	SizeGB    *float64 `json:"size_gb"`
	RSSGB     *float64 `json:"rss_gb"`
	// P99Ms holds the p99 of UPDATE_NODE, GET_NODE, UPDATE_LINK and
	// GET_LINKS_LIST in ms (request loops only).
	P99Ms         [4]*float64 `json:"p99_ms,omitempty"`
	ReadsPerSec   *float64    `json:"disk_reads_per_sec"`
	ReadMBPerSec  *float64    `json:"disk_read_mb_per_sec"`
	WriteMBPerSec *float64    `json:"disk_write_mb_per_sec"`
	CPUPct        *float64    `json:"cpu_pct"`
	Engine        string      `json:"engine"`
}

// SummaryOps are the requests whose p99 a request summary line shows, with
// their column names.
var SummaryOps = [4]struct {
	Op     graph.Op
	Column string
}{{graph.UpdateNode, "un"}, {graph.GetNode, "gn"}, {graph.UpdateLink, "ul"}, {graph.GetLinksList, "gl"}}

// LineInput is what a summary line is computed from.
type LineInput struct {
	Phase string
	Loop  int
	Secs  float64
	// Count is requests (request phase) or links (load).
	Count int64
	Ops   []stats.OpSummary
	// Usage is the resource use over the same period; nil when unknown.
	Usage *sysmon.Usage
	CPUs  int
	// LocalData says that the disk and CPU figures of Usage are those of
	// the machine that holds the data (an embedded store or a local
	// server); otherwise they are unknown.
	LocalData bool
	// SizeBytes is the database size at the end (0 = unknown) and
	// MemBytes the server's memory at the end (0 = unknown).
	SizeBytes, MemBytes int64
	Engine              string
}

func some(v float64) *float64 { return &v }

// NewSummaryLine computes the line of one loop or load.
func NewSummaryLine(in LineInput) SummaryLine {
	l := SummaryLine{Phase: in.Phase, Loop: in.Loop, Secs: max(in.Secs, 0), Engine: in.Engine}
	if in.Secs > 0 {
		l.Rate = float64(in.Count) / in.Secs
	}
	if in.SizeBytes > 0 {
		l.SizeGB = some(float64(in.SizeBytes) / 1e9)
	}
	if in.MemBytes > 0 {
		l.RSSGB = some(float64(in.MemBytes) / 1e9)
	}
	if in.Phase != "load" {
		for i, so := range SummaryOps {
			for _, o := range in.Ops {
				if o.Op == so.Op || o.Name == so.Op.String() {
					if o.Count > 0 {
						l.P99Ms[i] = some(o.P99)
					}
				}
			}
		}
	}
	u := in.Usage
	if u == nil || !u.Available || !in.LocalData || u.Seconds <= 0 {
		return l
	}
	secs := u.Seconds
	l.ReadsPerSec = some(float64(u.DiskReads) / secs)
	l.ReadMBPerSec = some(u.DiskReadKB / 1024 / secs)
	l.WriteMBPerSec = some(u.DiskWriteKB / 1024 / secs)
	cpu := u.CPUPct(in.CPUs)
	l.CPUPct = some(cpu)
	if in.Count > 0 {
		rate := float64(in.Count) / secs
		l.ReadsPerOp = some(*l.ReadsPerSec / rate)
		l.ReadKBPerOp = some(u.DiskReadKB / float64(in.Count))
		l.WriteKBPerOp = some(u.DiskWriteKB / float64(in.Count))
		l.MCPUPerOp = some(cpu * 1e6 / rate)
	}
	return l
}

// SummaryColumns are the column names of the summary lines of a phase:
// the article's, then the figures it lacks, then the engine.
func SummaryColumns(phase string) []string {
	if phase == "load" {
		return []string{"ips", "r/i", "rkb/i", "wkb/i", "Mcpu/i", "size", "rss", "wMB/s", "cpu", "r/s", "rMB/s", "secs", "engine"}
	}
	return []string{"loop", "tps", "r/t", "rkb/t", "wkb/t", "Mcpu/t", "size", "rss", "un", "gn", "ul", "gl", "r/s", "rMB/s", "wMB/s", "cpu", "secs", "engine"}
}

// Unknown is how a summary cell that cannot be measured is written (pandas
// and R read it as missing).
const Unknown = "NA"

// sig3 prints v with three significant digits, no exponent.
func sig3(v *float64) string {
	if v == nil {
		return Unknown
	}
	if *v >= 1000 || *v <= -1000 {
		return strconv.FormatFloat(*v, 'f', 0, 64)
	}
	return FormatMs(*v)
}

// Cells formats the line in the order of SummaryColumns.
func (l SummaryLine) Cells() []string {
	eng := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == ' ' {
			return '_'
		}
		return r
	}, l.Engine)
	whole := func(v *float64) string {
		if v == nil {
			return Unknown
		}
		return strconv.FormatFloat(*v, 'f', 0, 64)
	}
	secs := strconv.FormatFloat(max(l.Secs, 0), 'f', 1, 64)
	if l.Phase == "load" {
		return []string{whole(&l.Rate), sig3(l.ReadsPerOp), sig3(l.ReadKBPerOp), sig3(l.WriteKBPerOp), whole(l.MCPUPerOp),
			sig3(l.SizeGB), sig3(l.RSSGB), sig3(l.WriteMBPerSec), sig3(l.CPUPct), sig3(l.ReadsPerSec), sig3(l.ReadMBPerSec), secs, eng}
	}
	return []string{strconv.Itoa(l.Loop), whole(&l.Rate), sig3(l.ReadsPerOp), sig3(l.ReadKBPerOp), sig3(l.WriteKBPerOp), whole(l.MCPUPerOp),
		sig3(l.SizeGB), sig3(l.RSSGB), sig3(l.P99Ms[0]), sig3(l.P99Ms[1]), sig3(l.P99Ms[2]), sig3(l.P99Ms[3]),
		sig3(l.ReadsPerSec), sig3(l.ReadMBPerSec), sig3(l.WriteMBPerSec), sig3(l.CPUPct), secs, eng}
}

// WriteSummaryTSV writes the header and one row per line, tab-separated
// (summary.tsv of a bundle).
func WriteSummaryTSV(w io.Writer, lines []SummaryLine) error {
	if len(lines) == 0 {
		return nil
	}
	rows := [][]string{SummaryColumns(lines[0].Phase)}
	for _, l := range lines {
		rows = append(rows, l.Cells())
	}
	for _, r := range rows {
		if _, err := io.WriteString(w, strings.Join(r, "\t")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// WriteSummaryTable writes the lines as an aligned table for the terminal.
func WriteSummaryTable(w io.Writer, lines []SummaryLine) error {
	if len(lines) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(SummaryColumns(lines[0].Phase), "\t")+"\t")
	for _, l := range lines {
		fmt.Fprintln(tw, strings.Join(l.Cells(), "\t")+"\t")
	}
	return tw.Flush()
}
