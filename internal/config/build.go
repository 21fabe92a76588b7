package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/linkbench/linkbench/internal/bounded"
	"github.com/linkbench/linkbench/internal/dist"
	"github.com/linkbench/linkbench/internal/gen"
	"github.com/linkbench/linkbench/internal/graph"
)

// builder fills a Config from Props, recording every problem.
type builder struct {
	cfg     *Config
	props   *Props
	fail    func(format string, args ...any)
	warn    func(format string, args ...any)
	mainDir string
	home    string
}

// at names the key and its origin for messages.
func (b *builder) at(key string) string {
	v, _ := b.props.Get(key)
	return fmt.Sprintf("%s = %q (%s)", key, v, b.props.Where(key))
}

func (b *builder) entry(key string) Entry {
	e, _ := b.props.Lookup(key)
	return e
}

// identifier checks a table, schema or database name: letters, digits
// and underscores (and '-' in database and schema names), at most 47
// characters, so that every store can use it (with "linkbench_write_"
// before it, within PostgreSQL's 63 bytes) and no name can change a
// statement. It is the one check of every name the config reads.
func (b *builder) identifier(key string, dash bool) {
	v := b.str(key)
	ok := len(v) <= 47
	for i := 0; i < len(v) && ok; i++ {
		c := v[i]
		ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (dash && c == '-')
	}
	if !ok {
		extra := ""
		if dash {
			extra = ", '-'"
		}
		b.fail("%s: expected a name of at most 47 letters, digits, '_'%s", b.at(key), extra)
	}
}

func (b *builder) str(key string) string {
	v, _ := b.props.Get(key)
	return strings.TrimSpace(v)
}

func (b *builder) int64(key string, min int64) int64 {
	s := b.str(key)
	if s == "" {
		b.fail("%s is required: expected an integer", key)
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// The reference's files sometimes write integers as 1e6 or 100.0.
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 9e18 {
			b.fail("%s: expected an integer", b.at(key))
			return 0
		}
		n = int64(f)
	}
	if n < min {
		b.fail("%s: expected an integer >= %d", b.at(key), min)
	}
	return n
}

func (b *builder) int(key string, min int64) int { return int(b.int64(key, min)) }

// float reads a finite number in [lo, hi].
func (b *builder) float(key string, lo, hi float64) float64 {
	s := b.str(key)
	if s == "" {
		b.fail("%s is required: expected a number", key)
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		b.fail("%s: expected a finite number", b.at(key))
		return 0
	}
	if f < lo || f > hi {
		b.fail("%s: expected a number in [%s, %s]", b.at(key), num(lo), num(hi))
	}
	return f
}

// num prints a bound without exponent notation.
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func (b *builder) optFloat(key string, def, lo, hi float64) float64 {
	if b.str(key) == "" {
		return def
	}
	return b.float(key, lo, hi)
}

func (b *builder) bool(key string) bool {
	switch strings.ToLower(b.str(key)) {
	case "true":
		return true
	case "false", "":
		return false
	}
	b.fail("%s: expected true or false", b.at(key))
	return false
}

// storeAliases maps the reference's class names to store names.
var storeAliases = map[string]string{
	"com.facebook.linkbench.linkstoremysql":               "mysql",
	"com.facebook.linkbench.linkstorepgsql":               "postgres",
	"com.facebook.linkbench.linkstoremongodb2":            "mongo",
	"com.facebook.linkbench.linkstoremongodbbasic":        "mongo",
	"com.facebook.linkbench.memorylinkstore":              "memory",
	"com.facebook.linkbench.linkstoresqlite":              "sqlite",
	"com.facebook.linkbench.linkstorerocksdb":             "pebble",
	"com.facebook.linkbench.store.memory.memorylinkstore": "memory",
}

func storeName(s string) string {
	if n, ok := storeAliases[strings.ToLower(s)]; ok {
		return n
	}
	return s
}

