package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/dist"
	"github.com/linkbench/linkbench/internal/gen"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/stats"
	"github.com/linkbench/linkbench/internal/store"
)

// Gens are the four payload generators of the workload.
type Gens struct {
	LinkAdd, LinkUp, NodeAdd, NodeUp gen.DataGen
}

// NewGens builds the payload generators from the config.
func NewGens(cfg *config.Config) (Gens, error) {
	var g Gens
	var err error
	specs := []struct {
		dst  *gen.DataGen
		spec gen.DataGenSpec
		name string
		seed uint64
	}{
		{&g.LinkAdd, cfg.LinkAddGen, "link_add_datagen", 1},
		{&g.LinkUp, cfg.LinkUpGen, "link_up_datagen", 2},
		{&g.NodeAdd, cfg.NodeAddGen, "node_add_datagen", 3},
		{&g.NodeUp, cfg.NodeUpGen, "node_up_datagen", 4},
	}
	for _, s := range specs {
		if *s.dst, err = gen.NewDataGen(s.spec, uint64(cfg.LoadRandomSeed)^s.seed); err != nil {
			return g, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return g, nil
}

// Progress is a snapshot the request phase reports every progressfreq
// seconds, and once at the start and once at the end of a warm-up.
type Progress struct {
	Elapsed time.Duration
	Warmup  bool
	// WarmupDone marks the report made when the warm-up ends and the
	// measurement begins.
	WarmupDone bool
	Done       int64 // recorded requests so far
	// Window holds the figures since the previous progress report.
	Window stats.Window
	// Requesters is the number of requesters still running.
	Requesters int
	// Backlog is the number of open-loop arrivals due but not started.
	Backlog float64
	// Behind is how late the most belated requestrate requester sent its
	// latest op (PaceBehind).
	Behind time.Duration
}

// RequestPhase is the configured request phase. Fill the exported fields,
// then call Run once.
type RequestPhase struct {
	Config *config.Config
	Store  store.Store
	Graph  *gen.Graph
	Data   *dist.DataFile
	Gens   Gens
	Retry  store.RetryPolicy
	// Tick is the interval of the time series (default 1 s).
	Tick time.Duration
	// OnInterval, when set, receives every interval as it closes.
	OnInterval func(stats.Interval)
	// OnProgress, when set, receives a progress snapshot every
	// ProgressEvery (default progressfreq).
	OnProgress    func(Progress)
	ProgressEvery time.Duration
	// OnCollector, when set, receives the phase's statistics collector
	// before the requesters start (for live exporters).
	OnCollector func(*stats.Collector)
	// Schedule, when set, is a global open-loop arrival schedule: every
	// requester takes its next intended start time from it, and latency
	// counts from that time (queueing included). It replaces requestrate.
	Schedule *Schedule
	backlog  float64 // largest backlog seen at a tick
	shared   *shared
	running  atomic.Int64
	// paced holds the requesters of a requestrate run (PaceBehind).
	paced atomic.Pointer[[]*requester]

	// SeedOffset separates the random streams of driver processes that
	// share a request_random_seed (the shard index of --shard).
	SeedOffset uint64
	counts     *phaseCounts
}

// ThreadResult is one requester's totals. Found, NotFound and
// HistoryQueries count what the reference's counters of the same names
// count, warm-up included: links returned by the multigets that found
// any, id2s asked by the multigets that found none, and list queries that
// continued a remembered tail. ListRequests are the recorded
// GET_LINKS_LIST requests (the reference's "history queries = X/Y" prints
// HistoryQueries/ListRequests).
type ThreadResult struct {
	ID             int     `json:"id"`
	Requests       int64   `json:"requests"`
	Failed         int64   `json:"failed"`
	Found          int64   `json:"found"`
	NotFound       int64   `json:"not_found"`
	HistoryQueries int64   `json:"history_queries"`
	ListRequests   int64   `json:"get_links_list_requests"`
	OpsPerSec      float64 `json:"ops_per_sec"`
	StoppedOnFails bool    `json:"stopped_on_failures"`
	// Abandoned is set when the requester was still waiting for the store
	// at maxtime + maxtime_grace; its counts are then only in the totals.
	Abandoned bool `json:"abandoned,omitempty"`
}

// RequestResult is what the request phase measured.
type RequestResult struct {
	Requests  int64
	Errors    int64
	Elapsed   time.Duration
	Summary   []stats.OpSummary
	Series    []stats.Interval
	Threads   []ThreadResult
	Collector *stats.Collector
	// FailedLimit is set when a requester stopped because it reached
	// max_failed_requests.
	FailedLimit bool
	// Interrupted is set when ctx was cancelled before the end.
	Interrupted bool
	// LastError is the first failure of the requester that failed first.
	LastError error
	// Stages are the per-stage results of a staged open-loop run.
	Stages []stats.SegmentSummary
	// MaxBacklog is the largest number of arrivals that were due but not
	// yet started at a tick of an open-loop run: how far the store lagged.
	MaxBacklog float64
	// Offered is the number of arrivals an open-loop run's schedule made
	// due in the measured time (0 for a closed loop): the requests a store
	// that keeps up serves, give or take the arrival process's noise.
	Offered float64
	// PaceLag is the longest a paced or open-loop op sent in the
	// measured time waited between its intended start and its send: a
	// requester behind its schedule sends its ops back to back until it
	// catches up.
	// PaceUncounted counts the ops sent after the warm-up that were due
	// during it: an op belongs to the part of the run its intended start
	// falls in, so they are not recorded, and requests/s is that much
	// below what the store served in the measured time.
	PaceLag       time.Duration
	PaceUncounted int64
	// Reconnects are the requests that failed on a lost connection.
	Reconnects int64
	// TimedOut counts the operations abandoned after op_timeout or at the
	// hard end (they are counted as errors too).
	TimedOut int64
	// HardEnd lists the operations still waiting for the store at maxtime
	// + maxtime_grace, when the phase stopped waiting: non-empty means the
	// store hung. Abandoned is how many requesters had not even returned
	// a few seconds later (their goroutines are left behind).
	HardEnd   []graph.Op
	Abandoned int
	// Lost, when set, says that the store stopped answering and never came
	// back before the end of the phase.
	Lost *LostServer
}

// FellBehind reports whether the requesters of a paced or open-loop run
// lost their schedule: an op was sent a second or more after its
// intended start, or the ops due in the warm-up and sent after it are 1 %
// or more of the counted requests. A requester that keeps its pace sends
// each op within a wake-up of its intended start.
func (r *RequestResult) FellBehind() bool {
	return r.PaceLag >= time.Second || r.PaceUncounted*100 >= max(r.Requests, 1)
}

// Running is the number of requesters running now (for live metrics).
func (p *RequestPhase) Running() int { return int(p.running.Load()) }

// PaceBehind is how long after its intended start the most belated
// requester of a requestrate run sent its latest op: zero while they keep
// their pace, growing while they fall behind it (for the progress lines
// and live metrics; open-loop runs have their schedule's lag instead).
func (p *RequestPhase) PaceBehind() time.Duration {
	reqs := p.paced.Load()
	if reqs == nil {
		return 0
	}
	var late int64
	for _, q := range *reqs {
		late = max(late, q.late.Load())
	}
	return time.Duration(late)
}

// ErrTooManyFailures is returned (with the result) when a requester
// exceeded max_failed_requests.
var ErrTooManyFailures = errors.New("max_failed_requests exceeded")

func (p *RequestPhase) newRequester(id int, c *stats.Collector) (*requester, error) {
	cfg := p.Config
	n := cfg.MaxID1 - cfg.StartID1
	seed := uint64(cfg.RequestRandomSeed)
	q := &requester{
		id: id, p: p, handle: c.NewHandle(),
		rng: rand.New(rand.NewPCG(seed^p.SeedOffset*0xd1b54a32d192ed03, uint64(id)*0x9e3779b97f4a7c15+1)),
	}
	q.use(p.Store)
	sum := 0.0
	for i := range q.cumMix {
		sum += cfg.Mix[i]
		q.cumMix[i] = sum
	}
	sh := p.sharedState(n)
	q.ref = !cfg.Corrected()
	var err error
	// mk builds one access distribution: the reference's samplers (whose
	// arithmetic modes give unshuffled offsets) or the corrected ones
	// (every draw a rank, shuffled). prev is the previous id the
	// reference's round robin continues from.
	mk := func(dst *picker, spec dist.AccessSpec, name string, shuf *dist.Shuffler, prev *int64) {
		if err != nil || spec.Kind == "" {
			return
		}
		var a dist.Access
		shuffled := true
		if q.ref {
			a, shuffled, err = dist.NewRefAccess(spec, n, p.Data, dist.RefOptions{Start: cfg.StartID1, Prev: prev, Shared: sh.ref})
		} else {
			a, err = dist.NewAccess(spec, n, p.Data)
		}
		if err != nil {
			err = fmt.Errorf("%sfunction: %w", name, err)
			return
		}
		dst.access = a
		if shuffled {
			dst.shuf = shuf
		}
	}
	degree := p.Graph.DegreeShuffler()
	var readC, readU, writeC, writeU, nr, nu, nd picker
	mk(&readC, cfg.Read, "read_", degree, nil)
	mk(&readU, cfg.ReadUncorr, "read_uncorr_", sh.uncorr, nil)
	mk(&writeC, cfg.Write, "write_", degree, nil)
	mk(&writeU, cfg.WriteUncorr, "write_uncorr_", sh.uncorr, nil)
	mk(&nr, cfg.NodeRead, "node_read_", sh.node, &q.lastNodeID)
	mk(&nu, cfg.NodeUpdate, "node_update_", sh.node, &q.lastNodeID)
	mk(&nd, cfg.NodeDelete, "node_delete_", sh.node, &q.lastNodeID)
	if err != nil {
		return nil, err
	}
	q.linkRead = newIDChooser(cfg.StartID1, n, readC, readU, cfg.ReadUncorrBlend)
	q.linkWrite = newIDChooser(cfg.StartID1, n, writeC, writeU, cfg.WriteUncorrBlend)
	q.nodeRead = newNodeChooser(cfg.StartID1, n, nr, sh.node)
	q.nodeUpd = newNodeChooser(cfg.StartID1, n, nu, sh.node)
	q.nodeDel = newNodeChooser(cfg.StartID1, n, nd, sh.node)
	q.lastNodeID = cfg.StartID1
	if cfg.Multiget.Enabled {
		if q.ref {
			q.multiget = dist.NewRefGeometric(cfg.Multiget.Prob, cfg.Multiget.Min, cfg.Multiget.Max)
		} else {
			q.multiget = dist.NewGeometric(cfg.Multiget.Prob, cfg.Multiget.Min, cfg.Multiget.Max)
		}
	}
	q.linkSize = dist.NewLogNormal(cfg.LinkDataSize, 1)
	q.nodeSize = dist.NewLogNormal(cfg.NodeDataSize, 1)
	return q, nil
}

// newIDChooser blends corr with uncorr for blend percent of picks. A
// missing correlated distribution (only possible in tests: the config
// requires one) is uniform.
func newIDChooser(start, n int64, corr, uncorr picker, blend float64) idChooser {
	if corr.access == nil {
		corr = picker{uniform{n}, nil}
	}
	if uncorr.access == nil {
		blend = 0
	}
	return idChooser{start: start, corr: corr, uncorr: uncorr, blend: blend / 100}
}

// newNodeChooser picks uniformly when no distribution is configured.
func newNodeChooser(start, n int64, p picker, shuf *dist.Shuffler) nodeChooser {
	if p.access == nil {
		p = picker{uniform{n}, shuf}
	}
	return nodeChooser{start, p}
}

// shared is what the requesters of one phase share: the uncorrelated and
// node shufflers and the reference samplers' state.
type shared struct {
	ref          *dist.RefShared
	uncorr, node *dist.Shuffler
}

// sharedState builds the phase's shared state on first use (requesters
// are built one after the other).
func (p *RequestPhase) sharedState(n int64) *shared {
	if p.shared == nil {
		p.shared = &shared{
			ref:    dist.NewRefShared(),
			uncorr: dist.NewShuffler(dist.UncorrShufflerSeed, dist.ShuffleGroups, n),
			node:   dist.NewShuffler(dist.NodeShufflerSeed, dist.ShuffleGroups, n),
		}
	}
	return p.shared
}

// Run executes the request phase until every requester has done its
// requests, maxtime has passed after the warm-up, a requester exceeded
// max_failed_requests, or ctx is cancelled (then the result holds what ran).
func (p *RequestPhase) Run(ctx context.Context) (*RequestResult, error) {
	cfg := p.Config
	if p.Tick <= 0 {
		p.Tick = time.Second
	}
	start := time.Now()
	measureFrom := start.Add(cfg.WarmupTime)
	deadline := measureFrom.Add(cfg.MaxTime)
	if p.Schedule != nil {
		p.Schedule.startAt(start)
	}
	c := stats.NewCollector(cfg.HDRAccuracy, cfg.RequestRate > 0 || p.Schedule != nil, measureFrom)

	if p.OnCollector != nil {
		p.OnCollector(c)
	}
	reqs := make([]*requester, cfg.Requesters)
	for i := range reqs {
		q, err := p.newRequester(i, c)
		if err != nil {
			return nil, err
		}
		reqs[i] = q
	}

	p.counts = &phaseCounts{}
	if cfg.RequestRate > 0 && p.Schedule == nil {
		p.paced.Store(&reqs)
	}
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	wd := newWatchdog(cfg.OpTimeout)
	defer wd.close()
	var failedLimit atomic.Bool
	var wg sync.WaitGroup
	for _, q := range reqs {
		q.watch = wd.add(runCtx)
		wg.Add(1)
		p.running.Add(1)
		go func() {
			defer wg.Done()
			defer p.running.Add(-1)
			// A requester keeps its connection between operations where
			// the store can (store.Sessioner), as the reference's do.
			if ss, ok := p.Store.(store.Sessioner); ok {
				sess := ss.Session()
				defer sess.Close()
				q.use(sess)
			}
			if q.run(runCtx, measureFrom, deadline) {
				failedLimit.Store(true)
				stop(nil)
			}
			q.returned.Store(true)
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	hard := p.hardEnd(deadline, stop, reqs, finished)
	defer hard.stop()

	p.tickLoop(c, start, measureFrom, &p.counts.done, hard.ended)

	res := &RequestResult{Collector: c, FailedLimit: failedLimit.Load(), Interrupted: ctx.Err() != nil}
	res.Elapsed = c.Elapsed()
	res.Summary = c.Summary()
	res.Series = c.Series()
	res.Stages = c.Segments()
	res.MaxBacklog = p.backlog
	if p.Schedule != nil {
		from := measureFrom.Sub(p.Schedule.start)
		res.Offered = p.Schedule.Expected(from, from+res.Elapsed)
	}
	res.Reconnects = c.Reconnects()
	for _, q := range reqs {
		if !q.returned.Load() {
			res.Threads = append(res.Threads, ThreadResult{ID: q.id, Abandoned: true})
			continue
		}
		t := ThreadResult{ID: q.id, Requests: q.done, Failed: q.failed, Found: q.found,
			NotFound: q.notFound, HistoryQueries: q.historyQueries, ListRequests: q.listRequests, StoppedOnFails: q.stoppedOnFails}
		if s := res.Elapsed.Seconds(); s > 0 {
			t.OpsPerSec = float64(q.done) / s
		}
		res.Threads = append(res.Threads, t)
		res.PaceLag = max(res.PaceLag, q.paceLag)
		res.PaceUncounted += q.paceUncounted
		if res.LastError == nil || q.stoppedOnFails {
			if q.lastErr != nil {
				res.LastError = q.lastErr
			}
		}
	}
	// The totals count the abandoned requesters' work too.
	res.Requests, res.Errors, res.TimedOut = p.counts.done.Load(), p.counts.failed.Load(), p.counts.timedOut.Load()
	res.HardEnd, res.Abandoned = hard.result()
	res.Lost = lostServer(reqs, p.Config)
	if res.FailedLimit {
		return res, ErrTooManyFailures
	}
	return res, nil
}

// tickLoop closes an interval every p.Tick after the warm-up until the
// requesters finish, then closes the last partial interval.
func (p *RequestPhase) tickLoop(c *stats.Collector, start, measureFrom time.Time, done *atomic.Int64, finished <-chan struct{}) {
	progressEvery := p.ProgressEvery
	if progressEvery <= 0 {
		progressEvery = p.Config.ProgressFreq
	}
	if progressEvery <= 0 {
		progressEvery = 6 * time.Second
	}
	if w := time.Until(measureFrom); w > 0 {
		if p.OnProgress != nil {
			p.OnProgress(Progress{Warmup: true})
		}
		select {
		case <-finished:
		case <-time.After(w):
			if p.OnProgress != nil {
				p.OnProgress(Progress{WarmupDone: true})
			}
		}
	}
	t := time.NewTicker(p.Tick)
	defer t.Stop()
	nextProgress := time.Now().Add(progressEvery)
	// A staged run reports each stage on its own.
	stage := -1
	checkStage := func(now time.Time) {
		if p.Schedule == nil || len(p.Schedule.stages) < 2 {
			return
		}
		if i := p.Schedule.StageAt(now.Sub(p.Schedule.start)); i != stage {
			stage = i
			st := p.Schedule.stages[i]
			c.BeginSegment(fmt.Sprintf("stage %d: %.0f ops/s", i+1, st.Rate), now)
		}
	}
	checkStage(time.Now())
	c.TakeWindow() // the windows start after the warm-up
	for {
		select {
		case <-finished:
			iv := c.Tick(time.Now())
			p.emit(iv)
			return
		case now := <-t.C:
			iv := c.Tick(now)
			checkStage(now)
			if p.Schedule != nil {
				p.backlog = max(p.backlog, p.Schedule.Backlog(now))
			}
			p.emit(iv)
			// Ticks arrive a hair after the time they were due: half a
			// tick of slack keeps a 1 s progress interval at 1 s, not 2.
			if p.OnProgress != nil && !now.Before(nextProgress.Add(-p.Tick/2)) {
				pr := Progress{Elapsed: now.Sub(measureFrom), Done: done.Load(), Window: c.TakeWindow(), Requesters: p.Running(), Behind: p.PaceBehind()}
				if p.Schedule != nil {
					pr.Backlog = p.Schedule.Backlog(now)
				}
				p.OnProgress(pr)
				if nextProgress = nextProgress.Add(progressEvery); nextProgress.Before(now) {
					nextProgress = now.Add(progressEvery)
				}
			}
		}
	}
}

func (p *RequestPhase) emit(iv stats.Interval) {
	if p.OnInterval != nil {
		p.OnInterval(iv)
	}
}

// heldMinGap is the shortest mean gap between a throttled requester's ops
// for which it sleeps with sleepHeld. Measured on PostgreSQL with 4
// requesters on 2 cores (docs/performance.md): at 500 and 1,000 ops/s per
// requester every op's service time was lower than with the timer, at
// 2,400 every op's was higher. Below 1 ms the timer wins: the runtime's
// poller waits in whole milliseconds, so a requester that falls behind
// sends its next ops back to back instead of waking for each.
const heldMinGap = time.Millisecond

// sleepsHeld reports whether a requester throttled to a mean gap of
// gapMean ns between its ops, one of requesters, waits with sleepHeld: the
// gaps are at least heldMinGap on average, and every requester can hold a
// P while it waits (the store reserved one per requester, as blocking
// connections do) with the CPUs' worth left for the rest. Otherwise it
// parks on a timer and lets others run.
func sleepsHeld(gapMean float64, requesters int) bool {
	return canSleepHeld && gapMean >= float64(heldMinGap) &&
		runtime.GOMAXPROCS(0) >= requesters+runtime.NumCPU()
}

// pauseGap is the mean gap, ns, between one requester's ops when
// something paces them: requestrate (a millisecond or more with
// request_pacing = reference, whose sleeps last that long), or
// arrival_rate without stages, whose arrivals the requesters share. It is
// 0 when they run flat out, and when stages change the pace as they go.
func pauseGap(cfg *config.Config) float64 {
	switch {
	case cfg.Stages != "":
		return 0
	case cfg.ArrivalRate > 0:
		return float64(time.Second) * float64(max(cfg.Requesters, 1)) / cfg.ArrivalRate
	case cfg.RequestRate > 0:
		gap := float64(time.Second) / cfg.RequestRate
		if cfg.RequestPacing == config.PacingReference {
			gap = max(gap, float64(heldMinGap))
		}
		return gap
	}
	return 0
}

// referenceSleep is how long the reference's requester sleeps when its
// next op is due in wait (request_pacing = reference): it passes
// Thread.sleep the wait's whole milliseconds and, as the nanoseconds left
// over, the wait modulo 1,000 ns (1,000,000 was meant), which Java 17
// rounds up to one more millisecond unless it is zero. A sleep of zero
// returns at once and its loop sleeps again; that next sleep is taken as a
// millisecond here.
func referenceSleep(wait time.Duration) time.Duration {
	d := wait.Truncate(time.Millisecond)
	if wait%1000 != 0 || d == 0 {
		d += time.Millisecond
	}
	return d
}

// run is the requester loop. It returns true when the requester stopped
// because it reached max_failed_requests. Its operations run under
// q.watch's context, which the watchdog cancels after op_timeout and the
// phase at maxtime + maxtime_grace; ctx ends the loop.
func (q *requester) run(ctx context.Context, measureFrom, deadline time.Time) bool {
	counts := q.p.counts
	cfg := q.p.Config
	limit := cfg.Requests
	var next time.Time // intended start of the next op when throttled
	var gapMean float64
	if cfg.RequestRate > 0 {
		gapMean = float64(time.Second) / cfg.RequestRate
		next = time.Now()
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	refPacing := gapMean > 0 && cfg.RequestPacing == config.PacingReference
	held := sleepsHeld(pauseGap(cfg), cfg.Requesters)
	// pause waits until until (d from now) in the kernel when held, else
	// on the timer; false when ctx ended first.
	pause := func(until time.Time, d time.Duration, held bool) bool {
		if held {
			return sleepHeld(ctx, until)
		}
		timer.Reset(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return false
		case <-timer.C:
			return true
		}
	}
	var backoff time.Duration // after connection errors
	for ctx.Err() == nil {
		if limit > 0 && q.done >= limit {
			return false
		}
		now := time.Now()
		if !now.Before(deadline) {
			return false
		}
		intended, sent := now, now
		if sched := q.p.Schedule; sched != nil {
			next = sched.Next()
		} else if gapMean > 0 {
			next = next.Add(time.Duration(q.rng.ExpFloat64() * gapMean))
		}
		if !next.IsZero() {
			if next.After(deadline) {
				return false
			}
			if wait := next.Sub(now); wait > 0 {
				until := next
				if refPacing {
					wait = referenceSleep(wait)
					until = now.Add(wait)
				}
				if !pause(until, wait, held) {
					return false
				}
				sent = time.Now()
			}
			intended = next
		}
		op := q.nextOp()
		began := sent // the watchdog's start of the op
		q.watch.begin(op, began)
		q.sent = time.Time{}
		err := q.do(q.watch.ctx, op)
		q.watch.end()
		end := time.Now()
		// Service time, and a closed loop's latency, run from the store
		// call (as the reference times them), not from the op's draw.
		if !q.sent.IsZero() {
			sent = q.sent
			if next.IsZero() {
				intended = sent
			}
		}
		if q.watch.stopped() {
			_, cause := q.watch.expired()
			switch {
			case errors.Is(cause, ErrOpTimeout):
				q.watch.renew()
			case errors.Is(cause, ErrHardEnd):
				if err != nil && !q.watch.claim.CompareAndSwap(false, true) {
					return false // the phase counted it when it stopped waiting
				}
			case err != nil:
				return false // interrupted mid-op: not a failure of the store
			}
			if err != nil {
				// From the start the watchdog counted, not the store's
				// send (q.sent, later): abandoned after at least op_timeout.
				err = &TimeoutError{Op: op, After: end.Sub(began), Cause: cause}
				counts.timedOut.Add(1)
			}
		}
		late, inWindow := sent.Sub(intended), !sent.Before(measureFrom)
		if !intended.Before(measureFrom) {
			q.handle.Record(op, int64(end.Sub(intended)), int64(end.Sub(sent)), err != nil, q.lastRetries)
			q.done++
			if op == graph.GetLinksList {
				q.listRequests++
			}
			counts.done.Add(1)
		} else if inWindow {
			q.paceUncounted++ // due in the warm-up, sent after it
		}
		if inWindow {
			q.paceLag = max(q.paceLag, late)
		}
		if gapMean > 0 {
			q.late.Store(int64(max(late, 0)))
		}
		if err == nil {
			q.lastOK, q.failStreak = end, 0
		}
		if err != nil {
			if _, named := err.(*TimeoutError); !named {
				err = &OpError{Op: op, Err: err}
			}
			q.failed++
			counts.failed.Add(1)
			q.lastFail, q.lastFailErr = end, err
			q.failStreak++
			if q.lastErr == nil {
				q.lastErr = err
			}
			if errors.Is(err, ErrHardEnd) {
				return false
			}
			if cfg.MaxFailedRequests >= 0 && q.failed > cfg.MaxFailedRequests {
				q.stoppedOnFails = true
				return true
			}
			if errors.Is(err, graph.ErrConnection) {
				q.handle.RecordReconnect(op)
				// The server is unreachable: wait before the next try, so an
				// outage costs a few failures per second, not thousands.
				backoff = min(max(2*backoff, 50*time.Millisecond), time.Second)
				if !pause(time.Now().Add(backoff), backoff, false) {
					return false
				}
			}
		} else {
			backoff = 0
		}
	}
	return false
}

// uniform is the access distribution used when none is configured.
type uniform struct{ n int64 }

func (u uniform) Next(r *rand.Rand) int64 { return r.Int64N(u.n) }
