package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// errCase is malformed input and where and why the parser must reject it.
type errCase struct {
	name string
	in   []byte
	loc  string // the location part of the message, e.g. "f.csv: line 3" or "f.idx: byte offset 16: "
	msg  string // a substring of what was expected
}

// expectParseError checks that err is a *ParseError whose message holds the location and msg.
func expectParseError(t *testing.T, err error, c errCase) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", c.name)
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: %T %v, want a *ParseError", c.name, err, err)
	}
	if !strings.HasPrefix(err.Error(), "datasets: ") || !strings.Contains(err.Error(), c.loc) || !strings.Contains(err.Error(), c.msg) {
		t.Fatalf("%s: error %q, want it to contain %q and %q", c.name, err, c.loc, c.msg)
	}
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func be32(vs ...uint32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.BigEndian.PutUint32(b[4*i:], v)
	}
	return b
}

func idxImages(n, rows, cols int) []byte {
	pix := make([]byte, n*rows*cols)
	for i := range pix {
		pix[i] = byte(i * 7)
	}
	return cat(be32(0x803, uint32(n), uint32(rows), uint32(cols)), pix)
}

func idxLabels(ys ...byte) []byte { return cat(be32(0x801, uint32(len(ys))), ys) }

func TestReadIDX(t *testing.T) {
	for _, compress := range []bool{false, true} {
		im, lb := idxImages(3, 2, 2), idxLabels(1, 0, 4)
		if compress {
			im, lb = gz(im), gz(lb)
		}
		d, err := ReadIDX(bytes.NewReader(im), "im", bytes.NewReader(lb), "lb")
		if err != nil {
			t.Fatal(err)
		}
		if d.N != 3 || d.D != 4 || !slices.Equal(d.Shape, []int{1, 2, 2}) || !slices.Equal(d.Y, []int{1, 0, 4}) || len(d.Classes) != 5 {
			t.Fatalf("got %d×%d %v y=%v classes=%v", d.N, d.D, d.Shape, d.Y, d.Classes)
		}
		if d.X[1] != 7.0/255 || d.X[11] != float64(byte(77))/255 {
			t.Fatalf("pixels %v", d.X)
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadIDXErrors(t *testing.T) {
	good := idxImages(3, 2, 2)
	labels := idxLabels(1, 2, 3)
	corruptGz := gz(good)
	corruptGz[len(corruptGz)/2] ^= 0xff
	cases := []errCase{
		{"empty", nil, "im: byte offset 0: ", "truncated: expected the IDX magic number"},
		{"wrong magic (labels file)", labels, "im: byte offset 0: ", "magic number 0x00000801, expected 0x00000803"},
		{"wrong magic (float data)", cat(be32(0x00000d03), good[4:]), "im: byte offset 0: ", "magic number 0x00000d03"},
		{"short magic", good[:3], "im: byte offset 3: ", "truncated: expected the IDX magic number"},
		{"truncated dims", good[:10], "im: byte offset 10: ", "truncated: expected the image count, rows and columns"},
		{"truncated header end", good[:16], "im: byte offset 16: ", "truncated: expected 3 images of 2×2 pixels (12 bytes from offset 16)"},
		{"truncated mid image", good[:21], "im: byte offset 21: ", "got 5 bytes"},
		{"truncated last byte", good[:len(good)-1], "im: byte offset 27: ", "truncated"},
		{"trailing byte", cat(good, []byte{9}), "im: byte offset 28: ", "unexpected data after the last image"},
		{"count mismatch", idxImages(2, 2, 2), "im: byte offset 4: ", "2 images, but lb has 3 labels"},
		{"zero rows", cat(be32(0x803, 3, 0, 2)), "im: byte offset 8: ", "image size 0×2"},
		{"absurd image size", cat(be32(0x803, 3, 1<<16, 1<<16)), "im: byte offset 8: ", "image size 65536×65536"},
		// rows·cols overflows int64 here; it must not wrap around to a negative size.
		{"overflowing image size", cat(be32(0x803, 0, 0xb8303030, 0xb8303030)), "im: byte offset 8: ", "image size 3090165808×3090165808"},
		{"gzip truncated", gz(good)[:30], "im: decompressed byte offset ", "truncated"},
		{"gzip corrupt", corruptGz, "im: decompressed byte offset ", ""},
		{"gzip bad header", []byte{0x1f, 0x8b, 0, 0}, "im: byte offset 0: ", "invalid gzip header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadIDX(bytes.NewReader(c.in), "im", bytes.NewReader(labels), "lb")
			expectParseError(t, err, c)
		})
	}
	labelCases := []errCase{
		{"labels empty", nil, "lb: byte offset 0: ", "truncated: expected the IDX magic number"},
		{"labels wrong magic", good, "lb: byte offset 0: ", "magic number 0x00000803, expected 0x00000801"},
		{"labels truncated", labels[:6], "lb: byte offset 6: ", "truncated: expected the label count"},
		{"labels short", labels[:9], "lb: byte offset 9: ", "truncated: expected 3 labels (3 bytes from offset 8), got 1 bytes"},
		// A header announcing 4 billion labels is refused from the header (issue 52), without
		// allocating for them.
		{"labels huge count", cat(be32(0x801, 0xffffffff), []byte{1, 2}), "lb: byte offset 4: ", "4,294,967,295 rows announced, more than the limit of a reader (datasets.MaxRows"},
		{"labels trailing", cat(labels, []byte{0}), "lb: byte offset 11: ", "unexpected data after the last label"},
		{"labels count zero", idxLabels(), "lb: byte offset 4: ", "label count 0, expected at least one label"},
		{"labels gzip truncated", gz(labels)[:20], "lb: decompressed byte offset ", "truncated"},
	}
	for _, c := range labelCases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadIDX(bytes.NewReader(good), "im", bytes.NewReader(c.in), "lb")
			expectParseError(t, err, c)
		})
	}
}