func (b *builder) build() {
	c := b.cfg
	// Store.
	// store wins over linkstore, unless linkstore comes from a place of
	// higher precedence: -D linkstore=...LinkStoreMysql beside the
	// zero-config preset store=sqlite means MySQL.
	c.Store = b.str("store")
	if se, le := b.entry("store"), b.entry("linkstore"); c.Store == "" || (strings.TrimSpace(le.Value) != "" && le.Origin > se.Origin) {
		c.Store = storeName(b.str("linkstore"))
	}
	if c.Store == "" {
		c.Store = "memory"
	}
	if ns := b.str("nodestore"); ns != "" && storeName(ns) != storeName(b.str("linkstore")) && b.str("linkstore") != "" {
		b.fail("%s: a node store different from linkstore (%s) is not supported", b.at("nodestore"), b.str("linkstore"))
	}
	switch strings.ToUpper(b.str("debuglevel")) {
	case "TRACE", "DEBUG", "INFO", "WARN", "ERROR":
		c.DebugLevel = strings.ToUpper(b.str("debuglevel"))
	default:
		b.fail("%s: expected TRACE, DEBUG, INFO, WARN or ERROR", b.at("debuglevel"))
	}

	// Load.
	c.Loaders = b.int("loaders", 1)
	b.atMost("loaders", int64(c.Loaders), MaxLoaders)
	c.GenerateNodes = b.bool("generate_nodes")
	c.LoaderChunkSize = b.int64("loader_chunk_size", 1)
	c.LoadRandomSeed = b.seed("load_random_seed")
	c.StartID1 = b.int64("startid1", 1)
	c.MaxID1 = b.int64("maxid1", 2)
	b.atMost("maxid1", c.MaxID1, MaxID1)
	if c.MaxID1 <= c.StartID1 && c.StartID1 >= 1 {
		b.fail("maxid1 = %d must be greater than startid1 = %d (%s, %s)", c.MaxID1, c.StartID1, b.props.Where("maxid1"), b.props.Where("startid1"))
	}
	c.LinkTypeCount = b.int("link_type_count", 1)
	if c.LinkTypeCount > 1000 {
		b.fail("%s: expected at most 1000 link types", b.at("link_type_count"))
	}
	c.RandomID2Max = b.int64("randomid2max", 0)
	c.ID2GenConfig = b.int64("id2gen_config", 0)
	c.LinkDataSize = b.float("link_datasize", 0, graph.MaxLinkData)
	c.NodeDataSize = b.float("node_datasize", 0, graph.MaxNodeData-1)
	c.LinkAddGen = b.dataGen("link_add_datagen")
	c.LinkUpGen = b.dataGen("link_up_datagen")
	c.NodeAddGen = b.dataGen("node_add_datagen")
	c.NodeUpGen = b.dataGen("node_up_datagen")
	c.BulkInsertCount = b.int("bulk_insert_count", 1)
	c.BulkInsertKB = b.int("bulk_insert_kb", 0)
	if c.BulkInsertCount > 1<<20 {
		b.fail("%s: expected at most %d rows per batch", b.at("bulk_insert_count"), 1<<20)
	} else if mem := int64(c.Loaders) * int64(c.BulkInsertCount) * graph.MaxLinkData; mem > MaxBatchMemory && c.Loaders <= MaxLoaders {
		b.fail("loaders = %d (%s) and bulk_insert_count = %d (%s) need %d GiB for link batches (at most %d GiB); lower one of them",
			c.Loaders, b.props.Where("loaders"), c.BulkInsertCount, b.props.Where("bulk_insert_count"), mem>>30, MaxBatchMemory>>30)
	}
	c.NLinks = b.nlinks()

	// Request.
	c.Requesters = b.int("requesters", 0)
	b.atMost("requesters", int64(c.Requesters), MaxRequesters)
	c.Requests = max(b.int64("requests", -1<<62), 0)
	b.atMost("requests", c.Requests, MaxRequests)
	c.RequestRate = b.float("requestrate", 0, 1e9)
	switch c.RequestPacing = strings.ToLower(b.str("request_pacing")); c.RequestPacing {
	case PacingExact, PacingReference:
	default:
		b.fail("%s: expected exact (wait until each op's intended start) or reference (the reference's whole-millisecond sleeps)", b.at("request_pacing"))
	}
	c.MaxTime = b.seconds("maxtime")
	c.MaxTimeGrace = b.seconds("maxtime_grace")
	c.OpTimeout = b.seconds("op_timeout")
	c.ConnectTimeout = b.seconds("connect_timeout")
	c.CloseTimeout = b.seconds("close_timeout")
	c.WarmupTime = b.seconds("warmup_time")
	c.Loops = b.int("loops", 1)
	c.RequestRandomSeed = b.seed("request_random_seed")
	c.MaxFailedRequests = b.int64("max_failed_requests", -1<<62)
	sum := 0.0
	for i, k := range graph.MixKeys {
		c.Mix[i] = b.float(k, 0, 100)
		sum += c.Mix[i]
	}
	if math.Abs(sum-100) > 1e-5 {
		var parts []string
		for i, k := range graph.MixKeys {
			parts = append(parts, fmt.Sprintf("%s=%g (%s)", k, c.Mix[i], b.props.Where(k)))
		}
		b.fail("the operation mix sums to %g, not 100: %s", sum, strings.Join(parts, ", "))
	}
	c.GetLinkListHistory = b.float("getlinklist_history", 0, 100)
	switch c.WorkloadSemantics = strings.ToLower(b.str("workload_semantics")); c.WorkloadSemantics {
	case SemanticsReference, SemanticsCorrected:
	default:
		b.fail("%s: expected reference (the reference's effective behaviour) or corrected (its bugs fixed)", b.at("workload_semantics"))
	}
	c.ReadUncorrBlend = b.float("read_uncorr_blend", 0, 100)
	c.Read = b.access("read_", "link_nreads", "")
	if c.ReadUncorrBlend > 0 {
		c.ReadUncorr = b.access("read_uncorr_", "link_nreads", "read_")
	}
	c.Write = b.access("write_", "link_nwrites", "")
	if c.Corrected() {
		c.WriteUncorrBlend = b.float("write_uncorr_blend", 0, 100)
		if c.WriteUncorrBlend > 0 {
			c.WriteUncorr = b.access("write_uncorr_", "link_nwrites", "write_")
		}
	} else {
		// The reference's key names for the uncorrelated write
		// distribution are the read_uncorr_ ones, blend included.
		c.WriteUncorrBlend, c.WriteUncorr = c.ReadUncorrBlend, c.ReadUncorr
		b.warnIgnored("write_uncorr_")
	}
	c.NodeRead = b.access("node_read_", "node_nreads", "")
	c.NodeUpdate = b.access("node_update_", "node_nwrites", "")
	c.NodeDelete = b.access("node_delete_", "node_nwrites", "")
	if !c.Corrected() {
		// The reference has no real distribution for these and stops.
		if c.ReadUncorr.Kind == dist.Real {
			b.fail("%s: the reference cannot sample a real distribution for uncorrelated link accesses (it stops with \"Unknown distribution type\"); choose another function, or set workload_semantics = corrected", b.at("read_uncorr_function"))
		}
		if c.NodeDelete.Kind == dist.Real {
			b.fail("%s: the reference cannot sample a real distribution for node deletes (it stops with \"Unknown distribution type\"); choose another function, or set workload_semantics = corrected", b.at("node_delete_function"))
		}
	}
	if d := b.str("link_multiget_dist"); d != "" {
		if kind, ok := distKind(d); !ok || kind != dist.Geometric {
			b.fail("%s: only the geometric distribution is supported for multiget sizes", b.at("link_multiget_dist"))
		}
		c.Multiget = MultigetSpec{Enabled: true, Min: b.int64("link_multiget_dist_min", 1), Max: b.int64("link_multiget_dist_max", 1),
			Prob: b.float("link_multiget_dist_prob", 1e-9, 1)}
		b.atMost("link_multiget_dist_max", c.Multiget.Max, MaxMultiget)
		if c.Multiget.Max < c.Multiget.Min {
			b.fail("link_multiget_dist_max = %d is below link_multiget_dist_min = %d", c.Multiget.Max, c.Multiget.Min)
		}
	}
	c.RetryAttempts = b.int("retry_attempts", 1)
	b.atMost("retry_attempts", int64(c.RetryAttempts), MaxRetryAttempts)
	c.ArrivalRate = b.float("arrival_rate", 0, 1e9)
	switch strings.ToLower(b.str("arrival_dist")) {
	case "poisson", "":
		c.ArrivalPoisson = true
	case "uniform":
	default:
		b.fail("%s: expected poisson or uniform", b.at("arrival_dist"))
	}
	c.RampTime = b.seconds("ramp_time")
	b.stages(c)

	// Output.
	c.ProgressFreq = b.seconds("progressfreq")
	c.DisplayFreq = b.seconds("displayfreq")
	c.LoadProgressInterval = b.int64("load_progress_interval", 0)
	c.ReqProgressInterval = b.int64("req_progress_interval", 0)
	c.MaxSamples = b.int("maxsamples", 0)
	c.HDRAccuracy = b.int("hdr_histogram_accuracy", 1)
	if c.HDRAccuracy > 5 {
		b.fail("%s: expected 1 to 5 significant digits", b.at("hdr_histogram_accuracy"))
	}
	c.ResultsDir = b.str("results_dir")
	c.NeverChange = b.bool("never_change")
	b.phaseLength(c)

	// Names that reach SQL statements and collection names.
	for _, k := range []string{"linktable", "counttable", "nodetable"} {
		b.identifier(k, false)
	}
	for _, k := range []string{"dbid", "dbprefix"} {
		b.identifier(k, true)
	}

	// The data file is needed by any real distribution.
	if b.needsData() {
		name := b.str("data_file")
		if name == "" {
			b.fail("data_file is required by the real distributions in use")
		} else if path, _, err := resolveFile(name, b.mainDir, b.home, bounded.Data); err != nil {
			b.fail("%s: %v", b.at("data_file"), err)
		} else {
			c.DataFile = path
		}
	}
}

