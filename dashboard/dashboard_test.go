package dashboard

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/all"
	"github.com/hyperflat/hyperflat/store"
)

// freedman is a stored tiny freedman run, made once for the package's tests.
var freedman struct {
	once sync.Once
	dir  string
	path string // the SQLite file
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if freedman.dir != "" {
		os.RemoveAll(freedman.dir)
	}
	os.Exit(code)
}

// freedmanStore returns the file of a store holding one finished freedman run (validation
// and BIC, quick preset): two cells of a second or so.
func freedmanStore(t *testing.T) string {
	t.Helper()
	freedman.once.Do(func() {
		ctx := context.Background()
		if freedman.dir, freedman.err = os.MkdirTemp("", "dashboard-test-*"); freedman.err != nil {
			return
		}
		freedman.path = filepath.Join(freedman.dir, "hyperflat.db")
		st, err := store.Open(ctx, freedman.path)
		if err != nil {
			freedman.err = err
			return
		}
		defer st.Close()
		reg := all.Experiments()
		e, _ := reg.Lookup("freedman")
		cfg, err := e.Configure(experiments.Quick, map[string]string{"methods": "validation,bic"})
		if err != nil {
			freedman.err = err
			return
		}
		opt := experiments.Options{Preset: experiments.Quick, Seed: 3, Workers: 2, Config: cfg}
		_, freedman.err = (&experiments.Runner{Store: st, Experiments: reg, Workers: 2}).Start(ctx, e, opt, experiments.Mode{})
	})
	if freedman.err != nil {
		t.Fatalf("building the freedman store: %v", freedman.err)
	}
	return freedman.path
}

// serve starts a Server over the store at path, opened read-only.
func serve(t *testing.T, path string, cfg Config) (*httptest.Server, *store.Store) {
	t.Helper()
	st, err := store.OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.CacheDir = t.TempDir()
	s, err := New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		s.Close() // before ts.Close, which waits for the event streams
		ts.Close()
		st.Close()
	})
	return ts, st
}

func get(t *testing.T, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// storedResult is the run's result as the store holds it.
func storedResult(t *testing.T, st *store.Store, run int64) *experiments.Result {
	t.Helper()
	b, ok, err := st.Result(context.Background(), run)
	if err != nil || !ok {
		t.Fatalf("result of run %d: %v, %v", run, ok, err)
	}
	res, err := experiments.UnmarshalStoredResult(b)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestEndpoints: every route answers with its content type and shows what the store holds;
// paths outside the routes are 404.
func TestEndpoints(t *testing.T) {
	ts, st := serve(t, freedmanStore(t), Config{})
	runs, err := st.Runs(context.Background())
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v, %v", runs, err)
	}
	run := runs[0]
	res := storedResult(t, st, run.ID)
	summary := res.Table("summary")
	mse := experiments.FormatCell(summary.Rows[0][summary.Column("test_mse")])
	var report bytes.Buffer
	if err := res.Write(&report, "table"); err != nil {
		t.Fatal(err)
	}
	figs, err := all.Experiments().Plots(res, t.TempDir())
	if err != nil || len(figs) == 0 {
		t.Fatalf("freedman plots: %v, %v", figs, err)
	}
	png := filepath.Base(figs[0])
	base := fmt.Sprintf("/runs/%d", run.ID)

	for _, c := range []struct {
		path, ctype string
		want        []string
	}{
		{"/", "text/html", []string{base, "freedman", "finished", fmt.Sprintf("%d/%d", run.Done, run.Cells), "preset=quick seed=3"}},
		{"/api/runs", "application/json", []string{`"experiment": "freedman"`, fmt.Sprintf(`"done": %d`, run.Done)}},
		{base, "text/html", []string{"<b>summary</b>", "<td>" + mse + "</td>", "<img src=\"" + base + "/figures/" + png, "distribution_", "tables/summary.csv"}},
		{base + "?page=7", "text/html", []string{"No cell has failed."}},
		{"/api/runs/" + fmt.Sprint(run.ID), "application/json", []string{`"has_result": true`, `"name": "summary"`}},
		{base + "/report.txt", "text/plain", []string{report.String()}},
		{base + "/tables/summary.csv", "text/csv", []string{strings.Join(summary.Columns, ",") + "\n", "," + mse + "\n"}},
		{base + "/tables/summary.json", "application/json", []string{`"name": "summary"`, `"test_mse"`}},
		{base + "/tables/path_bic.csv", "text/csv", []string{"repeat,step,feature,objective,test_mse\n"}},
		{base + "/figures/" + png, "image/png", []string{"\x89PNG"}},
		{base + "/figures/distribution_" + experiments.FormatCell(summary.Rows[0][0]) + ".svg", "image/svg+xml", []string{"<svg", "validation", "bic"}},
		{"/static/style.css", "text/css", []string{"body"}},
		{"/static/live.js", "text/javascript", []string{"EventSource"}},
		{"/favicon.ico", "image/svg+xml", []string{"<svg"}},
		{"/api/runs/1/views", "application/json", []string{`"experiment":"freedman"`, `"objective":"test_mse"`}},
		{"/api/runs/1/history", "application/json", []string{`"methods":[{"method":"validation"`}},
		{"/api/runs/1/trials?sort=test_mse", "application/json", []string{`"columns":["cell","key","method"`, `"test_mse"`}},
		{"/compare?a=1&b=1", "text/html", []string{"Run 1 and run 1 side by side", `data-view="history"`}},
	} {
		resp, body := get(t, ts.URL+c.path)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), c.ctype) {
			t.Errorf("GET %s: %s, %s; want 200, %s", c.path, resp.Status, resp.Header.Get("Content-Type"), c.ctype)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: no %q in\n%.2000s", c.path, w, body)
			}
		}
	}

	// The event stream's first event is the runs list.
	ev := firstEvent(t, ts.URL+"/events")
	if ev.name != "runs" || !strings.Contains(ev.data, `"experiment":"freedman"`) {
		t.Errorf("first event %+v, want the runs list", ev)
	}

	for _, path := range []string{"/nope", "/runs", "/runs/999", "/runs/x", "/runs/1/tables/nope.csv", "/runs/1/tables/summary.xml",
		"/runs/1/figures/nope.png", "/api/runs/999", "/static/nope.css", "/runs/1/extra/deep", "/events/x", "/api/runs/1/nope", "/api/runs/999/history"} {
		if resp, _ := get(t, ts.URL+path); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", path, resp.Status)
		}
	}
}

