package datasets

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
)

// csvReader reads delimited records, reporting errors with the file name and line.
type csvReader struct {
	r    *csv.Reader
	name string
	line int // line of the record last returned (or of the end of input)
}

func newCSVReader(r io.Reader, name string, comma rune) (*csvReader, error) {
	zr, _, err := gunzipIfGzip(r, name)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(zr)
	if bom, _ := br.Peek(3); string(bom) == "\ufeff" {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	return &csvReader{r: cr, name: name}, nil
}

// next returns the next record with surrounding spaces trimmed from every field;
// ok is false at the end of the input.
func (c *csvReader) next() (rec []string, ok bool, err error) {
	rec, err = c.r.Read()
	if errors.Is(err, io.EOF) {
		c.line++
		return nil, false, nil
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, false, &ParseError{File: c.name, Line: max(pe.Line, 1), Column: max(pe.Column, 0), Msg: "malformed CSV", Err: pe.Err}
		}
		return nil, false, &ParseError{File: c.name, Line: c.line + 1, Msg: readErrorMsg(err), Err: err}
	}
	c.line, _ = c.r.FieldPos(0)
	for i, f := range rec {
		rec[i] = strings.TrimSpace(f)
	}
	return rec, true, nil
}

func (c *csvReader) errf(format string, args ...any) *ParseError {
	return lineErr(c.name, c.line, format, args...)
}

// fieldErr returns a *ParseError at field j (0-based) of the record last returned.
func (c *csvReader) fieldErr(j int, format string, args ...any) *ParseError {
	line, col := c.r.FieldPos(j)
	return fieldErr(c.name, line, col, format, args...)
}

// ReadSklearnCSV parses a CSV file in scikit-learn's bundled-data format (iris.csv,
// wine_data.csv, breast_cancer.csv, boston_house_prices.csv), gzip-compressed or not.
//
// The first line is "n_samples,n_features,name0,name1,…". When class names are given, each
// following row holds n_features finite decimal numbers ("NaN" and "inf" are errors) and an
// integer class index into the names. When the names are all empty, the data is a
// regression dataset: an optional line of column names follows (as in
// boston_house_prices.csv) and each row ends with a real target. The file must hold exactly
// n_samples rows of n_features+1 fields. An error names the line and, for a bad value, its
// column.
func ReadSklearnCSV(r io.Reader, name string) (*Dataset, error) {
	c, err := newCSVReader(r, name, ',')
	if err != nil {
		return nil, err
	}
	hdr, ok, err := c.next()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, lineErr(name, 1, "empty file, expected the header n_samples,n_features,class names…")
	}
	if len(hdr) < 2 {
		return nil, c.errf("header has %d field(s), expected n_samples,n_features,class names…", len(hdr))
	}
	n, err1 := strconv.Atoi(hdr[0])
	d, err2 := strconv.Atoi(hdr[1])
	if err1 != nil || err2 != nil || n <= 0 || d <= 0 {
		j := 0
		if err1 == nil && n > 0 {
			j = 1
		}
		return nil, c.fieldErr(j, "header starts %q,%q, expected positive integers n_samples,n_features", clip(hdr[0]), clip(hdr[1]))
	}
	classes := slices.Clone(hdr[2:])
	regression := true
	for _, s := range classes {
		if s != "" {
			regression = false
		}
	}
	if regression {
		classes = nil
	} else if i := slices.Index(classes, ""); i >= 0 {
		return nil, c.fieldErr(2+i, "class name %d is empty, expected a name for each class", i)
	}
	ds := &Dataset{Name: name, D: d, Shape: []int{d}, Classes: classes}
	// The feature names are made at the end: n_features is not trusted for an allocation
	// before rows of that many fields have been read.
	var names []string
	first := true
	for {
		rec, ok, err := c.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if regression && first && len(rec) > 0 {
			if _, err := parseNumber(rec[0]); err != nil {
				// A line of column names: the features', then the target's.
				if len(rec) != d+1 {
					return nil, c.errf("column-name line has %d fields, expected %d (features and target)", len(rec), d+1)
				}
				names = slices.Clone(rec[:d])
				first = false
				continue
			}
		}
		first = false
		if ds.N == n {
			return nil, c.errf("more rows than the %d the header announces", n)
		}
		if len(rec) != d+1 {
			return nil, c.errf("%d fields, expected %d (%d features and the %s)", len(rec), d+1, d, targetWord(regression))
		}
		for j, f := range rec[:d] {
			v, err := parseNumber(f)
			if err != nil {
				return nil, c.fieldErr(j, "feature %d: %v", j+1, err)
			}
			ds.X = append(ds.X, v)
		}
		if regression {
			v, err := parseNumber(rec[d])
			if err != nil {
				return nil, c.fieldErr(d, "target: %v", err)
			}
			ds.Target = append(ds.Target, v)
		} else {
			y, err := parseClassCode(rec[d])
			if err != nil {
				return nil, c.fieldErr(d, "last field: %v", err)
			}
			if y >= len(classes) {
				return nil, c.fieldErr(d, "class index %d, expected below %d (the header names %d classes)", y, len(classes), len(classes))
			}
			ds.Y = append(ds.Y, y)
		}
		ds.N++
	}
	if ds.N != n {
		return nil, c.errf("end of file after %d rows, but the header announces %d", ds.N, n)
	}
	if names == nil {
		names = numberedNames("x", d)
	}
	ds.Features = numericFeatures(names)
	return ds, nil
}

func targetWord(regression bool) string {
	if regression {
		return "target"
	}
	return "class label"
}

// LoadSklearnCSV reads a scikit-learn CSV file (see [ReadSklearnCSV]).
func LoadSklearnCSV(ctx context.Context, path string) (*Dataset, error) {
	return loadFile(ctx, path, ReadSklearnCSV)
}

