package datasets

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func labels(counts ...int) []int {
	var y []int
	for c, n := range counts {
		for range n {
			y = append(y, c)
		}
	}
	// Interleave a little so classes are not contiguous.
	rng := rand.New(rand.NewPCG(99, 0))
	rng.Shuffle(len(y), func(i, j int) { y[i], y[j] = y[j], y[i] })
	return y
}

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

func TestStratifiedIndices(t *testing.T) {
	for _, tc := range []struct {
		counts    []int
		fractions []float64
	}{
		{[]int{50, 30, 20}, []float64{0.6, 0.2, 0.2}},
		{[]int{1783, 326}, []float64{0.5, 0.5}},
		{[]int{570, 178}, []float64{0.7, 0.15, 0.15}},
		{[]int{7, 3, 1, 1}, []float64{0.5, 0.25, 0.25}},
		{[]int{212, 217, 218, 199}, []float64{0.8, 0.2}},
	} {
		y := labels(tc.counts...)
		n := len(y)
		parts, err := StratifiedIndices(y, seeded(1), tc.fractions...)
		if err != nil {
			t.Fatal(err)
		}
		// A partition of 0…n-1 …
		var all []int
		for _, p := range parts {
			all = append(all, p...)
		}
		slices.Sort(all)
		for i, v := range all {
			if v != i {
				t.Fatalf("%v: parts are not a partition of 0…%d", tc.counts, n-1)
			}
		}
		// … with sizes n·fraction rounded, summing to n …
		for p, f := range tc.fractions {
			if d := math.Abs(float64(len(parts[p])) - f*float64(n)); d >= 1 {
				t.Errorf("%v: part %d has %d rows, want %.1f", tc.counts, p, len(parts[p]), f*float64(n))
			}
			// … and each class in the same proportion, within one row.
			for c, cn := range tc.counts {
				got := 0
				for _, i := range parts[p] {
					if y[i] == c {
						got++
					}
				}
				if d := math.Abs(float64(got) - f*float64(cn)); d > 1 {
					t.Errorf("%v: part %d has %d rows of class %d, want %.2f", tc.counts, p, got, c, f*float64(cn))
				}
			}
		}
		// Same seed, same split; another seed, another split.
		again, _ := StratifiedIndices(y, seeded(1), tc.fractions...)
		other, _ := StratifiedIndices(y, seeded(2), tc.fractions...)
		if !slices.EqualFunc(parts, again, slices.Equal) {
			t.Errorf("%v: same seed gave different splits", tc.counts)
		}
		if slices.EqualFunc(parts, other, slices.Equal) {
			t.Errorf("%v: different seeds gave the same split", tc.counts)
		}
	}
}

func TestStratifiedIndicesExact(t *testing.T) {
	// 10 rows of class 0 and 5 of class 1 split 60/40: 6+4 and 3+2 exactly.
	y := labels(10, 5)
	parts, err := StratifiedIndices(y, seeded(7), 0.6, 0.4)
	if err != nil {
		t.Fatal(err)
	}
	count := func(p []int, c int) int {
		n := 0
		for _, i := range p {
			if y[i] == c {
				n++
			}
		}
		return n
	}
	if count(parts[0], 0) != 6 || count(parts[0], 1) != 3 || count(parts[1], 0) != 4 || count(parts[1], 1) != 2 {
		t.Fatalf("parts %v", parts)
	}
}

func TestSplitErrors(t *testing.T) {
	y := labels(5, 5)
	for _, tc := range []struct {
		name string
		rng  *rand.Rand
		fr   []float64
	}{
		{"nil rng", nil, []float64{0.5, 0.5}},
		{"no fractions", seeded(1), nil},
		{"sum below 1", seeded(1), []float64{0.5, 0.4}},
		{"zero fraction", seeded(1), []float64{1, 0}},
		{"negative", seeded(1), []float64{1.5, -0.5}},
		{"NaN", seeded(1), []float64{math.NaN(), 1}},
		{"empty part", seeded(1), []float64{0.96, 0.04}},
	} {
		if _, err := StratifiedIndices(y, tc.rng, tc.fr...); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if _, err := StratifiedIndices([]int{0, -1}, seeded(1), 0.5, 0.5); err == nil {
		t.Error("negative label accepted")
	}
}

func TestSplit(t *testing.T) {
	d := table([][]float64{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}}, []int{0, 0, 0, 0, 0, 1, 1, 1, 1, 1})
	parts, err := Split(d, seeded(3), 0.6, 0.2, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	if parts[0].N != 6 || parts[1].N != 2 || parts[2].N != 2 {
		t.Fatalf("sizes %d %d %d", parts[0].N, parts[1].N, parts[2].N)
	}
	for _, p := range parts {
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		for i := range p.N {
			// Row value v has label v/5: rows and labels travel together.
			if want := int(p.X[i]) / 5; p.Y[i] != want {
				t.Fatalf("row %v has label %d", p.X[i], p.Y[i])
			}
		}
		if cc := p.ClassCounts(); cc[0] != cc[1] {
			t.Fatalf("part not stratified: %v", cc)
		}
	}
	// Regression data splits at random.
	r := table([][]float64{{0}, {1}, {2}, {3}}, nil)
	r.Target = []float64{0, 10, 20, 30}
	rp, err := Split(r, seeded(3), 0.5, 0.5)
	if err != nil || rp[0].N != 2 || rp[0].Target[0] != 10*rp[0].X[0] {
		t.Fatalf("regression split: %v", err)
	}
}

func TestBatches(t *testing.T) {
	seq, err := Batches(10, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]int
	for b := range seq {
		got = append(got, slices.Clone(b))
	}
	if !slices.EqualFunc(got, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}, slices.Equal) {
		t.Fatalf("sequential batches %v", got)
	}
	shuffled := func(seed uint64) [][]int {
		seq, err := Batches(10, 3, seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		var out [][]int
		for b := range seq {
			out = append(out, slices.Clone(b))
		}
		return out
	}
	a, b, c := shuffled(5), shuffled(5), shuffled(6)
	if !slices.EqualFunc(a, b, slices.Equal) || slices.EqualFunc(a, c, slices.Equal) {
		t.Fatal("shuffled batches are not a function of the seed")
	}
	if len(a) != 4 || len(a[3]) != 1 {
		t.Fatalf("batch sizes %v", a)
	}
	all := slices.Concat(a...)
	slices.Sort(all)
	if !slices.Equal(all, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("shuffled batches cover %v", all)
	}
	n := 0
	for range seq {
		n++
		break
	}
	if n != 1 {
		t.Fatal("early break")
	}
	if _, err := Batches(10, 0, nil); err == nil {
		t.Fatal("batch size 0 accepted")
	}
	empty, _ := Batches(0, 4, nil)
	for range empty {
		t.Fatal("batches of no rows")
	}
}
