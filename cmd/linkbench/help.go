package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// commandHelp is what each command's --help adds to its flags: examples
// that run as written (from the source tree, for the config/ paths) and
// the documents that say more.
var commandHelp = map[string]struct{ examples, docs string }{
	"linkbench": {`  linkbench load && linkbench run      # zero-config: SQLite in ./linkbench-data, 60 s of the 2017 mix
  linkbench -c config/LinkConfigQuick.properties -l -r   # the reference's flags: load, then run
  linkbench report linkbench-results/*-request           # compare every run so far`,
		"README.md (a first hour), docs/config.md (every key), docs/results.md (results and reports)"},
	"load": {`  linkbench load --truncate            # the zero-config graph (100,000 nodes) into SQLite, emptied first
  linkbench load -c config/LinkConfigPgsql.properties -D url=postgres://linkbench:linkbench@127.0.0.1:5432/linkbench
  linkbench load --resume              # continue an interrupted load with the same settings`,
		"docs/config.md (the graph's keys: maxid1, nlinks_func, ...), docs/reliability.md (interrupted loads)"},
	"run": {`  linkbench run                        # 5 s warm-up, then 60 s of requests
  linkbench run -D requesters=16 -D maxtime=300
  linkbench run --loops 3 --loop-time 60   # three measured windows after one warm-up`,
		"docs/config.md (the request keys; linkbench config --all lists them), docs/results.md"},
	"sweep": {`  linkbench sweep --points 4 --point-time 30   # 25 % to 100 % of the measured saturation, then 110 % and 125 %
  linkbench sweep --rates 500,1000,2000 --point-time 60`,
		"docs/results.md (the sweep report and its warnings)"},
	"check": {`  linkbench check
  linkbench check -c config/LinkConfigPgsql.properties`,
		"docs/compatibility.md (the count invariant)"},
	"init": {`  linkbench init -c config/LinkConfigPgsql.properties
  linkbench init --drop                # recreate the tables (their data is lost)`,
		"docs/config.md (table and schema names)"},
	"config": {`  linkbench config                     # the zero-config settings and where each came from
  linkbench config --all | grep sqlite_
  linkbench config -c config/LinkConfigPgsql.properties -D requesters=16`,
		"docs/config.md (every key, its default and its meaning)"},
	"report": {`  linkbench report linkbench-results/20260101-120000-request   # rebuild its report.html
  linkbench report linkbench-results/*-request   # compare: comparison.html beside the bundles
  linkbench report --merge results/shard-0 results/shard-1`,
		"docs/results.md (the bundle, the reports and how comparisons judge noise)"},
	"version": {`  linkbench version                    # the version, its revision, the machine
  linkbench version > machine.txt      # to keep beside results made elsewhere`, "docs/results.md (what the results record of the machine)"},
}

// addHelp gives each command its examples and the documents to read.
func addHelp(root *cobra.Command) {
	for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
		h, ok := commandHelp[c.Name()]
		if !ok {
			continue
		}
		c.Example = h.examples
		long := c.Long
		if long == "" {
			long = c.Short + "."
		}
		c.Long = strings.TrimRight(long, "\n") + "\n\nMore in the source tree: " + h.docs + "."
	}
}
