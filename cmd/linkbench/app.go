package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/linkbench/linkbench/internal/report"
	"github.com/linkbench/linkbench/internal/secret"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/spf13/cobra"
)

// options are the flags shared by every command, bound per invocation so
// commands are testable (no package-level flag state).
type options struct {
	configFile string
	overrides  []string
	logFile    string
	csvStats   string
	csvStream  string
	strict     bool
	resultsDir string
	noResults  bool
	truncate   bool
	resume     bool
	resumeAuto bool
	load, req  bool // the reference's -l and -r
	drop       bool // init --drop
	cpuProfile string
	metrics    string
	shard      string
	loops      int
	loopTime   float64
	rates      string
	points     int
	pointTime  float64
	// progressEvery overrides progressfreq; perOp adds the per-op block
	// to each progress line.
	progressEvery float64
	perOp         bool
	// ignoreGraph runs, sweeps or checks a store whose graph does not
	// match the configuration (recorded in the results).
	ignoreGraph bool
	// finish is load --finish; noFinish is load --shard I/N --no-finish.
	finish, noFinish bool
}

// parseShard reads --shard I/N.
func parseShard(s string) (i, n int, err error) {
	if s == "" {
		return 0, 1, nil
	}
	if _, err := fmt.Sscanf(s, "%d/%d", &i, &n); err != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %q: expected I/N with 0 <= I < N, e.g. 0/3", s)
	}
	return i, n, nil
}

// app holds the output streams and builds the command tree.
type app struct {
	stdout, stderr io.Writer
	opts           options
	profile        *os.File
	lastBundle     string // the directory of the last results bundle written
	graphCheck     *report.GraphCheck
	args           []string        // the command line, for error hints
	exp            *stats.Exporter // live metrics, with --metrics-addr
	// onPhase, when set (tests), is called once per phase from its first
	// progress report, while the phase runs.
	onPhase func(phase string)
	// scrub hides the config's secrets in every output, once the config
	// is read; plainStdout is stdout without it.
	scrub       *secret.Scrubber
	plainStdout io.Writer
	// stuck is the error of a store that did not close within
	// close_timeout (the command then exits 1); stopBound is close_timeout
	// once the config is read (0 before), the longest the process lingers
	// after SIGINT or SIGTERM.
	stuck     error
	stopBound atomic.Int64
}

// errorText is the one line main prints for err, secrets hidden.
func (a *app) errorText(err error) string { return "linkbench: " + a.scrub.String(err.Error()) }

func newApp(stdout, stderr io.Writer) *app { return &app{stdout: stdout, stderr: stderr} }

const usageLegacy = `usage: linkbench [-c <file>] [-csvstats <file>] [-csvstream <file>] [-D <property=value>] [-L <file>] [-l] [-r]
 -c <file>                       Linkbench config file
 -csvstats,--csvstats <file>     CSV stats output
 -csvstream,--csvstream <file>   CSV streaming stats output
 -D <property=value>             Override a config setting
 -L <file>                       Log to this file
 -l                              Execute loading stage of benchmark
 -r                              Execute request stage of benchmark
Commands: load, run, check, init, config, version (linkbench <command> --help)`

// legacyLongFlags are the reference's single-dash long options, which
// pflag would otherwise read as clusters of short flags.
var legacyLongFlags = map[string]string{"-csvstats": "--csvstats", "-csvstream": "--csvstream"}

func (a *app) execute(ctx context.Context, args []string) error {
	a.args = args
	root := a.rootCmd()
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		a.earlyStopBound()
		if a.opts.cpuProfile == "" {
			return nil
		}
		f, err := os.Create(a.opts.cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		a.profile = f
		return pprof.StartCPUProfile(f)
	}
	defer func() {
		if a.profile != nil {
			pprof.StopCPUProfile()
			a.profile.Close()
		}
	}()
	norm, err := normalizeArgs(root, args)
	if err != nil {
		return err
	}
	root.SetArgs(norm)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err = root.ExecuteContext(ctx)
	err = a.withStuck(err)
	if err != nil && a.opts.logFile != "" {
		logFatal(a.opts.logFile, err)
	}
	return err
}

