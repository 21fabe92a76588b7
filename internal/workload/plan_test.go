package workload

import (
	"slices"
	"testing"
	"time"

	"github.com/linkbench/linkbench/internal/dist"
)

// passTasks is the split of the load before shards enumerated their own
// part: a pass over every id of the graph, numbering chunks and pieces in
// id order. It is the specification tasks must meet.
func passTasks(p *LoadPhase, shards int) []task {
	cfg := p.Config
	size := max(cfg.LoaderChunkSize, 1)
	mine := func(seq int64) bool { return seq%int64(shards) == int64(p.Shard) }
	var out []task
	var seq, pieceSeq int64
	for lo := cfg.StartID1; lo < cfg.MaxID1; lo += size {
		hi := min(lo+size, cfg.MaxID1)
		if mine(seq) {
			out = append(out, task{lo: lo, hi: hi})
		}
		seq++
		for id1 := lo; id1 < hi; id1++ {
			per := p.Graph.LinksPerType(id1)
			if per <= pieceLinks {
				continue
			}
			for typ := 0; typ < cfg.LinkTypeCount; typ++ {
				for from := int64(0); from < per; from += pieceLinks {
					if mine(pieceSeq) {
						out = append(out, task{piece: true, id1: id1, typ: typ, from: from, to: min(from+pieceLinks, per)})
					}
					pieceSeq++
				}
			}
		}
	}
	return out
}

func shardTasks(p *LoadPhase, shards int) []task {
	var out []task
	p.tasks(shards, func(t task) bool { out = append(out, t); return true })
	return out
}

// TestShardTasksAreThePassOverEveryID: each shard's tasks are exactly
// those a pass over every id gives it, in the same order, super nodes'
// pieces included, for graphs whose chunks do and do not divide evenly.
func TestShardTasksAreThePassOverEveryID(t *testing.T) {
	for _, over := range [][]string{
		{"maxid1=30001", "loader_chunk_size=100"},
		{"maxid1=29990", "loader_chunk_size=77", "link_type_count=1"},
		{"startid1=50", "maxid1=9000", "loader_chunk_size=1000"},
	} {
		cfg, data := testConfig(t, over...)
		g := testGraph(t, cfg, data)
		for _, shards := range []int{1, 2, 3, 7, 500} {
			for shard := range min(shards, 8) {
				p := &LoadPhase{Config: cfg, Graph: g, Shard: shard}
				want, got := passTasks(p, shards), shardTasks(p, shards)
				if shards == 1 && !slices.ContainsFunc(want, func(t task) bool { return t.piece }) {
					t.Fatalf("%v: the graph has no super node to split in pieces", over)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%v, shard %d/%d: %d tasks, the pass over every id gives %d", over, shard, shards, len(got), len(want))
				}
			}
		}
	}
}

// TestShardOfABillionStartsAtOnce: shard 0 of 1000 of a 10^9-id graph
// with the real degree distribution yields its first task in under
// 100 ms (a pass over every id took 26 s), and its tasks are exactly its
// chunks and its share of the super nodes' pieces: the 1000 shards
// together enumerate every chunk and every piece once.
func TestShardOfABillionStartsAtOnce(t *testing.T) {
	data, err := dist.LoadDataFile("../../config/Distribution.dat")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := testConfig(t, "maxid1=1000000001", "loader_chunk_size=2048")
	const shards = 1000
	t0 := time.Now()
	p := &LoadPhase{Config: cfg, Graph: testGraph(t, cfg, data), Shard: 0}
	var first time.Duration
	p.tasks(shards, func(task) bool { first = time.Since(t0); return false })
	if first == 0 || first > 100*time.Millisecond {
		t.Fatalf("shard 0/%d of 10^9 ids yielded its first task after %v", shards, first)
	}
	t.Logf("first task of shard 0/%d after %v", shards, first)

	chunks := (cfg.MaxID1 - cfg.StartID1 + cfg.LoaderChunkSize - 1) / cfg.LoaderChunkSize
	seen := make([]bool, chunks)
	pieces := map[string]bool{}
	var least, most int
	for shard := range shards {
		p.Shard = shard
		n := 0
		for _, tk := range shardTasks(p, shards) {
			if tk.piece {
				u := pieceUnit(tk.id1, tk.typ, tk.from)
				if pieces[u] {
					t.Fatalf("piece %s enumerated twice", u)
				}
				pieces[u] = true
				n++
				continue
			}
			k := (tk.lo - cfg.StartID1) / cfg.LoaderChunkSize
			if k%shards != int64(shard) || seen[k] || tk.hi != min(tk.lo+cfg.LoaderChunkSize, cfg.MaxID1) || tk.lo != cfg.StartID1+k*cfg.LoaderChunkSize {
				t.Fatalf("shard %d/%d enumerated chunk [%d, %d) (chunk %d, seen %v)", shard, shards, tk.lo, tk.hi, k, seen[k])
			}
			seen[k] = true
		}
		if shard == 0 || n < least {
			least = n
		}
		most = max(most, n)
	}
	for k, ok := range seen {
		if !ok {
			t.Fatalf("chunk %d enumerated by no shard", k)
		}
	}
	var want int
	for id1 := range p.Graph.Heavy(pieceLinks) {
		want += int((p.Graph.LinksPerType(id1)+pieceLinks-1)/pieceLinks) * cfg.LinkTypeCount
		for typ := range cfg.LinkTypeCount {
			for from := int64(0); from < p.Graph.LinksPerType(id1); from += pieceLinks {
				if !pieces[pieceUnit(id1, typ, from)] {
					t.Fatalf("piece %s enumerated by no shard", pieceUnit(id1, typ, from))
				}
			}
		}
	}
	if len(pieces) != want || want == 0 || most-least > 1 {
		t.Fatalf("%d pieces enumerated of %d; each shard got %d to %d", len(pieces), want, least, most)
	}
	t.Logf("%d chunks and %d pieces over %d shards", chunks, want, shards)
}
