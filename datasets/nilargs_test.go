package datasets

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 52 (class 8): a nil reader, context, read function, encoder or standardizer was a
// nil-pointer panic inside the package; each is an error naming what was nil.
func TestNilArgumentsAreErrorsNotPanics(t *testing.T) {
	ds := &Dataset{Name: "x", N: 2, D: 1, X: []float64{1, 2}, Y: []int{0, 1}, Classes: []string{"a", "b"}, Shape: []int{1}}
	var enc *OneHotEncoder
	var std *Standardizer
	var nilCtx context.Context // a caller's mistake the context package warns against
	file := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(file, []byte("a,y\n1,0\n2,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func() error{
		"ReadARFF":                 func() error { _, err := ReadARFF(nil, "n", "c"); return err },
		"ReadCIFAR10":              func() error { _, err := ReadCIFAR10(nil, "n", nil); return err },
		"ReadIDX":                  func() error { _, err := ReadIDX(nil, "n", nil, "m"); return err },
		"ReadPMLB":                 func() error { _, err := ReadPMLB(nil, "n"); return err },
		"ReadSVHN":                 func() error { _, err := ReadSVHN(nil, "n"); return err },
		"ReadSklearnCSV":           func() error { _, err := ReadSklearnCSV(nil, "n"); return err },
		"ReadTable":                func() error { _, err := ReadTable(nil, "n", TableOptions{}); return err },
		"LoadHashed(nil read)":     func() error { _, _, err := LoadHashed(context.Background(), file, nil); return err },
		"LoadHashed(nil ctx)":      func() error { _, _, err := LoadHashed(nilCtx, file, ReadSklearnCSV); return err },
		"LoadTable(nil ctx)":       func() error { _, err := LoadTable(nilCtx, file, TableOptions{Header: true}); return err },
		"Load(nil ctx)":            func() error { _, _, err := Load(nilCtx, "iris", ""); return err },
		"Fetch(nil ctx)":           func() error { _, err := Fetch(nilCtx, "iris", t.TempDir(), FetchOptions{}); return err },
		"Check(nil ctx)":           func() error { _, err := Check(nilCtx, "iris", t.TempDir()); return err },
		"nil OneHotEncoder":        func() error { _, err := enc.Transform(ds); return err },
		"nil Standardizer":         func() error { _, err := std.Transform(ds); return err },
		"CheckClassification(nil)": func() error { return CheckClassification(nil) },
		"Split(nil)":               func() error { _, err := Split(nil, nil, 0.5); return err },
	}
	for name, f := range cases {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", name, r)
				}
			}()
			if err := f(); err == nil || !strings.Contains(err.Error(), "nil") {
				t.Errorf("%s: %v; want an error naming the nil argument", name, err)
			}
		}()
	}
	var nilDS *Dataset
	if nilDS.ClassCounts() != nil {
		t.Error("a nil Dataset has class counts")
	}
}