// The registry reads MNIST and Fashion-MNIST with 10 classes: a label of 10 is out of range.
func TestReadIDXClasses(t *testing.T) {
	im := idxImages(3, 2, 2)
	for _, c := range []errCase{
		{"label 10", idxLabels(1, 10, 3), "lb: byte offset 9: ", "label 1 of 3 is 10, expected a class index below 10"},
		{"label 255 gzip", gz(idxLabels(1, 2, 255)), "lb: decompressed byte offset 10: ", "label 2 of 3 is 255"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readIDX(bytes.NewReader(im), "im", bytes.NewReader(c.in), "lb", 10)
			expectParseError(t, err, c)
		})
	}
	d, err := readIDX(bytes.NewReader(im), "im", bytes.NewReader(idxLabels(1, 0, 4)), "lb", 10)
	if err != nil || len(d.Classes) != 10 {
		t.Fatalf("%v, classes %v", err, d.Classes)
	}
}

func cifarRecords(labels ...byte) []byte {
	var b []byte
	for i, l := range labels {
		rec := make([]byte, cifarRecord)
		rec[0] = l
		for j := 1; j < cifarRecord; j++ {
			rec[j] = byte(i + j)
		}
		b = append(b, rec...)
	}
	return b
}

func TestReadCIFAR10(t *testing.T) {
	d, err := ReadCIFAR10(bytes.NewReader(cifarRecords(3, 9)), "c", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.N != 2 || d.D != 3072 || !slices.Equal(d.Y, []int{3, 9}) || d.Classes[3] != "cat" {
		t.Fatalf("got %d×%d y=%v", d.N, d.D, d.Y)
	}
	// Record 1, green plane (channel 1), row 2, column 5: byte 1 + 1024 + 2·32 + 5 of the record.
	if got, want := d.X[3072+1024+2*32+5], float64((1+1+1024+2*32+5)%256)/255; got != want {
		t.Fatalf("pixel %v, want %v", got, want)
	}
	d, err = ReadCIFAR10(bytes.NewReader(gz(cifarRecords(1))), "c", []string{"a", "b"})
	if err != nil || d.Classes[1] != "b" {
		t.Fatalf("gzip with class names: %v", err)
	}
}

func TestReadCIFAR10Errors(t *testing.T) {
	two := cifarRecords(1, 2)
	corrupt := gz(two)
	corrupt[len(corrupt)-6] ^= 0xff // the gzip CRC
	cases := []errCase{
		{"empty", nil, "c: byte offset 0: ", "empty: expected records of 3073 bytes"},
		{"one byte", []byte{1}, "c: byte offset 0: ", "truncated record 0: expected 3073 bytes (1 label + 3072 pixels), got 1"},
		{"truncated first", two[:100], "c: byte offset 0: ", "got 100"},
		{"truncated second", two[:3073+100], "c: byte offset 3073: ", "truncated record 1"},
		{"truncated last byte", two[:len(two)-1], "c: byte offset 3073: ", "got 3072"},
		{"extra byte", cat(two, []byte{0}), "c: byte offset 6146: ", "truncated record 2"},
		{"label 10", cifarRecords(10), "c: byte offset 0: ", "record 0: label 10, expected a class index below 10"},
		{"label 255 second", cifarRecords(0, 255), "c: byte offset 3073: ", "record 1: label 255"},
		{"gzip truncated", gz(two)[:50], "c: decompressed byte offset 0: ", "truncated record 0"},
		{"gzip bad crc", corrupt, "c: decompressed byte offset ", "read error"},
		{"gzip bad header", []byte{0x1f, 0x8b, 8}, "c: byte offset 0: ", "invalid gzip header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadCIFAR10(bytes.NewReader(c.in), "c", nil)
			expectParseError(t, err, c)
		})
	}
	t.Run("label beyond given classes", func(t *testing.T) {
		_, err := ReadCIFAR10(bytes.NewReader(cifarRecords(0, 3)), "c", []string{"a", "b", "c"})
		expectParseError(t, err, errCase{"", nil, "c: byte offset 3073: ", "label 3, expected a class index below 3"})
	})
	for _, c := range []errCase{
		{"names empty", nil, "n: line 1", "no class names"},
		{"names blank inside", []byte("a\n\nb\n"), "n: line 2", "blank line among class names"},
		{"names duplicate", []byte("a\r\nb\r\na\r\n"), "n: line 3", `class name "a" repeats line 1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readClassNames(bytes.NewReader(c.in), "n")
			expectParseError(t, err, c)
		})
	}
	names, err := readClassNames(strings.NewReader("airplane\nautomobile\n\n"), "n")
	if err != nil || !slices.Equal(names, []string{"airplane", "automobile"}) {
		t.Fatalf("class names %q, %v", names, err)
	}
}

const irisLike = "4,2,setosa,versicolor,virginica\n5.1,3.5,0\n4.9,3.0,1\r\n6.3,3.3,2\n5.8,2.7,1\n"

func TestReadSklearnCSV(t *testing.T) {
	d, err := ReadSklearnCSV(strings.NewReader(irisLike), "iris.csv")
	if err != nil {
		t.Fatal(err)
	}
	if d.N != 4 || d.D != 2 || !slices.Equal(d.Y, []int{0, 1, 2, 1}) || !slices.Equal(d.X, []float64{5.1, 3.5, 4.9, 3, 6.3, 3.3, 5.8, 2.7}) ||
		!slices.Equal(d.Classes, []string{"setosa", "versicolor", "virginica"}) || d.Target != nil {
		t.Fatalf("got %+v", d)
	}
	// Regression, with the column-name line of boston_house_prices.csv, gzip-compressed.
	boston := "2,2,,\n\"CRIM\",\"ZN\",\"MEDV\"\n0.006,18,24\n0.027,0,21.6\n"
	d, err = ReadSklearnCSV(bytes.NewReader(gz([]byte(boston))), "b.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	if d.Y != nil || !slices.Equal(d.Target, []float64{24, 21.6}) || d.Features[1].Name != "ZN" || d.Classes != nil {
		t.Fatalf("got %+v", d)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestReadSklearnCSVErrors(t *testing.T) {
	cases := []errCase{
		{"empty", nil, "f.csv: line 1", "empty file, expected the header"},
		{"header one field", []byte("150\n"), "f.csv: line 1", "header has 1 field(s)"},
		{"header not numeric", []byte("n,4,a,b\n"), "f.csv: line 1", `expected positive integers n_samples,n_features`},
		{"header zero features", []byte("3,0,a,b\n"), "f.csv: line 1", "expected positive integers"},
		// Found by FuzzCSV: n_features must not be trusted for an allocation.
		{"huge feature count", []byte("1,2111111118,a,b\n1,0\n"), "f.csv: line 2: ", "2 fields, expected 2111111119 (2111111118 features and the class label)"},
		{"huge feature count, no rows", []byte("1,2111111118"), "f.csv: line 2: ", "end of file after 0 rows, but the header announces 1"},
		{"empty class name", []byte("1,1,a,,b\n1,0\n"), "f.csv: line 1", "class name 1 is empty"},
		{"fewer rows", []byte("3,1,a,b\n1,0\n2,1\n"), "f.csv: line 4", "end of file after 2 rows, but the header announces 3"},
		{"more rows", []byte("1,1,a,b\n1,0\n2,1\n"), "f.csv: line 3", "more rows than the 1 the header announces"},
		{"too few fields", []byte("2,2,a,b\n1,2,0\n1,0\n"), "f.csv: line 3", "2 fields, expected 3 (2 features and the class label)"},
		{"too many fields", []byte("1,2,a,b\n1,2,3,0\n"), "f.csv: line 2", "4 fields, expected 3"},
		{"non-numeric", []byte("2,2,a,b\n1,2,0\n1,abc,1\n"), "f.csv: line 3, column 3: ", `feature 2: "abc" is not a number, expected a finite decimal number`},
		{"NaN", []byte("1,2,a,b\nNaN,2,0\n"), "f.csv: line 2, column 1: ", `feature 1: NaN ("NaN"), expected a finite number`},
		{"nan lower case", []byte("1,2,a,b\n1, nan,0\n"), "f.csv: line 2, column ", `feature 2: NaN ("nan")`},
		{"Inf", []byte("1,2,a,b\n1,-Inf,0\n"), "f.csv: line 2, column 3: ", `feature 2: infinity ("-Inf"), expected a finite number`},
		{"Infinity", []byte("2,2,a,b\n1,2,0\ninfinity,1,0\n"), "f.csv: line 3, column 1: ", `infinity ("infinity")`},
		{"hex float", []byte("1,2,a,b\n1,0x1p3,0\n"), "f.csv: line 2, column 3: ", `"0x1p3" is not a number, expected a finite decimal number`},
		{"underscore digits", []byte("1,2,a,b\n1_0,2,0\n"), "f.csv: line 2, column 1: ", `"1_0" is not a number`},
		{"overflow", []byte("1,2,a,b\n1,1e999,0\n"), "f.csv: line 2, column 3: ", `"1e999" is beyond the float64 range, expected a finite number`},
		{"empty field", []byte("1,2,a,b\n1,,0\n"), "f.csv: line 2, column 3: ", "feature 2: empty field, expected a finite number"},
		{"class out of range", []byte("1,1,a,b\n1,2\n"), "f.csv: line 2", "class index 2, expected below 2"},
		{"class not integer", []byte("1,1,a,b\n1,0.5\n"), "f.csv: line 2, column 3: ", `class label "0.5", expected a non-negative integer class code`},
		{"class negative", []byte("1,1,a,b\n1,-1\n"), "f.csv: line 2, column 3: ", `class label "-1", expected a non-negative integer`},
		{"missing class column", []byte("2,2,a,b\n1,2,0\n3,4\n"), "f.csv: line 3", "2 fields, expected 3"},
		{"bare quote", []byte("1,1,a,b\n1\"x,0\n"), "f.csv: line 2", "malformed CSV"},
		{"regression bad names line", []byte("1,2,,\nA,B\n1,2,3\n"), "f.csv: line 2", "column-name line has 2 fields, expected 3"},
		{"regression bad target", []byte("1,1,,\n1,x\n"), "f.csv: line 2, column 3: ", `target: "x" is not a number`},
		{"regression NaN target", []byte("1,1,,\n1,NaN\n"), "f.csv: line 2, column 3: ", `target: NaN ("NaN"), expected a finite number`},
		{"gzip truncated", gz([]byte(irisLike))[:25], "f.csv: line ", "read error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadSklearnCSV(bytes.NewReader(c.in), "f.csv")
			expectParseError(t, err, c)
		})
	}
}

func TestReadTable(t *testing.T) {
	// The UCI blood-transfusion layout: CRLF, a quoted header name, stray spaces.
	blood := "Recency (months),Frequency (times),\"whether2007\"\r\n2 ,50,1\r\n0 ,13,0\r\n1 ,16 ,1"
	d, err := ReadTable(strings.NewReader(blood), "t", TableOptions{Header: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.N != 3 || d.D != 2 || !slices.Equal(d.X, []float64{2, 50, 0, 13, 1, 16}) || !slices.Equal(d.Y, []int{1, 0, 1}) ||
		!slices.Equal(d.Classes, []string{"0", "1"}) || d.Features[1].Name != "Frequency (times)" {
		t.Fatalf("got %+v", d)
	}
	// PMLB: tab-separated, target not last, codes not starting at 0.
	pmlbData := "a\ttarget\tb\n1.5\t4\t2\n2.5\t1\t3\n3.5\t4\t4\n"
	d, err = ReadPMLB(bytes.NewReader(gz([]byte(pmlbData))), "p.tsv.gz")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Classes, []string{"1", "4"}) || !slices.Equal(d.Y, []int{1, 0, 1}) ||
		!slices.Equal(d.X, []float64{1.5, 2, 2.5, 3, 3.5, 4}) || d.Features[1].Name != "b" {
		t.Fatalf("got %+v", d)
	}
	// Headerless, regression.
	d, err = ReadTable(strings.NewReader("1,2,0.5\n3,4,1.5\n"), "t", TableOptions{Regression: true})
	if err != nil || !slices.Equal(d.Target, []float64{0.5, 1.5}) || d.Features[0].Name != "x0" {
		t.Fatalf("regression: %+v %v", d, err)
	}
	if _, err := ReadTable(strings.NewReader("1,2\n"), "t", TableOptions{Target: "y"}); err == nil {
		t.Fatal("Target without Header accepted")
	}
}

// The UCI blood-transfusion layout (transfusion.data): a CSV header, the class last.
func TestReadUCIErrors(t *testing.T) {
	const hdr = "Recency (months),Frequency (times),Monetary (c.c. blood),Time (months),\"whether he/she donated blood in March 2007\"\r\n"
	good := hdr + "2 ,50,12500,98 ,1\r\n0 ,13,3250,28 ,1\r\n1 ,16,4000,35 ,0\r\n"
	cases := []errCase{
		{"empty", nil, "transfusion.data: line 1: ", "empty file, expected a header line of column names"},
		{"header only", []byte(hdr), "transfusion.data: line 2: ", "no data rows"},
		{"truncated mid row", []byte(good[:len(hdr)+12]), "transfusion.data: line 2: ", "4 fields, expected 5"},
		{"truncated mid field", []byte(good[:len(good)-4]), "transfusion.data: line 4: ", "4 fields, expected 5"},
		{"truncated in quote", []byte(good[:strings.Index(hdr, `"`)+5]), "transfusion.data: line 1, column ", "malformed CSV"},
		{"missing target column", []byte(hdr + "2 ,50,12500,98\r\n"), "transfusion.data: line 2: ", "4 fields, expected 5"},
		{"extra column", []byte(hdr + "2 ,50,12500,98 ,1,7\r\n"), "transfusion.data: line 2: ", "6 fields, expected 5"},
		{"non-numeric", []byte(hdr + "2 ,fifty,12500,98 ,1\r\n"), "transfusion.data: line 2, column 4: ", `column 2 ("Frequency (times)"): "fifty" is not a number, expected a finite decimal number`},
		{"NaN", []byte(good + "2 ,50,NaN,98 ,1\r\n"), "transfusion.data: line 5, column 7: ", `column 3 ("Monetary (c.c. blood)"): NaN ("NaN"), expected a finite number`},
		{"Inf", []byte(hdr + "2 ,50,12500,Inf,1\r\n"), "transfusion.data: line 2, column 13: ", `infinity ("Inf")`},
		{"empty field", []byte(hdr + "2 ,,12500,98 ,1\r\n"), "transfusion.data: line 2, column 4: ", "empty field, expected a finite number"},
		{"label negative", []byte(hdr + "2 ,50,12500,98 ,-1\r\n"), "transfusion.data: line 2, column 17: ", `target column 5 ("whether he/she donated blood in March 20…"): class label "-1", expected a non-negative integer class code`},
		{"label fractional", []byte(hdr + "2 ,50,12500,98 ,0.5\r\n"), "transfusion.data: line 2, column 17: ", `class label "0.5"`},
		{"label huge", []byte(hdr + "2 ,50,12500,98 ,1e12\r\n"), "transfusion.data: line 2, column 17: ", `class label "1e12"`},
		{"header one column", []byte("whether\r\n1\r\n"), "transfusion.data: line 1: ", "header has 1 column(s), expected at least one feature and the target"},
		{"gzip truncated", gz([]byte(good))[:30], "transfusion.data: line ", "read error (truncated compressed data)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadTable(bytes.NewReader(c.in), "transfusion.data", TableOptions{Header: true})
			expectParseError(t, err, c)
		})
	}
	d, err := ReadTable(strings.NewReader("\ufeff"+good), "transfusion.data", TableOptions{Header: true})
	if err != nil || d.N != 3 || d.Features[0].Name != "Recency (months)" {
		t.Fatalf("with a byte-order mark: %v", err)
	}
}