func (b *builder) needsData() bool {
	c := b.cfg
	if c.NLinks.Func == "real" {
		return true
	}
	for _, a := range []dist.AccessSpec{c.Read, c.ReadUncorr, c.Write, c.WriteUncorr, c.NodeRead, c.NodeUpdate, c.NodeDelete} {
		if a.Kind == dist.Real {
			return true
		}
	}
	return false
}

// warnIgnored warns about keys of a family the user set (in the main
// config file or with -D) that the reference semantics do not read; the
// workload file's are not mentioned (FBWorkload.properties sets some).
func (b *builder) warnIgnored(prefix string) {
	for _, e := range b.props.Entries() {
		if strings.HasPrefix(e.Key, prefix) && e.Origin >= FromMain {
			b.warn("%s (%s) is not read with workload_semantics = reference: the reference takes its uncorrelated write distribution from the read_uncorr_ keys; set workload_semantics = corrected to use it", e.Key, e.OriginText())
		}
	}
}

// seed reads an optional seed; absent means time-based.
func (b *builder) seed(key string) int64 {
	if b.str(key) == "" {
		return time.Now().UnixNano()
	}
	return b.int64(key, -1<<63)
}

// distKind maps a distribution name or Java class name to a kind.
func distKind(s string) (dist.Kind, bool) {
	n := strings.ToLower(strings.TrimSpace(s))
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		n = n[i+1:]
	}
	n = strings.TrimSuffix(n, "distribution")
	switch n {
	case "zipf":
		return dist.Zipf, true
	case "uniform":
		return dist.Uniform, true
	case "geometric":
		return dist.Geometric, true
	case "lognormal":
		return dist.LogNormal, true
	case "real":
		return dist.Real, true
	case "round_robin", "roundrobin":
		return dist.RoundRobin, true
	case "reciprocal":
		return dist.Reciprocal, true
	case "multiple":
		return dist.Multiple, true
	case "power":
		return dist.Power, true
	case "perfect_power", "perfectpower":
		return dist.PerfectPower, true
	}
	return "", false
}

