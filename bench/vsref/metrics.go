package main

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Metrics are the shape of one request phase, measured from the server's
// statement log the same way for both drivers, plus the operation counts
// the driver printed.
type Metrics struct {
	Label string `json:"label"`
	// Ops are the per-operation counts the driver printed ("OP count = N").
	Ops map[string]int64 `json:"ops"`
	// Lists: GET_LINKS_LIST statements and the rows each returned.
	Lists    int64    `json:"lists"`
	ListRows Quantile `json:"list_rows"`
	// Multigets: MULTIGET_LINK statements, the id2s each asked for (as
	// sent, repeats included) and the rows they returned.
	Multigets    int64   `json:"multigets"`
	MultigetMean float64 `json:"multiget_mean"`
	MultigetOnes float64 `json:"multiget_share_of_one"`
	FoundRatio   float64 `json:"found_ratio"` // rows returned / id2s asked
	TopRead      []int64 `json:"top_read"`    // the 20 id1s most read (lists, multigets, counts)
	TopWritten   []int64 `json:"top_written"` // the 20 id1s most written
	Overlap      int     `json:"top20_overlap"`
	LinkReads    int64   `json:"link_reads"`
	LinkWrites   int64   `json:"link_writes"`
	UnknownRows  int64   `json:"statements_without_rows"` // lists and multigets whose rows were not logged
	// LongLists are the id1s of the lists that returned 1,000 rows or
	// more, with how many such lists each had (the 10 most frequent).
	LongLists      map[int64]int64 `json:"long_lists"`
	CheckMismatch  int64           `json:"check_mismatches"` // -1 when no check ran
	CheckSummary   string          `json:"check"`
	RequestsPerSec float64         `json:"requests_per_sec"`
}

// Quantile summarises a distribution.
type Quantile struct {
	Mean float64 `json:"mean"`
	P50  int64   `json:"p50"`
	P90  int64   `json:"p90"`
	P95  int64   `json:"p95"`
	P99  int64   `json:"p99"`
}

// Statement patterns, on the lower-cased statement with its values. Each
// names what both drivers send for the operation.
var (
	reID1      = regexp.MustCompile(`\bid1 = '?(\d+)`)
	reCountID  = regexp.MustCompile(`\bid = '?(\d+)`)
	reInList   = regexp.MustCompile(`\bid2 in \(([^)]*)\)`)
	reAnyArray = regexp.MustCompile(`\bid2 = any\('\{([^}]*)\}'`)
	reFirstVal = regexp.MustCompile(`values \(\s*'?(\d+)'?,\s*'?(\d+)'?,\s*'?(\d+)`)
	reCallArg  = regexp.MustCompile("linkbench_write_[a-z0-9_\"`]*\\(\\s*'?(\\d+)'?,\\s*'?(\\d+)'?,\\s*'?(\\d+)")
	reLockKey  = regexp.MustCompile(`\bid1 = '?(\d+)'? and id2 = '?(\d+)'? and link_type = '?(\d+)`)
)

// writeKey is the (id1, link_type, id2) a link write statement touches:
// the function or procedure takes (id1, link_type, id2, ...), the
// reference's INSERT (id1, id2, link_type, ...) and its lock
// "id1 = ? AND id2 = ? AND link_type = ?".
func writeKey(s string) (k [3]int64, ok bool) {
	num := func(v string) int64 { n, _ := strconv.ParseInt(v, 10, 64); return n }
	if m := reCallArg.FindStringSubmatch(s); m != nil {
		return [3]int64{num(m[1]), num(m[2]), num(m[3])}, true
	}
	if m := reLockKey.FindStringSubmatch(s); m != nil {
		return [3]int64{num(m[1]), num(m[3]), num(m[2])}, true
	}
	if m := reFirstVal.FindStringSubmatch(s); m != nil {
		return [3]int64{num(m[1]), num(m[3]), num(m[2])}, true
	}
	return k, false
}

