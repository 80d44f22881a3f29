package datasets

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
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
	br := bufio.NewReaderSize(newLineLimiter(zr), 1<<16)
	peek, perr := br.Peek(1 << 16)
	if err := sniffText(peek, perr != nil, name); err != nil {
		return nil, err
	}
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
		if le, ok := lineTooLong(c.name, err); ok {
			return nil, false, le
		}
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

// otherSeparator explains a header read as one column that holds another common separator
// (a semicolon-separated export, the usual one where the decimal separator is a comma), or
// "" when it does not: the reader splits at comma only, so such a header is one column.
func otherSeparator(names []string, comma rune) string {
	if len(names) != 1 {
		return ""
	}
	for _, sep := range []rune{';', '\t', '|', ','} {
		if sep != comma && strings.ContainsRune(names[0], sep) {
			return fmt.Sprintf("; the header is one column holding %q: the file looks separated by %q, not by %q as it is read (convert it)", sep, sep, comma)
		}
	}
	return ""
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
	if err := nilInput(r, name); err != nil {
		return nil, err
	}
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
	bud := newBudget(r)
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
				if err := uniqueNames(c, rec); err != nil {
					return nil, err
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
		if err := bud.row(8 * int64(d+1)); err != nil {
			return nil, budgetErr(name, c.line, err)
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
	// Header says that the first line names the columns. The names must be distinct.
	Header bool
	// Target names the target column (Header must be set); "" means the last column.
	Target string
	// Regression says that the target is a real number. Otherwise it is an integer class
	// code: Classes are the distinct codes in ascending order (as decimal strings) and Y
	// indexes them.
	Regression bool
	// Text reads a table as people write them, with text as well as numbers (the registry's
	// files, all numbers, leave it unset so that a stray word is an error):
	//
	//   - a class target may hold any text: Classes are its distinct values in sorted order
	//     (integer codes, negative ones included, in numeric order); a target of numbers that
	//     are not all integers is refused as a regression target unless Regression is set;
	//   - a feature column that holds text is Nominal, its Categories its distinct values in
	//     sorted order (EncodeNominal one-hot encodes it); a column of numbers stays Numeric;
	//   - an empty field or "?" is a missing value (NaN) in a feature column.
	//
	// A text column with more than [MaxCategories] distinct values, or one of mostly numbers
	// with more than 20 distinct values (a numeric column with a stray word), is refused.
	Text bool
}

// MaxCategories is the most distinct values a text column of a table read with
// TableOptions.Text may have: more is an identifier or free text, not a category.
const MaxCategories = 1000

// ReadTable parses a delimited table of numbers, gzip-compressed or not: an optional header
// line of distinct column names, then rows with the same number of fields, one of them the
// target (see [TableOptions]). Quoted fields, CRLF line ends and spaces around values (as in
// the UCI blood-transfusion file, "2 ,50,12500,98 ,1") are accepted; every other field must
// be a finite decimal number ("NaN" and "inf" are errors) unless TableOptions.Text admits
// text. Features are named by the header or x0, x1, …. An error names the line and, for a
// bad value, its column.
func ReadTable(r io.Reader, name string, opt TableOptions) (*Dataset, error) {
	if err := nilInput(r, name); err != nil {
		return nil, err
	}
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
		text   *textColumns
		bud    = newBudget(r)
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
		if err := uniqueNames(c, names); err != nil {
			return nil, err
		}
		target = width - 1
		if opt.Target != "" {
			target = slices.Index(names, opt.Target)
			if target < 0 {
				return nil, c.errf("no target column %q in the header (columns: %s)%s", opt.Target, clip(strings.Join(names, ", ")), otherSeparator(names, comma))
			}
		}
		if width < 2 {
			return nil, c.errf("header has %d column(s), expected at least one feature and the target%s", width, otherSeparator(names, comma))
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
		// A number takes 8 bytes in X (and the codes); a field of a text table is kept as
		// text, with its position, until the end.
		size := 8 * int64(width)
		if opt.Text {
			// The arena's text and offsets, the row's position, and at the end its label
			// and class index. Slices grow by doubling, so count them twice.
			size += 2*16 + 16 + 8
			for _, f := range rec {
				size += 2 * (int64(len(f)) + 4)
			}
		}
		if err := bud.row(size); err != nil {
			return nil, budgetErr(name, c.line, err)
		}
		if opt.Text {
			if text == nil {
				text = newTextColumns(width, target, opt.Regression)
			}
			if err := text.add(c, rec, names); err != nil {
				return nil, err
			}
			ds.N++
			continue
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
	featureNames := numberedNames("x", ds.D)
	if names != nil {
		featureNames = slices.Delete(slices.Clone(names), target, target+1)
	}
	if text != nil {
		if err := text.finish(name, names, featureNames, ds); err != nil {
			return nil, err
		}
		return ds, nil
	}
	ds.Features = numericFeatures(featureNames)
	if !opt.Regression {
		ds.Y, ds.Classes = indexCodes(codes)
	}
	return ds, nil
}

// uniqueNames refuses a header that names two columns alike: the target is chosen by name,
// so a duplicate would make the choice (and the feature names) ambiguous.
func uniqueNames(c *csvReader, names []string) error {
	first := make(map[string]int, len(names))
	for j, n := range names {
		if i, dup := first[n]; dup {
			return c.fieldErr(j, "columns %d and %d are both named %q; column names must be distinct", i+1, j+1, clip(n))
		}
		first[n] = j
	}
	return nil
}

// position is where a field was read, for errors found after the whole table is read.
type position struct{ line, col int }

// textColumns collects a table read with TableOptions.Text: every field as read, since
// whether a column is text or numbers is known only at the end. The fields are kept in one
// string (an arena) with their end offsets, a few bytes each beyond their text, so that a
// large table holds little more than its own size.
type textColumns struct {
	width, target int
	regression    bool
	arena         strings.Builder
	ends          []uint32   // per field: its end in arena (row-major, width per row)
	rowPos        []position // per row: where its target field is
	text          string     // the arena, once finished
	firstText     []cell     // per column: its first non-number (row −1: none)
	numbers       []int      // per column: how many fields are numbers
	commas        []int      // per column: how many fields are numbers with a decimal comma
	firstComma    []cell     // per column: the first of them (row −1: none)
	missing       []int      // per column: how many fields are missing values
}

// cell is a field kept for an error message: where it is and what it holds.
type cell struct {
	row   int // 0-based data row, or −1
	pos   position
	value string
}

func newTextColumns(width, target int, regression bool) *textColumns {
	t := &textColumns{width: width, target: target, regression: regression, firstText: make([]cell, width),
		numbers: make([]int, width), commas: make([]int, width), firstComma: make([]cell, width), missing: make([]int, width)}
	for j := range t.firstText {
		t.firstText[j].row, t.firstComma[j].row = -1, -1
	}
	return t
}

// rows is the number of rows added.
func (t *textColumns) rows() int { return len(t.rowPos) }

// field returns field j of row i, once finished.
func (t *textColumns) field(i, j int) string {
	k := i*t.width + j
	start := uint32(0)
	if k > 0 {
		start = t.ends[k-1]
	}
	return t.text[start:t.ends[k]]
}

// missingValues are the spellings of a missing value in a table read with TableOptions.Text:
// those pandas.read_csv reads as NaN by default (the na_values entry of its documentation,
// pandas 2.x; case-sensitive, as there), and "?" (UCI's and ARFF's).
var missingValues = map[string]bool{
	"": true, "?": true, "#N/A": true, "#N/A N/A": true, "#NA": true, "-1.#IND": true, "-1.#QNAN": true,
	"-NaN": true, "-nan": true, "1.#IND": true, "1.#QNAN": true, "<NA>": true, "N/A": true, "NA": true,
	"NULL": true, "NaN": true, "None": true, "n/a": true, "nan": true, "null": true,
}

// isMissing reports whether a field of a Text table is a missing value: in a feature column,
// NaN; in the target, an error.
func isMissing(f string) bool { return missingValues[f] }

func (t *textColumns) add(c *csvReader, rec, names []string) error {
	row := t.rows() + 1
	for j, f := range rec {
		line, col := c.r.FieldPos(j)
		if j == t.target && isMissing(f) {
			what := "class"
			if t.regression {
				what = "target"
			}
			return fieldErr(c.name, line, col, "target column %d (%s): missing %s value %q in data %s, expected a %s (drop or fill the row)",
				j+1, columnName(names, j), what, f, rowNumber(row), map[bool]string{false: "label", true: "number"}[t.regression])
		}
		if t.arena.Len()+len(f) > math.MaxUint32 {
			return fieldErr(c.name, line, col, "more than 4 GiB of fields held as text")
		}
		t.arena.WriteString(f)
		t.ends = append(t.ends, uint32(t.arena.Len()))
		if j == t.target {
			t.rowPos = append(t.rowPos, position{line, col})
		}
		_, kind, err := classifyNumber(f)
		switch {
		case kind == numOK:
			t.numbers[j]++
		case j != t.target && isMissing(f):
			t.missing[j]++
		case kind == numOverflow && j == t.target && !t.regression && integerLiteral(f):
			// An integer class label of any length is compared exactly (see intLabel).
			t.numbers[j]++
		case kind == numOverflow:
			return fieldErr(c.name, line, col, "column %d (%s), data %s: %v", j+1, columnName(names, j), rowNumber(row), err)
		case j == t.target && t.regression:
			return fieldErr(c.name, line, col, "target column %d (%s): %v", j+1, columnName(names, j), err)
		default:
			here := cell{row: row - 1, pos: position{line, col}, value: strings.Clone(f)}
			if kind == numComma {
				t.commas[j]++
				if t.firstComma[j].row < 0 {
					t.firstComma[j] = here
				}
			}
			if t.firstText[j].row < 0 {
				t.firstText[j] = here
			}
		}
	}
	return nil
}

// commaColumn refuses a text column most of whose values are numbers once decimal commas
// are read as points: as text it would be one-hot encoded into a category per value, a
// silently useless feature (or, as the target, a class per value).
func (t *textColumns) commaColumn(name string, names []string, j, n int) error {
	if t.commas[j] == 0 || 2*(t.commas[j]+t.numbers[j]) <= n-t.missing[j] {
		return nil
	}
	p, v := t.firstComma[j].pos, t.firstComma[j].value
	return fieldErr(name, p.line, p.col, "column %d (%s) holds numbers with decimal commas (%q, %d of its %d values): write them with decimal points (%q), e.g. by exporting the file with a point as the decimal separator",
		j+1, columnName(names, j), clip(v), t.commas[j], n-t.missing[j], clip(commaToPoint(v)))
}

// finish fills ds's X, Features and labels.
func (t *textColumns) finish(name string, names, featureNames []string, ds *Dataset) error {
	n := t.rows()
	t.text = t.arena.String()
	ds.X = make([]float64, 0, n*(t.width-1))
	index := make([]map[string]int, t.width) // category indices of the text feature columns
	k := 0
	for j := range t.width {
		if t.firstText[j].row >= 0 {
			if err := t.commaColumn(name, names, j, n); err != nil {
				return err
			}
		}
		if j == t.target {
			continue
		}
		f := Feature{Name: featureNames[k], Kind: Numeric}
		k++
		if t.firstText[j].row < 0 {
			ds.Features = append(ds.Features, f)
			continue
		}
		var values []string
		for i := range n {
			if v := t.field(i, j); !isMissing(v) {
				values = append(values, v)
			}
		}
		f.Kind, f.Categories = Nominal, slices.Compact(slices.Sorted(slices.Values(values)))
		p, first := t.firstText[j].pos, t.firstText[j].value
		switch {
		case len(f.Categories) > MaxCategories:
			return fieldErr(name, p.line, p.col, "column %d (%s) holds text (%q) with %d distinct values, more than MaxCategories = %d: an identifier or free text, not a category; drop the column",
				j+1, columnName(names, j), clip(first), len(f.Categories), MaxCategories)
		case t.numbers[j] > len(values)-t.numbers[j] && len(f.Categories) > 20:
			return fieldErr(name, p.line, p.col, "column %d (%s) holds numbers and the text %q: a numeric column with a stray value? (as text it would have %d categories)",
				j+1, columnName(names, j), clip(first), len(f.Categories))
		}
		index[j] = make(map[string]int, len(f.Categories))
		for c, v := range f.Categories {
			index[j][v] = c
		}
		ds.Features = append(ds.Features, f)
	}
	for i := range n {
		for j := range t.width {
			if j == t.target {
				continue
			}
			v := t.field(i, j)
			switch {
			case isMissing(v):
				ds.X = append(ds.X, math.NaN())
			case index[j] != nil:
				ds.X = append(ds.X, float64(index[j][v]))
			default:
				x, _ := parseNumber(v)
				ds.X = append(ds.X, x)
			}
		}
	}
	labels := make([]string, n)
	for i := range n {
		labels[i] = t.field(i, t.target)
	}
	if t.regression {
		ds.Target = make([]float64, n)
		for i, v := range labels {
			ds.Target[i], _ = parseNumber(v)
		}
		return nil
	}
	if t.firstText[t.target].row < 0 {
		// Numbers only: integer codes are classes in numeric order, compared exactly (as
		// float64, 9007199254740992 and 9007199254740993 would be one class); anything else
		// is a continuous target.
		for i, v := range labels {
			c, ok := intLabel(v)
			if !ok {
				p := t.rowPos[i]
				what := "the non-integer number"
				if x, _ := parseNumber(v); x == math.Trunc(x) {
					what = "a number not written as an exact integer,"
				}
				return fieldErr(name, p.line, p.col, "target column %d (%s) holds %s %q: a continuous target is regression, not classification (class labels are text or integers)",
					t.target+1, columnName(names, t.target), what, clip(v))
			}
			labels[i] = c
		}
		ds.Classes = slices.Compact(slices.SortedFunc(slices.Values(labels), cmpIntLabels))
	} else {
		ds.Classes = slices.Compact(slices.Sorted(slices.Values(labels)))
	}
	ix := make(map[string]int, len(ds.Classes))
	for c, v := range ds.Classes {
		ix[v] = c
	}
	ds.Y = make([]int, n)
	for i, v := range labels {
		ds.Y[i] = ix[v]
	}
	return nil
}

// integerLiteral reports whether s (spaces trimmed) is an optionally signed run of digits.
func integerLiteral(s string) bool {
	t := strings.TrimLeft(strings.TrimSpace(s), "+-")
	return len(strings.TrimSpace(s))-len(t) <= 1 && t != "" && strings.Trim(t, "0123456789") == ""
}

// intLabel returns the canonical decimal form of an integer class label ("7" for "+007",
// "7.0" or "7e0"), exactly for any number of digits; ok is false for a number that is not
// exactly an integer.
func intLabel(s string) (string, bool) {
	t := strings.TrimSpace(s)
	neg := strings.HasPrefix(t, "-")
	digits := strings.TrimLeft(t, "+-")
	if whole, frac, found := strings.Cut(digits, "."); found && strings.Trim(frac, "0") == "" && !strings.ContainsAny(frac, "eE") {
		digits = whole // 7.0, 7.
	}
	if len(t)-len(strings.TrimLeft(t, "+-")) > 1 {
		return "", false
	}
	if digits != "" && strings.Trim(digits, "0123456789") == "" {
		digits = strings.TrimLeft(digits, "0")
		if digits == "" {
			return "0", true
		}
		if neg {
			return "-" + digits, true
		}
		return digits, true
	}
	// Other notations (1e3): exact only within float64's integers.
	v, err := parseNumber(t)
	if err != nil || v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		return "", false
	}
	return strconv.FormatFloat(v, 'f', -1, 64), true
}

// cmpIntLabels orders canonical integer labels numerically.
func cmpIntLabels(a, b string) int {
	an, bn := strings.HasPrefix(a, "-"), strings.HasPrefix(b, "-")
	switch {
	case an && !bn:
		return -1
	case !an && bn:
		return 1
	case an:
		return cmpDigits(b[1:], a[1:])
	}
	return cmpDigits(a, b)
}

// cmpDigits orders decimal digit strings without leading zeros by value.
func cmpDigits(a, b string) int {
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	return strings.Compare(a, b)
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
