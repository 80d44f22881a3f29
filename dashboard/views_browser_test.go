package dashboard

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/store"
)

// Real runs, exported into docs/reproduction/runs: an ahsc run on MNIST (6 methods × 5
// repeats, 730 evaluations, 250 screenings) twice, and a small weightdecay run.
const (
	ahscExport        = "../docs/reproduction/runs/ahsc-bd34fab8a4bda70e.jsonl.gz"
	ahscOtherExport   = "../docs/reproduction/runs/ahsc-2f7b819d6f36a485.jsonl.gz"
	weightdecayExport = "../docs/reproduction/runs/weightdecay-f8d74ee6283e8b8d.jsonl.gz"
	// beyond.md's study on wine (run ahsc --whitebox): every trial's white-box record.
	whiteboxExport = "../docs/reproduction/runs/ahsc-a68a645e799de8d7.jsonl.gz"
)

// exported is one cell of an export, as far as a replay needs it.
type exported struct {
	Index   int             `json:"index"`
	Key     string          `json:"key"`
	Seed    string          `json:"seed"`
	Config  json.RawMessage `json:"config"`
	Status  string          `json:"status"`
	Seconds float64         `json:"seconds"`
	Output  json.RawMessage `json:"output"`
	Metrics json.RawMessage `json:"metrics"`
	History json.RawMessage `json:"history"`
}

// readExport reads an export's header (experiment, options) and cells.
func readExport(t testing.TB, path string) (experiment string, options json.RawMessage, cells []exported) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if experiment == "" {
			var h struct {
				Experiment string          `json:"experiment"`
				Options    json.RawMessage `json:"options"`
			}
			if err := json.Unmarshal(line, &h); err != nil {
				t.Fatal(err)
			}
			experiment, options = h.Experiment, h.Options
			continue
		}
		var c exported
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		cells = append(cells, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return experiment, options, cells
}

// importExport imports an export file into st.
func importExport(t testing.TB, st *store.Store, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := st.ImportRun(context.Background(), f); err != nil {
		t.Fatalf("import %s: %v", path, err)
	}
}

// replay creates a run with an export's plan; complete then finishes its cells one by one with
// the export's outcomes, as a worker would.
func replay(t testing.TB, st *store.Store, path, identity string) (id int64, complete func(n int, pause time.Duration) error) {
	t.Helper()
	ctx := context.Background()
	exp, opts, cells := readExport(t, path)
	specs := make([]store.CellSpec, len(cells))
	for i, c := range cells {
		seed, _ := strconv.ParseUint(c.Seed, 10, 64)
		specs[i] = store.CellSpec{Index: c.Index, Key: c.Key, Seed: seed, Config: c.Config}
	}
	r, err := st.CreateRun(ctx, store.RunSpec{Identity: identity, Experiment: exp, Options: opts, Cells: specs})
	if err != nil {
		t.Fatal(err)
	}
	return r.ID, func(n int, pause time.Duration) error {
		for range n {
			l, err := st.Claim(ctx, store.ClaimOptions{Runs: []int64{r.ID}, Worker: "replay/1"})
			if err != nil || l == nil {
				return fmt.Errorf("claim: %v, %v", l, err)
			}
			c := cells[l.Index]
			var m map[string]float64
			json.Unmarshal(c.Metrics, &m) // NaN metrics are stored as strings: left out
			if err := st.Complete(ctx, l, store.Outcome{Output: c.Output, Metrics: m, History: c.History, Seconds: c.Seconds}); err != nil {
				return err
			}
			time.Sleep(pause)
		}
		return nil
	}
}

