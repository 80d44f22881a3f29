package datasets

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// withNewX returns a dataset with d's metadata and labels (copied) and the features x.
func (d *Dataset) withNewX(x []float64) *Dataset {
	s := d.withX(x, d.N)
	s.Y = slices.Clone(d.Y)
	s.Target = slices.Clone(d.Target)
	return s
}

// requireNumeric fails when d has nominal features, whose values are category indices that
// arithmetic preprocessing would make meaningless.
func requireNumeric(d *Dataset, op string) error {
	if d == nil {
		return errors.New("datasets: " + op + ": nil dataset")
	}
	for _, f := range d.Features {
		if f.Kind == Nominal {
			return fmt.Errorf("datasets: %s: %s: feature %q is nominal; one-hot encode it first (EncodeNominal or FitOneHotEncoder)",
				op, d.Name, f.Name)
		}
	}
	return nil
}

// EncodeNominal returns a copy of d in which each nominal feature is replaced, where it
// stands, by one 0/1 column per declared category (named "feature=category"); numeric
// features are kept. A missing value (NaN) encodes as all zeros. Since the categories are
// declared, nothing is fitted: train and test splits encode alike. d is not modified.
func EncodeNominal(d *Dataset) (*Dataset, error) {
	if d == nil {
		return nil, errors.New("datasets: EncodeNominal: nil dataset")
	}
	if d.Features == nil {
		return nil, fmt.Errorf("datasets: EncodeNominal: %s has no feature descriptions", d.Name)
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	var out []Feature
	for _, f := range d.Features {
		if f.Kind != Nominal {
			out = append(out, Feature{Name: f.Name, Kind: Numeric})
			continue
		}
		for _, c := range f.Categories {
			out = append(out, Feature{Name: f.Name + "=" + c, Kind: Numeric})
		}
	}
	dim := len(out)
	if err := encodedFits("EncodeNominal", d, dim); err != nil {
		return nil, err
	}
	x := make([]float64, d.N*dim)
	for i := range d.N {
		row, dst := d.Row(i), x[i*dim:(i+1)*dim]
		k := 0
		for j, f := range d.Features {
			if f.Kind != Nominal {
				dst[k] = row[j]
				k++
				continue
			}
			if v := row[j]; !math.IsNaN(v) {
				dst[k+int(v)] = 1
			}
			k += len(f.Categories)
		}
	}
	return d.withFeatures(x, dim, out), nil
}

// OneHotEncoder one-hot encodes every column, like scikit-learn's
// OneHotEncoder(handle_unknown='ignore'), which the OpenML experiments apply to all columns
// (numeric ones included): each distinct value a column takes in the training data becomes
// one 0/1 output column, and a value not seen in training encodes as all zeros.
type OneHotEncoder struct {
	// Categories holds, per input column, the distinct training values in ascending order,
	// with NaN (a missing value, its own category) last when present.
	Categories [][]float64
	// Features describes the input columns (for output names); it may be nil.
	Features []Feature
}

// FitOneHotEncoder learns the categories of every column of train.
func FitOneHotEncoder(train *Dataset) (*OneHotEncoder, error) {
	if train == nil {
		return nil, errors.New("datasets: FitOneHotEncoder: nil dataset")
	}
	if err := train.Validate(); err != nil {
		return nil, err
	}
	e := &OneHotEncoder{Categories: make([][]float64, train.D), Features: cloneFeatures(train.Features)}
	for j := range train.D {
		seen := map[float64]bool{}
		hasNaN := false
		for i := range train.N {
			v := train.X[i*train.D+j]
			if math.IsNaN(v) {
				hasNaN = true
			} else {
				seen[v] = true
			}
		}
		cats := make([]float64, 0, len(seen)+1)
		for v := range seen {
			cats = append(cats, v)
		}
		slices.Sort(cats)
		if hasNaN {
			cats = append(cats, math.NaN())
		}
		e.Categories[j] = cats
	}
	return e, nil
}

// Dim returns the number of output columns.
func (e *OneHotEncoder) Dim() int {
	n := 0
	for _, c := range e.Categories {
		n += len(c)
	}
	return n
}

// Transform returns d one-hot encoded, with per-example shape [Dim()] and numeric features
// named "feature=value" (the category name for nominal features).
func (e *OneHotEncoder) Transform(d *Dataset) (*Dataset, error) {
	if d == nil || e == nil {
		return nil, errors.New("datasets: OneHotEncoder.Transform: nil dataset or encoder")
	}
	if d.D != len(e.Categories) {
		return nil, fmt.Errorf("datasets: OneHotEncoder.Transform: %s has %d columns, the encoder was fitted on %d", d.Name, d.D, len(e.Categories))
	}
	if len(d.X) != d.N*d.D {
		return nil, fmt.Errorf("datasets: OneHotEncoder.Transform: %s: len(X) = %d, want %d", d.Name, len(d.X), d.N*d.D)
	}
	dim := e.Dim()
	offsets := make([]int, d.D)
	index := make([]map[float64]int, d.D)
	nanIndex := make([]int, d.D)
	features := make([]Feature, 0, dim)
	off := 0
	for j, cats := range e.Categories {
		offsets[j] = off
		index[j] = make(map[float64]int, len(cats))
		nanIndex[j] = -1
		for k, v := range cats {
			if math.IsNaN(v) {
				nanIndex[j] = k
			} else {
				index[j][v] = k
			}
			features = append(features, Feature{Name: e.columnName(j) + "=" + e.valueName(j, v), Kind: Numeric})
		}
		off += len(cats)
	}
	if err := encodedFits("OneHotEncoder.Transform", d, dim); err != nil {
		return nil, err
	}
	x := make([]float64, d.N*dim)
	for i := range d.N {
		row, dst := d.Row(i), x[i*dim:(i+1)*dim]
		for j, v := range row {
			k, ok := index[j][v]
			if math.IsNaN(v) {
				k, ok = nanIndex[j], nanIndex[j] >= 0
			}
			if ok {
				dst[offsets[j]+k] = 1
			}
		}
	}
	return d.withFeatures(x, dim, features), nil
}

func (e *OneHotEncoder) columnName(j int) string {
	if j < len(e.Features) {
		return e.Features[j].Name
	}
	return "x" + strconv.Itoa(j)
}

func (e *OneHotEncoder) valueName(j int, v float64) string {
	if j < len(e.Features) && e.Features[j].Kind == Nominal && v >= 0 && v < float64(len(e.Features[j].Categories)) && v == math.Trunc(v) {
		return e.Features[j].Categories[int(v)]
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Standardizer centres and scales each column with statistics of a training split, like
// scikit-learn's StandardScaler: (x − Mean) / Scale, Scale the population standard
// deviation. A column that is constant in training gets Scale 1, so it standardizes to 0
// there. Missing values (NaN) are ignored when fitting and stay NaN.
type Standardizer struct {
	Mean, Scale []float64
}

// FitStandardizer computes each column's mean and standard deviation over train.
func FitStandardizer(train *Dataset) (*Standardizer, error) {
	if err := requireNumeric(train, "FitStandardizer"); err != nil {
		return nil, err
	}
	if err := train.Validate(); err != nil {
		return nil, err
	}
	s := &Standardizer{Mean: make([]float64, train.D), Scale: make([]float64, train.D)}
	for j := range train.D {
		n := 0
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := range train.N {
			if v := train.X[i*train.D+j]; !math.IsNaN(v) {
				n++
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		if n == 0 || lo == hi {
			// Constant (or entirely missing) column: centre on the value itself, exactly.
			s.Mean[j], s.Scale[j] = 0, 1
			if n > 0 {
				s.Mean[j] = lo
			}
			continue
		}
		// The sums run on the column divided by a power of two near its largest magnitude,
		// so that features of 1e160 do not overflow the sum of squares and features of
		// 1e-300 do not underflow it to 0; a power of two keeps the division exact.
		_, e := math.Frexp(max(math.Abs(lo), math.Abs(hi)))
		var sum float64
		for i := range train.N {
			if v := train.X[i*train.D+j]; !math.IsNaN(v) {
				sum += math.Ldexp(v, -e)
			}
		}
		mean := sum / float64(n)
		var ss float64
		for i := range train.N {
			if v := train.X[i*train.D+j]; !math.IsNaN(v) {
				d := math.Ldexp(v, -e) - mean
				ss += d * d
			}
		}
		s.Mean[j], s.Scale[j] = math.Ldexp(mean, e), math.Ldexp(math.Sqrt(ss/float64(n)), e)
		if s.Scale[j] == 0 || math.IsInf(s.Scale[j], 0) {
			s.Scale[j] = 1
		}
	}
	return s, nil
}

// Transform returns d standardized; d is not modified.
func (s *Standardizer) Transform(d *Dataset) (*Dataset, error) {
	if s == nil {
		return nil, errors.New("datasets: Transform of a nil *Standardizer")
	}
	if err := requireNumeric(d, "Standardizer.Transform"); err != nil {
		return nil, err
	}
	if d.D != len(s.Mean) || len(s.Scale) != len(s.Mean) || len(d.X) != d.N*d.D {
		return nil, fmt.Errorf("datasets: Standardizer.Transform: %s has %d columns, the standardizer was fitted on %d", d.Name, d.D, len(s.Mean))
	}
	x := make([]float64, len(d.X))
	for i, v := range d.X {
		j := i % d.D
		x[i] = (v - s.Mean[j]) / s.Scale[j]
	}
	return d.withNewX(x), nil
}

// NormalizeRows returns d with every row scaled to unit Euclidean (L2) norm, like
// scikit-learn's Normalizer; all-zero rows stay zero. d is not modified.
func NormalizeRows(d *Dataset) (*Dataset, error) {
	if err := requireNumeric(d, "NormalizeRows"); err != nil {
		return nil, err
	}
	if len(d.X) != d.N*d.D {
		return nil, fmt.Errorf("datasets: NormalizeRows: %s: len(X) = %d, want %d", d.Name, len(d.X), d.N*d.D)
	}
	x := slices.Clone(d.X)
	for i := range d.N {
		row := x[i*d.D : (i+1)*d.D]
		// The norm is taken of the row divided by its largest magnitude: squaring entries of
		// 1e160 would overflow to +Inf (zeroing the row) and entries of 1e-300 underflow to 0.
		var big float64
		for _, v := range row {
			big = max(big, math.Abs(v))
		}
		if big == 0 {
			continue
		}
		var ss float64
		for _, v := range row {
			ss += (v / big) * (v / big)
		}
		norm := math.Sqrt(ss)
		for j := range row {
			row[j] = row[j] / big / norm
		}
	}
	return d.withNewX(x), nil
}

// OneHot returns the len(y)×k row-major label matrix with a 1 at (i, y[i]).
func OneHot(y []int, k int) ([]float64, error) {
	if k <= 0 {
		return nil, fmt.Errorf("datasets: OneHot: %d classes, need at least 1", k)
	}
	m := make([]float64, len(y)*k)
	for i, c := range y {
		if c < 0 || c >= k {
			return nil, fmt.Errorf("datasets: OneHot: label %d of row %d outside [0, %d)", c, i, k)
		}
		m[i*k+c] = 1
	}
	return m, nil
}

// encodedFits refuses an encoding whose matrix (d.N rows of dim float64s) would exceed
// MaxDatasetBytes: a thousand-category column per feature of a large table makes one that
// cannot be allocated.
func encodedFits(what string, d *Dataset, dim int) error {
	if need := 8 * int64(d.N) * int64(dim); need > MaxDatasetBytes {
		return fmt.Errorf("datasets: %s: %s would have %d rows × %d columns (%s bytes), more than datasets.MaxDatasetBytes = %s",
			what, d.Name, d.N, dim, groupDigits(need), groupDigits(MaxDatasetBytes))
	}
	return nil
}
