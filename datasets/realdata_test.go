package datasets

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sharedData returns the development data directory or skips the test.
func sharedData(t *testing.T) string {
	t.Helper()
	dir, err := SharedDataDir()
	if err != nil {
		t.Skipf("real-data test skipped: %v", err)
	}
	return dir
}

type wantSplit struct {
	rows   int
	counts []int // per class, in Classes order
}

var realWant = map[string]struct {
	d, k        int
	train, test wantSplit
	classes     []string // checked when set
	nominal     int      // number of nominal features
}{
	"mnist": {d: 784, k: 10,
		train: wantSplit{60000, []int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}},
		test:  wantSplit{10000, []int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}}},
	"fashion-mnist": {d: 784, k: 10,
		train: wantSplit{60000, []int{6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000}},
		test:  wantSplit{10000, []int{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}}},
	"cifar10": {d: 3072, k: 10,
		train:   wantSplit{1000, []int{102, 112, 99, 92, 99, 85, 107, 102, 99, 103}},
		test:    wantSplit{1000, []int{103, 89, 100, 103, 90, 86, 112, 102, 106, 109}},
		classes: []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}},
	"breast":            {d: 30, k: 2, train: wantSplit{569, []int{212, 357}}, classes: []string{"malignant", "benign"}},
	"digits":            {d: 64, k: 10, train: wantSplit{1797, []int{178, 182, 177, 183, 181, 182, 181, 179, 174, 180}}},
	"iris":              {d: 4, k: 3, train: wantSplit{150, []int{50, 50, 50}}, classes: []string{"setosa", "versicolor", "virginica"}},
	"wine":              {d: 13, k: 3, train: wantSplit{178, []int{59, 71, 48}}, classes: []string{"class_0", "class_1", "class_2"}},
	"vehicle":           {d: 18, k: 4, train: wantSplit{846, []int{212, 217, 218, 199}}, classes: []string{"1", "2", "3", "4"}},
	"blood-transfusion": {d: 4, k: 2, train: wantSplit{748, []int{570, 178}}},
	"australian":        {d: 14, k: 2, train: wantSplit{690, []int{383, 307}}, nominal: 8},
	"car":               {d: 6, k: 4, train: wantSplit{1728, []int{384, 69, 1210, 65}}, classes: []string{"acc", "good", "unacc", "vgood"}, nominal: 6},
	"phoneme":           {d: 5, k: 2, train: wantSplit{5404, []int{3818, 1586}}},
	"segment":           {d: 19, k: 7, train: wantSplit{2310, []int{330, 330, 330, 330, 330, 330, 330}}},
	"credit-g":          {d: 20, k: 2, train: wantSplit{1000, []int{700, 300}}, classes: []string{"good", "bad"}, nominal: 13},
	"kc1":               {d: 21, k: 2, train: wantSplit{2109, []int{1783, 326}}, classes: []string{"false", "true"}},
	"diabetes":          {d: 10, train: wantSplit{rows: 442}},
	"boston":            {d: 13, train: wantSplit{rows: 506}},
}

func TestRegistryRealData(t *testing.T) {
	dir := sharedData(t)
	ctx := context.Background()
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			in, _ := Lookup(name)
			train, test, err := Load(ctx, name, dir)
			if name == "svhn" {
				if _, statErr := os.Stat(filepath.Join(dir, "svhn", "train_32x32.mat")); statErr == nil {
					t.Skip("SVHN is present; its load is exercised by TestSVHNRealData")
				}
				checkSVHNMissing(t, err, dir)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w, ok := realWant[name]
			if !ok {
				t.Fatalf("no expectations for %s", name)
			}
			check := func(d *Dataset, ws wantSplit, split string) {
				t.Helper()
				if err := d.Validate(); err != nil {
					t.Fatal(err)
				}
				if d.N != ws.rows || d.D != w.d || len(d.Classes) != w.k {
					t.Fatalf("%s: %d×%d, %d classes; want %d×%d, %d", split, d.N, d.D, len(d.Classes), ws.rows, w.d, w.k)
				}
				if got := d.ClassCounts(); !slices.Equal(got, ws.counts) {
					t.Errorf("%s class counts %v, want %v", split, got, ws.counts)
				}
				if w.classes != nil && !slices.Equal(d.Classes, w.classes) {
					t.Errorf("%s classes %q, want %q", split, d.Classes, w.classes)
				}
				if in.Task == Regression && len(d.Target) != d.N {
					t.Errorf("%s: %d targets for %d rows", split, len(d.Target), d.N)
				}
				if len(in.Shape) == 3 {
					lo, hi := slices.Min(d.X), slices.Max(d.X)
					if lo < 0 || hi > 1 || hi == 0 {
						t.Errorf("%s: pixels in [%v, %v], want within [0, 1]", split, lo, hi)
					}
				} else {
					nominal := 0
					for _, f := range d.Features {
						if f.Kind == Nominal {
							nominal++
						}
					}
					if len(d.Features) != d.D || nominal != w.nominal {
						t.Errorf("%s: %d features described, %d nominal; want %d, %d", split, len(d.Features), nominal, d.D, w.nominal)
					}
				}
				t.Logf("%s %s: %d×%d shape %v classes %d counts %v", name, split, d.N, d.D, d.Shape, len(d.Classes), d.ClassCounts())
			}
			check(train, w.train, "train")
			if (test != nil) != (w.test.rows > 0) {
				t.Fatalf("test split present %v, want %v", test != nil, w.test.rows > 0)
			}
			if test != nil {
				check(test, w.test, "test")
			}
		})
	}
}

