package ahsc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/store"
)

// storedResult builds a stored ahsc result by hand: a summary row per method of dataset and
// a runs row per method and repeat with the given seconds (a missing repeat has none).
func storedResult(proto, dataset, metric string, params map[string]string, seconds map[string]map[int]float64, methods ...string) *experiments.Result {
	summary := experiments.Table{Name: "summary", Columns: []string{"dataset", "method", "metric", "median", "mean", "n", "best", "paper",
		"generalization_median", "generalization_mean", "seconds"}}
	runs := experiments.Table{Name: "runs", Columns: []string{"dataset", "repeat", "method", "metric", "value", "seconds"}}
	for _, m := range methods {
		summary.Add(dataset, m, metric, 90.0, 91.0, len(seconds[m]), true, paperTable1[dataset][m], 80.0, 81.0, 1.0)
		for r := 0; r < 3; r++ {
			if s, ok := seconds[m][r]; ok {
				runs.Add(dataset, r, m, metric, 90.0, s)
			}
		}
	}
	p := map[string]string{"protocol": proto}
	for k, v := range params {
		p[k] = v
	}
	return &experiments.Result{Experiment: "ahsc", Preset: "paper", Params: p, Tables: []experiments.Table{summary, runs}}
}

// TestTable1Figure2 checks Figure 2's shares against values worked out by hand (AHSC's
// seconds over each method's, repeat by repeat; a repeat a method lacks is left out), that
// the figures are written and linked from table1.md, and that an image run gets its own
// section with its reduced settings instead of a row among the tabular datasets.
func TestTable1Figure2(t *testing.T) {
	iris := storedResult(protocolAuthors, "iris", "score", map[string]string{"adam": "hat"}, map[string]map[int]float64{
		"ahsc":   {0: 10, 1: 20, 2: 30},
		"random": {0: 40, 1: 80, 2: 100}, // 25%, 25%, 30%
		"tpe":    {0: 100, 1: 100},       // 10%, 20%
	}, "ahsc", "random", "tpe")
	mnist := storedResult(protocolAuthors, "mnist", "accuracy%", map[string]string{"image-train": "2000", "image-test": "1000",
		"image-epochs": "10", "budget": "30", "n1": "50", "n2": "10", "repeats": "3"}, map[string]map[int]float64{
		"ahsc": {0: 5, 1: 6, 2: 7}, "random": {0: 50, 1: 60, 2: 70}}, "ahsc", "random")
	noAHSC := storedResult(protocolClean, "wine", "score", nil, map[string]map[int]float64{"random": {0: 1}}, "random")
	t0 := time.Date(2026, 12, 2, 19, 0, 0, 0, time.UTC)
	span := func(from, to time.Duration) store.Span { return store.Span{Start: t0.Add(from), End: t0.Add(to)} }
	runs := []StoredRun{
		// run 1: two cells side by side, then a last one two days later (another session)
		{ID: 1, Result: iris, Builds: []string{"abc blas=gonum", "abc blas=openblas"}, Wall: 48*time.Hour + 30*time.Minute,
			Spans: []store.Span{span(0, 10*time.Minute), span(5*time.Minute, 20*time.Minute), span(48*time.Hour, 48*time.Hour+30*time.Minute)}},
		// run 2 beside run 1's first cells: its 10 minutes add 5 to the grid's
		{ID: 2, Result: mnist, Spans: []store.Span{span(15*time.Minute, 25*time.Minute)}},
		{ID: 3, Result: noAHSC}}

	f, ok := figure2Of(iris, 1, "iris")
	if !ok {
		t.Fatal("iris has no Figure 2 data")
	}
	for k, want := range map[int][]float64{1: {25, 25, 30}, 2: {10, 20}} {
		got := f.shares(k)
		if len(got) != len(want) {
			t.Fatalf("%s: shares %v, want %v", f.methods[k], got, want)
		}
		for i := range want {
			if d := got[i] - want[i]; d > 1e-12 || d < -1e-12 {
				t.Errorf("%s: shares %v, want %v", f.methods[k], got, want)
			}
		}
	}
	if _, ok := figure2Of(noAHSC, 3, "wine"); ok {
		t.Error("a run without AHSC has Figure 2 data")
	}

	dir := t.TempDir()
	paths, err := WriteTable1Figures(dir, runs...)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "figure2_mnist_authors.png"), filepath.Join(dir, "figure2_iris_authors.png")} // Table 1's order
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("figures %v, want %v", paths, want)
	}
	for _, p := range want {
		if b, err := os.ReadFile(p); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s: not a PNG (%v)", p, err)
		}
	}

	vehicle, mnistClean := inProgressRuns(t)
	vehicleOld := vehicle
	vehicleOld.ID, vehicleOld.Done = 5, 100 // superseded by run 8: not described
	md, err := Table1Markdown("hyperflat report --markdown docs/reproduction", []RunProgress{vehicle, mnistClean, vehicleOld}, nil, runs...)
	if err != nil {
		t.Fatal(err)
	}
	s := string(md)
	for _, w := range []string{
		"## Figure 2: run times", "![Figure 2: iris, authors](figure2_iris_authors.png)",
		"| ahsc | 20.0 [10.0, 30.0] | – | 3 |", "| random | 80.0 [40.0, 100.0] | 25% (25–30%) [25, 30%] | 3 |", "| tpe | 100.0 [100.0, 100.0] | 15% (10–20%) [10, 20%] | 2 |",
		"The paper's dataset, vehicle, has no stored run yet.",
		"### Images, protocol authors", "| mnist (**reduced**: 2000 training images, ≤ 10 epochs, 3 repeats) | accuracy% |", "(98.95)",
		"- mnist: run 2, preset paper: training images 2000 (--image-train), test images 1000 (--image-test), epochs per full training ≤ 10 (--image-epochs)",
		"Not yet run: svhn",
		"vehicle (run 8, 9/120 cells, ≈ 20.0 core-hours left; under way: vehicle/r3/bohb with 3 evaluations recorded over 2.5 h of search, vehicle/r5/bohb with 1 evaluation recorded over 2 min of search, superseding run 5).",
		"Submitted to the store, no cell finished yet: mnist (clean: run 9, 0/30 cells).",
		"| 1 | authors | paper | iris | hat | model hyperflat | 50m0s | 48h30m0s | 0s | `abc blas=gonum`, `abc blas=openblas` |",
		"| 2 | authors | paper | mnist | torch | – | 10m0s | 0s | 0s | – |", "| 3 | clean | paper | wine | torch | model hyperflat | – | 0s | 0s | – |",
		"Total: these runs were computed in 55m0s of wall time", "and 48h30m0s summed over the runs from first claim to last completion",
		"Generated by `hyperflat report --markdown docs/reproduction`; do not edit by hand. " + experiments.RegenerationData(true) + " Cells:",
	} {
		if !strings.Contains(s, w) {
			t.Errorf("table1.md lacks %q:\n%s", w, s)
		}
	}
	tabular, _, _ := strings.Cut(s, "## Images")
	if strings.Contains(tabular, "| mnist |") || strings.Contains(tabular, "svhn") {
		t.Errorf("an image dataset among the tabular tables:\n%s", tabular)
	}
	if strings.Contains(s, "figure2_wine") {
		t.Error("table1.md links a figure that was not written")
	}
}

