package dashboard

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/store"
)

// searchStore is a store with one finished ahsc-shaped run of n cells (2 datasets × 6 methods
// × repeats), each a search of evals evaluations over 4 hyperparameters, as a paper-scale run
// stores them; the values are drawn from a seeded stream. The cells are written by SQL in one
// transaction, since completing them one by one would dominate the benchmark's setup.
func searchStore(b testing.TB, n, evalsPerCell int) (path string, run int64) {
	b.Helper()
	ctx := context.Background()
	path = filepath.Join(b.TempDir(), "search.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	methods := []string{"ahsc", "random", "tpe", "bohb", "hebo", "turbo"}
	cells := make([]store.CellSpec, n)
	for i := range cells {
		ds, m, r := []string{"segment", "vehicle"}[i%2], methods[i/2%6], i/12
		cells[i] = store.CellSpec{Index: i, Key: fmt.Sprintf("%s/r%d/%s", ds, r, m), Seed: uint64(i),
			Config: json.RawMessage(fmt.Sprintf(`{"dataset":%q,"hidden":false,"method":%q,"repeat":%d}`, ds, m, r))}
	}
	created, err := st.CreateRun(ctx, store.RunSpec{Identity: "search", Experiment: "ahsc", Options: json.RawMessage(`{"preset":"paper","seed":1}`), Cells: cells})
	st.Close()
	if err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	stmt, err := tx.Prepare(`UPDATE cells SET status = 'done', worker = 'host/1', attempts = 1, started = 1000 + idx,
		finished = 1001 + idx, seconds = 1.5, output = $1, metrics = $2 WHERE run_id = $3 AND idx = $4`)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		var out strings.Builder
		out.WriteString(`{"evaluations":[`)
		for e := range evalsPerCell {
			if e > 0 {
				out.WriteString(",")
			}
			lr, width := rng.Float64()*4-5, 16+rng.IntN(496)
			acc := 0.9 - 0.02*(lr+3)*(lr+3) + 0.05*rng.Float64()
			fmt.Fprintf(&out, `{"config":"learning_rate_init=%.6g hidden_layer_sizes=%d alpha=%.6g activation=%s","fidelity":1,"val_metric":%.6g,"val_loss":%.6g,"test_metric":%.6g}`,
				math.Pow(10, lr), width, math.Pow(10, rng.Float64()*5-6), []string{"relu", "tanh"}[rng.IntN(2)], acc, 1-acc, acc-0.01)
		}
		out.WriteString(`]}`)
		if _, err := stmt.Exec(out.String(), `{"value":0.9,"test_metric":0.9}`, created.ID, i); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return path, created.ID
}

// benchRead GETs url and checks the answer.
func benchRead(b *testing.B, url string) int {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return len(body)
}

// BenchmarkLargeRun measures a 10,000-cell run (30 evaluations a cell: 300,000 trials) on
// loopback: the run page and its views' JSON from a new server (cold: every cell read and
// parsed), the page from a warm one, and each view computed from the parsed trials without
// the memo.
func BenchmarkLargeRun(b *testing.B) {
	const n, evalsPerCell = 10000, 30
	path, id := searchStore(b, n, evalsPerCell)
	st, err := store.OpenReadOnly(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	newServer := func() (*Server, *httptest.Server) {
		s, err := New(st, Config{CacheDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		return s, httptest.NewServer(s)
	}
	page := fmt.Sprintf("/runs/%d", id)
	views := []string{"views", "history", "importance", "slices", "trials"}
	b.Run("page-cold", func(b *testing.B) {
		for b.Loop() {
			s, ts := newServer()
			benchRead(b, ts.URL+page)
			ts.Close()
			s.Close()
		}
	})
	b.Run("page-and-views-cold", func(b *testing.B) {
		for b.Loop() {
			s, ts := newServer()
			benchRead(b, ts.URL+page)
			for _, v := range views {
				benchRead(b, fmt.Sprintf("%s/api/runs/%d/%s", ts.URL, id, v))
			}
			ts.Close()
			s.Close()
		}
	})
	s, ts := newServer()
	defer func() { ts.Close(); s.Close() }()
	b.Run("page-warm", func(b *testing.B) {
		size := benchRead(b, ts.URL+page) // b.Loop times what follows
		for b.Loop() {
			size = benchRead(b, ts.URL+page)
		}
		b.ReportMetric(float64(size), "bytes/page")
	})
	r, err := s.sharedRun(context.Background(), id)
	if err != nil {
		b.Fatal(err)
	}
	sum, err := s.cellSummary(context.Background(), r, true)
	if err != nil {
		b.Fatal(err)
	}
	a := sum.analysis
	q, err := a.parseQuery(url.Values{})
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name string
		f    func() any
	}{
		{"history", func() any { return a.history(q) }},
		{"importance", func() any { return a.importance(q) }},
		{"slices", func() any { return a.slices(q) }},
		{"trials-sorted", func() any { v, _ := a.trials(q, url.Values{"sort": {"val_metric"}}); return v }},
		{"progress", func() any { return a.computeProgress() }},
	} {
		b.Run("view-"+v.name, func(b *testing.B) {
			var size int
			for b.Loop() {
				out, err := json.Marshal(v.f())
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
			}
			b.ReportMetric(float64(size), "bytes/answer")
		})
	}
}
