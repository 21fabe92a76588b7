package config

import (
	"time"

	"github.com/linkbench/linkbench/internal/dist"
	"github.com/linkbench/linkbench/internal/gen"
	"github.com/linkbench/linkbench/internal/graph"
)

// Config is the typed, validated configuration of one linkbench process.
// It is built once by Load and never changed afterwards.
type Config struct {
	// Props are all resolved properties with their origins. Stores read
	// their own keys from it (it implements store.Props).
	Props *Props

	// Store is the resolved store name (key `store`, or the reference's
	// `linkstore` class name mapped to a store name).
	Store string
	// ConfigFile is the absolute path of the main config file, "" when none.
	ConfigFile string
	// WorkloadFile and DataFile are absolute paths ("" when not used).
	WorkloadFile string
	DataFile     string
	DebugLevel   string // TRACE, DEBUG, INFO, WARN or ERROR

	// Load phase.
	Loaders         int
	GenerateNodes   bool
	LoaderChunkSize int64
	LoadRandomSeed  int64
	StartID1        int64
	MaxID1          int64 // exclusive
	LinkTypeCount   int
	RandomID2Max    int64
	ID2GenConfig    int64
	NLinks          gen.NLinksSpec
	LinkDataSize    float64 // log-normal median of link payloads
	NodeDataSize    float64 // log-normal median of node payloads
	LinkAddGen      gen.DataGenSpec
	LinkUpGen       gen.DataGenSpec
	NodeAddGen      gen.DataGenSpec
	NodeUpGen       gen.DataGenSpec
	BulkInsertCount int // rows per bulk batch
	BulkInsertKB    int // node batch size cap in KiB, 0 = none

	// Request phase.
	// WorkloadSemantics is SemanticsReference (the reference's effective
	// request behaviour, quirks included: the default) or
	// SemanticsCorrected (its known bugs fixed); key workload_semantics.
	WorkloadSemantics string
	Requesters        int
	Requests          int64   // per requester
	RequestRate       float64 // ops/s per requester, 0 = unthrottled
	// RequestPacing is PacingExact or PacingReference: how a throttled
	// requester waits for an op's intended start (key request_pacing).
	RequestPacing string
	MaxTime       time.Duration
	WarmupTime    time.Duration
	// Loops is the number of consecutive measurement windows of MaxTime
	// each in one request phase (key loops, at least 1).
	Loops             int
	RequestRandomSeed int64
	// MaxFailedRequests stops a requester after that many failures;
	// negative = never.
	MaxFailedRequests  int64
	Mix                [graph.NumRequestOps]float64 // percent, indexed by graph.Op
	GetLinkListHistory float64                      // percent
	Read               dist.AccessSpec
	ReadUncorr         dist.AccessSpec
	ReadUncorrBlend    float64 // percent; 0 = no blend
	Write              dist.AccessSpec
	WriteUncorr        dist.AccessSpec
	WriteUncorrBlend   float64 // percent; 0 = no blend
	NodeRead           dist.AccessSpec
	NodeUpdate         dist.AccessSpec
	NodeDelete         dist.AccessSpec
	Multiget           MultigetSpec
	// ArrivalRate is the open-loop arrival rate of the whole run (ops/s,
	// 0 = closed loop), ArrivalPoisson its process (else uniform gaps),
	// RampTime the linear ramp-up, Stages a staged schedule
	// "rate:seconds,..." ("" = none).
	ArrivalRate    float64
	ArrivalPoisson bool
	RampTime       time.Duration
	Stages         string
	// StageList is Stages parsed (nil without stages).
	StageList []Stage
	// RetryAttempts is the number of tries of an op that fails with a
	// transient error (key retry_attempts, default 10).
	RetryAttempts int
	// OpTimeout is how long one operation may take, retries included
	// (key op_timeout, default 60 s; 0 = no limit).
	OpTimeout time.Duration
	// ConnectTimeout bounds connecting to a server (key connect_timeout;
	// the stores read it from the props), CloseTimeout closing a store at
	// the end of a command (key close_timeout).
	ConnectTimeout, CloseTimeout time.Duration
	// MaxTimeGrace is how long after maxtime the request phase waits for
	// the operations in flight before it abandons them (key maxtime_grace).
	MaxTimeGrace time.Duration

	// Output.
	ProgressFreq         time.Duration
	DisplayFreq          time.Duration
	LoadProgressInterval int64
	ReqProgressInterval  int64
	MaxSamples           int
	HDRAccuracy          int // significant digits, default 3
	// ResultsDir is where result files go (key results_dir, default
	// ./linkbench-results).
	ResultsDir string
	// NeverChange is the reference fork's never_change switch: here it
	// only selects the upstream format of the LOAD PHASE COMPLETED line.
	NeverChange bool
}

// Values of workload_semantics.
const (
	SemanticsReference = "reference"
	SemanticsCorrected = "corrected"
)

// Values of request_pacing.
const (
	PacingExact     = "exact"
	PacingReference = "reference"
)

// Corrected reports whether the request phase fixes the reference's bugs
// (workload_semantics = corrected) instead of reproducing them.
func (c *Config) Corrected() bool { return c.WorkloadSemantics == SemanticsCorrected }

// Paced reports whether something sets the request phase's pace
// (requestrate, arrival_rate or stages) instead of each requester sending
// its next request as soon as it has its answer.
func (c *Config) Paced() bool { return c.RequestRate > 0 || c.ArrivalRate > 0 || c.Stages != "" }

// MultigetSpec is the size distribution of MULTIGET_LINK (keys
// link_multiget_dist, link_multiget_dist_min/_max/_prob). When Enabled is
// false every getlink asks for one id2.
type MultigetSpec struct {
	Enabled  bool
	Min, Max int64
	Prob     float64
}