// logFatal appends the error that ends the command to the -L log file, so
// the file tells why a run stopped (the usage text is left out).
func logFatal(path string, err error) {
	msg, _, _ := strings.Cut(err.Error(), "\n"+usageLegacy)
	if msg == "" {
		return
	}
	f, ferr := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if ferr != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "ERROR %s: linkbench: %s\n", time.Now().Format("2006-01-02 15:04:05.000"), msg)
}

func (a *app) addCommon(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVarP(&a.opts.configFile, "config", "c", "", "config file (.properties); without it linkbench runs the zero-config SQLite benchmark")
	f.StringArrayVarP(&a.opts.overrides, "define", "D", nil, "override a config setting: -D key=value or -Dkey=value (repeatable)")
	f.StringVarP(&a.opts.logFile, "log-file", "L", "", "also write log lines to this file")
	f.StringVar(&a.opts.csvStats, "csvstats", "", "write the final per-op statistics as CSV to this file")
	f.StringVar(&a.opts.csvStream, "csvstream", "", "write per-interval statistics as CSV to this file")
	f.BoolVar(&a.opts.strict, "strict", false, "treat unknown config keys as errors")
	f.StringVar(&a.opts.resultsDir, "results-dir", "", "directory for results bundles (default: key results_dir, ./linkbench-results)")
	f.BoolVar(&a.opts.noResults, "no-results", false, "do not write a results bundle")
	f.StringVar(&a.opts.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the driver to this file")
	f.StringVar(&a.opts.shard, "shard", "", "I/N: this process loads (or drives) shard I of N of the graph; run N processes for the whole")
	f.Float64Var(&a.opts.progressEvery, "progress-interval", 0, "seconds between progress lines (default: key progressfreq)")
	f.BoolVar(&a.opts.perOp, "per-op", false, "add each op's throughput and p50/p99 to the progress lines")
	f.StringVar(&a.opts.metrics, "metrics-addr", "", "serve live Prometheus metrics on this address (e.g. 127.0.0.1:9090) at /metrics")
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "linkbench",
		Short: "LinkBench: the Facebook social-graph database benchmark",
		Long: `linkbench loads a synthetic social graph into a store and drives the production
request mix against it, measuring every operation with HdrHistogram precision.

The reference's flags work unchanged: linkbench -c FILE [-D key=value] -l -r.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				return usageError(unknownCommand(cmd, args[0]))
			}
			if len(args) > 0 {
				return usageError(fmt.Errorf("invalid trailing arguments: %s", strings.Join(args, " ")))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !a.opts.load && !a.opts.req {
				return usageError(errors.New("did not select benchmark mode (use -l and/or -r, or a command such as `linkbench load`)"))
			}
			return a.runPhases(cmd.Context(), a.opts.load, a.opts.req)
		},
	}
	a.addCommon(root)
	root.Flags().BoolVarP(&a.opts.load, "load", "l", false, "execute the load phase")
	root.Flags().BoolVarP(&a.opts.req, "request", "r", false, "execute the request phase")
	root.Flags().BoolVar(&a.opts.truncate, "truncate", false, "empty the store before loading")
	root.Flags().BoolVar(&a.opts.ignoreGraph, "ignore-graph", false, ignoreGraphDoc)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return flagError(c, a.args, err) })

	loadCmd := &cobra.Command{
		Use:   "load",
		Short: "Generate the graph and bulk-load it into the store",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.runPhases(cmd.Context(), true, false) },
	}
	loadCmd.Flags().BoolVar(&a.opts.truncate, "truncate", false, "empty the store before loading (otherwise a non-empty store is refused)")
	loadCmd.Flags().BoolVar(&a.opts.resume, "resume", false, "continue an interrupted load from its last written units (same settings; the store keeps the journal)")
	loadCmd.Flags().BoolVar(&a.opts.resumeAuto, "resume-if-interrupted", false, "--resume when the store holds an interrupted load (of this --shard), else a new load: for pods and scripts that retry")
	loadCmd.Flags().BoolVar(&a.opts.finish, "finish", false, "finish a --shard load whose shards have all loaded (index builds, statistics), once; without --no-finish the last shard does it itself")
	loadCmd.Flags().BoolVar(&a.opts.noFinish, "no-finish", false, "with --shard: leave the graph's finishing steps to `linkbench load --finish`, even when this shard loads last")
	runCmd := &cobra.Command{
		Use:   "run",
		Short: "Run the request phase against a loaded store",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The flags are short for -D loops=N -D maxtime=S.
			if cmd.Flags().Changed("loops") {
				a.opts.overrides = append(a.opts.overrides, fmt.Sprintf("loops=%d", a.opts.loops))
			}
			if cmd.Flags().Changed("loop-time") {
				a.opts.overrides = append(a.opts.overrides, "maxtime="+strconv.FormatFloat(a.opts.loopTime, 'f', -1, 64))
			}
			return a.runPhases(cmd.Context(), false, true)
		},
	}
	runCmd.Flags().BoolVar(&a.opts.ignoreGraph, "ignore-graph", false, ignoreGraphDoc)
	runCmd.Flags().IntVar(&a.opts.loops, "loops", 1, "consecutive measurement windows after one warm-up, each with its own figures and summary line (same as -D loops=N)")
	runCmd.Flags().Float64Var(&a.opts.loopTime, "loop-time", 0, "seconds of each loop (same as -D maxtime=S)")
	sweepCmd := &cobra.Command{
		Use:   "sweep",
		Short: "Run the request phase at increasing arrival rates and chart latency against throughput",
		Long: `sweep runs one open-loop request phase per arrival rate and writes a bundle per point
plus a sweep bundle whose report charts p50, p99 and p99.9 latency per op against the
achieved throughput. Without --rates it first measures the saturation throughput with a
closed-loop run, then runs at 1/N, 2/N, ... N/N of it (--points N) and at 110% and 125%.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.sweep(cmd.Context()) },
	}
	sweepCmd.Flags().BoolVar(&a.opts.ignoreGraph, "ignore-graph", false, ignoreGraphDoc)
	sweepCmd.Flags().StringVar(&a.opts.rates, "rates", "", "comma-separated arrival rates in requests/s (default: automatic)")
	sweepCmd.Flags().IntVar(&a.opts.points, "points", 10, "number of automatic points, from 1/N to N/N of the saturation throughput")
	sweepCmd.Flags().Float64Var(&a.opts.pointTime, "point-time", 30, "seconds measured at each point (and for the calibration)")
	versionCmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, the build and the machine facts the results record",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.printVersion() },
	}
	configCmd := &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration and where each value came from",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.printConfig() },
	}
	checkCmd := &cobra.Command{
		Use:   "check",
		Short: "Verify that every count row equals the number of visible links",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.check(cmd.Context()) },
	}
	checkCmd.Flags().BoolVar(&a.opts.ignoreGraph, "ignore-graph", false, ignoreGraphDoc)
	initCmd := &cobra.Command{
		Use:   "init",
		Short: "Create the store's schema (idempotent)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.initSchema(cmd.Context()) },
	}
	initCmd.Flags().BoolVar(&a.opts.drop, "drop", false, "drop existing tables first")
	var reportOut string
	var merge bool
	reportCmd := &cobra.Command{
		Use:   "report DIR...",
		Short: "Rebuild the HTML report of a results bundle, compare several, or merge shard bundles",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			if merge {
				return a.mergeBundles(dirs)
			}
			return a.report(dirs, reportOut)
		},
	}
	reportCmd.Flags().BoolVar(&merge, "merge", false, "merge the bundles of --shard processes into one bundle (summed throughput, merged histograms)")
	reportCmd.Flags().StringVarP(&reportOut, "output", "o", "", "output file (default: DIR/report.html for one bundle, ./comparison.html for several)")
	for _, c := range []*cobra.Command{loadCmd, runCmd, configCmd, checkCmd, initCmd, sweepCmd} {
		c.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return flagError(c, a.args, err) })
	}
	root.AddCommand(loadCmd, runCmd, versionCmd, configCmd, checkCmd, initCmd, reportCmd, sweepCmd)
	return root
}

const ignoreGraphDoc = "go ahead even when the store's graph does not match the configuration (no graph, other parameters, unfinished load); recorded in the results"

// usageError is a command-line mistake: message plus usage, exit code 1.
func usageError(err error) error {
	return &exitError{code: 1, err: fmt.Errorf("%v\n%s", err, usageLegacy)}
}
