// Command vsref measures the shape of a LinkBench request phase from a
// database server's statement log, the same way whichever driver ran it,
// and prints runs side by side. bench/vs-reference.sh drives it; it is a
// benchmark helper, not part of linkbench.
//
//	go run ./bench/vsref measure -format pg|mysql -log FILE -driver-out FILE [-check-out FILE] -label L -o run.json
//	go run ./bench/vsref table -title T run.json...
//	go run ./bench/vsref perf -label reference|linkbench -requesters N -log FILE -o perf.json -- DRIVER ARGS...
//	go run ./bench/vsref perftable -title T perf.json...
//	go run ./bench/vsref profdiff [-n 40] A/profile.tsv B/profile.tsv
//	go run ./bench/vsref pace -ratio 1.02 -requesters N reference/perf.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "vsref:", err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: vsref measure|table|perf|perftable|profdiff|counterdiff|pace ...")
	}
	switch args[0] {
	case "measure":
		return measureCmd(args[1:])
	case "perf":
		return perfCmd(args[1:])
	case "profdiff":
		fs := flag.NewFlagSet("profdiff", flag.ContinueOnError)
		n := fs.Int("n", 40, "rows: the functions whose cost differs most")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 2 {
			return fmt.Errorf("usage: vsref profdiff [-n N] A/profile.tsv B/profile.tsv")
		}
		return profDiff(w, fs.Arg(0), fs.Arg(1), *n)
	case "counterdiff":
		fs := flag.NewFlagSet("counterdiff", flag.ContinueOnError)
		n := fs.Int("n", 40, "rows per requester count: the counters that differ most")
		minPerReq := fs.Float64("min", 0.01, "leave out counters below this per request for both drivers")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			return fmt.Errorf("usage: vsref counterdiff [-n N] [-min X] run/perf.json...")
		}
		return counterDiff(w, fs.Args(), *n, *minPerReq)
	case "pace":
		fs := flag.NewFlagSet("pace", flag.ContinueOnError)
		ratio := fs.Float64("ratio", 0, "linkbench's total rate as a multiple of the run's")
		n := fs.Int("requesters", 0, "linkbench's requesters")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return fmt.Errorf("usage: vsref pace -ratio R -requesters N run/perf.json")
		}
		r, err := readPerf(fs.Arg(0))
		if err != nil {
			return err
		}
		rate, err := paceFor(r, *ratio, *n)
		if err != nil {
			return fmt.Errorf("%s: %w", fs.Arg(0), err)
		}
		fmt.Fprintf(w, "%.1f\n", rate)
		return nil
	case "perftable":
		fs := flag.NewFlagSet("perftable", flag.ContinueOnError)
		title := fs.String("title", "", "table title")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return perfTable(w, *title, fs.Args())
	case "table":
		fs := flag.NewFlagSet("table", flag.ContinueOnError)
		title := fs.String("title", "", "table title")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		var runs []Metrics
		for _, p := range fs.Args() {
			var m Metrics
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(b, &m); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			runs = append(runs, m)
		}
		writeTable(w, *title, runs)
		return nil
	}
	return fmt.Errorf("unknown command %q (measure, table, perf, perftable, profdiff, counterdiff or pace)", args[0])
}

func measureCmd(args []string) error {
	fs := flag.NewFlagSet("measure", flag.ContinueOnError)
	format := fs.String("format", "", "pg (csvlog with log_statement and auto_explain) or mysql (slow log)")
	logPath := fs.String("log", "", "the statement log of the run")
	user := fs.String("user", "linkbench", "the database user both drivers connect as")
	driverOut := fs.String("driver-out", "", "the driver's output (for its per-op counts)")
	checkOut := fs.String("check-out", "", "the output of linkbench check after the run")
	label := fs.String("label", "", "the run's name in tables")
	out := fs.String("o", "", "where to write the metrics (JSON)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := os.Open(*logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	var stmts []statement
	switch *format {
	case "pg":
		stmts, err = readPostgresCSV(f, *user)
	case "mysql":
		stmts, err = readMySQLSlowLog(f, *user)
	default:
		return fmt.Errorf("-format %q: expected pg or mysql", *format)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", *logPath, err)
	}
	m := measure(stmts)
	m.Label = *label
	if b, err := os.ReadFile(*driverOut); err == nil {
		m.Ops, m.RequestsPerSec = driverOps(string(b))
	} else {
		return err
	}
	m.CheckMismatch, m.CheckSummary = -1, "not run"
	if *checkOut != "" {
		b, err := os.ReadFile(*checkOut)
		if err != nil {
			return err
		}
		m.CheckMismatch, m.CheckSummary = checkResult(string(b))
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(*out, append(b, '\n'), 0o644)
}
