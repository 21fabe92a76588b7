package workload

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/gen"
)

// GraphState is what a store holds, as far as the graph check can tell
// before a request phase or a consistency check.
type GraphState struct {
	// Meta is the load's record (MetaStore); nil when the store keeps none.
	Meta map[string]string
	// Empty is set when the store holds no nodes, links or counts;
	// EmptyKnown when the store could tell (EmptyChecker).
	Empty, EmptyKnown bool
	// PerProcess is set for a store whose data lives only as long as the
	// process (the memory store): a graph loaded by another process is
	// never there.
	PerProcess bool
}

// GraphProblem is one way the store's graph does not fit the
// configuration: what was found, what the configuration wants and the
// command or setting that fixes it.
type GraphProblem struct {
	// Key is the graph parameter (a metadata key such as "maxid1") or the
	// condition ("no_graph", "unfinished_load").
	Key   string `json:"key"`
	Found string `json:"found"`
	Want  string `json:"want,omitempty"`
	Fix   string `json:"fix"`
}

func (p GraphProblem) String() string {
	if p.Want == "" {
		return fmt.Sprintf("%s; %s", p.Found, p.Fix)
	}
	return fmt.Sprintf("%s: the store's graph has %s, the configuration %s; %s", p.Key, p.Found, p.Want, p.Fix)
}

// The conditions a GraphProblem can name besides graph parameters.
const (
	ProblemNoGraph        = "no_graph"
	ProblemUnfinishedLoad = "unfinished_load"
)

// reloadFix is the command that replaces the store's graph by the
// configured one.
const reloadFix = "load the configured graph with `linkbench load --truncate` (same -c and -D)"

// graphParam is one recorded graph parameter the check compares with the
// configuration. A new parameter of the load's record (such as a version of
// the degree placement) is one more entry of graphParams.
type graphParam struct {
	key string // metadata key
	// cfgKey is the config key whose explicit setting (main file or -D)
	// forbids adopting the recorded value; "" when it can never be adopted.
	cfgKey string
	// want is the value the configuration implies, and whether the
	// parameter applies to it at all.
	want func(cfg *config.Config, dataHash string) (string, bool)
	// adopt sets the configuration to the recorded value (nil: a differing
	// graph must be loaded again).
	adopt func(cfg *config.Config, v string) error
	// absent is the value assumed when the record lacks the key (a graph
	// loaded by an older linkbench); "" means such a graph is not checked.
	absent string
	// fix overrides the advice for a difference.
	fix string
}

func intParam(key string, field func(cfg *config.Config) *int64) graphParam {
	return graphParam{
		key: key, cfgKey: key,
		want: func(cfg *config.Config, _ string) (string, bool) { return strconv.FormatInt(*field(cfg), 10), true },
		adopt: func(cfg *config.Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return err
			}
			*field(cfg) = n
			return nil
		},
	}
}

// graphParams are checked in this order.
var graphParams = []graphParam{
	intParam(MetaStartID1, func(c *config.Config) *int64 { return &c.StartID1 }),
	intParam(MetaMaxID1, func(c *config.Config) *int64 { return &c.MaxID1 }),
	{
		key: MetaLinkTypeCount, cfgKey: MetaLinkTypeCount,
		want: func(cfg *config.Config, _ string) (string, bool) { return strconv.Itoa(cfg.LinkTypeCount), true },
		adopt: func(cfg *config.Config, v string) error {
			n, err := strconv.Atoi(v)
			if err == nil {
				cfg.LinkTypeCount = n
			}
			return err
		},
	},
	intParam(MetaRandomID2Max, func(c *config.Config) *int64 { return &c.RandomID2Max }),
	intParam(MetaSeed, func(c *config.Config) *int64 { return &c.LoadRandomSeed }),
	{
		key:  MetaNLinksFunc,
		want: func(cfg *config.Config, _ string) (string, bool) { return cfg.NLinks.Func, true },
	},
	{
		// The degree placement: a graph loaded before placement_version
		// was recorded (version 1) has other degrees on its ids, so
		// correlated accesses and id2 choices would miss.
		key:    MetaPlacement,
		want:   func(*config.Config, string) (string, bool) { return gen.PlacementVersion, true },
		absent: "1",
		fix:    "it was loaded by an older linkbench that placed degrees on other ids than the reference's; " + reloadFix,
	},
	{
		key: MetaDataHash,
		want: func(cfg *config.Config, dataHash string) (string, bool) {
			return dataHash, dataHash != "" && cfg.NLinks.Func == "real"
		},
		fix: "point data_file at the file the graph was loaded with, or " + reloadFix,
	},
}

// journalStateKey matches the per-shard state keys of the load journal.
var journalStateKey = regexp.MustCompile(`^journal\.(\d+)of(\d+)\.` + regexp.QuoteMeta(JournalState) + `$`)

