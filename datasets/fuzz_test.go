package datasets

// Fuzz targets, one per parser. Each asserts what the reader promises for any input:
// either a *ParseError that names the file and a position inside it, or a dataset that is
// consistent (Validate), non-empty, finite (NaN only for ARFF "?" missing values), with
// pixels in [0, 1] and labels indexing Classes. Seed corpora are in testdata/fuzz/<FuzzName>;
// .ci/fuzz.sh runs every target for a bounded time.

import (
	"bytes"
	"cmp"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// isGzip reports whether b starts with the gzip magic bytes (the readers then decompress it).
func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// checkFuzzError asserts that err is a *ParseError for one of files (name → content) whose
// position lies inside that file: a line (text) or a byte offset (binary, or the gzip
// header of a compressed text file).
func checkFuzzError(t *testing.T, err error, text bool, files map[string][]byte) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T %v is not a *ParseError", err, err)
	}
	in, ok := files[pe.File]
	if !ok {
		t.Fatalf("error %q names file %q, want one of the inputs", err, pe.File)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "datasets: "+pe.File+": ") || pe.Msg == "" {
		t.Fatalf("error %q: want \"datasets: %s: position: what was expected\"", msg, pe.File)
	}
	// A text file that is gzip-compressed can fail before any line: at a byte offset of its
	// gzip header.
	if text && (pe.Line > 0 || !isGzip(in)) {
		if pe.Line < 1 || pe.Column < 0 || pe.Offset != 0 {
			t.Fatalf("error %q: line %d, column %d, offset %d, want a line ≥ 1", msg, pe.Line, pe.Column, pe.Offset)
		}
		if !isGzip(in) && (pe.Line > bytes.Count(in, []byte("\n"))+2 || pe.Column > len(in)+1) {
			t.Fatalf("error %q: line %d, column %d is outside the %d-byte input", msg, pe.Line, pe.Column, len(in))
		}
		return
	}
	if pe.Line != 0 || pe.Column != 0 || pe.Offset < 0 {
		t.Fatalf("error %q: line %d, column %d, offset %d, want a byte offset", msg, pe.Line, pe.Column, pe.Offset)
	}
	if !pe.Decompressed && pe.Offset > int64(len(in)) {
		t.Fatalf("error %q: offset %d is beyond the %d-byte input", msg, pe.Offset, len(in))
	}
}

// checkFuzzDataset asserts that an accepted dataset is consistent, non-empty and finite;
// allowNaN permits missing values (NaN) in X, images requires X in [0, 1].
func checkFuzzDataset(t *testing.T, d *Dataset, allowNaN, images bool) {
	t.Helper()
	if err := d.Validate(); err != nil {
		t.Fatalf("accepted an inconsistent dataset: %v", err)
	}
	if d.N < 1 || d.D < 1 {
		t.Fatalf("accepted an empty dataset: %d×%d", d.N, d.D)
	}
	if (d.Y == nil) == (d.Target == nil) {
		t.Fatalf("want exactly one of Y and Target, got Y %v Target %v", d.Y != nil, d.Target != nil)
	}
	if d.Y != nil && len(d.Classes) == 0 {
		t.Fatal("classification without classes")
	}
	for i, v := range d.X {
		switch {
		case math.IsInf(v, 0), math.IsNaN(v) && !allowNaN:
			t.Fatalf("X[%d] = %v", i, v)
		case images && !(v >= 0 && v <= 1):
			t.Fatalf("pixel X[%d] = %v outside [0, 1]", i, v)
		}
	}
	for i, v := range d.Target {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("Target[%d] = %v", i, v)
		}
	}
	if images && d.Features != nil {
		t.Fatal("images with Features")
	}
	if !images && (len(d.Shape) != 1 || len(d.Features) != d.D) {
		t.Fatalf("table with shape %v and %d features, want [%d]", d.Shape, len(d.Features), d.D)
	}
}

func FuzzIDX(f *testing.F) {
	f.Add(idxImages(2, 2, 3), idxLabels(1, 7))
	f.Add(gz(idxImages(1, 1, 1)), gz(idxLabels(0)))
	f.Add(idxImages(0, 28, 28), idxLabels())
	f.Add(idxImages(3, 4, 1)[:20], idxLabels(1, 2, 3))
	f.Add(cat(be32(0x803, 1, 0xffff, 0xffff)), idxLabels(1))
	f.Fuzz(func(t *testing.T, images, labels []byte) {
		d, err := ReadIDX(bytes.NewReader(images), "im.idx", bytes.NewReader(labels), "lb.idx")
		if err != nil {
			checkFuzzError(t, err, false, map[string][]byte{"im.idx": images, "lb.idx": labels})
			return
		}
		checkFuzzDataset(t, d, false, true)
		if len(d.Shape) != 3 || d.Shape[0] != 1 || len(d.Classes) != slices.Max(d.Y)+1 {
			t.Fatalf("shape %v, %d classes for labels up to %d", d.Shape, len(d.Classes), slices.Max(d.Y))
		}
		if !isGzip(images) && len(images) != 16+d.N*d.D {
			t.Fatalf("accepted %d bytes of images for %d×%d", len(images), d.N, d.D)
		}
		if !isGzip(labels) && len(labels) != 8+d.N {
			t.Fatalf("accepted %d bytes of labels for %d", len(labels), d.N)
		}
	})
}