func TestReadTableErrors(t *testing.T) {
	pm := func(s string) []byte { return []byte(s) }
	corrupt := gz(pm("a\ttarget\n1\t0\n2\t1\n"))
	corrupt[len(corrupt)-5] ^= 0xff
	cases := []errCase{
		{"empty", nil, "p.tsv: line 1", "empty file, expected a header line"},
		{"missing target column", pm("a\tb\tclass\n1\t2\t0\n"), "p.tsv: line 1", `no target column "target" in the header (columns: a, b, class)`},
		{"only target", pm("target\n1\n"), "p.tsv: line 1", "header has 1 column(s)"},
		{"no rows", pm("a\ttarget\n"), "p.tsv: line 2", "no data rows"},
		{"too few fields", pm("a\tb\ttarget\n1\t2\t0\n1\t0\n"), "p.tsv: line 3", "2 fields, expected 3"},
		{"too many fields", pm("a\ttarget\n1\t0\t5\n"), "p.tsv: line 2", "3 fields, expected 2"},
		{"non-numeric", pm("a\ttarget\n1\t0\nx1\t1\n"), "p.tsv: line 3, column 1: ", `column 1 ("a"): "x1" is not a number, expected a finite decimal number`},
		{"NaN", pm("a\ttarget\nnan\t0\n"), "p.tsv: line 2, column 1: ", `column 1 ("a"): NaN ("nan"), expected a finite number`},
		{"infinity", pm("a\ttarget\n+Inf\t0\n"), "p.tsv: line 2, column 1: ", `infinity ("+Inf"), expected a finite number`},
		{"class not integer", pm("a\ttarget\n1\t0.25\n"), "p.tsv: line 2, column 3: ", `target column 2 ("target"): class label "0.25", expected a non-negative integer class code`},
		{"class negative", pm("a\ttarget\n1\t-2\n"), "p.tsv: line 2, column 3: ", `class label "-2", expected a non-negative integer`},
		{"class empty", pm("a\ttarget\n1\t\n"), "p.tsv: line 2", "empty field"},
		{"bare quote", pm("a\ttarget\n1\"\t0\n"), "p.tsv: line 2", "malformed CSV"},
		{"gzip corrupt", corrupt, "p.tsv: line ", "read error"},
		{"gzip truncated", gz(pm("a\ttarget\n1\t0\n2\t1\n"))[:20], "p.tsv: line ", "read error"},
		{"truncated in header", pm("a\tb\ttar"), "p.tsv: line 1: ", `no target column "target" in the header (columns: a, b, tar)`},
		{"truncated mid row", pm("a\tb\ttarget\n1\t2\t0\n3\t"), "p.tsv: line 3: ", "2 fields, expected 3"},
		{"truncated in quote", pm("a\ttarget\n\"1"), "p.tsv: line 2, column ", "malformed CSV"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadPMLB(bytes.NewReader(c.in), "p.tsv")
			expectParseError(t, err, c)
		})
	}
	for _, c := range []errCase{
		{"headerless one column", pm("1\n2\n"), "t.csv: line 1", "1 field(s), expected at least one feature and the target"},
		{"headerless ragged", pm("1,2,0\n1,0\n"), "t.csv: line 2", "2 fields, expected 3"},
		{"blood stray text", pm("2 ,50,1\r\n0 ,1 3,0\r\n"), "t.csv: line 2, column 4: ", `column 2 (unnamed): "1 3" is not a number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadTable(bytes.NewReader(c.in), "t.csv", TableOptions{})
			expectParseError(t, err, c)
		})
	}
}

const arffGood = "% comment line\r\n" +
	"@RELATION 'test data'\r\n" +
	"\r\n" +
	"@attribute 'size cm' numeric % inline comment\r\n" +
	"@attribute colour {red, 'light green', \"blue\"}\r\n" +
	"@ATTRIBUTE count INTEGER\r\n" +
	"@attribute v(g) real\r\n" +
	"@attribute class {no,yes}\r\n" +
	"@data\r\n" +
	"1.5,red,3,0.25,yes\r\n" +
	"% a comment among the rows\r\n" +
	"?, 'light green' ,4,1e-3,no\r\n" +
	"-2,\"blue\",?,7,'yes'\r\n"

func TestReadARFF(t *testing.T) {
	d, err := ReadARFF(strings.NewReader(arffGood), "a.arff", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	wantX := []float64{1.5, 0, 3, 0.25, nan, 1, 4, 1e-3, -2, 2, nan, 7}
	if d.N != 3 || d.D != 4 || !slices.EqualFunc(d.X, wantX, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
		t.Fatalf("X = %v, want %v", d.X, wantX)
	}
	if !slices.Equal(d.Y, []int{1, 0, 1}) || !slices.Equal(d.Classes, []string{"no", "yes"}) {
		t.Fatalf("Y = %v classes %q", d.Y, d.Classes)
	}
	wantF := []Feature{{Name: "size cm"}, {Name: "colour", Kind: Nominal, Categories: []string{"red", "light green", "blue"}},
		{Name: "count"}, {Name: "v(g)"}}
	if !slices.EqualFunc(d.Features, wantF, func(a, b Feature) bool {
		return a.Name == b.Name && a.Kind == b.Kind && slices.Equal(a.Categories, b.Categories)
	}) {
		t.Fatalf("features %+v", d.Features)
	}
	// Another class attribute, numeric: regression.
	d, err = ReadARFF(strings.NewReader(arffGood), "a.arff", "v(g)")
	if err != nil || !slices.Equal(d.Target, []float64{0.25, 1e-3, 7}) || d.Y != nil || d.Features[3].Name != "class" {
		t.Fatalf("class v(g): %+v %v", d, err)
	}
	// Escapes and a quoted category with a comma and a percent sign.
	esc := "@relation r\n@attribute 'it\\'s' {'a,b','50%',\"q\\\"\"}\n@attribute c {x}\n@data\n'a,b',x\n'50%',x % yes\n\"q\\\"\",x\n"
	d, err = ReadARFF(strings.NewReader(esc), "e.arff", "")
	if err != nil || d.Features[0].Name != "it's" || !slices.Equal(d.X, []float64{0, 1, 2}) ||
		!slices.Equal(d.Features[0].Categories, []string{"a,b", "50%", `q"`}) {
		t.Fatalf("escapes: %+v %v", d, err)
	}
}