// inProgressRuns are two runs in progress and checks of ParseRunProgress on them.
func inProgressRuns(t *testing.T) (vehicle, mnistClean RunProgress) {
	t.Helper()
	// vehicle: 9 of 120 cells done, 6 AHSC cells of 100 s and 3 BOHB ones of 1,000 s. Repeat
	// 3's BOHB cell has recorded three evaluations, the last ending 9,000 s into its search,
	// repeat 5's one, after 150 s; repeat 4's record cannot be read (it counts as not
	// started), and a done cell's is not shown. BOHB's mean counts the two under way at their
	// records: (3·1,000 + 9,000 + 150)/5 = 2,430 s. Left: 14 AHSC cells at 100 s; repeat 3's
	// BOHB nothing (past the mean), repeat 5's 2,430 − 150 = 2,280 s, 15 other BOHB cells at
	// 2,430 s; 80 others at the mean of all finished cells, 3,600/9 = 400 s: 1,400 + 2,280 +
	// 36,450 + 32,000 = 72,130 s = 20.0 core-hours.
	var cells []CellTime
	for i := range 120 {
		method := []string{"ahsc", "bohb", "random", "tpe", "hebo", "turbo"}[i%6]
		c := CellTime{Key: fmt.Sprintf("vehicle/r%d/%s", i/6, method)}
		if repeat := i / 6; method == "ahsc" && repeat < 6 || method == "bohb" && repeat < 3 {
			c.Done, c.Seconds = true, map[string]float64{"ahsc": 100, "bohb": 1000}[method]
		}
		switch c.Key {
		case "vehicle/r3/bohb":
			c.Record = json.RawMessage(`{"code_version":"abc","progress":[{"at":1200,"epochs":8},{"at":4000.5},{"at":9000,"err":"diverged"}]}`)
		case "vehicle/r4/bohb":
			c.Record = json.RawMessage(`{"code_version":"abc","progress":{"at":1}}`)
		case "vehicle/r5/bohb":
			c.Record = json.RawMessage(`{"code_version":"abc","progress":[{"at":150}]}`)
		case "vehicle/r0/ahsc":
			c.Record = json.RawMessage(`{"code_version":"abc","progress":[{"at":5}]}`)
		}
		cells = append(cells, c)
	}
	vehicle, err := ParseRunProgress(8, []byte(`{"preset":"paper","seed":1,"config":{"dataset":"vehicle","protocol":"authors"}}`), cells)
	if err != nil || vehicle.Done != 9 || vehicle.Cells != 120 || vehicle.Left != 72130 {
		t.Fatalf("vehicle: %+v, %v; want 9/120 done, 72,130 s left", vehicle, err)
	}
	if want := []CellRecord{{Key: "vehicle/r3/bohb", Evaluations: 3, Seconds: 9000}, {Key: "vehicle/r5/bohb", Evaluations: 1, Seconds: 150}}; !slices.Equal(vehicle.UnderWay, want) {
		t.Fatalf("vehicle's cells under way: %+v; want %+v", vehicle.UnderWay, want)
	}
	mnistClean, err = ParseRunProgress(9, []byte(`{"preset":"paper","config":{"dataset":"mnist"}}`), make([]CellTime, 30))
	if err != nil || mnistClean.Protocol != "clean" || mnistClean.Cells != 30 || !math.IsNaN(mnistClean.Left) {
		t.Fatalf("%+v, %v: a run without a protocol is clean; no estimate before a cell finished", mnistClean, err)
	}
	if iris, err := ParseRunProgress(10, []byte(`{"config":{}}`), make([]CellTime, 1)); err != nil || iris.Dataset != "iris" {
		t.Fatalf("%+v, %v: a run without a dataset is iris's", iris, err)
	}
	if _, err := ParseRunProgress(11, []byte(`{`), nil); err == nil {
		t.Error("broken options parsed")
	}
	return vehicle, mnistClean
}

