package dist

import (
	"math"
	"slices"
	"testing"
)

// The vectors in this file were printed by the reference (mdcallag/linkbench
// at 9ef9cc8): java.util.Random, InvertibleShuffler.permute and
// invertPermute with the reference's seeds and 1024 groups.

func TestJavaRandomMatchesJava(t *testing.T) {
	r := NewJavaRandom(42)
	var got []int64
	for range 5 {
		got = append(got, int64(r.NextIntN(1000)))
	}
	for range 3 {
		got = append(got, int64(r.NextIntN(1<<20)))
	}
	for range 3 {
		got = append(got, int64(r.NextInt()))
	}
	for range 3 {
		got = append(got, r.NextLong())
	}
	for range 3 {
		got = append(got, int64(math.Float64bits(r.NextDouble())))
	}
	for range 3 {
		got = append(got, int64(r.NextIntN(math.MaxInt32)))
	}
	want := []int64{130, 763, 248, 884, 970, 987835, 290537, 742088, -1436456258, 392236186, -415012931,
		8324226458996739737, 7040072382879853816, -5710636755842891759,
		4605039517584548352, 4607166013087860871, 4594642893183368168,
		944462913, 1610411243, 1998515241}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("draw %d: %d, java.util.Random gives %d (all: %v)", i, got[i], want[i], got)
		}
	}
}

// shufflerVectors: for [startid1, maxid1) and a seed, the ids of ranks
// 0..9 (startid1 + permute(rank)) and the ranks of offsets 0..9
// (invertPermute(offset)); inv is nil where not printed.
var shufflerVectors = []struct {
	start, end, seed int64
	ids, inv         []int64
}{
	{1, 100001, DegreeShufflerSeed, []int64{14337, 59394, 43011, 35844, 68613, 88070, 58375, 72712, 92169, 75786},
		[]int64{86016, 40961, 57346, 64515, 31748, 12293, 41990, 27655, 8200, 24585}},
	{1, 100001, UncorrShufflerSeed, []int64{86017, 22530, 19459, 20484, 8197, 87046, 4103, 89096, 80905, 11274},
		[]int64{14336, 77825, 80898, 79875, 92164, 13317, 96262, 11271, 19464, 89097}},
	{1, 100001, NodeShufflerSeed, []int64{88065, 34818, 63491, 12292, 46085, 74758, 14343, 65544, 70665, 9226},
		[]int64{12288, 65537, 36866, 88067, 54276, 25605, 86022, 34823, 29704, 91145}},
	{1, 1000001, DegreeShufflerSeed, []int64{389121, 512002, 686083, 348164, 277509, 157702, 599047, 480264, 685065, 728074},
		[]int64{611328, 488449, 314370, 652291, 722948, 842757, 401414, 520199, 315400, 272393}},
	{1, 1000001, UncorrShufflerSeed, []int64{692225, 477186, 946179, 159748, 608261, 777222, 6151, 789512, 541705, 160778},
		[]int64{308224, 523265, 54274, 840707, 392196, 223237, 994310, 210951, 458760, 839689}},
	{1, 1000001, NodeShufflerSeed, []int64{963585, 648194, 712707, 159748, 699397, 533510, 75783, 145416, 181257, 336906},
		[]int64{36864, 352257, 287746, 840707, 301060, 466949, 924678, 855047, 819208, 663561}},
	{1, 10000001, DegreeShufflerSeed, []int64{355329, 5764098, 1769475, 6482948, 9030661, 4770822, 368647, 7121928, 7869449, 9623562},
		[]int64{9645056, 4236289, 8230914, 3517443, 969732, 5229573, 9631750, 2878471, 2130952, 376841}},
	{1, 10000001, UncorrShufflerSeed, []int64{5915649, 7568386, 3737603, 7279620, 7622661, 2262022, 4327431, 3945480, 4277257, 1449994},
		[]int64{4084736, 2432001, 6262786, 2720771, 2377732, 7738373, 5672966, 6054919, 5723144, 8550409}},
	{1, 10000001, NodeShufflerSeed, []int64{6192129, 7244802, 3036163, 3800068, 6669317, 533510, 8921095, 6377480, 1969161, 3564554},
		[]int64{3808256, 2755585, 6964226, 6200323, 3331076, 9466885, 1079302, 3622919, 8031240, 6435849}},
	{5, 100005, DegreeShufflerSeed, []int64{14341, 59398, 43015, 35848, 68617, 88074, 58379, 72716, 92173, 75790}, nil},
	{5, 100005, UncorrShufflerSeed, []int64{86021, 22534, 19463, 20488, 8201, 87050, 4107, 89100, 80909, 11278}, nil},
	{5, 100005, NodeShufflerSeed, []int64{88069, 34822, 63495, 12296, 46089, 74762, 14347, 65548, 70669, 9230}, nil},
	// Fewer ids than groups: one id per class, nothing moves.
	{1000, 1101, DegreeShufflerSeed, []int64{1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009}, nil},
	// Classes of two or three ids: few ids move.
	{1, 3001, DegreeShufflerSeed, []int64{1025, 1026, 3, 4, 5, 6, 7, 1032, 9, 10}, nil},
	{1, 3001, UncorrShufflerSeed, []int64{1025, 2, 3, 1028, 5, 6, 7, 1032, 9, 10}, nil},
	{1, 3001, NodeShufflerSeed, []int64{1025, 2, 1027, 4, 1029, 6, 7, 1032, 9, 1034}, nil},
	{7, 2055, DegreeShufflerSeed, []int64{1031, 1032, 9, 10, 11, 12, 13, 1038, 15, 16}, nil},
	{1, 123458, DegreeShufflerSeed, []int64{94209, 4098, 79875, 77828, 121861, 116742, 107527, 87048, 5129, 23562}, nil},
	{1, 123458, UncorrShufflerSeed, []int64{94209, 26626, 20483, 45060, 34821, 80902, 88071, 44040, 99337, 21514}, nil},
	{1, 123458, NodeShufflerSeed, []int64{78849, 25602, 40963, 36868, 3077, 41990, 43015, 79880, 33801, 1034}, nil},
	{1, 80001, DegreeShufflerSeed, []int64{8193, 10242, 18435, 28676, 35845, 18438, 39943, 19464, 35849, 78858}, nil},
	{1, 80001, UncorrShufflerSeed, []int64{45057, 45058, 75779, 20484, 28677, 7174, 20487, 68616, 13321, 39946}, nil},
	{1, 80001, NodeShufflerSeed, []int64{11265, 44034, 71683, 18436, 46085, 5126, 30727, 6152, 76809, 19466}, nil},
}