func FuzzCIFAR10(f *testing.F) {
	f.Add(cifarRecords(0, 9))
	f.Add(gz(cifarRecords(3)))
	f.Add(cifarRecords(10))
	f.Add(cifarRecords(1, 2)[:4000])
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ReadCIFAR10(bytes.NewReader(data), "c.bin", nil)
		if err != nil {
			checkFuzzError(t, err, false, map[string][]byte{"c.bin": data})
			return
		}
		checkFuzzDataset(t, d, false, true)
		if !slices.Equal(d.Shape, []int{3, 32, 32}) || len(d.Classes) != 10 {
			t.Fatalf("shape %v, %d classes", d.Shape, len(d.Classes))
		}
		if !isGzip(data) && len(data) != d.N*cifarRecord {
			t.Fatalf("accepted %d bytes as %d records", len(data), d.N)
		}
	})
}

func FuzzCSV(f *testing.F) {
	f.Add([]byte(irisLike))
	f.Add([]byte("2,2,,\n\"CRIM\",\"ZN\",\"MEDV\"\n0.006,18,24\n0.027,0,21.6\n"))
	f.Add(gz([]byte(irisLike)))
	f.Add([]byte("2,2,a,b\n1,NaN,0\n1,2,1\n"))
	f.Add([]byte("1,1,a,b\n1,2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ReadSklearnCSV(bytes.NewReader(data), "f.csv")
		if err != nil {
			checkFuzzError(t, err, true, map[string][]byte{"f.csv": data})
			return
		}
		checkFuzzDataset(t, d, false, false)
		if d.Y != nil && len(d.Classes) < 1 {
			t.Fatalf("%d classes", len(d.Classes))
		}
		if !isGzip(data) {
			// The header announces the row and feature counts.
			hdr, _, _ := strings.Cut(string(bytes.TrimPrefix(data, []byte("\ufeff"))), ",")
			if n, err := strconv.Atoi(strings.TrimSpace(hdr)); err == nil && n != d.N {
				t.Fatalf("header announces %d rows, got %d", n, d.N)
			}
		}
	})
}

// checkTableCodes asserts that the classes of a table are distinct integer codes in
// ascending order.
func checkTableCodes(t *testing.T, d *Dataset) {
	t.Helper()
	prev := -1
	for _, c := range d.Classes {
		v, err := strconv.Atoi(c)
		if err != nil || v <= prev {
			t.Fatalf("classes %q are not ascending integer codes", d.Classes)
		}
		prev = v
	}
}

// FuzzTable covers ReadTable's options: header or not, comma or tab, regression or codes.
func FuzzTable(f *testing.F) {
	f.Add([]byte("a\ttarget\tb\n1.5\t4\t2\n2.5\t1\t3\n"), true, true, false)
	f.Add([]byte("Recency (months),\"whether2007\"\r\n2 ,1\r\n0 ,0"), true, false, false)
	f.Add([]byte("1,2,0.5\n3,4,1.5\n"), false, false, true)
	f.Fuzz(func(t *testing.T, data []byte, header, tab, regression bool) {
		opt := TableOptions{Header: header, Regression: regression}
		if tab {
			opt.Comma = '\t'
			if header {
				opt.Target = "target"
			}
		}
		d, err := ReadTable(bytes.NewReader(data), "t.txt", opt)
		if err != nil {
			checkFuzzError(t, err, true, map[string][]byte{"t.txt": data})
			return
		}
		checkFuzzDataset(t, d, false, false)
		if !regression {
			checkTableCodes(t, d)
		}
	})
}