// access reads one access distribution family. When its function is
// absent and fallback names another family, that family's kind is used
// with this family's parameters (FBWorkload sets write_uncorr_shape but no
// write_uncorr_function).
func (b *builder) access(prefix, section, fallback string) dist.AccessSpec {
	fn := b.str(prefix + "function")
	key := prefix + "function"
	if fn == "" && fallback != "" {
		fn, key = b.str(fallback+"function"), fallback+"function"
	}
	if fn == "" {
		b.fail("%sfunction is required: expected zipf, uniform, geometric, real, round_robin, reciprocal, multiple, power or perfect_power", prefix)
		return dist.AccessSpec{}
	}
	kind, ok := distKind(fn)
	if !ok {
		b.fail("%s: unknown distribution; expected zipf, uniform, geometric, lognormal, real, round_robin, reciprocal, multiple, power, perfect_power, or a com.facebook.LinkBench.distributions class name", b.at(key))
		return dist.AccessSpec{}
	}
	s := dist.AccessSpec{Kind: kind, Section: section}
	switch kind {
	case dist.Zipf:
		s.Shape = b.float(prefix+"shape", 1e-9, 100)
	case dist.LogNormal:
		s.Median = b.float(prefix+"median", 1e-9, 1e18)
		s.Sigma = b.float(prefix+"sigma", 1e-9, 100)
	case dist.Geometric:
		s.Shape = b.optFloat(prefix+"shape", 0, 0, 1)
	case dist.RoundRobin, dist.Uniform, dist.Real:
	default:
		s.Config = b.float(prefix+"config", 0, 1e18)
	}
	if b.str(prefix+"mean") != "" {
		s.Mean, s.HasMean = b.float(prefix+"mean", 0, 1e18), true
	}
	return s
}