func TestShufflerMatchesReference(t *testing.T) {
	for _, v := range shufflerVectors {
		s := NewShuffler(v.seed, ShuffleGroups, v.end-v.start)
		for rank, want := range v.ids {
			if got := v.start + s.Permute(int64(rank)); got != want {
				t.Errorf("[%d, %d) seed %d: rank %d maps to id %d, the reference's id is %d", v.start, v.end, v.seed, rank, got, want)
			}
		}
		for off, want := range v.inv {
			if got := s.Invert(int64(off)); got != want {
				t.Errorf("[%d, %d) seed %d: offset %d has rank %d, the reference's rank is %d", v.start, v.end, v.seed, off, got, want)
			}
		}
	}
}

// TestShufflerWholeRangeMatchesReference compares every position of whole
// permutations with a digest the reference printed (h = h*1000003 +
// permute(i) over i in order, in wrapping 64-bit arithmetic).
func TestShufflerWholeRangeMatchesReference(t *testing.T) {
	for _, c := range []struct {
		n, seed, digest int64
	}{
		{3000, DegreeShufflerSeed, -954597585888443012},
		{3000, UncorrShufflerSeed, 7620998333861758332},
		{3000, NodeShufflerSeed, 5894488543214732668},
		{123457, DegreeShufflerSeed, 8620428303937737376},
		{123457, UncorrShufflerSeed, -1265504309459643744},
		{123457, NodeShufflerSeed, -3530614772964879712},
		{80000, DegreeShufflerSeed, 4645562803579066944},
		{80000, UncorrShufflerSeed, 4399011384845212224},
		{80000, NodeShufflerSeed, 7383582751046834752},
		{2048, DegreeShufflerSeed, -1814025230659755008},
		{2048, UncorrShufflerSeed, -1693098167069973504},
		{2048, NodeShufflerSeed, -2934774082883951616},
	} {
		s := NewShuffler(c.seed, ShuffleGroups, c.n)
		var h int64
		for i := int64(0); i < c.n; i++ {
			h = h*1000003 + s.Permute(i)
		}
		if h != c.digest {
			t.Errorf("n %d seed %d: digest %d, the reference's is %d", c.n, c.seed, h, c.digest)
		}
	}
}

func TestShufflerIsBijection(t *testing.T) {
	for _, n := range []int64{1, 2, 3, 1023, 1024, 1025, 3000, 65537, 1000003} {
		for _, seed := range []int64{DegreeShufflerSeed, UncorrShufflerSeed, 1} {
			s := NewShuffler(seed, ShuffleGroups, n)
			seen := make([]bool, n)
			for i := int64(0); i < n; i++ {
				j := s.Permute(i)
				if j < 0 || j >= n || seen[j] {
					t.Fatalf("n=%d: Permute(%d)=%d out of range or repeated", n, i, j)
				}
				seen[j] = true
				if s.Invert(j) != i {
					t.Fatalf("n=%d: Invert(Permute(%d)) = %d", n, i, s.Invert(j))
				}
			}
		}
	}
}

func BenchmarkShufflerPermute(b *testing.B) {
	s := NewShuffler(UncorrShufflerSeed, ShuffleGroups, 10_000_000)
	b.ReportAllocs()
	var sink int64
	for i := 0; i < b.N; i++ {
		sink += s.Permute(int64(i % 10_000_000))
	}
	_ = sink
}

// TestPermutedIsThePermutationSorted: the offsets of the first k ranks,
// in order, for sizes that do and do not divide into the groups.
func TestPermutedIsThePermutationSorted(t *testing.T) {
	for _, n := range []int64{1, 5, 1023, 1024, 1025, 100_003, 262_144} {
		s := NewShuffler(DegreeShufflerSeed, ShuffleGroups, n)
		for _, k := range []int64{0, 1, 7, 1024, 5000, n / 2, n, n + 3} {
			var want []int64
			for p := range min(k, n) {
				want = append(want, s.Permute(p))
			}
			slices.Sort(want)
			if got := slices.Collect(s.Permuted(k)); !slices.Equal(got, want) {
				t.Fatalf("n %d, k %d: %d offsets, want %d", n, k, len(got), len(want))
			}
		}
	}
}