// TestSVHNMissingMessage is the message `hyperflat run ahsc --dataset svhn` prints without
// the data (docs/reproduction/ahsc-protocol.md quotes it): the files, where they are
// expected, where to download them and the command that does.
func TestSVHNMissingMessage(t *testing.T) {
	dir := t.TempDir()
	cfg := defaultConfig(t, experiments.Quick)
	cfg.Dataset = "svhn"
	_, _, err := loadProblems(context.Background(), experiments.Options{DataDir: dir}, cfg)
	if err == nil {
		t.Fatal("svhn loaded from an empty directory")
	}
	for _, w := range []string{filepath.Join(dir, "svhn", "train_32x32.mat"), filepath.Join(dir, "svhn", "test_32x32.mat"),
		"http://ufldl.stanford.edu/housenumbers/", "--data-dir / HYPERFLAT_DATA", "hyperflat data fetch svhn downloads them"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the message lacks %q: %v", w, err)
		}
	}
}

// TestTable1Reading checks the generated reading against counts worked out by hand: scores
// compared by their means and AUCs by their medians, image rows and protocols without AHSC
// left out.
func TestTable1Reading(t *testing.T) {
	tb := experiments.Table{Name: "table1_cells", Columns: []string{"dataset", "protocol", "method", "metric", "mean", "median", "paper", "best", "n",
		"generalization_mean", "generalization_median", "mean_seconds", "preset", "run"}}
	add := func(proto, d, m, metric string, mean, median, paper float64, best bool) {
		tb.Add(d, proto, m, metric, mean, median, paper, best, 20, 0.0, 0.0, 1.0, "paper", 1)
	}
	// iris: our means 80 / 87 / 88 (medians 70 / 99 / 60 must not count), the paper's 91 / 82.98 / 79.83
	add(protocolAuthors, "iris", "ahsc", "score", 80, 70, 91, false)
	add(protocolAuthors, "iris", "random", "score", 87, 99, 82.98, true)
	add(protocolAuthors, "iris", "tpe", "score", 88, 60, 79.83, true)
	// vehicle: our medians .890 / .870 / .880, the paper's .885 / .873 / .883
	add(protocolAuthors, "vehicle", "ahsc", "roc-auc", 0.1, 0.890, 0.885, true)
	add(protocolAuthors, "vehicle", "random", "roc-auc", 0.1, 0.870, 0.873, false)
	add(protocolAuthors, "vehicle", "tpe", "roc-auc", 0.1, 0.880, 0.883, false)
	// a method the paper did not run, with the highest value of all: left out of "highest"
	add(protocolAuthors, "iris", "ahsc-bbo", "score", 99, 99, math.NaN(), true)
	add(protocolAuthors, "vehicle", "ahsc-bbo", "roc-auc", 0.99, 0.99, math.NaN(), true)
	// an image row and a clean run without AHSC: neither counts
	add(protocolAuthors, "mnist", "ahsc", "accuracy%", 99, 99, 98.65, true)
	add(protocolClean, "wine", "random", "score", 80, 80, 76.59, true)

	var b bytes.Buffer
	writeReading(&b, tb)
	s := b.String()
	for _, w := range []string{
		"## Reading",
		"- **Protocol authors** (tabular datasets measured: 2): AHSC is statistically best (bold) on 1 of 2; in the paper's Table 1 it has the highest value of the methods on 2 of these 2.",
		"AHSC's value is above random search's on 1 of 2 (the paper's values: 2 of 2).",
		"The method with our highest value is the paper's highest on 1 of 2.",
		"in Bayesmark score points: ahsc -11.0, random +4.0, tpe +8.2.",
		"in ROC-AUC: ahsc +0.005, random -0.003, tpe -0.003.",
	} {
		if !strings.Contains(s, w) {
			t.Errorf("reading lacks %q:\n%s", w, s)
		}
	}
	if strings.Contains(s, "Protocol clean") {
		t.Errorf("a protocol without AHSC has a reading:\n%s", s)
	}
	var empty bytes.Buffer
	writeReading(&empty, experiments.Table{Columns: tb.Columns})
	if empty.Len() != 0 {
		t.Errorf("no cells, yet a reading: %q", empty.String())
	}
}