func checkSVHNMissing(t *testing.T, err error, dir string) {
	t.Helper()
	var me *MissingError
	if !errors.As(err, &me) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("svhn without its files: got %v, want a *MissingError", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"svhn: ",
		filepath.Join(dir, "svhn", "train_32x32.mat"),
		filepath.Join(dir, "svhn", "test_32x32.mat"),
		" not found; download train_32x32.mat (182,040,794 bytes, md5 e26dedcc434d2e4c54c9b2d4a06d8373)",
		"test_32x32.mat (64,275,384 bytes, md5 eb5a983be6a315427106f1b164d9cef3)",
		"from http://ufldl.stanford.edu/housenumbers/",
		"or set --data-dir / HYPERFLAT_DATA",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("svhn error %q lacks %q", msg, want)
		}
	}
	t.Logf("svhn: %v", err)
}

// TestSVHNRealData loads SVHN when someone has put it in the data directory.
func TestSVHNRealData(t *testing.T) {
	dir := sharedData(t)
	if _, err := os.Stat(filepath.Join(dir, "svhn", "train_32x32.mat")); err != nil {
		t.Skip("SVHN is not in the data directory (expected: it is not shipped in shared/data)")
	}
	if testing.Short() {
		t.Skip("SVHN needs about 2.5 GB of memory")
	}
	train, test, err := Load(context.Background(), "svhn", dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("svhn: train %d, test %d, counts %v / %v", train.N, test.N, train.ClassCounts(), test.ClassCounts())
}

func TestLoadChecksumMismatch(t *testing.T) {
	dir := sharedData(t)
	src, err := os.ReadFile(filepath.Join(dir, "openml_hpobench", "kc1", "kc1.arff"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	p := filepath.Join(tmp, "openml_hpobench", "kc1", "kc1.arff")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
		kind string
	}{
		// One digit changed: still a valid ARFF file, so only the hash can tell.
		{"edited", func(b []byte) []byte {
			b = slices.Clone(b)
			i := len(b) - 10
			for b[i] < '0' || b[i] > '8' {
				i--
			}
			b[i]++
			return b
		}, "sha256"},
		// Truncated: the parse fails too, but the size mismatch explains it.
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, "size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(p, tc.edit(src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := Load(context.Background(), "kc1", tmp)
			var ce *ChecksumError
			if !errors.As(err, &ce) || ce.Kind != tc.kind || ce.File != p {
				t.Fatalf("got %v, want a %s mismatch for %s", err, tc.kind, p)
			}
			if tc.kind == "sha256" && (!strings.Contains(err.Error(), "82fa208e6fc2c3b96072401c11c077897f713d8d93f7ad4cda89b8e4636bb5c0") || len(ce.Actual) != 64) {
				t.Errorf("error %q does not name the expected and actual hashes", err)
			}
			t.Log(err)
		})
	}
}

func TestLoadCancelled(t *testing.T) {
	dir := sharedData(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Load(ctx, "mnist", dir); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled load: got %v, want context.Canceled", err)
	}
}

func TestFileLoadersRealData(t *testing.T) {
	dir := sharedData(t)
	ctx := context.Background()
	p := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	d, err := LoadCIFAR10(ctx, p("cifar10/derived_bin/test_batch_first1000.bin"))
	if err != nil || d.N != 1000 || d.Classes[9] != "truck" {
		t.Fatalf("LoadCIFAR10: %v", err)
	}
	d, err = LoadIDX(ctx, p("mnist/t10k-images-idx3-ubyte.gz"), p("mnist/t10k-labels-idx1-ubyte.gz"))
	if err != nil || d.N != 10000 || !slices.Equal(d.Shape, []int{1, 28, 28}) {
		t.Fatalf("LoadIDX: %v", err)
	}
	d, err = LoadSklearnCSV(ctx, p("sklearn/data/boston_house_prices.csv"))
	if err != nil || d.N != 506 || d.Features[12].Name != "LSTAT" || d.Target[0] != 24 {
		t.Fatalf("LoadSklearnCSV boston: %v", err)
	}
	d, err = LoadPMLB(ctx, p("openml_hpobench/pmlb/credit_g.tsv.gz"))
	if err != nil || d.N != 1000 || d.D != 20 {
		t.Fatalf("LoadPMLB credit_g: %v", err)
	}
	for _, f := range []string{"segment-challenge.arff", "segment-test.arff"} {
		d, err = LoadARFF(ctx, p("openml_hpobench/weka/"+f), "class")
		if err != nil || d.D != 19 || len(d.Classes) != 7 {
			t.Fatalf("LoadARFF %s: %v", f, err)
		}
		t.Logf("%s: %d×%d counts %v", f, d.N, d.D, d.ClassCounts())
	}
	d, err = LoadTable(ctx, p("openml_hpobench/blood_transfusion/transfusion.data"), TableOptions{Header: true, Target: "whether2007"})
	if err != nil || d.N != 748 || d.Features[0].Name != "Recency (months)" {
		t.Fatalf("LoadTable blood: %v", err)
	}
	if _, err := LoadARFF(ctx, p("nonexistent.arff"), ""); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadARFF of a missing file: %v", err)
	}
}