// kind is what a link statement is.
type kind int

const (
	other kind = iota
	list
	multiget
	count
	write
)

// classify names the link operation of a statement and its id1.
//   - lists: SELECT ... linktable ... ORDER BY time DESC (both drivers);
//   - multigets: SELECT ... linktable ... id2 IN (...) or id2 = ANY(...);
//   - counts: SELECT count FROM counttable (not FOR UPDATE);
//   - writes: the statement that opens a link write: linkbench's
//     link-write function or procedure; the reference's single-row INSERT
//     into the link table (ADD_LINK) and its SELECT ... FOR UPDATE of a
//     link row (UPDATE_LINK, DELETE_LINK). A reference write that
//     switches path (an insert that finds the link, an update that does
//     not) rolls back and sends the other on the same connection for the
//     same link: measure counts a write that follows a rollback (or a
//     failed statement) of a write to the same link on its connection as
//     the same operation, which also folds retries.
func classify(sql string) (kind, int64, string) {
	s := strings.ToLower(sql)
	id := func(re *regexp.Regexp) int64 {
		if m := re.FindStringSubmatch(s); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			return n
		}
		return -1
	}
	switch {
	case strings.Contains(s, "linkbench_write_"):
		return write, id(reCallArg), s
	case strings.HasPrefix(s, "select") && strings.Contains(s, "linktable") && strings.Contains(s, "for update"):
		return write, id(reID1), s
	case strings.HasPrefix(s, "insert into") && strings.Contains(s, "linktable") && strings.Count(s, "),(") == 0 && !strings.Contains(s, "select"):
		return write, id(reFirstVal), s
	case strings.HasPrefix(s, "select") && strings.Contains(s, "linktable") && strings.Contains(s, "order by time desc"):
		return list, id(reID1), s
	case strings.HasPrefix(s, "select") && strings.Contains(s, "linktable") && (strings.Contains(s, "id2 in (") || strings.Contains(s, "id2 = any(")):
		return multiget, id(reID1), s
	case strings.HasPrefix(s, "select count from") && strings.Contains(s, "counttable"):
		return count, id(reCountID), s
	}
	return other, -1, s
}

// id2Count is the number of id2s a multigets asks for, as sent.
func id2Count(s string) int64 {
	m := reInList.FindStringSubmatch(s)
	if m == nil {
		m = reAnyArray.FindStringSubmatch(s)
	}
	if m == nil || strings.TrimSpace(m[1]) == "" {
		return 0
	}
	return int64(strings.Count(m[1], ",") + 1)
}

// measure computes the metrics of a statement log.
func measure(stmts []statement) Metrics {
	var m Metrics
	var rows []int64
	var sizes, sizeOnes, asked, returned int64
	reads, writes, long := map[int64]int64{}, map[int64]int64{}, map[int64]int64{}
	// retry: connection -> the link of a write that its last statement
	// rolled back.
	lastWrite, rolledBack := map[string][3]int64{}, map[string]bool{}
	for _, st := range stmts {
		k, id1, s := classify(st.sql)
		if strings.HasPrefix(s, "begin") || strings.HasPrefix(s, "start transaction") {
			continue // between a rollback and the write that retries
		}
		retry := rolledBack[st.conn]
		rolledBack[st.conn] = strings.HasPrefix(s, "rollback")
		if k != write && !rolledBack[st.conn] {
			delete(lastWrite, st.conn)
		}
		switch k {
		case list:
			m.Lists++
			reads[id1]++
			if st.rows < 0 {
				m.UnknownRows++
				continue
			}
			rows = append(rows, st.rows)
			if st.rows >= 1000 {
				long[id1]++
			}
		case multiget:
			m.Multigets++
			reads[id1]++
			n := id2Count(s)
			sizes += n
			if n == 1 {
				sizeOnes++
			}
			if st.rows < 0 {
				m.UnknownRows++
				continue
			}
			asked += n
			returned += st.rows
		case count:
			reads[id1]++
		case write:
			if key, ok := writeKey(s); ok {
				prev, had := lastWrite[st.conn]
				lastWrite[st.conn] = key
				if retry && had && prev == key {
					continue
				}
			}
			writes[id1]++
		}
	}
	m.ListRows = quantiles(rows)
	if m.Multigets > 0 {
		m.MultigetMean = float64(sizes) / float64(m.Multigets)
		m.MultigetOnes = float64(sizeOnes) / float64(m.Multigets)
	}
	if asked > 0 {
		m.FoundRatio = float64(returned) / float64(asked)
	}
	for _, n := range reads {
		m.LinkReads += n
	}
	for _, n := range writes {
		m.LinkWrites += n
	}
	m.TopRead, m.TopWritten = top(reads, 20), top(writes, 20)
	m.LongLists = map[int64]int64{}
	for _, id := range top(long, 10) {
		m.LongLists[id] = long[id]
	}
	in := map[int64]bool{}
	for _, id := range m.TopRead {
		in[id] = true
	}
	for _, id := range m.TopWritten {
		if in[id] {
			m.Overlap++
		}
	}
	return m
}