// TestTable1ReadingAcrossProtocols checks, against values worked out by hand, the median gap
// to the paper and the dataset farthest from it (shown from three datasets of a metric on), and
// the protocols compared where both measured a dataset, over the methods both ran.
func TestTable1ReadingAcrossProtocols(t *testing.T) {
	tb := experiments.Table{Name: "table1_cells", Columns: []string{"dataset", "protocol", "method", "metric", "mean", "median", "paper", "best", "n",
		"generalization_mean", "generalization_median", "mean_seconds", "preset", "run"}}
	add := func(proto, d, m, metric string, mean, median, paper float64) {
		tb.Add(d, proto, m, metric, mean, median, paper, false, 20, 0.0, 0.0, 1.0, "paper", 1)
	}
	auc := func(proto, d, m string, median, paper float64) { add(proto, d, m, "roc-auc", 0.1, median, paper) }
	// authors: gaps to the paper ahsc +.015, -.021, +.240 (mean .078, median .015), random
	// +.007, +.042, +.259 (mean .103, median .042); phoneme the farthest
	auc(protocolAuthors, "vehicle", "ahsc", 0.90, 0.885)
	auc(protocolAuthors, "vehicle", "random", 0.88, 0.873)
	auc(protocolAuthors, "blood-transfusion", "ahsc", 0.70, 0.721)
	auc(protocolAuthors, "blood-transfusion", "random", 0.75, 0.708)
	auc(protocolAuthors, "phoneme", "ahsc", 0.80, 0.560)
	auc(protocolAuthors, "phoneme", "random", 0.82, 0.561)
	add(protocolAuthors, "iris", "ahsc", "score", 80, 0, 91)
	add(protocolAuthors, "iris", "random", "score", 87, 0, 82.98)
	add(protocolAuthors, "iris", "ahsc-bbo", "score", 99, 0, math.NaN()) // authors only: not compared
	// clean, no blood-transfusion: authors minus clean iris (20+17)/2, vehicle (-.03-.06)/2,
	// phoneme (-.11-.10)/2
	auc(protocolClean, "vehicle", "ahsc", 0.93, 0.885)
	auc(protocolClean, "vehicle", "random", 0.94, 0.873)
	auc(protocolClean, "phoneme", "ahsc", 0.91, 0.560)
	auc(protocolClean, "phoneme", "random", 0.92, 0.561)
	add(protocolClean, "iris", "ahsc", "score", 60, 0, 91)
	add(protocolClean, "iris", "random", "score", 70, 0, 82.98)

	var b bytes.Buffer
	writeReading(&b, tb)
	s := b.String()
	for _, w := range []string{
		"in ROC-AUC: ahsc +0.078 [-0.021, 0.240], random +0.103 [0.007, 0.259].\n  The median over the datasets: ahsc +0.015 [-0.021, 0.240], random +0.042 [0.007, 0.259]; the farthest from the paper, phoneme: ours 0.800–0.820, the paper's 0.560–0.561.",
		"- **The authors' protocol against clean** (tabular datasets measured under both: 3): the authors' value minus the clean one, mean over the methods both ran, " +
			"in Bayesmark score points, iris +18.5; in ROC-AUC, vehicle -0.045, phoneme -0.105.",
	} {
		if !strings.Contains(s, w) {
			t.Errorf("reading lacks %q:\n%s", w, s)
		}
	}
	if n := strings.Count(s, "The median over the datasets"); n != 1 {
		t.Errorf("%d median lines, want 1 (the score line has one dataset, clean's ROC-AUC two):\n%s", n, s)
	}
}

