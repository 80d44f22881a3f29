package datasets

import (
	"math"
	"slices"
	"testing"
)

func table(rows [][]float64, y []int) *Dataset {
	d := &Dataset{Name: "t", N: len(rows), D: len(rows[0]), Y: y}
	for _, r := range rows {
		d.X = append(d.X, r...)
	}
	d.Shape = []int{d.D}
	d.Features = numericFeatures(numberedNames("x", d.D))
	if y != nil {
		d.Classes = []string{"a", "b", "c"}
	}
	return d
}

func near(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool {
		return math.Abs(x-y) <= 1e-12*max(1, math.Abs(y)) || math.IsNaN(x) && math.IsNaN(y)
	})
}

func TestStandardizer(t *testing.T) {
	train := table([][]float64{{1, 5}, {3, 5}, {5, 5}}, []int{0, 1, 2})
	s, err := FitStandardizer(train)
	if err != nil {
		t.Fatal(err)
	}
	sd := math.Sqrt(8.0 / 3) // population std of 1, 3, 5
	if !near(s.Mean, []float64{3, 5}) || !near(s.Scale, []float64{sd, 1}) {
		t.Fatalf("mean %v scale %v", s.Mean, s.Scale)
	}
	got, err := s.Transform(train)
	if err != nil {
		t.Fatal(err)
	}
	if !near(got.X, []float64{-2 / sd, 0, 0, 0, 2 / sd, 0}) || !slices.Equal(got.Y, train.Y) {
		t.Fatalf("train standardized %v", got.X)
	}
	if train.X[0] != 1 {
		t.Fatal("Transform modified its input")
	}
	// Fitted on train, applied to test: the constant column is only centred.
	test, _ := s.Transform(table([][]float64{{7, 6}}, nil))
	if !near(test.X, []float64{4 / sd, 1}) {
		t.Fatalf("test standardized %v", test.X)
	}
	// A constant column whose mean is inexact in floating point still maps to exactly 0.
	c, _ := FitStandardizer(table([][]float64{{0.1}, {0.1}, {0.1}}, nil))
	ct, _ := c.Transform(table([][]float64{{0.1}, {0.1}, {0.1}}, nil))
	if !slices.Equal(ct.X, []float64{0, 0, 0}) {
		t.Fatalf("constant column standardized to %v", ct.X)
	}
	// NaN is ignored when fitting and kept.
	n, _ := FitStandardizer(table([][]float64{{1}, {math.NaN()}, {3}}, nil))
	if !near(n.Mean, []float64{2}) || !near(n.Scale, []float64{1}) {
		t.Fatalf("NaN-aware fit: %v %v", n.Mean, n.Scale)
	}
	if _, err := s.Transform(table([][]float64{{1, 2, 3}}, nil)); err == nil {
		t.Fatal("column-count mismatch accepted")
	}
	nom := table([][]float64{{0}}, nil)
	nom.Features[0] = Feature{Name: "c", Kind: Nominal, Categories: []string{"u"}}
	if _, err := FitStandardizer(nom); err == nil {
		t.Fatal("standardizing a nominal feature accepted")
	}
}

func TestNormalizeRows(t *testing.T) {
	d := table([][]float64{{3, 4}, {0, 0}, {-2, 0}}, nil)
	got, err := NormalizeRows(d)
	if err != nil {
		t.Fatal(err)
	}
	if !near(got.X, []float64{0.6, 0.8, 0, 0, -1, 0}) || d.X[0] != 3 {
		t.Fatalf("normalized %v", got.X)
	}
}

