package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// perfTable prints the runs of perfCmd side by side: per requester count,
// the median over rounds of each driver's rate, CPU per request and peak
// RSS with linkbench's ratio to the reference, the statements the server
// ran per request, then every op's mean and p99 latency, and whether the
// goals hold in each cell (throughput >= 1.2x the reference's, CPU per
// request <= 0.5x, peak RSS <= 1/5, statements per request within 2 %).
func perfTable(w io.Writer, title string, paths []string) error {
	type key struct {
		driver string
		n      int
	}
	runs := map[key][]Perf{}
	counts := map[int]bool{}
	service := false
	for _, p := range paths {
		r, err := readPerf(p)
		if err != nil {
			return err
		}
		k := key{r.Label, r.Requesters}
		runs[k] = append(runs[k], r)
		counts[r.Requesters] = true
		service = service || r.ServiceTime
	}
	ns := make([]int, 0, len(counts))
	for n := range counts {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	med := func(rs []Perf, f func(Perf) float64) float64 {
		v := make([]float64, 0, len(rs))
		for _, r := range rs {
			v = append(v, f(r))
		}
		return median(v)
	}
	fmt.Fprintf(w, "\n%s\n", title)
	fmt.Fprintf(w, "%10s | %9s %9s %6s | %8s %8s %6s | %8s %8s %6s | %s\n", "requesters",
		"ref req/s", "lb req/s", "ratio", "ref us/r", "lb us/r", "ratio", "ref MB", "lb MB", "ratio", "rounds")
	var failed []string
	for _, n := range ns {
		ref, lb := runs[key{"reference", n}], runs[key{"linkbench", n}]
		if len(ref) == 0 || len(lb) == 0 {
			continue
		}
		rr, lr := med(ref, func(p Perf) float64 { return p.RequestsPerS }), med(lb, func(p Perf) float64 { return p.RequestsPerS })
		rc, lc := med(ref, func(p Perf) float64 { return p.CPUPerReqUs }), med(lb, func(p Perf) float64 { return p.CPUPerReqUs })
		rm, lm := med(ref, func(p Perf) float64 { return float64(p.PeakRSSKB) / 1024 }), med(lb, func(p Perf) float64 { return float64(p.PeakRSSKB) / 1024 })
		fmt.Fprintf(w, "%10d | %9.0f %9.0f %6.2f | %8.1f %8.1f %6.2f | %8.0f %8.0f %6.2f | %d+%d\n", n,
			rr, lr, lr/rr, rc, lc, lc/rc, rm, lm, lm/rm, len(ref), len(lb))
		if lr < 1.2*rr {
			failed = append(failed, fmt.Sprintf("%d requesters: throughput %.0f < 1.2 x %.0f", n, lr, rr))
		}
		if lc > 0.5*rc {
			failed = append(failed, fmt.Sprintf("%d requesters: CPU per request %.1f > half of %.1f us", n, lc, rc))
		}
		if lm*5 > rm {
			failed = append(failed, fmt.Sprintf("%d requesters: peak RSS %.0f MB > a fifth of %.0f MB", n, lm, rm))
		}
	}
	for _, n := range ns {
		for _, d := range []string{"reference", "linkbench"} {
			for i, r := range runs[key{d, n}] {
				if r.TimedOut > 0 {
					fmt.Fprintf(w, "%s, %d requesters, run %d: %d requests not answered by maxtime + maxtime_grace, counted as errors (the phase lasted %.0f s)\n",
						d, n, i+1, r.TimedOut, r.Seconds)
				}
				if m, mb, ok := indexThrash(r); ok {
					fmt.Fprintf(w, "%s, %d requesters, run %d: MyRocks's block cache missed %.2f index blocks per request (%.1f MB read into it per request): the server thrashed its index blocks, whichever driver ran (scripts/mariadb.sh keeps them out of the cache)\n",
						d, n, i+1, m, mb)
				}
				if r.FellBehind {
					fmt.Fprintf(w, "%s, %d requesters, run %d: fell behind its pace (ops sent up to %.1f s after their intended start); the %d ops it sent after the warm-up that were due during it are counted here, as the reference counts, not in its own output\n",
						d, n, i+1, r.PaceLagSec, r.Uncounted)
				}
			}
		}
	}
	fmt.Fprintf(w, "\nthe server beside the driver (medians): CPU per request, us, and the machine's idle share\n%10s | %8s %8s %6s | %8s %8s\n",
		"requesters", "ref srv", "lb srv", "ratio", "ref idle", "lb idle")
	for _, n := range ns {
		ref, lb := runs[key{"reference", n}], runs[key{"linkbench", n}]
		if len(ref) == 0 || len(lb) == 0 {
			continue
		}
		rs, ls := med(ref, func(p Perf) float64 { return p.ServerCPUPerReqUs }), med(lb, func(p Perf) float64 { return p.ServerCPUPerReqUs })
		ri, li := med(ref, func(p Perf) float64 { return p.IdlePct }), med(lb, func(p Perf) float64 { return p.IdlePct })
		ratio := 0.0
		if rs > 0 {
			ratio = ls / rs
		}
		fmt.Fprintf(w, "%10d | %8.1f %8.1f %6.2f | %7.1f%% %7.1f%%\n", n, rs, ls, ratio, ri, li)
	}
	if same := serverStatements(w, ns, func(d string, n int) []Perf { return runs[key{d, n}] }); len(same) > 0 {
		failed = append(failed, same...)
	}
	ops := []string{"ADD_LINK", "DELETE_LINK", "UPDATE_LINK", "COUNT_LINK", "MULTIGET_LINK", "GET_LINKS_LIST", "ADD_NODE", "UPDATE_NODE", "DELETE_NODE", "GET_NODE"}
	kind := "latency"
	if service {
		kind = "service time (from the actual send: throttled runs)"
	}
	fmt.Fprintf(w, "\nmean / p99 %s, ms (medians; the reference's p99 is its bucket's upper bound)\n%-15s", kind, "op")
	for _, n := range ns {
		fmt.Fprintf(w, " | %-31s", fmt.Sprintf("%d requesters: ref / lb", n))
	}
	fmt.Fprintln(w)
	for _, op := range ops {
		fmt.Fprintf(w, "%-15s", op)
		for _, n := range ns {
			ref, lb := runs[key{"reference", n}], runs[key{"linkbench", n}]
			opOf := func(f func(OpPerf) float64) func(Perf) float64 {
				return func(p Perf) float64 { return f(p.Ops[op]) }
			}
			rmean, lmean := med(ref, opOf(func(o OpPerf) float64 { return o.MeanMs })), med(lb, opOf(func(o OpPerf) float64 { return o.MeanMs }))
			rp99, lp99 := med(ref, opOf(func(o OpPerf) float64 { return o.P99Ms })), med(lb, opOf(func(o OpPerf) float64 { return o.P99Ms }))
			mark := " "
			if lmean > rmean {
				mark = "!"
				failed = append(failed, fmt.Sprintf("%d requesters: %s mean %.3f > %.3f ms", n, op, lmean, rmean))
			}
			fmt.Fprintf(w, " | %6.3f / %6.3f%s %6.2f / %6.2f", rmean, lmean, mark, rp99, lp99)
		}
		fmt.Fprintln(w)
	}
	pairVerdicts(w, ns, ops, func(d string, n int) []Perf { return runs[key{d, n}] })
	if !service {
		closedLoop(w, ns, func(d string, n int) []Perf { return runs[key{d, n}] })
	}
	historyShares(w, ns, func(d string, n int) []Perf { return runs[key{d, n}] })
	schedWaits(w, ns, func(d string, n int) []Perf { return runs[key{d, n}] })
	if len(failed) == 0 {
		fmt.Fprintln(w, "\nevery cell meets the goals (the same statements per request; throughput >= 1.2x, CPU per request <= 0.5x, peak RSS <= 1/5 of the reference's; every op's mean at or below its)")
	} else {
		fmt.Fprintf(w, "\nwhere a cell misses a goal:\n  %s\n", strings.Join(failed, "\n  "))
	}
	return nil
}

// indexThrash says whether a MyRocks run's block cache kept missing its
// tables' index blocks: a run in which it did answered a tenth of the
// requests of one in which it did not, at ten times the server's CPU per
// request, whichever driver ran. It returns the misses and the megabytes
// of index blocks read into the cache per request. Runs that kept their
// index blocks missed fewer than 0.001 a request; with the blocks out of
// the cache (scripts/mariadb.sh) the counters stay at zero.
func indexThrash(p Perf) (misses, mb float64, ok bool) {
	misses = p.ServerCounters["status.ROCKSDB_BLOCK_CACHE_INDEX_MISS"]
	mb = p.ServerCounters["status.ROCKSDB_BLOCK_CACHE_INDEX_BYTES_INSERT"] / (1 << 20)
	return misses, mb, misses >= 0.05
}

// pairVerdicts prints each round's pair on its own: the k-th run of
// either driver in a cell were run back to back (vs-reference.sh
// alternates them), so a pair shares the machine's state of the moment,
// which the medians over rounds mix. For each: linkbench's throughput
// ratio and the ops whose mean was above the reference's, and whether
// the pair met both of issue 22's bounds on latency and throughput.
func pairVerdicts(w io.Writer, ns []int, ops []string, runs func(driver string, n int) []Perf) {
	header := false
	for _, n := range ns {
		ref, lb := runs("reference", n), runs("linkbench", n)
		if len(ref) < 2 || len(ref) != len(lb) {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\nround by round (each pair run back to back): linkbench's throughput ratio and the ops whose mean was above the reference's")
			header = true
		}
		both := 0
		for i := range ref {
			ratio := 0.0
			if ref[i].RequestsPerS > 0 {
				ratio = lb[i].RequestsPerS / ref[i].RequestsPerS
			}
			var above []string
			for _, op := range ops {
				r, l := ref[i].Ops[op].MeanMs, lb[i].Ops[op].MeanMs
				if r > 0 && l > r {
					above = append(above, fmt.Sprintf("%s +%.1f%%%s", op, 100*(l/r-1), pairHistory(op, ref[i], lb[i])))
				}
			}
			verdict := strings.Join(above, ", ")
			if len(above) == 0 {
				verdict = "none"
				if ratio >= 1 {
					verdict = "none: both bounds"
					both++
				}
			}
			fmt.Fprintf(w, "%10d round %d | %5.2f | %s\n", n, i+1, ratio, verdict)
		}
		fmt.Fprintf(w, "%10d: %d of %d pairs at or above the reference's throughput with every op's mean at or below the reference's\n", n, both, len(ref))
	}
}

// pairHistory names, beside a list read slower than the reference's, the
// pair's history reads per 100 list requests (reference / linkbench):
// each is a page of 10,000 rows, so a pair whose linkbench run made more
// of them has a longer mean list read whatever either driver costs.
func pairHistory(op string, ref, lb Perf) string {
	if op != "GET_LINKS_LIST" || ref.ListRequests == 0 || lb.ListRequests == 0 {
		return ""
	}
	per100 := func(p Perf) float64 { return 100 * float64(p.HistoryQueries) / float64(p.ListRequests) }
	return fmt.Sprintf(" (history reads %.3f / %.3f per 100)", per100(ref), per100(lb))
}

// linkWrites are the ops that write a link (a transaction ending in a
// commit, with its WAL flush).
var linkWrites = map[string]bool{"ADD_LINK": true, "DELETE_LINK": true, "UPDATE_LINK": true}

// loopShares is one closed-loop run's accounting: the count-weighted mean
// latency of all its ops, N/X (what that mean would be if the requesters
// spent no time between ops: Little's law), the share of the ops' time
// the link writes took, and the count-weighted mean of the other ops.
func loopShares(p Perf) (mean, nx, lwShare, restMean float64) {
	var c, t, lwc, lwt float64
	for op, o := range p.Ops {
		c += float64(o.Count)
		t += float64(o.Count) * o.MeanMs
		if linkWrites[op] {
			lwc += float64(o.Count)
			lwt += float64(o.Count) * o.MeanMs
		}
	}
	if c == 0 || t == 0 || p.RequestsPerS == 0 {
		return 0, 0, 0, 0
	}
	mean, nx, lwShare = t/c, 1000*float64(p.Requesters)/p.RequestsPerS, lwt/t
	if c > lwc {
		restMean = (t - lwt) / (c - lwc)
	}
	return mean, nx, lwShare, restMean
}

// closedLoop prints loopShares per cell (medians of the rounds). In a
// closed loop the weighted mean is about N/X whichever driver runs, so
// at equal throughput a driver whose link writes take a smaller share of
// the requesters' time leaves a larger one to the other ops: every op
// faster than the reference's needs a throughput lead.
func closedLoop(w io.Writer, ns []int, runs func(driver string, n int) []Perf) {
	fmt.Fprintf(w, "\nthe closed loop (medians): count-weighted mean latency of all ops against N/X, ms, the link writes' share of the ops' time, the other ops' weighted mean, ms\n%10s | %-32s | %-32s\n",
		"requesters", "ref: mean  N/X  lw share  rest", "lb: mean  N/X  lw share  rest")
	for _, n := range ns {
		ref, lb := runs("reference", n), runs("linkbench", n)
		if len(ref) == 0 || len(lb) == 0 {
			continue
		}
		cell := func(rs []Perf) string {
			var m, nx, sh, rest []float64
			for _, r := range rs {
				a, b, c, d := loopShares(r)
				m, nx, sh, rest = append(m, a), append(nx, b), append(sh, c), append(rest, d)
			}
			return fmt.Sprintf("%6.3f %6.3f %7.1f%% %7.3f", median(m), median(nx), 100*median(sh), median(rest))
		}
		fmt.Fprintf(w, "%10d | %-32s | %-32s\n", n, cell(ref), cell(lb))
	}
}

// historyShares prints, per cell, the medians of each driver's history
// queries per 100 measured list requests (Perf.HistoryQueries): where
// they differ, so do the two drivers' list reads, by the pages of 10,000
// rows they read, whatever either driver costs.
func historyShares(w io.Writer, ns []int, runs func(driver string, n int) []Perf) {
	share := func(rs []Perf) (float64, bool) {
		v := make([]float64, 0, len(rs))
		for _, r := range rs {
			if r.ListRequests > 0 {
				v = append(v, 100*float64(r.HistoryQueries)/float64(r.ListRequests))
			}
		}
		return median(v), len(v) > 0
	}
	header := false
	for _, n := range ns {
		ref, rok := share(runs("reference", n))
		lb, lok := share(runs("linkbench", n))
		if !rok || !lok {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nlist reads past a remembered full page (history queries, the warm-up's included) per 100 measured list requests (medians)\n%10s | %8s %8s\n",
				"requesters", "ref", "lb")
			header = true
		}
		fmt.Fprintf(w, "%10d | %8.3f %8.3f\n", n, ref, lb)
	}
}

// schedWaits prints, per cell, the medians of the runs' Sched: what woke
// the server's and the driver's threads, how often per request, and how
// long each then waited for a core. A backend's wait for a lock or for
// its commit's log flush ends with such a wake-up ("woken otherwise"), so
// this is the part of an op's time that the scheduler, not the server's
// work, sets beside each driver.
func schedWaits(w io.Writer, ns []int, runs func(driver string, n int) []Perf) {
	header := false
	for _, n := range ns {
		ref, lb := runs("reference", n), runs("linkbench", n)
		kinds := map[string]bool{}
		for _, r := range append(append([]Perf(nil), ref...), lb...) {
			for k := range r.Sched {
				kinds[k] = true
			}
		}
		if len(kinds) == 0 {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nwake-ups per request and the wait for a core after each, us (perf sched, medians; >100: the share that waited 100 us or more)\n%10s %-34s | %8s %8s %6s | %8s %8s %6s\n",
				"requesters", "threads", "ref /req", "wait", ">100", "lb /req", "wait", ">100")
			header = true
		}
		ks := make([]string, 0, len(kinds))
		for k := range kinds {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		cell := func(rs []Perf, k string) string {
			var per, wait, over []float64
			for _, r := range rs {
				if s, ok := r.Sched[k]; ok {
					per, wait, over = append(per, s.PerRequest), append(wait, s.MeanDelayUs), append(over, s.Over100Pct)
				}
			}
			if len(per) == 0 {
				return fmt.Sprintf("%8s %8s %6s", "-", "-", "-")
			}
			return fmt.Sprintf("%8.3f %8.1f %5.1f%%", median(per), median(wait), median(over))
		}
		for _, k := range ks {
			fmt.Fprintf(w, "%10d %-34s | %s | %s\n", n, k, cell(ref, k), cell(lb, k))
		}
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// statementCounters are the server's counters of statements run, each
// with what it counts: PostgreSQL's pg_stat_statements by the statement's
// first word (the statements that completed; vs-reference.sh turns it on)
// and its transactions' ends, MariaDB's Com_ counters (every statement,
// prepared or not).
var statementCounters = []string{
	"stmt.SELECT", "stmt.INSERT", "stmt.UPDATE", "stmt.DELETE", "stmt.BEGIN", "stmt.COMMIT", "stmt.ROLLBACK",
	"status.COM_SELECT", "status.COM_INSERT", "status.COM_UPDATE", "status.COM_DELETE", "status.COM_BEGIN",
	"status.COM_COMMIT", "status.COM_ROLLBACK", "status.COM_CALL_PROCEDURE",
}

// transactionCounters are PostgreSQL's transactions ended, every
// statement's own included: pg_stat_statements does not see a BEGIN or
// COMMIT sent as a prepared statement (as both drivers send them), so
// these stand for the transaction ends there. The server counts them in
// each session and publishes them up to a second late: they are shown, not
// compared.
var transactionCounters = []string{"db.xact_commit", "db.xact_rollback"}

// statementsPerRequest is the statements the server ran per request in
// a run, over every request it sent where the run has those counters
// (RunStatements), else over the server's window (0 without counters).
func statementsPerRequest(p Perf) float64 {
	n := 0.0
	for _, c := range statementCounters {
		n += statementCounts(p)[c]
	}
	return n
}

func statementCounts(p Perf) map[string]float64 {
	if len(p.RunStatements) > 0 {
		return p.RunStatements
	}
	return p.ServerCounters
}

// serverStatements prints, per requester count, the statements the
// server ran per request for each driver (medians) and those of the
// transaction ends, and returns the cells where the two drivers differ by
// more than 2 %: there they did not ask for the same work.
func serverStatements(w io.Writer, ns []int, runs func(driver string, n int) []Perf) (failed []string) {
	header := false
	for _, n := range ns {
		ref, lb := runs("reference", n), runs("linkbench", n)
		if len(ref) == 0 || len(lb) == 0 || statementsPerRequest(ref[0]) == 0 {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nwhat the server ran per request (medians, over every request sent): statements, and the transaction ends (commit / rollback; PostgreSQL: transactions, its own count)\n%10s | %8s %8s %6s | %15s %15s\n",
				"requesters", "ref", "lb", "ratio", "ref", "lb")
			header = true
		}
		med := func(rs []Perf, f func(Perf) float64) float64 {
			v := make([]float64, 0, len(rs))
			for _, r := range rs {
				v = append(v, f(r))
			}
			return median(v)
		}
		ends := func(rs []Perf) string {
			// PostgreSQL's own transaction counts where the run has them
			// (pg_stat_statements misses most COMMITs), else the statements.
			end := func(p Perf, stmt, xact string) float64 {
				m := statementCounts(p)
				if v, ok := m[xact]; ok {
					return v
				}
				return m["stmt."+stmt] + m["status.COM_"+stmt]
			}
			c := med(rs, func(p Perf) float64 { return end(p, "COMMIT", "db.xact_commit") })
			r := med(rs, func(p Perf) float64 { return end(p, "ROLLBACK", "db.xact_rollback") })
			return fmt.Sprintf("%.3f / %.3f", c, r)
		}
		rs, ls := med(ref, statementsPerRequest), med(lb, statementsPerRequest)
		verdict := "the same"
		if ls < rs*0.98 || ls > rs*1.02 {
			verdict = "NOT the same"
			failed = append(failed, fmt.Sprintf("%d requesters: %.3f statements per request against the reference's %.3f", n, ls, rs))
		}
		fmt.Fprintf(w, "%10d | %8.3f %8.3f %6.3f | %15s %15s | %s\n", n, rs, ls, ls/rs, ends(ref), ends(lb), verdict)
	}
	return failed
}