// dataGen reads one payload generator family.
func (b *builder) dataGen(name string) gen.DataGenSpec {
	s := gen.DataGenSpec{}
	v := strings.ToLower(b.str(name))
	if i := strings.LastIndexByte(v, '.'); i >= 0 {
		v = v[i+1:]
	}
	switch strings.TrimSuffix(v, "datagenerator") {
	case "motif":
		s.Kind = "motif"
	case "uniform":
		s.Kind = "uniform"
	default:
		b.fail("%s: expected motif or uniform (or com.facebook.LinkBench.generators.MotifDataGenerator / UniformDataGenerator)", b.at(name))
	}
	s.StartByte = b.int(name+"_startbyte", 0)
	s.EndByte = b.int(name+"_endbyte", 0)
	if s.EndByte > 255 || s.StartByte > s.EndByte {
		b.fail("%s_startbyte = %d and %s_endbyte = %d: expected 0 <= start <= end <= 255", name, s.StartByte, name, s.EndByte)
	}
	if s.Kind == "motif" {
		s.Uniqueness = b.float(name+"_uniqueness", 0, 1)
		s.MotifLength = b.int(name+"_motif_length", 1)
		if s.MotifLength > 1<<20 {
			b.fail("%s: expected at most 1048576", b.at(name+"_motif_length"))
		}
	}
	return s
}

// nlinks reads the out-degree function.
func (b *builder) nlinks() gen.NLinksSpec {
	fn := strings.ToLower(b.str("nlinks_func"))
	s := gen.NLinksSpec{Func: fn}
	switch fn {
	case "real":
	case "perfect_squares":
		s.Func = "perfect_powers"
		fallthrough
	case "const", "reciprocal", "multiples", "perfect_powers", "exponential":
		s.Default = b.int64("nlinks_default", 0)
		b.atMost("nlinks_default", s.Default, MaxListLinks)
		if s.Func != "const" {
			s.Config = b.int64("nlinks_config", 1)
			b.atMost("nlinks_config", s.Config, MaxListLinks)
		}
		if s.Func == "exponential" && s.Config < 2 {
			b.fail("%s: exponential needs nlinks_config >= 2", b.at("nlinks_config"))
		}
	default:
		kind, ok := distKind(fn)
		if !ok || (kind != dist.Zipf && kind != dist.Uniform) {
			b.fail("%s: expected real, const, reciprocal, multiples, perfect_powers, exponential, or the zipf or uniform distribution", b.at("nlinks_func"))
			return s
		}
		s.Func = "dist"
		s.Dist = dist.AccessSpec{Kind: kind}
		if kind == dist.Zipf {
			s.Dist.Shape = b.float("nlinks_shape", 1e-9, 100)
		}
		if b.str("nlinks_mean") != "" {
			s.Dist.Mean, s.Dist.HasMean = b.float("nlinks_mean", 0, MaxListLinks), true
		}
	}
	return s
}