// TestTable1Lookalikes checks that a cell which is not bold yet prints like a bold cell of its
// row (car under the authors' protocol: AHSC's median 0.99999 beside 1) is named under the
// table, while a cell that prints differently, or a bold one, is not.
func TestTable1Lookalikes(t *testing.T) {
	tb := experiments.Table{Name: "table1_cells", Columns: []string{"dataset", "protocol", "method", "metric", "mean", "median", "paper", "best", "n"}}
	add := func(d, m, metric string, mean, median float64, best bool) {
		tb.Add(d, protocolAuthors, m, metric, mean, median, 1.0, best, 20)
	}
	add("car", "ahsc", "roc-auc", 0.99978, 0.999995, false)
	add("car", "random", "roc-auc", 1, 1, true)
	add("car", "tpe", "roc-auc", 0.99999, 1, true)
	add("blood", "ahsc", "roc-auc", 0.7, 0.713, true)
	add("blood", "bohb", "roc-auc", 0.6, 0.638, false) // prints 0.638: no bold cell does
	add("iris", "ahsc", "score", 81.554, 0, false)     // a score shows its mean: 81.55
	add("iris", "tpe", "score", 81.549, 99, true)      // 81.55 too
	var b bytes.Buffer
	layoutRows(&b, tb, protocolAuthors, "## t", func(string) bool { return true }, nil)
	s := b.String()
	want := "\nNot bold though printed like a bold cell of its row (the test compares every repeat's value, not the rounded ones; " +
		"the means to one more place): car, ahsc 1.000 (mean 0.9998; bold: random 1.0000, tpe 1.0000); " +
		"iris, ahsc 81.55 (mean 81.554; bold: tpe 81.549).\n"
	if !strings.Contains(s, want) {
		t.Errorf("table lacks\n%q\n%s", want, s)
	}
	if strings.Contains(s, "blood, bohb") {
		t.Errorf("a cell that prints unlike every bold one is named:\n%s", s)
	}
	var none bytes.Buffer
	tb.Rows = tb.Rows[3:5]
	layoutRows(&none, tb, protocolAuthors, "## t", func(string) bool { return true }, nil)
	if strings.Contains(none.String(), "Not bold though") {
		t.Errorf("no lookalike, yet the note:\n%s", none.String())
	}
}