func TestReadARFFErrors(t *testing.T) {
	hdr := "@relation r\n@attribute a numeric\n@attribute b {x,y}\n@attribute class {p,q}\n@data\n"
	cases := []errCase{
		{"empty", nil, "a.arff: line 1", "end of file, expected an ARFF header"},
		{"only comments", []byte("% nothing\n%\n"), "a.arff: line 3", "end of file, expected an ARFF header"},
		{"attribute first", []byte("@attribute a numeric\n"), "a.arff: line 1", "@attribute before @relation"},
		{"text in header", []byte("@relation r\nhello\n"), "a.arff: line 2", `"hello" in the header, expected @relation, @attribute or @data`},
		{"unknown directive", []byte("@relation r\n@inputs a\n"), "a.arff: line 2", `unknown directive "@inputs"`},
		{"second relation", []byte("@relation r\n@relation s\n"), "a.arff: line 2", "second @relation (the first is on line 1)"},
		{"relation without name", []byte("@relation\n"), "a.arff: line 1", "@relation without a name"},
		{"no data section", []byte("@relation r\n@attribute a numeric\n@attribute c {x}\n"), "a.arff: line 4", "end of file in the header, expected @data"},
		{"data before attributes", []byte("@relation r\n@data\n1\n"), "a.arff: line 2", "@data after 0 attribute(s)"},
		{"unknown type", []byte("@relation r\n@attribute a numbers\n"), "a.arff: line 2", `attribute "a": unknown type "numbers"`},
		{"missing type", []byte("@relation r\n@attribute a\n"), "a.arff: line 2", `@attribute "a" has no type`},
		{"string attribute", []byte("@relation r\n@attribute s string\n"), "a.arff: line 2", "string attributes are not supported"},
		{"date attribute", []byte("@relation r\n@attribute d date \"yyyy\"\n"), "a.arff: line 2", "date attributes are not supported"},
		{"unclosed nominal", []byte("@relation r\n@attribute b {x,y\n"), "a.arff: line 2", "nominal list without a closing '}'"},
		{"empty category", []byte("@relation r\n@attribute b {x,,y}\n"), "a.arff: line 2", "empty category"},
		{"duplicate category", []byte("@relation r\n@attribute b {x,y,x}\n"), "a.arff: line 2", `category "x" appears twice`},
		{"duplicate attribute", []byte("@relation r\n@attribute a numeric\n@attribute a real\n"), "a.arff: line 3", `attribute "a" already declared on line 2`},
		{"unterminated quote in header", []byte("@relation r\n@attribute 'a numeric\n"), "a.arff: line 2", "unterminated '-quoted string"},
		{"no rows", []byte(hdr + "% none\n"), "a.arff: line 7", "no data rows after @data (line 5)"},
		{"too few values", []byte(hdr + "1,x,p\n2,y\n"), "a.arff: line 7", "2 values, expected 3 (one per @attribute)"},
		{"too many values", []byte(hdr + "1,x,p,q\n"), "a.arff: line 6", "4 values, expected 3"},
		{"unknown category", []byte(hdr + "1,z,p\n"), "a.arff: line 6", `attribute "b": "z" is not one of its categories {x,y}`},
		{"unknown class", []byte(hdr + "1,x,r\n"), "a.arff: line 6", `attribute "class": "r" is not one of its categories`},
		{"non-numeric", []byte(hdr + "1,x,p\none,x,p\n"), "a.arff: line 7, column 1: ", `attribute "a": "one" is not a number, expected a finite decimal number (a missing value is written ?)`},
		{"NaN literal", []byte(hdr + "NaN,x,p\n"), "a.arff: line 6, column 1: ", `attribute "a": NaN ("NaN"), expected a finite number (a missing value is written ?)`},
		{"inf literal", []byte(hdr + "1,x,p\n -inf , y ,q\n"), "a.arff: line 7, column 2: ", `attribute "a": infinity ("-inf")`},
		{"overflow", []byte(hdr + "1e400,x,p\n"), "a.arff: line 6, column 1: ", `"1e400" is beyond the float64 range`},
		{"missing class", []byte(hdr + "1,x,?\n"), "a.arff: line 6", `missing class value (attribute "class")`},
		{"unterminated quote in data", []byte(hdr + "1,'x,p\n"), "a.arff: line 6", "unterminated '-quoted string"},
		{"text after quote", []byte(hdr + "1,'x'y,p\n"), "a.arff: line 6", `after the quoted value "x", expected ','`},
		{"sparse row", []byte(hdr + "{0 1, 2 p}\n"), "a.arff: line 6", "sparse ARFF rows"},
		{"directive in data", []byte(hdr + "@attribute z numeric\n"), "a.arff: line 6", "directive \"@attribute z numeric\" after @data (line 5)"},
		{"quoted missing is a value", []byte(hdr + "1,'?',p\n"), "a.arff: line 6", `"?" is not one of its categories`},
		{"gzip truncated", gz([]byte(hdr + "1,x,p\n"))[:40], "a.arff: line ", "read error"},
		{"truncated in attributes", []byte(hdr[:33]), "a.arff: line 3: ", "end of file in the header, expected @data"},
		{"truncated in nominal list", []byte(hdr[:48]), "a.arff: line 3: ", "nominal list without a closing '}'"},
		{"truncated mid row", []byte(hdr + "1,x,p\n2,y"), "a.arff: line 7: ", "2 values, expected 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadARFF(bytes.NewReader(c.in), "a.arff", "")
			expectParseError(t, err, c)
		})
	}
	t.Run("unknown class attribute", func(t *testing.T) {
		_, err := ReadARFF(strings.NewReader(hdr+"1,x,p\n"), "a.arff", "label")
		expectParseError(t, err, errCase{"", nil, "a.arff: line 5", `no attribute named "label" to use as the class`})
	})
}