type event struct{ name, data string }

// events reads server-sent events from url into the returned channel until ctx ends.
func events(ctx context.Context, t *testing.T, url string) <-chan event {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		resp.Body.Close()
		t.Fatalf("GET %s: %s, %s; want 200, text/event-stream", url, resp.Status, ct)
	}
	ch := make(chan event)
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<22)
		var ev event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev.name != "":
				select {
				case ch <- ev:
				case <-ctx.Done():
					return
				}
				ev = event{}
			}
		}
	}()
	return ch
}

func firstEvent(t *testing.T, url string) event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, ok := <-events(ctx, t, url)
	if !ok {
		t.Fatalf("%s: no event", url)
	}
	return ev
}

// TestLiveUpdates: a client listening to the event streams sees a run submitted, and a
// worker's claims and completions, while they happen.
func TestLiveUpdates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "live.db")
	w, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ts, _ := serve(t, path, Config{Poll: 20 * time.Millisecond})

	runs := events(ctx, t, ts.URL+"/events")
	if ev := <-runs; ev.name != "runs" || ev.data != "[]" {
		t.Fatalf("first event of an empty store: %+v", ev)
	}
	cells := []store.CellSpec{{Index: 0, Key: "a"}, {Index: 1, Key: "b"}, {Index: 2, Key: "c"}}
	run, err := w.CreateRun(ctx, store.RunSpec{Identity: "live", Experiment: "freedman", Options: json.RawMessage(`{"preset":"quick","seed":1}`), Cells: cells})
	if err != nil {
		t.Fatal(err)
	}
	var views []runView
	waitFor(t, runs, "the new run", func(ev event) bool {
		views = nil
		json.Unmarshal([]byte(ev.data), &views)
		return len(views) == 1 && views[0].ID == run.ID && views[0].Cells == 3
	})

	one := events(ctx, t, fmt.Sprintf("%s/events?run=%d", ts.URL, run.ID))
	for i := range 2 {
		l, err := w.Claim(ctx, store.ClaimOptions{Runs: []int64{run.ID}, Worker: "box/7"})
		if err != nil || l == nil {
			t.Fatalf("claim: %v, %v", l, err)
		}
		waitFor(t, one, fmt.Sprintf("cell %d running", i), func(ev event) bool {
			var d runDetail
			json.Unmarshal([]byte(ev.data), &d)
			return d.Run.Running == 1 && d.Run.Done == i && len(d.Workers) == 1 && d.Workers[0].Name == "box/7" && d.Workers[0].Running == 1
		})
		if err := w.Complete(ctx, l, store.Outcome{Output: json.RawMessage(`{}`), Seconds: 0.5}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, one, fmt.Sprintf("cell %d done", i), func(ev event) bool {
			var d runDetail
			json.Unmarshal([]byte(ev.data), &d)
			return d.Run.Done == i+1 && d.Run.Running == 0 && d.Workers[0].Done == i+1
		})
	}
	waitFor(t, runs, "2 of 3 done in the runs list", func(ev event) bool {
		views = nil
		json.Unmarshal([]byte(ev.data), &views)
		return len(views) == 1 && views[0].Done == 2 && views[0].Status == "running"
	})
	// The polling endpoint agrees with the stream.
	if _, body := get(t, ts.URL+"/api/runs"); !strings.Contains(body, `"done": 2`) {
		t.Errorf("/api/runs after two completions:\n%s", body)
	}
}