// top lists the n keys with the largest counts (ties: smaller id first).
func top(c map[int64]int64, n int) []int64 {
	ids := make([]int64, 0, len(c))
	for id := range c {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if c[ids[i]] != c[ids[j]] {
			return c[ids[i]] > c[ids[j]]
		}
		return ids[i] < ids[j]
	})
	return ids[:min(n, len(ids))]
}

// quantiles are nearest-rank percentiles and the mean.
func quantiles(v []int64) Quantile {
	if len(v) == 0 {
		return Quantile{}
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	at := func(p float64) int64 {
		i := int(math.Ceil(p/100*float64(len(v)))) - 1
		return v[min(max(i, 0), len(v)-1)]
	}
	sum := 0.0
	for _, x := range v {
		sum += float64(x)
	}
	return Quantile{Mean: sum / float64(len(v)), P50: at(50), P90: at(90), P95: at(95), P99: at(99)}
}

// reOpCount matches the per-op lines the reference prints at the end of a
// request phase, "ADD_LINK count = 1234  p25 = ...", and the rows of
// linkbench's table on its standard output, "ADD_LINK   1234   0 ..." (its
// lines in the reference's form go to the -L log only).
var reOpCount = regexp.MustCompile(`(?m)(?:\b|^)(ADD_LINK|DELETE_LINK|UPDATE_LINK|COUNT_LINK|MULTIGET_LINK|GET_LINKS_LIST|ADD_NODE|UPDATE_NODE|DELETE_NODE|GET_NODE)(?: count = |\s+)(\d+)\b`)

// reRate matches both drivers' REQUEST PHASE COMPLETED line.
var reRate = regexp.MustCompile(`REQUEST PHASE COMPLETED\. \d+ requests done in \d+ seconds\. Requests/second = (\d+)`)

// driverOps reads the per-op counts and the request rate a driver printed.
func driverOps(out string) (map[string]int64, float64) {
	ops := map[string]int64{}
	for _, m := range reOpCount.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		ops[m[1]] = n // the last report wins (the final one)
	}
	var rate float64
	if m := reRate.FindStringSubmatch(out); m != nil {
		rate, _ = strconv.ParseFloat(m[1], 64)
	}
	return ops, rate
}

// reMismatch reads `linkbench check`'s result line.
var (
	reCheckOK  = regexp.MustCompile(`check passed`)
	reMismatch = regexp.MustCompile(`check failed: (\d+) count mismatches`)
)

// checkResult reads the output of `linkbench check`.
func checkResult(out string) (int64, string) {
	if reCheckOK.MatchString(out) {
		return 0, "passed"
	}
	if m := reMismatch.FindStringSubmatch(out); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n, strconv.FormatInt(n, 10) + " mismatches"
	}
	return -1, "no result"
}
