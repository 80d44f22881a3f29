// The loaders the registry entries use: how each file format of the paper datasets becomes a
// Dataset.

package datasets

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// withNames names the classes of a dataset whose classes are the codes 0…k-1 (as
// ReadIDX and ReadTable name them), all present.
func withNames(d *Dataset, classes []string) (*Dataset, error) {
	if !slices.Equal(d.Classes, numberedNames("", len(classes))) {
		return nil, fmt.Errorf("%s: class codes %v, expected 0…%d", d.Name, d.Classes, len(classes)-1)
	}
	d.Classes = classes
	return d, nil
}

// nominalColumn marks a numeric column of integer codes as nominal. The categories are
// names when given (indexed by code), otherwise the codes present, ascending.
type nominalColumn struct {
	name  string
	names []string
}

func markNominal(d *Dataset, cols []nominalColumn) error {
	for _, col := range cols {
		j := slices.IndexFunc(d.Features, func(f Feature) bool { return f.Name == col.name })
		if j < 0 {
			return fmt.Errorf("%s: no column %q", d.Name, col.name)
		}
		var codes []float64
		for i := range d.N {
			codes = append(codes, d.X[i*d.D+j])
		}
		distinct := slices.Compact(slices.Sorted(slices.Values(codes)))
		cats := make([]string, len(distinct))
		index := make(map[float64]int, len(distinct))
		for k, c := range distinct {
			cats[k] = strconv.FormatFloat(c, 'g', -1, 64)
			index[c] = k
		}
		if col.names != nil {
			for _, c := range distinct {
				if c != float64(int(c)) || c < 0 || int(c) >= len(col.names) {
					return fmt.Errorf("%s: column %q: code %v, expected 0…%d", d.Name, col.name, c, len(col.names)-1)
				}
				index[c] = int(c)
			}
			cats = slices.Clone(col.names)
		}
		for i := range d.N {
			d.X[i*d.D+j] = float64(index[d.X[i*d.D+j]])
		}
		d.Features[j] = Feature{Name: col.name, Kind: Nominal, Categories: cats}
	}
	return nil
}

func sklearnCSV(featureNames []string) func(*opener) (*Dataset, error) {
	return func(o *opener) (*Dataset, error) {
		d, err := o.read(0, ReadSklearnCSV)
		if err != nil {
			return nil, err
		}
		if featureNames != nil && len(featureNames) == d.D {
			d.Features = numericFeatures(featureNames)
		}
		return d, nil
	}
}

func loadDigits(o *opener) (*Dataset, error) {
	d, err := o.read(0, func(r io.Reader, name string) (*Dataset, error) {
		return ReadTable(r, name, TableOptions{})
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, 64)
	for r := range 8 {
		for c := range 8 {
			names = append(names, fmt.Sprintf("pixel_%d_%d", r, c))
		}
	}
	if d.D == len(names) {
		d.Features = numericFeatures(names)
	}
	d.Shape = []int{d.D}
	return withNames(d, numberedNames("", 10))
}

func pmlb(cols []nominalColumn, classes []string) func(*opener) (*Dataset, error) {
	return func(o *opener) (*Dataset, error) {
		d, err := o.read(0, ReadPMLB)
		if err != nil {
			return nil, err
		}
		if err := markNominal(d, cols); err != nil {
			return nil, err
		}
		if classes != nil {
			return withNames(d, classes)
		}
		return d, nil
	}
}

func loadDiabetes(o *opener) (*Dataset, error) {
	x, err := o.read(0, func(r io.Reader, name string) (*Dataset, error) { return readSpaceMatrix(r, name, 10) })
	if err != nil {
		return nil, err
	}
	t, err := o.read(1, func(r io.Reader, name string) (*Dataset, error) { return readSpaceMatrix(r, name, 1) })
	if err != nil {
		return nil, err
	}
	if t.N != x.N {
		return nil, fmt.Errorf("diabetes: %d rows of features but %d targets", x.N, t.N)
	}
	x.Target = t.X
	x.Features = numericFeatures([]string{"age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"})
	return x, nil
}

// readSpaceMatrix reads rows of d space-separated numbers.
func readSpaceMatrix(r io.Reader, name string, d int) (*Dataset, error) {
	lr, err := newLineReader(r, name)
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Name: name, D: d, Shape: []int{d}}
	bud := newBudget(r)
	for {
		s, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		fields := strings.Fields(s)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != d {
			return nil, lineErr(name, lr.line, "%d fields, expected %d", len(fields), d)
		}
		if err := bud.row(8 * int64(d)); err != nil {
			return nil, budgetErr(name, lr.line, err)
		}
		for j, f := range fields {
			v, err := parseNumber(f)
			if err != nil {
				return nil, lineErr(name, lr.line, "column %d: %v", j+1, err)
			}
			ds.X = append(ds.X, v)
		}
		ds.N++
	}
	if ds.N == 0 {
		return nil, lineErr(name, lr.line+1, "no data rows")
	}
	return ds, nil
}

const (
	openMLLicence = "see the OpenML dataset page"
	pmlbProv      = "Penn ML Benchmarks (PMLB) copy of the OpenML dataset; categories coded as integers (alphabetically)"
)

// pmlbSource is where PMLB serves a dataset's file.
func pmlbSource(name string) string {
	return "https://github.com/EpistasisLab/pmlb/raw/master/datasets/" + name + "/" + name + ".tsv.gz"
}

func sklearnSource(file string) string {
	return "https://github.com/scikit-learn/scikit-learn/raw/1.2.1/sklearn/datasets/data/" + file
}

func breastFeatureNames() []string {
	base := []string{"radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity",
		"concave points", "symmetry", "fractal dimension"}
	var names []string
	for _, b := range base {
		names = append(names, "mean "+b)
	}
	for _, b := range base {
		names = append(names, b+" error")
	}
	for _, b := range base {
		names = append(names, "worst "+b)
	}
	return names
}