// TableOptions describes a delimited table for [ReadTable].
type TableOptions struct {
	// Comma separates fields; 0 means ','. Use '\t' for TSV.
	Comma rune
	// Header says that the first line names the columns.
	Header bool
	// Target names the target column (Header must be set); "" means the last column.
	Target string
	// Regression says that the target is a real number. Otherwise it is an integer class
	// code: Classes are the distinct codes in ascending order (as decimal strings) and Y
	// indexes them.
	Regression bool
}

// ReadTable parses a delimited table of numbers, gzip-compressed or not: an optional header
// line of column names, then rows with the same number of fields, one of them the target
// (see [TableOptions]). Quoted fields, CRLF line ends and spaces around values (as in the
// UCI blood-transfusion file, "2 ,50,12500,98 ,1") are accepted; every other field must be a
// finite decimal number ("NaN" and "inf" are errors). Features are named by the header or
// x0, x1, …. An error names the line and, for a bad value, its column.
func ReadTable(r io.Reader, name string, opt TableOptions) (*Dataset, error) {
	comma := opt.Comma
	if comma == 0 {
		comma = ','
	}
	if opt.Target != "" && !opt.Header {
		return nil, errors.New("datasets: TableOptions.Target needs Header")
	}
	if comma == '"' || comma == '\r' || comma == '\n' || comma == 0xFFFD {
		return nil, errors.New("datasets: invalid TableOptions.Comma")
	}
	c, err := newCSVReader(r, name, comma)
	if err != nil {
		return nil, err
	}
	var (
		names  []string
		target = -1
		width  = -1
		codes  []int
		ds     = &Dataset{Name: name}
	)
	if opt.Header {
		hdr, ok, err := c.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, lineErr(name, 1, "empty file, expected a header line of column names")
		}
		names = slices.Clone(hdr)
		width = len(names)
		target = width - 1
		if opt.Target != "" {
			target = slices.Index(names, opt.Target)
			if target < 0 {
				return nil, c.errf("no target column %q in the header (columns: %s)", opt.Target, clip(strings.Join(names, ", ")))
			}
		}
		if width < 2 {
			return nil, c.errf("header has %d column(s), expected at least one feature and the target", width)
		}
	}
	for {
		rec, ok, err := c.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if width < 0 {
			width, target = len(rec), len(rec)-1
			if width < 2 {
				return nil, c.errf("%d field(s), expected at least one feature and the target", width)
			}
		}
		if len(rec) != width {
			return nil, c.errf("%d fields, expected %d", len(rec), width)
		}
		for j, f := range rec {
			if j == target {
				continue
			}
			v, err := parseNumber(f)
			if err != nil {
				return nil, c.fieldErr(j, "column %d (%s): %v", j+1, columnName(names, j), err)
			}
			ds.X = append(ds.X, v)
		}
		if opt.Regression {
			v, err := parseNumber(rec[target])
			if err != nil {
				return nil, c.fieldErr(target, "target column %d (%s): %v", target+1, columnName(names, target), err)
			}
			ds.Target = append(ds.Target, v)
		} else {
			y, err := parseClassCode(rec[target])
			if err != nil {
				return nil, c.fieldErr(target, "target column %d (%s): %v", target+1, columnName(names, target), err)
			}
			codes = append(codes, y)
		}
		ds.N++
	}
	if ds.N == 0 {
		return nil, c.errf("no data rows")
	}
	ds.D = width - 1
	ds.Shape = []int{ds.D}
	if names == nil {
		ds.Features = numericFeatures(numberedNames("x", ds.D))
	} else {
		ds.Features = numericFeatures(slices.Delete(names, target, target+1))
	}
	if !opt.Regression {
		ds.Y, ds.Classes = indexCodes(codes)
	}
	return ds, nil
}

// indexCodes maps integer class codes to indices into their sorted distinct values.
func indexCodes(codes []int) ([]int, []string) {
	distinct := slices.Compact(slices.Sorted(slices.Values(codes)))
	classes := make([]string, len(distinct))
	index := make(map[int]int, len(distinct))
	for i, c := range distinct {
		classes[i] = strconv.Itoa(c)
		index[c] = i
	}
	y := make([]int, len(codes))
	for i, c := range codes {
		y[i] = index[c]
	}
	return y, classes
}

func columnName(names []string, j int) string {
	if names == nil {
		return "unnamed"
	}
	return strconv.Quote(clip(names[j]))
}

// LoadTable reads a delimited table (see [ReadTable]).
func LoadTable(ctx context.Context, path string, opt TableOptions) (*Dataset, error) {
	return loadFile(ctx, path, func(r io.Reader, name string) (*Dataset, error) { return ReadTable(r, name, opt) })
}

// pmlbOptions is the layout of Penn ML Benchmarks files: tab-separated with a header and a
// "target" column of integer class codes.
func pmlbOptions() TableOptions {
	return TableOptions{Comma: '\t', Header: true, Target: "target"}
}

// ReadPMLB parses a Penn ML Benchmarks (PMLB) file: a tab-separated table, usually
// gzip-compressed, with a header line and a "target" column of integer class codes. It is
// [ReadTable] with TableOptions{Comma: '\t', Header: true, Target: "target"}.
func ReadPMLB(r io.Reader, name string) (*Dataset, error) {
	return ReadTable(r, name, pmlbOptions())
}

// LoadPMLB reads a PMLB file such as vehicle.tsv.gz (see [ReadPMLB]).
func LoadPMLB(ctx context.Context, path string) (*Dataset, error) {
	return LoadTable(ctx, path, pmlbOptions())
}