// TestRunProgressMethodUnderWay: a method none of whose cells finished counts at the longer
// of the mean of every finished cell and its cells' records (two AHSC cells done in 100 s, one
// HEBO cell 500 s into its search, another not started: 500 s left, none for the one under
// way; with its record at 50 s, the mean of all, 100 s, each: 50 + 100); a cell resumed from
// its record by a build that stored its last attempt's seconds only counts for its search's
// seconds, in the estimate and in the run's cell time; and a cell whose search answered repeated
// calls from its record counts for the store's seconds, not the search's.
func TestRunProgressMethodUnderWay(t *testing.T) {
	for _, c := range []struct {
		at   string
		want float64
	}{{"500", 500}, {"50", 150}} {
		cells := []CellTime{
			{Key: "wine/r0/ahsc", Done: true, Seconds: 100}, {Key: "wine/r1/ahsc", Done: true, Seconds: 100},
			{Key: "wine/r0/hebo", Record: json.RawMessage(`{"code_version":"abc","progress":[{"at":` + c.at + `}]}`)},
			{Key: "wine/r1/hebo"},
		}
		p, err := ParseRunProgress(3, []byte(`{"config":{"dataset":"wine"}}`), cells)
		if err != nil || p.Left != c.want || len(p.UnderWay) != 1 {
			t.Errorf("record at %s s: %+v, %v; want %v s left, one cell under way", c.at, p, err, c.want)
		}
	}
	// a cell resumed (by a build that stored the last attempt's time only) finished in 60 s of
	// its last attempt, but its search took 400: the other AHSC cell counts at the mean of 100
	// and 400
	cells := []CellTime{
		{Key: "wine/r0/ahsc", Done: true, Seconds: 100, Attempts: 1, LastAttempt: 100, Output: json.RawMessage(`{"seconds":90}`)},
		{Key: "wine/r1/ahsc", Done: true, Seconds: 60, Attempts: 2, LastAttempt: 60, Output: json.RawMessage(`{"seconds":400}`)},
		{Key: "wine/r2/ahsc"},
	}
	if p, err := ParseRunProgress(3, []byte(`{"config":{"dataset":"wine"}}`), cells); err != nil || p.Left != 250 {
		t.Errorf("a resumed cell: %+v, %v; want 250 s left", p, err)
	}
	// the run's cell time counts the resumed cell the same way, and a failed cell at the
	// store's seconds: 100 + 400 + 7
	cells[2] = CellTime{Key: "wine/r2/ahsc", Seconds: 7}
	if got := CellSeconds(cells); got != 507 {
		t.Errorf("CellSeconds %v, want 507", got)
	}
	// a search that answered repeated calls from its record counts them at their first cost
	// (2,000 s), the store its worker's time: one attempt (100 s), or two whose store seconds
	// (300) already exceed the last one's span (120) — the store's seconds count, 100 + 300
	memo := []CellTime{
		{Key: "wine/r0/bohb", Done: true, Seconds: 100, Attempts: 1, LastAttempt: 100, Output: json.RawMessage(`{"seconds":2000}`)},
		{Key: "wine/r1/bohb", Done: true, Seconds: 300, Attempts: 2, LastAttempt: 120, Output: json.RawMessage(`{"seconds":2000}`)},
	}
	if got := CellSeconds(memo); got != 400 {
		t.Errorf("CellSeconds %v with repeated calls answered, want 400", got)
	}
}

// TestRunProgressNewestBuild: the estimate takes a method's cells finished by the build that
// finished the latest cell, where it has some (BOHB: 100 s, not the older build's 10,000),
// every finished cell of a method it has none of (AHSC: 50 s), and the newest build's mean for a
// method nothing finished (HEBO: 100 s): 250 s left; every finished cell counts as done.
func TestRunProgressNewestBuild(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	cells := []CellTime{
		{Key: "wine/r0/bohb", Done: true, Seconds: 10000, Attempts: 1, Build: "old", Finished: t0},
		{Key: "wine/r1/bohb", Done: true, Seconds: 100, Attempts: 1, Build: "new", Finished: t1},
		{Key: "wine/r0/ahsc", Done: true, Seconds: 50, Attempts: 1, Build: "old", Finished: t0.Add(time.Minute)},
		{Key: "wine/r2/bohb"}, {Key: "wine/r1/ahsc"}, {Key: "wine/r0/hebo"},
	}
	p, err := ParseRunProgress(3, []byte(`{"config":{"dataset":"wine"}}`), cells)
	if err != nil || p.Left != 250 || p.Done != 3 {
		t.Errorf("%+v, %v; want 250 s left, 3 cells done", p, err)
	}
}
