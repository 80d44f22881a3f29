package datasets

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// checkFuzzResult asserts what every reader promises for any input: an error that names the
// file, or a consistent dataset.
func checkFuzzResult(t *testing.T, d *Dataset, err error, name string) {
	t.Helper()
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("error %T %v is not a *ParseError", err, err)
		}
		if !strings.Contains(err.Error(), name) {
			t.Fatalf("error %q does not name %q", err, name)
		}
		return
	}
	if err := d.Validate(); err != nil {
		t.Fatalf("accepted an inconsistent dataset: %v", err)
	}
}

func FuzzIDX(f *testing.F) {
	f.Add(idxImages(2, 2, 3), idxLabels(1, 7))
	f.Add(gz(idxImages(1, 1, 1)), gz(idxLabels(0)))
	f.Add(idxImages(0, 28, 28), idxLabels())
	f.Fuzz(func(t *testing.T, images, labels []byte) {
		d, err := ReadIDX(bytes.NewReader(images), "im.idx", bytes.NewReader(labels), "lb.idx")
		if err != nil && !strings.Contains(err.Error(), ".idx") {
			t.Fatalf("error %q names no file", err)
		}
		checkFuzzResult(t, d, err, ".idx")
	})
}

func FuzzCIFAR10(f *testing.F) {
	f.Add(cifarRecords(0, 9))
	f.Add(gz(cifarRecords(3)))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ReadCIFAR10(bytes.NewReader(data), "c.bin", nil)
		checkFuzzResult(t, d, err, "c.bin")
	})
}

func FuzzCSV(f *testing.F) {
	f.Add([]byte(irisLike))
	f.Add([]byte("2,2,,\n\"CRIM\",\"ZN\",\"MEDV\"\n0.006,18,24\n0.027,0,21.6\n"))
	f.Add(gz([]byte(irisLike)))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ReadSklearnCSV(bytes.NewReader(data), "f.csv")
		checkFuzzResult(t, d, err, "f.csv")
	})
}

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
		checkFuzzResult(t, d, err, "t.txt")
	})
}

func FuzzARFF(f *testing.F) {
	f.Add([]byte(arffGood), "")
	f.Add([]byte(arffGood), "v(g)")
	f.Add([]byte("@relation r\n@attribute 'it\\'s' {'a,b','50%'}\n@attribute c {x}\n@data\n'a,b',x\n'50%',x % c\n"), "")
	f.Fuzz(func(t *testing.T, data []byte, class string) {
		d, err := ReadARFF(bytes.NewReader(data), "a.arff", class)
		checkFuzzResult(t, d, err, "a.arff")
	})
}

func FuzzSVHN(f *testing.F) {
	x, y := svhnX(1), svhnYDouble(10)
	f.Add(cat(matHeader(), x.element(), y.element()))
	f.Add(cat(matHeader(), matCompress(svhnYUint8(3).element()), matCompress(x.element())))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ReadSVHN(bytes.NewReader(data), "s.mat")
		checkFuzzResult(t, d, err, "s.mat")
	})
}
