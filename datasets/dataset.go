package datasets

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Dataset is a classification or regression dataset held in memory, one row per example.
//
// X is row-major, N rows × D features. Images are flattened channel-first (C×H×W) with pixel
// values scaled to [0, 1]. Missing values are NaN. A nominal feature (see Features) holds the
// index of its category as a float64.
//
// Exactly one of Y and Target is set for labelled data: Y for classification, Target for
// regression.
type Dataset struct {
	Name string
	X    []float64 // row-major, N×D
	N, D int
	// Shape is the per-example shape: [D] for tables, [1 28 28] for MNIST,
	// [3 32 32] for CIFAR-10 and SVHN. Its product is D.
	Shape   []int
	Y       []int     // class index per row (classification); nil for regression
	Target  []float64 // regression target per row; nil for classification
	Classes []string  // class names; Classes[Y[i]] names row i's class
	// Features describes each column of a table (len D); nil for images.
	Features []Feature
}

// Kind is the kind of a table column.
type Kind int

const (
	// Numeric columns hold real values.
	Numeric Kind = iota
	// Nominal columns hold the index of a category in Feature.Categories.
	Nominal
)

// String returns "numeric" or "nominal".
func (k Kind) String() string {
	switch k {
	case Numeric:
		return "numeric"
	case Nominal:
		return "nominal"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Feature describes one column of a table.
type Feature struct {
	Name       string
	Kind       Kind
	Categories []string // nominal columns: the category names, index = value
}

// Row returns row i of X. The slice shares memory with X.
// It panics if i is out of range, like slice indexing.
func (d *Dataset) Row(i int) []float64 {
	return d.X[i*d.D : (i+1)*d.D : (i+1)*d.D]
}

// ClassCounts returns the number of rows of each class, indexed like Classes
// (or up to the largest label when Classes is empty). It returns nil for regression data.
func (d *Dataset) ClassCounts() []int {
	if d == nil || d.Y == nil {
		return nil
	}
	k := len(d.Classes)
	for _, y := range d.Y {
		k = max(k, y+1)
	}
	counts := make([]int, k)
	for _, y := range d.Y {
		if y >= 0 {
			counts[y]++
		}
	}
	return counts
}

// MinClassRows is the fewest rows [CheckClassification] accepts of each class of a binary
// problem: one for each of a training, a validation and a test split.
const MinClassRows = 3

// CheckClassification refuses a dataset that cannot make a classification problem, saying
// why, so that a run fails before training rather than reporting a NaN for every trial: a
// regression target, fewer than two classes, a declared class that no row has (an ARFF
// nominal class with unused categories, say), or a binary problem with fewer than
// [MinClassRows] rows of a class (a stratified split could not put one in every part, and
// ROC AUC is undefined on a part with one class).
func CheckClassification(d *Dataset) error {
	if d == nil {
		return errors.New("datasets: nil dataset")
	}
	if d.Y == nil {
		return fmt.Errorf("%s: the target is a real number (regression), not a class label", d.Name)
	}
	if err := d.Validate(); err != nil {
		return err
	}
	counts := d.ClassCounts()
	if len(counts) < 2 {
		return fmt.Errorf("%s: the target has %d class(es) (%s), a classification problem needs at least two", d.Name, len(counts), strings.Join(d.Classes, ", "))
	}
	for c, n := range counts {
		if n == 0 {
			return fmt.Errorf("%s: class %s is declared but no row has it (classes: %s); remove it from the declared classes",
				d.Name, className(d, c), strings.Join(d.Classes, ", "))
		}
	}
	if len(counts) == 2 {
		for c, n := range counts {
			if n < MinClassRows {
				return fmt.Errorf("%s: class %s has %d row(s) of %d; a binary problem needs at least %d rows of each class (for training, validation and test)",
					d.Name, className(d, c), n, d.N, MinClassRows)
			}
		}
	}
	return nil
}

func className(d *Dataset, c int) string {
	if c < len(d.Classes) {
		return strconv.Quote(d.Classes[c])
	}
	return strconv.Itoa(c)
}

// Subset returns a new dataset with the rows idx, in that order, copied. Metadata (Shape,
// Classes, Features) is copied too, so the result shares no memory with d.
// It panics if an index is out of range, like slice indexing.
func (d *Dataset) Subset(idx []int) *Dataset {
	s := d.withX(make([]float64, len(idx)*d.D), len(idx))
	for j, i := range idx {
		copy(s.X[j*d.D:(j+1)*d.D], d.Row(i))
	}
	if d.Y != nil {
		s.Y = make([]int, len(idx))
		for j, i := range idx {
			s.Y[j] = d.Y[i]
		}
	}
	if d.Target != nil {
		s.Target = make([]float64, len(idx))
		for j, i := range idx {
			s.Target[j] = d.Target[i]
		}
	}
	return s
}

// withX returns a copy of d's metadata with X and N replaced and no labels.
func (d *Dataset) withX(x []float64, n int) *Dataset {
	return &Dataset{
		Name:     d.Name,
		X:        x,
		N:        n,
		D:        d.D,
		Shape:    slices.Clone(d.Shape),
		Classes:  slices.Clone(d.Classes),
		Features: cloneFeatures(d.Features),
	}
}

// withFeatures returns a dataset with d's metadata, the features x (n×dim, per-example shape
// [dim]) and copies of d's labels.
func (d *Dataset) withFeatures(x []float64, dim int, features []Feature) *Dataset {
	return &Dataset{
		Name:     d.Name,
		X:        x,
		N:        d.N,
		D:        dim,
		Shape:    []int{dim},
		Y:        slices.Clone(d.Y),
		Target:   slices.Clone(d.Target),
		Classes:  slices.Clone(d.Classes),
		Features: features,
	}
}

func cloneFeatures(fs []Feature) []Feature {
	if fs == nil {
		return nil
	}
	out := make([]Feature, len(fs))
	for i, f := range fs {
		out[i] = Feature{Name: f.Name, Kind: f.Kind, Categories: slices.Clone(f.Categories)}
	}
	return out
}

// Validate reports whether d is internally consistent: len(X) = N·D, Shape multiplies to D,
// labels have one entry per row and index Classes, Features (when set) has D entries, and
// nominal values are category indices or NaN.
func (d *Dataset) Validate() error {
	if d == nil {
		return errors.New("datasets: nil dataset")
	}
	if d.N < 0 || d.D < 0 {
		return fmt.Errorf("%s: negative size %d×%d", d.Name, d.N, d.D)
	}
	if len(d.X) != d.N*d.D {
		return fmt.Errorf("%s: len(X) = %d, want N·D = %d·%d", d.Name, len(d.X), d.N, d.D)
	}
	p := 1
	for _, s := range d.Shape {
		p *= s
	}
	if len(d.Shape) == 0 || p != d.D {
		return fmt.Errorf("%s: shape %v does not multiply to D = %d", d.Name, d.Shape, d.D)
	}
	if d.Y != nil && d.Target != nil {
		return fmt.Errorf("%s: both Y and Target are set", d.Name)
	}
	if d.Y != nil {
		if len(d.Y) != d.N {
			return fmt.Errorf("%s: len(Y) = %d, want N = %d", d.Name, len(d.Y), d.N)
		}
		for i, y := range d.Y {
			if y < 0 || (len(d.Classes) > 0 && y >= len(d.Classes)) {
				return fmt.Errorf("%s: row %d: label %d outside [0, %d)", d.Name, i, y, len(d.Classes))
			}
		}
	}
	if d.Target != nil && len(d.Target) != d.N {
		return fmt.Errorf("%s: len(Target) = %d, want N = %d", d.Name, len(d.Target), d.N)
	}
	if d.Features != nil {
		if len(d.Features) != d.D {
			return fmt.Errorf("%s: %d features described, want D = %d", d.Name, len(d.Features), d.D)
		}
		for j, f := range d.Features {
			if f.Kind != Nominal {
				continue
			}
			for i := range d.N {
				v := d.X[i*d.D+j]
				if !math.IsNaN(v) && (v < 0 || v >= float64(len(f.Categories)) || v != math.Trunc(v)) {
					return fmt.Errorf("%s: row %d: nominal feature %q has value %v, not a category index below %d",
						d.Name, i, f.Name, v, len(f.Categories))
				}
			}
		}
	}
	return nil
}

// numberedNames returns prefix0, prefix1, … prefix(n-1).
func numberedNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// numericFeatures returns numeric features with the given names.
func numericFeatures(names []string) []Feature {
	fs := make([]Feature, len(names))
	for i, n := range names {
		fs[i] = Feature{Name: n, Kind: Numeric}
	}
	return fs
}