func waitFor(t *testing.T, ch <-chan event, what string, ok func(event) bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, open := <-ch:
			if !open {
				t.Fatalf("the event stream ended before %s", what)
			}
			if ok(ev) {
				return
			}
		case <-timeout:
			t.Fatalf("no event showed %s", what)
		}
	}
}

// emptyStore is a store file with one run of two pending cells.
func emptyStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = st.CreateRun(context.Background(), store.RunSpec{Identity: "x", Experiment: "freedman",
		Cells: []store.CellSpec{{Index: 0, Key: "a"}, {Index: 1, Key: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestToken: with a token, a request without it is 401, with a wrong one 403; the header, the
// query parameter (which sets a cookie) and the cookie each let a request in.
func TestToken(t *testing.T) {
	const token = "s3cr3t-t0ken"
	ts, _ := serve(t, emptyStore(t), Config{Token: token})
	for _, c := range []struct {
		path   string
		header []string
		want   int
	}{
		{"/", nil, http.StatusUnauthorized},
		{"/runs/1", nil, http.StatusUnauthorized},
		{"/static/style.css", nil, http.StatusUnauthorized},
		{"/events", nil, http.StatusUnauthorized},
		{"/nope", nil, http.StatusUnauthorized},
		{"/", []string{"Authorization", "Bearer wrong"}, http.StatusForbidden},
		{"/?token=wrong", nil, http.StatusForbidden},
		{"/", []string{"Cookie", cookieName + "=wrong"}, http.StatusForbidden},
		{"/", []string{"Authorization", "Basic " + token}, http.StatusUnauthorized},
		{"/", []string{"Authorization", "Bearer " + token}, http.StatusOK},
		{"/api/runs", []string{"Authorization", "bearer " + token}, http.StatusOK},
		{"/runs/1", []string{"Cookie", cookieName + "=" + token}, http.StatusOK},
		{"/nope", []string{"Authorization", "Bearer " + token}, http.StatusNotFound},
	} {
		resp, body := get(t, ts.URL+c.path, c.header...)
		if resp.StatusCode != c.want {
			t.Errorf("GET %s %v: %s, want %d", c.path, c.header, resp.Status, c.want)
		}
		if strings.Contains(body, token) {
			t.Errorf("GET %s %v: the answer shows the token", c.path, c.header)
		}
	}
	resp, _ := get(t, ts.URL+"/?token="+token)
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusOK || cookie == nil || cookie.Value != token || !cookie.HttpOnly {
		t.Errorf("GET /?token=…: %s, cookie %v; want 200 and an HttpOnly cookie with the token", resp.Status, cookie)
	}
}

// TestLoopbackHostsOnly: without a token, a request naming another host (a rebound DNS name)
// is refused; with one, the token decides.
func TestLoopbackHostsOnly(t *testing.T) {
	path := emptyStore(t)
	open, _ := serve(t, path, Config{})
	guarded, _ := serve(t, path, Config{Token: "tok"})
	for _, c := range []struct {
		ts     *httptest.Server
		host   string
		header []string
		want   int
	}{
		{open, "", nil, http.StatusOK},
		{open, "localhost:8080", nil, http.StatusOK},
		{open, "[::1]:8080", nil, http.StatusOK},
		{open, "evil.example:8080", nil, http.StatusForbidden},
		{open, "10.1.2.3", nil, http.StatusForbidden},
		{guarded, "dash.example.org", []string{"Authorization", "Bearer tok"}, http.StatusOK},
		{guarded, "dash.example.org", nil, http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest("GET", c.ts.URL+"/", nil)
		if c.host != "" {
			req.Host = c.host
		}
		for i := 0; i+1 < len(c.header); i += 2 {
			req.Header.Set(c.header[i], c.header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET / with Host %q %v: %s, want %d", c.host, c.header, resp.Status, c.want)
		}
	}
}

// TestPasswordNeverShown: the store's DSN is shown masked, on every page.
func TestPasswordNeverShown(t *testing.T) {
	const password = "hunter2-pw"
	for _, dsn := range []string{
		"postgres://hf:" + password + "@db.example:5432/results?sslmode=disable",
		"host=db.example user=hf password=" + password + " dbname=results",
		"postgresql://hf@db.example/results?password=" + password,
	} {
		ts, _ := serve(t, emptyStore(t), Config{DSN: dsn})
		for _, path := range []string{"/", "/runs/1", "/api/runs", "/api/runs/1", "/runs/9", "/nope"} {
			_, body := get(t, ts.URL+path)
			if strings.Contains(body, password) {
				t.Errorf("GET %s with store %s shows the password", path, store.MaskDSN(dsn))
			}
		}
		if _, body := get(t, ts.URL+"/"); !strings.Contains(body, "db.example") || !strings.Contains(body, "xxxxx") {
			t.Errorf("the runs page does not name the store %s:\n%.600s", store.MaskDSN(dsn), body)
		}
	}
}

// TestStoredResultFigures: an ahsc result read back from the store gets the experiment's
// runtime figure and a score distribution per dataset; a result whose figures cannot be drawn
// still renders its tables, with the reason in place of the figures.
func TestStoredResultFigures(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	w, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ahsc := &experiments.Result{Experiment: "ahsc", Preset: "quick", Seed: 1}
	summary := experiments.Table{Name: "summary", Columns: []string{"dataset", "method", "metric", "median", "mean", "n", "best", "paper", "seconds"}}
	runs := experiments.Table{Name: "runs", Detail: true, Columns: []string{"dataset", "repeat", "method", "value"}}
	for i, m := range []string{"ahsc", "random", "tpe"} {
		summary.Add("iris", m, "error", 0.1*float64(i+1), 0.1*float64(i+1), 3, i == 0, "", 1.5*float64(i+1))
		for r := range 3 {
			runs.Add("iris", r, m, 0.1*float64(i+1)+0.01*float64(r))
		}
	}
	ahsc.Tables = []experiments.Table{summary, runs}
	weightdecay := &experiments.Result{Experiment: "weightdecay", Preset: "quick", Seed: 1,
		Tables: []experiments.Table{{Name: "oddity", Columns: []string{"x"}, Rows: [][]any{{1.25}}}}}
	for _, res := range []*experiments.Result{ahsc, weightdecay} {
		run, err := w.CreateRun(ctx, store.RunSpec{Identity: res.Experiment, Experiment: res.Experiment})
		if err != nil {
			t.Fatal(err)
		}
		b, err := res.MarshalStored()
		if err == nil {
			err = w.SaveResult(ctx, run.ID, b)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	ts, _ := serve(t, path, Config{})
	_, page := get(t, ts.URL+"/runs/1")
	for _, want := range []string{"/runs/1/figures/ahsc_runtime_iris.png", "/runs/1/figures/distribution_iris.svg", "<td>0.3</td>", "9 rows of raw records"} {
		if !strings.Contains(page, want) {
			t.Errorf("ahsc run page: no %q", want)
		}
	}
	for _, f := range []string{"ahsc_runtime_iris.png", "distribution_iris.svg"} {
		if resp, body := get(t, ts.URL+"/runs/1/figures/"+f); resp.StatusCode != 200 || len(body) < 1000 {
			t.Errorf("GET figure %s: %s, %d bytes", f, resp.Status, len(body))
		}
	}
	resp, page := get(t, ts.URL+"/runs/2")
	if resp.StatusCode != 200 || !strings.Contains(page, "<td>1.25</td>") || !strings.Contains(page, `class="error"`) {
		t.Errorf("a run whose figures fail: %s\n%.3000s", resp.Status, page)
	}
}
