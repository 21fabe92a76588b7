package report

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/stats"
)

// fillRandom gives every exported field of v (a settable value) a random
// value: floats anywhere in [-1e6, 1e6] and, for lengths of time and rates
// (timed), one time in eight NaN or an infinity; slices of up to three
// elements; pointers set or nil.
func fillRandom(r *rand.Rand, v reflect.Value, depth int, timed bool) {
	switch v.Kind() {
	case reflect.Float64, reflect.Float32:
		switch r.IntN(16) {
		case 0:
			if timed {
				v.SetFloat(math.NaN())
			}
		case 1:
			if timed {
				v.SetFloat(math.Inf(1 - 2*r.IntN(2)))
			}
		default:
			v.SetFloat((r.Float64()*2 - 1) * 1e6)
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if v.Type() == reflect.TypeFor[time.Duration]() {
			v.SetInt(r.Int64N(2e12) - 1e12)
		} else {
			v.SetInt(r.Int64N(2000) - 1000)
		}
	case reflect.String:
		v.SetString("s" + strconv.Itoa(r.IntN(100)))
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Pointer:
		if depth > 4 || r.IntN(3) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fillRandom(r, p.Elem(), depth+1, timed)
		v.Set(p)
	case reflect.Slice:
		if depth > 4 {
			return
		}
		n := r.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fillRandom(r, s.Index(i), depth+1, timed)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fillRandom(r, v.Index(i), depth+1, timed)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(1.7e9+r.Int64N(1e6), 0)))
			return
		}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				fillRandom(r, v.Field(i), depth+1, timeName(name))
			}
		}
	}
}

// negativeTimes lists the JSON paths of the figures of time or rate in
// doc that are negative.
func negativeTimes(doc any, path string, out *[]string) {
	switch d := doc.(type) {
	case map[string]any:
		for k, x := range d {
			if f, ok := x.(float64); ok && timeName(k) && f < 0 {
				*out = append(*out, path+"."+k)
			}
			negativeTimes(x, path+"."+k, out)
		}
	case []any:
		for i, x := range d {
			negativeTimes(x, path+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

// TestWrittenTimesAreNeverNegative is a property test of the results
// writers: whatever the figures they are given (random, negative, NaN or
// infinite lengths and rates, as a phase stopped in its warm-up produced),
// summary.json, summary.tsv, the summary table and the reference's
// completion lines show no negative time; before, a run aborted during its
// warm-up wrote elapsed_sec: -5.0 and printed "done in -4 seconds".
// Reliability(writer): a run stopped or failed during its warm-up (a read-only database, Ctrl-C), and any figures at all given to the results writers | no printed or written length of time or rate is negative: "0 requests done in 0 seconds", `elapsed_sec: 0` (a property test over random results)
func TestWrittenTimesAreNeverNegative(t *testing.T) {
	type thread struct {
		ID        int     `json:"id"`
		OpsPerSec float64 `json:"ops_per_sec"`
	}
	dir := t.TempDir()
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 67))
		res := &Results{}
		fillRandom(r, reflect.ValueOf(res).Elem(), 0, false)
		res.Phase = []string{"load", "request"}[seed%2]
		for i := range res.SummaryLines {
			res.SummaryLines[i].Phase = res.Phase
		}
		res.Threads = []thread{{1, -3}, {2, math.NaN()}}
		bundle, err := WriteBundle(filepath.Join(dir, strconv.FormatUint(seed, 10)), res, nil, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		b, err := os.ReadFile(filepath.Join(bundle, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		var neg []string
		negativeTimes(doc, "", &neg)
		if len(neg) > 0 {
			t.Errorf("seed %d: negative figures in summary.json: %v", seed, neg)
		}
		if len(res.SummaryLines) > 0 {
			tsv, _ := os.ReadFile(filepath.Join(bundle, "summary.tsv"))
			var table strings.Builder
			WriteSummaryTable(&table, res.SummaryLines)
			for _, text := range []string{string(tsv), table.String()} {
				for _, line := range strings.Split(strings.TrimSpace(text), "\n")[1:] {
					f := strings.Fields(line)
					if secs, err := strconv.ParseFloat(f[len(f)-2], 64); err != nil || secs < 0 {
						t.Errorf("seed %d: secs column of %q", seed, line)
					}
				}
			}
		}
		d := time.Duration(r.Int64N(2e10) - 1e10)
		for _, line := range []string{RequestLine(r.Int64N(1000), d), LoadLine(1, 2, 3, 4, d, false), LoadLine(1, 2, 3, 4, d, true)} {
			if strings.Contains(line, " -") {
				t.Errorf("seed %d: elapsed %s printed as %q", seed, d, line)
			}
		}
	}
	// The collector of a phase that ends before its measured start (in
	// its warm-up) has an empty interval, not a negative one.
	start := time.Now()
	c := stats.NewCollector(3, false, start.Add(5*time.Second))
	iv := c.Tick(start)
	if c.Elapsed() != 0 || iv.DurationSec != 0 || iv.End != 0 {
		t.Errorf("a tick during the warm-up: elapsed %s, interval %+v", c.Elapsed(), iv)
	}
}
