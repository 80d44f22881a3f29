package dashboard

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/store"
)

// largeStore is a store with one run of n cells in every state: most done by 8 workers, one in
// a hundred failed, ten running, the rest pending. The states are set by one SQL statement
// each, since claiming and completing 10,000 cells one by one would take the test's budget.
func largeStore(t *testing.T, n int) (path string, run int64) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), "large.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	cells := make([]store.CellSpec, n)
	for i := range cells {
		cells[i] = store.CellSpec{Index: i, Key: fmt.Sprintf("d%d/r%d/m%d", i%12, i/12, i%10), Seed: uint64(i), Config: json.RawMessage(`{"lr":0.1}`)}
	}
	r, err := st.CreateRun(ctx, store.RunSpec{Identity: "large", Experiment: "ahsc", Options: json.RawMessage(`{"preset":"paper","seed":1}`), Cells: cells})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := float64(time.Now().Unix())
	for _, q := range []string{
		`UPDATE cells SET status = 'done', worker = 'host' || (idx % 8) || '/1', attempts = 1, first_claimed = $1 + idx,
			started = $1 + idx, finished = $1 + idx + 1, seconds = 1.5, output = '{"value":0.5}', metrics = '{"value":0.5}'
			WHERE idx < $2`,
		`UPDATE cells SET status = 'failed', metrics = NULL, output = NULL, error = 'training diverged at step ' || idx WHERE idx % 100 = 7 AND idx < $2`,
		`UPDATE cells SET status = 'running', worker = 'host0/1', attempts = 1, started = $1, finished = NULL WHERE idx >= $2 AND idx < $2 + 10`,
	} {
		if _, err := db.Exec(q, now, n*9/10); err != nil {
			t.Fatal(err)
		}
	}
	return path, r.ID
}

// TestLargeRun: the pages of a run of 10,000 cells answer promptly, with the failures
// paginated and the workers aggregated. The budget is generous: it catches a page that lists
// every cell, not a slow machine.
func TestLargeRun(t *testing.T) {
	const n = 10000
	path, id := largeStore(t, n)
	ts, _ := serve(t, path, Config{})
	failed := n * 9 / 10 / 100
	for _, c := range []struct {
		path string
		want []string
	}{
		{"/", []string{fmt.Sprintf("%d/%d", n*9/10-failed, n)}},
		{fmt.Sprintf("/runs/%d", id), []string{"page 1 of 2", "training diverged at step 7<", "host7/1", fmt.Sprintf("(%d)", failed)}},
		{fmt.Sprintf("/runs/%d?page=2", id), []string{"page 2 of 2", fmt.Sprintf("training diverged at step %d<", (failed-1)*100+7)}},
		{fmt.Sprintf("/api/runs/%d", id), []string{fmt.Sprintf(`"failed_total": %d`, failed), `"running": 10`}},
		{fmt.Sprintf("/api/runs/%d?page=2", id), []string{`"page": 2`}},
	} {
		start := time.Now()
		resp, body := get(t, ts.URL+c.path)
		took := time.Since(start)
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %s", c.path, resp.Status)
		}
		if took > 2*time.Second {
			t.Errorf("GET %s took %v for a run of %d cells; want under 2s", c.path, took, n)
		}
		if len(body) > 200_000 {
			t.Errorf("GET %s: %d bytes; a page should not grow with the cells", c.path, len(body))
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: no %q in\n%.3000s", c.path, w, body)
			}
		}
		t.Logf("GET %s: %v, %d bytes", c.path, took, len(body))
	}
	_, body := get(t, fmt.Sprintf("%s/runs/%d", ts.URL, id))
	if rows := strings.Count(body, `<td class="reason">`); rows != failuresPerPage {
		t.Errorf("the first page lists %d failures, want %d", rows, failuresPerPage)
	}
	start := time.Now()
	ev := firstEvent(t, fmt.Sprintf("%s/events?run=%d", ts.URL, id))
	if ev.name != "run" || time.Since(start) > 2*time.Second {
		t.Errorf("first run event: %q after %v", ev.name, time.Since(start))
	}
	var d runDetail
	if err := json.Unmarshal([]byte(ev.data), &d); err != nil || len(d.Workers) != 8 || d.Workers[0].Done+d.Workers[0].Failed+d.Workers[0].Running != n*9/10/8+10 {
		t.Errorf("workers of the event: %+v, %v", d.Workers, err)
	}
}