// GraphVerdict is the outcome of CheckGraph.
type GraphVerdict struct {
	// Config is the configuration to drive the graph with: the one given,
	// or a derived copy with the Adopted parameters (the given one is
	// never written).
	Config *config.Config
	// Adopted lists the parameters taken from the graph's record because
	// the user did not set them ("maxid1=20001").
	Adopted []string
	// Unrecorded is set when the store holds a graph without linkbench's
	// record (loaded by another tool): its parameters cannot be compared.
	Unrecorded bool
	// Problems are the differences that remain, each with its fix.
	Problems []GraphProblem
}

// CheckGraph compares the graph a store holds with the configuration
// before a request phase or a check. A parameter the user did not set (in
// the main config file or with -D) is taken from the graph's record into
// the verdict's Config, a derived copy (cfg is not written); every
// difference that remains, a store with no graph and an unfinished load
// are problems, each naming the fix.
func CheckGraph(cfg *config.Config, st GraphState, dataHash string) GraphVerdict {
	v := GraphVerdict{Config: cfg}
	derived := *cfg
	if st.EmptyKnown && st.Empty {
		p := GraphProblem{Key: ProblemNoGraph, Found: "the store holds no graph (no nodes, links or counts)",
			Fix: "load it first with `linkbench load` (same -c and -D)"}
		if st.PerProcess {
			p.Found = "the store holds no graph: this store keeps its data only while the process runs"
			p.Fix = "load and run in one process with `linkbench -l -r` (same -c and -D)"
		}
		v.Problems = []GraphProblem{p}
		return v
	}
	if len(st.Meta) == 0 {
		v.Unrecorded = st.EmptyKnown
		return v
	}
	if p, ok := unfinishedLoad(st.Meta); ok {
		v.Problems = append(v.Problems, p)
	}
	for _, gp := range graphParams {
		want, applies := gp.want(v.Config, dataHash)
		if !applies {
			continue
		}
		found, ok := st.Meta[gp.key]
		if !ok || found == "" {
			if gp.absent == "" {
				continue
			}
			found = gp.absent
		}
		if found == want {
			continue
		}
		if gp.adopt != nil && !UserSet(cfg, gp.cfgKey) {
			if err := gp.adopt(&derived, found); err == nil {
				v.Config = &derived
				v.Adopted = append(v.Adopted, gp.key+"="+found)
				continue
			}
		}
		fix := gp.fix
		if fix == "" && gp.adopt != nil {
			fix = "remove " + gp.cfgKey + " from the configuration to use the graph's value, or " + reloadFix
		} else if fix == "" {
			fix = reloadFix
		}
		where := ""
		if gp.cfgKey != "" && cfg.Props != nil {
			where = " (" + cfg.Props.Where(gp.cfgKey) + ")"
		}
		v.Problems = append(v.Problems, GraphProblem{Key: gp.key, Found: found, Want: "says " + want + where, Fix: fix})
	}
	return v
}

// unfinishedLoad finds a load that did not complete: the record says so,
// or a shard's journal is open or missing.
func unfinishedLoad(meta map[string]string) (GraphProblem, bool) {
	p := GraphProblem{Key: ProblemUnfinishedLoad,
		Fix: "finish it with `linkbench load --resume` (same settings), or " + reloadFix}
	shards := map[int]map[int]string{} // n -> i -> state
	for k, v := range meta {
		m := journalStateKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		if shards[n] == nil {
			shards[n] = map[int]string{}
		}
		shards[n][i] = v
	}
	var open []string
	for n, states := range shards {
		for i := 0; i < n; i++ {
			switch states[i] {
			case JournalDone:
			case JournalOpen:
				if n == 1 {
					open = append(open, "interrupted or still under way")
				} else {
					open = append(open, fmt.Sprintf("shard %d/%d interrupted or still loading", i, n))
				}
			default:
				if n > 1 {
					open = append(open, fmt.Sprintf("shard %d/%d never loaded", i, n))
				}
			}
		}
	}
	sort.Strings(open)
	switch {
	case len(open) == 0 && meta[MetaFleet] != "" && meta[MetaFleetFinished] != "true":
		p.Found = "every shard of the --shard load loaded its part, but the graph's finishing steps (index builds, statistics) have not run"
		if h := meta[MetaFleetFinisher]; h != "" {
			p.Found += " to their end (claimed by " + h + ")"
		}
		p.Fix = "run `linkbench load --finish` with the shards' settings"
		return p, true
	case len(open) > 0:
		p.Found = "the load of this graph did not complete (" + strings.Join(open, ", ") + ")"
		if len(open) == 1 && !strings.HasPrefix(open[0], "shard") {
			p.Found = "the load of this graph did not complete"
		}
		return p, true
	case meta[MetaComplete] == "false":
		p.Found = "the load of this graph did not complete"
		return p, true
	}
	return p, false
}

// GraphError renders the problems as the error of a refused command: one
// line for one problem, else a line per problem under a header.
func GraphError(command string, problems []GraphProblem) error {
	override := "add --ignore-graph to " + command + " anyway"
	if len(problems) == 1 {
		return fmt.Errorf("refusing to %s: %s (or %s)", command, problems[0], override)
	}
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = "  " + p.String()
	}
	return fmt.Errorf("refusing to %s: the store's graph does not match the configuration (or %s):\n%s", command, override, strings.Join(lines, "\n"))
}
