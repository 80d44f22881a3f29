package ahsc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/store"
)

// irisLabels are the names of iris's class codes 0, 1 and 2.
var irisLabels = []string{"setosa", "versicolor", "virginica"}

// irisSizes name petal length's thirds; their sorted order (long, medium, short) is the
// order of the codes 0, 1, 2 that the numeric encoding declares.
var irisSizes = []string{"long", "medium", "short"}

// irisSize is the third a petal length falls in, as a code of irisSizes.
func irisSize(petal float64) int {
	switch {
	case petal >= 5:
		return 0
	case petal >= 3:
		return 1
	}
	return 2
}

// The files writeIris writes.
const (
	irisText  = iota // a CSV whose size and class are words
	irisARFF         // an ARFF of codes, the size declared nominal {0,1,2}
	irisCodes        // a CSV of numbers only
)

// writeIris writes the embedded iris table to path: the four measurements, then a size
// column derived from petal length, then the class. irisARFF is the numeric encoding of
// irisText: a CSV column of numbers is numeric, not one-hot encoded, so the nominal size
// needs an ARFF declaration.
func writeIris(t *testing.T, path string, format int) {
	t.Helper()
	ds, _, err := datasets.Load(context.Background(), "iris", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if format == irisARFF {
		b.WriteString("@relation iris\n")
		for _, f := range []string{"sepal_length", "sepal_width", "petal_length", "petal_width"} {
			fmt.Fprintf(&b, "@attribute %s numeric\n", f)
		}
		b.WriteString("@attribute size {0,1,2}\n@attribute species {0,1,2}\n@data\n")
	} else {
		b.WriteString("sepal_length,sepal_width,petal_length,petal_width,size,species\n")
	}
	for i := range ds.N {
		row := ds.Row(i)
		for _, x := range row {
			fmt.Fprintf(&b, "%v,", x)
		}
		size, class := irisSize(row[2]), ds.Y[i]
		if format == irisText {
			fmt.Fprintf(&b, "%s,%s\n", irisSizes[size], irisLabels[class])
		} else {
			fmt.Fprintf(&b, "%d,%d\n", size, class)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tinyFlags are a run of a user's table small enough for a unit test.
func tinyFlags(path string) map[string]string {
	return map[string]string{"data": path, "repeats": "1", "methods": "random", "budget": "2", "epochs": "3"}
}

func TestTextLabelsAndColumnsMatchTheirNumericEncoding(t *testing.T) {
	textPath := filepath.Join(t.TempDir(), "flowers.csv")
	codePath := filepath.Join(t.TempDir(), "flowers.arff") // the same name: seeds derive from it
	writeIris(t, textPath, irisText)
	writeIris(t, codePath, irisARFF)
	opt := experiments.Options{Seed: 3}
	text := testRun(t, opt, withDefault(tinyFlags(textPath), "target", "species"))
	codes := testRun(t, opt, withDefault(tinyFlags(codePath), "target", "species"))
	// generalization_score is NaN off Bayesmark, and NaN ≠ NaN.
	got, want := withoutColumns(t, text.Table("runs"), "seconds", "generalization_score"), withoutColumns(t, codes.Table("runs"), "seconds", "generalization_score")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("text labels and columns:\n%v\nnumeric codes:\n%v", got, want)
	}
	if acc := text.Table("runs").Float(0, "test_accuracy"); !(acc > 0.5) {
		t.Errorf("test accuracy %v on iris", acc)
	}
	settings := text.Table("settings").String(0, "data")
	for _, s := range []string{"classes (sorted): setosa, versicolor, virginica", "text columns one-hot encoded: size (3 categories)"} {
		if !strings.Contains(settings, s) {
			t.Errorf("settings %q do not say %q", settings, s)
		}
	}
}

func TestContinuousTargetIsRefusedAsRegression(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []struct {
		name   string
		format int
	}{{"flowers.csv", irisText}, {"flowers.arff", irisARFF}} {
		path := filepath.Join(dir, f.name)
		writeIris(t, path, f.format)
		e := Experiment()
		cfg, err := e.Configure(experiments.Quick, withDefault(tinyFlags(path), "target", "petal_width"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Run(context.Background(), experiments.Options{Config: cfg})
		if err == nil || !strings.Contains(err.Error(), "regression") || !strings.Contains(err.Error(), "petal_width") {
			t.Errorf("%s: a continuous target gave %v, want a refusal as regression naming the column", f.name, err)
		}
	}
}

func TestNonUTF8FileName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "na\xffme.csv")
	writeIris(t, path, irisCodes)
	flags := tinyFlags(path)
	flags["methods"] = "ahsc"
	res := testRun(t, experiments.Options{Seed: 1}, flags)
	if got := res.Table("summary").String(0, "dataset"); got != "na\uFFFDme" {
		t.Errorf("dataset %q, want the file's name with its invalid byte replaced", got)
	}
}

func TestResumeRefusesAChangedDataFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeIris(t, "m.csv", irisCodes)
	orig, err := os.ReadFile("m.csv")
	if err != nil {
		t.Fatal(err)
	}
	e := Experiment()
	options := func() experiments.Options {
		t.Helper()
		cfg, err := e.Configure(experiments.Quick, tinyFlags("m.csv")) // relative, as typed
		if err != nil {
			t.Fatal(err)
		}
		return experiments.Options{Seed: 1, Config: cfg}
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reg := experiments.Registry{e}
	sub, err := (&experiments.Runner{Store: st, Experiments: reg}).Start(ctx, e, options(), experiments.Mode{Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := experiments.DecodeOptions(e, sub.Run.Options)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stored.Config.(*Config).Data, filepath.Join(dir, "m.csv"); got != want {
		t.Errorf("stored --data %q, want the absolute path %q", got, want)
	}

	// The first 101 lines: the header and the first two classes.
	lines := strings.SplitAfter(string(orig), "\n")
	if err := os.WriteFile("m.csv", []byte(strings.Join(lines[:101], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = (&experiments.Runner{Store: st, Experiments: reg}).Start(ctx, e, options(), experiments.Mode{Resume: true})
	for _, want := range []string{"the data file " + filepath.Join(dir, "m.csv") + " changed", "sha256", "without --resume"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resuming with a changed file: %v, want an error saying %q", err, want)
		}
	}
	// A worker in another folder reads the stored absolute path, and refuses as well.
	t.Chdir(t.TempDir())
	if _, err := (&experiments.Runner{Store: st, Experiments: reg}).Work(ctx, sub.Run.ID); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Errorf("a worker with a changed file: %v, want a refusal", err)
	}

	t.Chdir(dir)
	if err := os.WriteFile("m.csv", orig, 0o644); err != nil {
		t.Fatal(err)
	}
	status, err := (&experiments.Runner{Store: st, Experiments: reg}).Start(ctx, e, options(), experiments.Mode{Resume: true})
	if err != nil || status.Run.ID != sub.Run.ID || status.Result == nil {
		t.Fatalf("resuming with the original file: %+v, %v; want run %d finished", status, err, sub.Run.ID)
	}
}

func TestRuntimePNGRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "ahsc_runtime_iris.png")); err != nil {
		t.Skip(err)
	}
	if _, err := runtimePNG(dir, "iris", []string{"ahsc"}, []float64{1}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a symlinked figure: %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was overwritten: %q", b)
	}
}