func TestEncodeNominal(t *testing.T) {
	d := table([][]float64{{1.5, 2}, {2.5, math.NaN()}, {0, 0}}, []int{0, 1, 0})
	d.Features[1] = Feature{Name: "b", Kind: Nominal, Categories: []string{"x", "y", "z"}}
	got, err := EncodeNominal(d)
	if err != nil {
		t.Fatal(err)
	}
	if got.D != 4 || !slices.Equal(got.Shape, []int{4}) || !slices.Equal(got.X, []float64{1.5, 0, 0, 1, 2.5, 0, 0, 0, 0, 1, 0, 0}) {
		t.Fatalf("encoded %d %v", got.D, got.X)
	}
	var names []string
	for _, f := range got.Features {
		names = append(names, f.Name)
		if f.Kind != Numeric {
			t.Fatal("encoded feature not numeric")
		}
	}
	if !slices.Equal(names, []string{"x0", "b=x", "b=y", "b=z"}) || !slices.Equal(got.Y, []int{0, 1, 0}) {
		t.Fatalf("names %q y %v", names, got.Y)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	d.X[1] = 3 // not a category index
	if _, err := EncodeNominal(d); err == nil {
		t.Fatal("invalid category index accepted")
	}
}

func TestOneHotEncoder(t *testing.T) {
	train := table([][]float64{{1, 10}, {2, 10}, {1, 20}}, nil)
	e, err := FitOneHotEncoder(train)
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 4 || !slices.Equal(e.Categories[0], []float64{1, 2}) || !slices.Equal(e.Categories[1], []float64{10, 20}) {
		t.Fatalf("categories %v", e.Categories)
	}
	got, _ := e.Transform(train)
	if !slices.Equal(got.X, []float64{1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1}) || got.Features[3].Name != "x1=20" {
		t.Fatalf("train encoded %v %v", got.X, got.Features)
	}
	// Unknown values (30, and NaN never seen in training) encode as zeros.
	test, err := e.Transform(table([][]float64{{2, 30}, {math.NaN(), 20}}, nil))
	if err != nil || !slices.Equal(test.X, []float64{0, 1, 0, 0, 0, 0, 0, 1}) {
		t.Fatalf("test encoded %v %v", test.X, err)
	}
	// NaN seen in training is its own category, last; nominal features name their categories.
	nt := table([][]float64{{math.NaN()}, {1}, {0}}, nil)
	nt.Features[0] = Feature{Name: "c", Kind: Nominal, Categories: []string{"lo", "hi"}}
	e, _ = FitOneHotEncoder(nt)
	got, _ = e.Transform(nt)
	if !slices.Equal(got.X, []float64{0, 0, 1, 0, 1, 0, 1, 0, 0}) || got.Features[0].Name != "c=lo" || got.Features[2].Name != "c=NaN" {
		t.Fatalf("NaN category: %v %v", got.X, got.Features)
	}
	if _, err := e.Transform(train); err == nil {
		t.Fatal("column-count mismatch accepted")
	}
}

func TestOneHot(t *testing.T) {
	m, err := OneHot([]int{2, 0, 1}, 3)
	if err != nil || !slices.Equal(m, []float64{0, 0, 1, 1, 0, 0, 0, 1, 0}) {
		t.Fatalf("OneHot %v %v", m, err)
	}
	if _, err := OneHot([]int{3}, 3); err == nil {
		t.Fatal("label 3 of 3 classes accepted")
	}
	if _, err := OneHot([]int{-1}, 3); err == nil {
		t.Fatal("negative label accepted")
	}
	if _, err := OneHot(nil, 0); err == nil {
		t.Fatal("0 classes accepted")
	}
}

func TestDatasetMethods(t *testing.T) {
	d := table([][]float64{{1, 2}, {3, 4}, {5, 6}}, []int{2, 0, 2})
	if !slices.Equal(d.Row(1), []float64{3, 4}) || !slices.Equal(d.ClassCounts(), []int{1, 0, 2}) {
		t.Fatal("Row or ClassCounts")
	}
	s := d.Subset([]int{2, 0})
	if s.N != 2 || !slices.Equal(s.X, []float64{5, 6, 1, 2}) || !slices.Equal(s.Y, []int{2, 2}) {
		t.Fatalf("Subset %+v", s)
	}
	s.X[0], s.Classes[0], s.Features[0].Name = 99, "zz", "zz"
	if d.X[4] != 5 || d.Classes[0] != "a" || d.Features[0].Name != "x0" {
		t.Fatal("Subset shares memory with its source")
	}
	if (&Dataset{Target: []float64{1}}).ClassCounts() != nil {
		t.Fatal("regression ClassCounts not nil")
	}
	bad := table([][]float64{{1}}, []int{5})
	if bad.Validate() == nil {
		t.Fatal("label outside Classes validated")
	}
}

// Issue 16 item 9: features ×1e160 overflowed the sum of squares (every standardized value 0)
// and ×1e-300 underflowed it (no scaling at all); standardizing then normalizing rows must not
// depend on the unit a column is measured in.
func TestStandardizeExtremeMagnitudes(t *testing.T) {
	rows := [][]float64{{5.1, 3.5, -1.4}, {4.9, 3.0, 1.4}, {6.2, 2.9, 4.3}, {5.9, 3.0, -5.1}, {7.7, 2.6, 6.9}}
	pipeline := func(scale float64) []float64 {
		t.Helper()
		var scaled [][]float64
		for _, r := range rows {
			s := make([]float64, len(r))
			for j, v := range r {
				s[j] = v * scale
			}
			scaled = append(scaled, s)
		}
		d := table(scaled, nil)
		st, err := FitStandardizer(d)
		if err != nil {
			t.Fatal(err)
		}
		z, err := st.Transform(d)
		if err != nil {
			t.Fatal(err)
		}
		n, err := NormalizeRows(z)
		if err != nil {
			t.Fatal(err)
		}
		return append(z.X, n.X...)
	}
	want := pipeline(1)
	for _, scale := range []float64{1e160, 1e-300, 1e300, 1e-290} {
		got := pipeline(scale)
		if !slices.EqualFunc(got, want, func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }) {
			t.Errorf("features ×%g: standardized and normalized to %v, want %v (as ×1)", scale, got, want)
		}
	}
	// Rows of huge or tiny entries normalize to unit length too.
	for _, v := range []float64{1e200, 1e-310} {
		n, err := NormalizeRows(table([][]float64{{3 * v, 4 * v}}, nil))
		if err != nil {
			t.Fatal(err)
		}
		if !near(n.X, []float64{0.6, 0.8}) {
			t.Errorf("row (3, 4)×%g normalized to %v", v, n.X)
		}
	}
}