// FuzzTextTable fuzzes ReadTable with TableOptions.Text: text classes in sorted order, text
// feature columns nominal with sorted categories, NaN only for missing feature values.
func FuzzTextTable(f *testing.F) {
	f.Add([]byte("colour,size,label\nred,1.5,yes\n\"light green\",?,no\n,4,maybe\n"), false)
	f.Add([]byte("a,y\n1,-1\n2,10\n"), false)
	f.Add([]byte("a,price\n1,3.7\n2,4\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, regression bool) {
		d, err := ReadTable(bytes.NewReader(data), "t.csv", TableOptions{Header: true, Text: true, Regression: regression})
		if err != nil {
			checkFuzzError(t, err, true, map[string][]byte{"t.csv": data})
			return
		}
		checkFuzzDataset(t, d, true, false)
		if !regression && !slices.IsSorted(d.Classes) && !slices.IsSortedFunc(d.Classes, func(a, b string) int {
			x, _ := strconv.ParseFloat(a, 64)
			y, _ := strconv.ParseFloat(b, 64)
			return cmp.Compare(x, y)
		}) {
			t.Fatalf("classes %q are not sorted", d.Classes)
		}
		for _, feat := range d.Features {
			if feat.Kind == Nominal && !slices.IsSorted(feat.Categories) {
				t.Fatalf("categories %q of %s are not sorted", feat.Categories, feat.Name)
			}
		}
	})
}

// FuzzTSV fuzzes the PMLB reader: tab-separated, a header, a "target" column.
func FuzzTSV(f *testing.F) {
	f.Add([]byte("a\ttarget\tb\n1.5\t4\t2\n2.5\t1\t3\n"))
	f.Add(gz([]byte("A1\tA2\ttarget\n0\t1.25\t1\n1\t-3e2\t0\n")))
	f.Add([]byte("a\tb\tclass\n1\t2\t0\n"))
	f.Add([]byte("a\ttarget\nnan\t0\n1\t-1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ReadPMLB(bytes.NewReader(data), "p.tsv")
		if err != nil {
			checkFuzzError(t, err, true, map[string][]byte{"p.tsv": data})
			return
		}
		checkFuzzDataset(t, d, false, false)
		checkTableCodes(t, d)
	})
}

// FuzzUCI fuzzes the UCI CSV layout (blood-transfusion): a comma-separated header, the
// class last.
func FuzzUCI(f *testing.F) {
	f.Add([]byte("Recency (months),Frequency (times),Monetary (c.c. blood),Time (months),\"whether he/she donated blood in March 2007\"\r\n2 ,50,12500,98 ,1\r\n0 ,13,3250,28 ,1\r\n"))
	f.Add([]byte("a,b\n1,0\n2,Inf\n"))
	f.Add([]byte("\"a,\"\"b\",c\n\"1\",0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ReadTable(bytes.NewReader(data), "transfusion.data", TableOptions{Header: true})
		if err != nil {
			checkFuzzError(t, err, true, map[string][]byte{"transfusion.data": data})
			return
		}
		checkFuzzDataset(t, d, false, false)
		checkTableCodes(t, d)
	})
}

func FuzzARFF(f *testing.F) {
	f.Add([]byte(arffGood), "")
	f.Add([]byte(arffGood), "v(g)")
	f.Add([]byte("@relation r\n@attribute 'it\\'s' {'a,b','50%'}\n@attribute c {x}\n@data\n'a,b',x\n'50%',x % c\n"), "")
	f.Add([]byte("@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\nNaN,x\n?,y\n"), "c")
	f.Fuzz(func(t *testing.T, data []byte, class string) {
		d, err := ReadARFF(bytes.NewReader(data), "a.arff", class)
		if err != nil {
			checkFuzzError(t, err, true, map[string][]byte{"a.arff": data})
			return
		}
		// "?" is a missing value: NaN is allowed in X, not in the class.
		checkFuzzDataset(t, d, true, false)
	})
}

// FuzzSVHN fuzzes the MATLAB v5 reader (compressed and uncompressed elements).
func FuzzSVHN(f *testing.F) {
	x, y := svhnX(1), svhnYDouble(10)
	f.Add(cat(matHeader(), x.element(), y.element()))
	f.Add(cat(matHeader(), matCompress(svhnYUint8(3).element()), matCompress(x.element())))
	small := matArray{name: "X", class: 9, dims: []int32{2, 1, 1, 2}, dataType: miUINT8, data: []byte{1, 2, 3, 4}, small: true}
	f.Add(cat(matHeader(), small.element(), svhnYDouble(1, 10).element()))
	f.Add(cat(matHeader(), matCompress(small.element()), matCompress(svhnYUint8(2, 3).element())))
	dbl := matArray{name: "X", class: mxDOUBLE, dims: []int32{1, 1, 1, 1}, dataType: miDOUBLE, data: make([]byte, 8), small: true}
	f.Add(cat(matHeader(), dbl.element(), svhnYDouble(4).element()))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ReadSVHN(bytes.NewReader(data), "s.mat")
		if err != nil {
			checkFuzzError(t, err, false, map[string][]byte{"s.mat": data})
			return
		}
		checkFuzzDataset(t, d, false, true)
		if len(d.Shape) != 3 || len(d.Classes) != 10 {
			t.Fatalf("shape %v, %d classes", d.Shape, len(d.Classes))
		}
	})
}