// shotsDir is where the views' screenshots go: $HYPERFLAT_SCREENSHOTS, else as artifacts.
func shotsDir(t *testing.T) string {
	if dir := os.Getenv("HYPERFLAT_SCREENSHOTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return artifacts(t)
}

// chartPoints is a JavaScript expression: the number of data points of the named chart's
// series, as ECharts holds them (0 for a chart not drawn).
func chartPoints(name string) string {
	return fmt.Sprintf(`(() => { const c = window.hyperflatCharts && window.hyperflatCharts[%q]; if (!c) return 0;
		return c.getOption().series.reduce((a, s) => a + (s.data ? s.data.length : 0), 0); })()`, name)
}

// TestBrowserViews drives headless Chromium over the DevTools protocol against serve while a
// worker fills a run with the cells of a real ahsc export: the page shows the finished cells
// and a growing optimization history before the run ends, without a reload; then every view
// is drawn with data points, the importances are the same on a second load, every request
// stays on the server and none fails, and a screenshot of each view is written.
func TestBrowserViews(t *testing.T) {
	bin, ok := chromium()
	if !ok {
		t.Skip("no chromium binary on PATH (Debian: apt-get install chromium; .ci/run installs it)")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "views.db")
	w, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	importExport(t, w, ahscOtherExport)   // run 1
	importExport(t, w, weightdecayExport) // run 2
	importExport(t, w, whiteboxExport)    // run 3
	live, complete := replay(t, w, ahscExport, "replayed")
	const total = 30
	if err := complete(3, 0); err != nil {
		t.Fatal(err)
	}
	ts, _ := serve(t, path, Config{Poll: 100 * time.Millisecond})
	c := startCDP(t, bin)
	page := fmt.Sprintf("%s/runs/%d", ts.URL, live)
	c.navigate(page)
	c.eval(`window.hyperflatLoaded = "first"`, nil)
	views := `document.getElementById("views")`
	c.truthy("the views drawn", views+`.dataset.drawn >= 1 && `+chartPoints("history")+` > 0`, 20*time.Second)
	repeats := func() int {
		var n string
		c.eval(`document.getElementById("chart-history").dataset.repeats || "0"`, &n)
		k, _ := strconv.Atoi(n)
		return k
	}
	liveCells := func() int {
		var n int
		c.eval(`[...document.querySelectorAll("#live-table tbody tr")].reduce((a, tr) => a + (Number(tr.cells[2] && tr.cells[2].textContent) || 0), 0)`, &n)
		return n
	}
	// The page does not wait for the trials' first parse: the event stream brings them.
	c.waitUntil("the partial results of the 3 finished cells", 10*time.Second, func() bool { return liveCells() == 3 })
	first, firstCells := repeats(), liveCells()

	// The worker finishes the other cells while the page is open.
	worker := make(chan error, 1)
	go func() { worker <- complete(total-3, 150*time.Millisecond) }()
	var grewAt int
	c.waitUntil("the history and the partial results to grow before the run ends", 20*time.Second, func() bool {
		var done int
		c.eval(`Number(document.getElementById("done").textContent)`, &done)
		if repeats() > first && liveCells() > firstCells && done < total {
			grewAt = done
			return true
		}
		return false
	})
	t.Logf("history grew from %d to %d repeats at %d of %d cells", first, repeats(), grewAt, total)
	c.screenshot("#headline", filepath.Join(shotsDir(t), "live-midrun.png"))
	if err := <-worker; err != nil {
		t.Fatal(err)
	}
	c.truthy("the last cell on the page", fmt.Sprintf(`document.getElementById("done").textContent === "%d" && `+
		`document.getElementById("chart-history").dataset.repeats === "%d"`, total, total), 20*time.Second)
	var loaded string
	c.eval(`window.hyperflatLoaded`, &loaded)
	if loaded != "first" {
		t.Error("the page reloaded while the run computed")
	}

	// Every view of the run has data points.
	c.truthy("the screenings view", `!document.getElementById("box-screenings").hidden && `+chartPoints("screenings")+` > 0`, 10*time.Second)
	var slices []string
	c.eval(`Object.keys(window.hyperflatCharts).filter((k) => k.startsWith("slice:"))`, &slices)
	if len(slices) < 3 {
		t.Errorf("slice views %q, want one per hyperparameter of the MNIST space", slices)
	}
	for _, name := range append([]string{"history", "importance", "parallel", "screenings"}, slices...) {
		var n int
		c.eval(chartPoints(name), &n)
		if n == 0 {
			t.Errorf("view %s has no data points", name)
		}
	}
	var rows int
	c.eval(`document.querySelectorAll("#trials-table tbody tr").length`, &rows)
	if rows == 0 {
		t.Error("the trial table has no rows")
	}
	var rho string
	c.eval(`document.getElementById("note-screenings").textContent`, &rho)
	if !strings.Contains(rho, "Spearman ρ(score, test metric) = ") {
		t.Errorf("the screening view prints no Spearman ρ: %q", rho)
	}
	// Sorting the trial table asks the server again.
	c.eval(`[...document.querySelectorAll("#trials-table th")].find((th) => th.textContent === "val_metric").click()`, nil)
	c.truthy("the trial table sorted by val_metric", `document.querySelector("#trials-table th.sorted")`, 10*time.Second)

	// A tooltip shows on hover.
	c.hover("#chart-history")
	c.truthy("the history's tooltip", `[...document.querySelectorAll("#chart-history div")].some((d) => d.style.display !== "none" && d.textContent.includes("random"))`, 5*time.Second)
	c.screenshot("#chart-history", filepath.Join(shotsDir(t), "history-tooltip.png"))

	// The importances are the same on a second load.
	importance := `JSON.stringify([window.hyperflatCharts.importance.getOption().yAxis[0].data, window.hyperflatCharts.importance.getOption().series[0].data])`
	var imp1, imp2 string
	c.eval(importance, &imp1)
	dir := shotsDir(t)
	for _, shot := range []struct{ css, file string }{
		{"#headline", "live-partial-results.png"}, {"#chart-history", "history.png"}, {"#chart-importance", "importance.png"},
		{"#chart-parallel", "parallel.png"}, {"#slices", "slices.png"}, {"#box-screenings", "screenings.png"},
		{".scroll.trials", "trials.png"},
	} {
		c.screenshot(shot.css, filepath.Join(dir, shot.file))
	}
	c.navigate(page)
	c.truthy("the views drawn again", views+`.dataset.drawn >= 1 && `+chartPoints("importance")+` > 0`, 20*time.Second)
	c.eval(importance, &imp2)
	if imp1 != imp2 || len(imp1) < 20 {
		t.Errorf("importance differs between two loads:\n%s\n%s", imp1, imp2)
	}

	// weightdecay: learning curves and Figure 4.3.
	c.navigate(fmt.Sprintf("%s/runs/2", ts.URL))
	c.truthy("the weightdecay views", views+`.dataset.drawn >= 1 && `+chartPoints("gap")+` > 0 && `+chartPoints("curves")+` > 0`, 20*time.Second)
	c.eval(`document.getElementById("note-gap").textContent`, &rho)
	if !strings.Contains(rho, "Spearman ρ(regularizer, gap) = ") {
		t.Errorf("Figure 4.3 prints no Spearman ρ: %q", rho)
	}
	c.screenshot("#box-gap", filepath.Join(dir, "figure43.png"))
	c.screenshot("#box-curves", filepath.Join(dir, "curves.png"))

	// A --whitebox run: each white-box signal against the test metric.
	c.navigate(fmt.Sprintf("%s/runs/3", ts.URL))
	c.truthy("the signals view", views+`.dataset.drawn >= 1 && `+chartPoints("signal:whitebox_mu")+` > 0 && `+
		chartPoints("signal:whitebox_eq7")+` > 0`, 20*time.Second)
	var signals string
	c.eval(`[...document.querySelectorAll("#signals .chart")].length + " " + document.getElementById("note-signals").textContent`, &signals)
	if !strings.HasPrefix(signals, "4 ") || !strings.Contains(signals, "Spearman's ρ") {
		t.Errorf("the signals view: %q, want 4 charts and the note", signals)
	}
	c.screenshot("#box-signals", filepath.Join(dir, "signals.png"))

	// Two runs side by side.
	c.navigate(fmt.Sprintf("%s/compare?a=1&b=%d", ts.URL, live))
	c.truthy("the comparison drawn", chartPoints(fmt.Sprintf("history:%d", live))+` > 0 && `+chartPoints("importance:1")+` > 0`, 20*time.Second)
	c.screenshot("main", filepath.Join(dir, "compare.png"))

	c.mu.Lock()
	defer c.mu.Unlock()
	for _, u := range c.requests {
		if !strings.HasPrefix(u, ts.URL+"/") && u != "about:blank" {
			t.Errorf("the page requested %s, outside the server", u)
		}
	}
	if len(c.requests) < 10 {
		t.Errorf("only %d requests seen: the DevTools network log is not working", len(c.requests))
	}
	for _, e := range c.errors {
		t.Errorf("the page logged an error: %s", e)
	}
	for _, f := range c.failed {
		t.Errorf("request failed: %s", f)
	}
	t.Logf("%d requests, all to %s; screenshots in %s", len(c.requests), ts.URL, dir)
}

// TestBrowserSingleEvaluationHistory: a run of one evaluation per method (freedman's fits)
// draws its history as visible points with a note saying there is no history, not as lines of
// one point each, which ECharts draws as nothing.
func TestBrowserSingleEvaluationHistory(t *testing.T) {
	bin, ok := chromium()
	if !ok {
		t.Skip("no chromium binary on PATH (Debian: apt-get install chromium; .ci/run installs it)")
	}
	url, _ := serveFreedman(t)
	c := startCDP(t, bin)
	c.navigate(url)
	c.truthy("the history chart drawn", chartPoints("history")+" > 0", 20*time.Second)
	var types string
	c.eval(`window.hyperflatCharts["history"].getOption().series.map((s) => s.type).join(",")`, &types)
	if types != "scatter,scatter" {
		t.Errorf("history series types %q, want one scatter per method", types)
	}
	var note string
	c.eval(`document.getElementById("chart-history").closest("section, div.view, div").parentElement.textContent`, &note)
	if !strings.Contains(note, "One evaluation per method, so no search history") {
		t.Errorf("the history's note does not say there is no history: %.300q", note)
	}
}
