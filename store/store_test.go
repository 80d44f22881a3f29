package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// postgresEnv holds the DSN of a PostgreSQL database to run the tests against too.
const postgresEnv = "HYPERFLAT_TEST_POSTGRES"

var schemaSeq atomic.Int64

// forEachBackend runs fn against a fresh SQLite file and, when $HYPERFLAT_TEST_POSTGRES is set,
// against a fresh schema of that PostgreSQL database.
func forEachBackend(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		fn(t, filepath.Join(t.TempDir(), "nested", "dir", "store.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, postgresDSN(t))
	})
}

// postgresDSN creates a schema of its own for the test in the database of $HYPERFLAT_TEST_POSTGRES
// (dropped at the end) and returns a DSN whose search_path selects it; it skips the test when
// the variable is not set.
func postgresDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv(postgresEnv)
	if dsn == "" {
		t.Skip(postgresEnv + ` is not set: start a server with eval "$(bash .ci/postgres.sh)" to test PostgreSQL too`)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := fmt.Sprintf("store_test_%d_%d", os.Getpid(), schemaSeq.Add(1))
	if _, err := db.Exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatalf("create schema in %s: %v", maskDSN(dsn), err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Error(err)
			return
		}
		defer db.Close()
		if _, err := db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`); err != nil {
			t.Error(err)
		}
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + schema
}

func openStore(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// spec is a run of n cells with keys c0, c1, ... and seeds 1000+i.
func spec(identity string, n int) RunSpec {
	r := RunSpec{Identity: identity, Experiment: "exp", Options: json.RawMessage(`{"n":` + fmt.Sprint(n) + `}`)}
	for i := range n {
		r.Cells = append(r.Cells, CellSpec{
			Index:  i,
			Key:    fmt.Sprintf("c%d", i),
			Seed:   uint64(1000 + i),
			Config: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)),
		})
	}
	return r
}

func createRun(t *testing.T, s *Store, identity string, n int) Run {
	t.Helper()
	r, err := s.CreateRun(context.Background(), spec(identity, n))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func claim(t *testing.T, s *Store, o ClaimOptions) *Lease {
	t.Helper()
	l, err := s.Claim(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustClaim(t *testing.T, s *Store, o ClaimOptions) *Lease {
	t.Helper()
	l := claim(t, s, o)
	if l == nil {
		t.Fatalf("Claim(%+v) = nil, want a cell", o)
	}
	return l
}

func cells(t *testing.T, s *Store, run int64) []Cell {
	t.Helper()
	cs, err := s.Cells(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func getRun(t *testing.T, s *Store, id int64) Run {
	t.Helper()
	r, err := s.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRuns(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openStore(t, dsn)
		if _, ok, err := s.FindRun(ctx, "id-a"); err != nil || ok {
			t.Fatalf("FindRun on an empty store = %v, %v; want false, nil", ok, err)
		}
		before := time.Now()
		a1 := createRun(t, s, "id-a", 3)
		b := createRun(t, s, "id-b", 2)
		a2 := createRun(t, s, "id-a", 4)
		if a1.ID <= 0 || b.ID <= a1.ID || a2.ID <= b.ID {
			t.Fatalf("IDs %d, %d, %d are not increasing", a1.ID, b.ID, a2.ID)
		}
		if a1.Identity != "id-a" || a1.Experiment != "exp" || string(a1.Options) != `{"n":3}` || a1.Cells != 3 {
			t.Errorf("CreateRun = %+v", a1)
		}
		if d := a1.Created.Sub(before); d < -2*time.Second || d > 10*time.Second {
			t.Errorf("Created %v is %v after the call", a1.Created, d)
		}

		got, ok, err := s.FindRun(ctx, "id-a")
		if err != nil || !ok || got.ID != a2.ID || got.Cells != 4 {
			t.Fatalf("FindRun(id-a) = %+v, %v, %v; want run %d with 4 cells", got, ok, err, a2.ID)
		}
		if !got.Created.Equal(a2.Created) {
			t.Errorf("FindRun Created %v, CreateRun said %v", got.Created, a2.Created)
		}
		if _, err := s.GetRun(ctx, a2.ID+100); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetRun(absent) error = %v, want ErrNotFound", err)
		}

		runs, err := s.Runs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 3 || runs[0].ID != a1.ID || runs[1].ID != b.ID || runs[2].ID != a2.ID {
			t.Fatalf("Runs = %+v, want runs %d, %d, %d", runs, a1.ID, b.ID, a2.ID)
		}
		for _, r := range runs {
			if r.Done+r.Failed+r.Running != 0 || !r.Started.IsZero() || !r.Finished.IsZero() || r.HasResult {
				t.Errorf("fresh run %+v has progress", r)
			}
		}

		// Complete one cell, fail one, and leave one running.
		l0 := mustClaim(t, s, ClaimOptions{Runs: []int64{a1.ID}, Worker: "w"})
		l1 := mustClaim(t, s, ClaimOptions{Runs: []int64{a1.ID}, Worker: "w"})
		mustClaim(t, s, ClaimOptions{Runs: []int64{a1.ID}, Worker: "w"})
		if err := s.Complete(ctx, l0, Outcome{Seconds: 1.5}); err != nil {
			t.Fatal(err)
		}
		if err := s.Fail(ctx, l1, "boom", 0.25); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveResult(ctx, a1.ID, json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
		r := getRun(t, s, a1.ID)
		if r.Cells != 3 || r.Done != 1 || r.Failed != 1 || r.Running != 1 || !r.HasResult {
			t.Errorf("counts of run %+v: want 3 cells, 1 done, 1 failed, 1 running, a result", r)
		}
		if r.CellSeconds != 1.75 {
			t.Errorf("CellSeconds = %v, want 1.75", r.CellSeconds)
		}
		if r.Started.IsZero() || r.Finished.Before(r.Started) || r.Started.Before(r.Created) {
			t.Errorf("Created %v, Started %v, Finished %v out of order", r.Created, r.Started, r.Finished)
		}
		if other := getRun(t, s, b.ID); other.Done+other.Failed+other.Running != 0 {
			t.Errorf("run %d changed: %+v", b.ID, other)
		}
	})
}

func TestCreateRunValidates(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "s.db"))
	ctx := context.Background()
	bad := map[string]RunSpec{
		"no identity":  {Cells: spec("x", 1).Cells},
		"index gap":    {Identity: "x", Cells: []CellSpec{{Index: 0, Key: "a"}, {Index: 2, Key: "b"}}},
		"index twice":  {Identity: "x", Cells: []CellSpec{{Index: 0, Key: "a"}, {Index: 0, Key: "b"}}},
		"key twice":    {Identity: "x", Cells: []CellSpec{{Index: 0, Key: "a"}, {Index: 1, Key: "a"}}},
		"negative idx": {Identity: "x", Cells: []CellSpec{{Index: -1, Key: "a"}}},
	}
	for name, sp := range bad {
		if _, err := s.CreateRun(ctx, sp); err == nil {
			t.Errorf("%s: CreateRun succeeded", name)
		}
	}
	if runs, err := s.Runs(ctx); err != nil || len(runs) != 0 {
		t.Errorf("Runs after invalid specs = %v, %v; want none", runs, err)
	}
	// A run without cells is valid; a large one is inserted in several statements.
	if _, err := s.CreateRun(ctx, RunSpec{Identity: "empty"}); err != nil {
		t.Error(err)
	}
	big := createRun(t, s, "big", 1234)
	cs := cells(t, s, big.ID)
	if len(cs) != 1234 || cs[1233].Key != "c1233" || cs[1233].Seed != 2233 || cs[600].Status != Pending {
		t.Errorf("big run: %d cells, last %+v", len(cs), cs[len(cs)-1])
	}
}

func TestConcurrentClaims(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		handles := []*Store{openStore(t, dsn), openStore(t, dsn)}
		const n = 60
		run := createRun(t, handles[0], "concurrent", n)

		var mu sync.Mutex
		claims := map[int][]string{}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 8 {
			wg.Go(func() {
				s := handles[g%2]
				worker := fmt.Sprintf("g%d", g)
				for {
					l, err := s.Claim(ctx, ClaimOptions{Runs: []int64{run.ID}, Worker: worker, Lease: time.Minute})
					if err != nil {
						errs <- err
						return
					}
					if l == nil {
						return
					}
					mu.Lock()
					claims[l.Index] = append(claims[l.Index], fmt.Sprintf("%s#%d", worker, l.Attempt))
					mu.Unlock()
					o := Outcome{Output: json.RawMessage(fmt.Sprintf(`{"by":%q}`, worker)), Seconds: 0.01}
					if err := s.Complete(ctx, l, o); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for i := range n {
			if len(claims[i]) != 1 {
				t.Errorf("cell %d claimed %v, want once", i, claims[i])
			}
		}
		for _, c := range cells(t, handles[1], run.ID) {
			want := fmt.Sprintf(`{"by":%q}`, c.Worker)
			if c.Status != Done || c.Attempts != 1 || string(c.Outcome.Output) != want ||
				len(claims[c.Index]) != 1 || claims[c.Index][0] != c.Worker+"#1" {
				t.Errorf("cell %d: %s, %d attempts, worker %s, output %s; claims %v",
					c.Index, c.Status, c.Attempts, c.Worker, c.Outcome.Output, claims[c.Index])
			}
		}
		if r := getRun(t, handles[0], run.ID); r.Done != n || r.Running != 0 || math.Abs(r.CellSeconds-0.01*n) > 1e-9 {
			t.Errorf("run after concurrent claims: %+v", r)
		}
	})
}

func TestLeaseExpiry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openStore(t, dsn)
		run := createRun(t, s, "lease", 1)
		const lease = 200 * time.Millisecond

		l1 := mustClaim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "w1", Lease: lease})
		if l := claim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "w2", Lease: lease}); l != nil {
			t.Fatalf("claimed a leased cell: %+v", l)
		}
		// Heartbeats keep the lease beyond its first expiry.
		for range 6 {
			time.Sleep(lease / 4)
			if err := s.Heartbeat(ctx, l1, lease); err != nil {
				t.Fatal(err)
			}
			if l := claim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "w2", Lease: lease}); l != nil {
				t.Fatalf("claimed a cell kept by heartbeats: %+v", l)
			}
		}
		// Without heartbeats it expires and is claimed again.
		time.Sleep(lease + 100*time.Millisecond)
		l2 := mustClaim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "w2", Lease: time.Minute})
		if l2.Index != 0 || l2.Attempt != 2 || l2.Worker != "w2" {
			t.Errorf("takeover lease %+v, want cell 0, attempt 2, worker w2", l2)
		}
		if err := s.Heartbeat(ctx, l1, lease); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Heartbeat after takeover: %v, want ErrLeaseLost", err)
		}
		if err := s.Fail(ctx, l1, "late", 1); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Fail after takeover: %v, want ErrLeaseLost", err)
		}
		if err := s.Release(ctx, l1); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Release after takeover: %v, want ErrLeaseLost", err)
		}
		// The same worker name with the old attempt number does not hold it either.
		stale := *l2
		stale.Attempt = 1
		if err := s.Heartbeat(ctx, &stale, lease); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Heartbeat with a stale attempt: %v, want ErrLeaseLost", err)
		}
		// The old holder cannot complete while the new lease is live.
		if err := s.Complete(ctx, l1, Outcome{Host: "old"}); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Complete under another live lease: %v, want ErrLeaseLost", err)
		}
		if err := s.Heartbeat(ctx, l2, time.Minute); err != nil {
			t.Errorf("Heartbeat of the new holder: %v", err)
		}
		c := cells(t, s, run.ID)[0]
		if c.Status != Running || c.Worker != "w2" || c.Attempts != 2 {
			t.Errorf("cell after takeover %+v", c)
		}
		if err := s.Complete(ctx, l2, Outcome{Host: "new"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Heartbeat(ctx, l2, lease); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Heartbeat of a done cell: %v, want ErrLeaseLost", err)
		}
	})
}

func TestComplete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openStore(t, dsn)
		run := createRun(t, s, "complete", 3)

		// Idempotent: a second completion leaves the first.
		l := mustClaim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "w1"})
		if err := s.Complete(ctx, l, Outcome{Output: json.RawMessage(`1`), Seconds: 2}); err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(ctx, l, Outcome{Output: json.RawMessage(`2`), Seconds: 3}); err != nil {
			t.Fatalf("second Complete: %v", err)
		}
		if c := cells(t, s, run.ID)[0]; string(c.Outcome.Output) != `1` || c.Outcome.Seconds != 2 {
			t.Errorf("after two completions: output %s, %v s; want the first", c.Outcome.Output, c.Outcome.Seconds)
		}
		if err := s.Fail(ctx, l, "late", 0); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Fail of a done cell: %v, want ErrLeaseLost", err)
		}

		// An expired lease that nobody took over still completes.
		l = mustClaim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "w1", Lease: 50 * time.Millisecond})
		time.Sleep(150 * time.Millisecond)
		if err := s.Complete(ctx, l, Outcome{Output: json.RawMessage(`"late"`)}); err != nil {
			t.Fatalf("Complete after expiry: %v", err)
		}
		// So does a lease whose taker's lease expired too; the taker's Complete is then a no-op.
		l = mustClaim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "w1", Lease: 50 * time.Millisecond})
		time.Sleep(150 * time.Millisecond)
		taker := mustClaim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "w2", Lease: 50 * time.Millisecond})
		time.Sleep(150 * time.Millisecond)
		if err := s.Complete(ctx, l, Outcome{Host: "w1"}); err != nil {
			t.Fatalf("Complete after the taker's lease expired: %v", err)
		}
		if err := s.Complete(ctx, taker, Outcome{Host: "w2"}); err != nil {
			t.Fatalf("taker's Complete: %v", err)
		}
		cs := cells(t, s, run.ID)
		if cs[1].Status != Done || string(cs[1].Outcome.Output) != `"late"` || cs[2].Outcome.Host != "w1" || cs[2].Worker != "w1" || cs[2].Attempts != 2 {
			t.Errorf("cells %+v", cs)
		}

		var missing = Lease{Run: run.ID + 100, Index: 0, Worker: "w1", Attempt: 1}
		if err := s.Complete(ctx, &missing, Outcome{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("Complete of an absent cell: %v, want ErrNotFound", err)
		}
	})
}

func TestOutcomeRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openStore(t, dsn)
		sp := RunSpec{Identity: "rt", Experiment: "e", Cells: []CellSpec{
			{Index: 0, Key: "max", Seed: math.MaxUint64, Config: json.RawMessage(`{"lr": 0.1, "name":"ü \"q\""}`)},
			{Index: 1, Key: "nil config", Seed: 1 << 63},
		}}
		run, err := s.CreateRun(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		if run.Options != nil {
			t.Errorf("Options %q, want nil", run.Options)
		}
		l := mustClaim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "host/1/g0"})
		if l.Seed != math.MaxUint64 || string(l.Config) != string(sp.Cells[0].Config) {
			t.Errorf("lease seed %d config %s", l.Seed, l.Config)
		}
		o := Outcome{
			Output:      json.RawMessage(`{"table": [1, 2.5, null], "s": "x"}`),
			Metrics:     map[string]float64{"acc": 0.875, "nan": math.NaN(), "inf": math.Inf(1), "-inf": math.Inf(-1), "tiny": 5e-324},
			History:     json.RawMessage(`[{"step":1,"loss":0.5}]`),
			Seconds:     12.25,
			CodeVersion: "v1.2.3-dirty",
			Host:        "node7",
		}
		if err := s.Complete(ctx, l, o); err != nil {
			t.Fatal(err)
		}
		l2 := mustClaim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "w"})
		if l2.Seed != 1<<63 || l2.Config != nil {
			t.Errorf("second lease seed %d config %q", l2.Seed, l2.Config)
		}
		cs := cells(t, s, run.ID)
		if len(cs) != 2 {
			t.Fatalf("%d cells", len(cs))
		}
		c := cs[0]
		if c.Index != 0 || c.Key != "max" || c.Seed != math.MaxUint64 || string(c.Config) != string(sp.Cells[0].Config) {
			t.Errorf("spec round trip %+v", c.CellSpec)
		}
		if c.Status != Done || c.Worker != "host/1/g0" || c.Attempts != 1 || c.Error != "" {
			t.Errorf("state %s %s %d %q", c.Status, c.Worker, c.Attempts, c.Error)
		}
		if string(c.Outcome.Output) != string(o.Output) || string(c.Outcome.History) != string(o.History) ||
			c.Outcome.Seconds != o.Seconds || c.Outcome.CodeVersion != o.CodeVersion || c.Outcome.Host != o.Host {
			t.Errorf("outcome %+v, want %+v", c.Outcome, o)
		}
		if vs, err := s.CodeVersions(ctx, run.ID); err != nil || len(vs) != 1 || vs[0] != o.CodeVersion {
			t.Errorf("code versions %q (%v), want [%q]: the running cell has none", vs, err, o.CodeVersion)
		}
		if sp, err := s.CellSpans(ctx, run.ID); err != nil || len(sp) != 1 || !sp[0].Start.Equal(c.Started) || !sp[0].End.Equal(c.Finished) || c.Finished.Before(c.Started) {
			t.Errorf("cell spans %v (%v), want the done cell's [%v, %v] only: the running cell has none", sp, err, c.Started, c.Finished)
		}
		m := c.Outcome.Metrics
		if len(m) != 5 || m["acc"] != 0.875 || !math.IsNaN(m["nan"]) || !math.IsInf(m["inf"], 1) ||
			!math.IsInf(m["-inf"], -1) || m["tiny"] != 5e-324 {
			t.Errorf("metrics %v", m)
		}
		if c.Started.IsZero() || c.Finished.Before(c.Started) {
			t.Errorf("started %v finished %v", c.Started, c.Finished)
		}
		if c2 := cs[1]; c2.Status != Running || c2.Config != nil || c2.Outcome.Output != nil || c2.Outcome.Metrics != nil || !c2.Finished.IsZero() {
			t.Errorf("running cell %+v", c2)
		}
	})
}

func TestRetryRelease(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openStore(t, dsn)
		run := createRun(t, s, "retry", 3)
		for range 2 {
			l := mustClaim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "w"})
			if err := s.Fail(ctx, l, "out of memory", 4); err != nil {
				t.Fatal(err)
			}
		}
		if c := cells(t, s, run.ID)[1]; c.Status != Failed || c.Error != "out of memory" || c.Outcome.Seconds != 4 || c.Finished.IsZero() {
			t.Errorf("failed cell %+v", c)
		}
		if r := getRun(t, s, run.ID); r.Failed != 2 || r.CellSeconds != 8 {
			t.Errorf("run with failures %+v", r)
		}
		n, err := s.Retry(ctx, run.ID)
		if err != nil || n != 2 {
			t.Fatalf("Retry = %d, %v; want 2", n, err)
		}
		for _, c := range cells(t, s, run.ID)[:2] {
			if c.Status != Pending || c.Error != "" || !c.Finished.IsZero() || c.Attempts != 1 {
				t.Errorf("retried cell %+v", c)
			}
		}
		if n, err := s.Retry(ctx, run.ID); err != nil || n != 0 {
			t.Errorf("second Retry = %d, %v; want 0", n, err)
		}
		if _, err := s.Retry(ctx, run.ID+100); !errors.Is(err, ErrNotFound) {
			t.Errorf("Retry of an absent run: %v, want ErrNotFound", err)
		}
		l := mustClaim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "w"})
		if l.Index != 0 || l.Attempt != 2 {
			t.Errorf("claim after retry %+v, want cell 0 attempt 2", l)
		}

		// Release puts the cell back at once; its next claim is a new attempt.
		if err := s.Release(ctx, l); err != nil {
			t.Fatal(err)
		}
		if c := cells(t, s, run.ID)[0]; c.Status != Pending {
			t.Errorf("released cell %+v", c)
		}
		if err := s.Release(ctx, l); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("second Release: %v, want ErrLeaseLost", err)
		}
		again := mustClaim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "w"})
		if again.Index != 0 || again.Attempt != 3 {
			t.Errorf("claim after release %+v, want cell 0 attempt 3", again)
		}
		// A released lease's outcome is still recorded (nobody else holds the cell).
		if err := s.Release(ctx, again); err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(ctx, again, Outcome{Seconds: 1}); err != nil {
			t.Fatal(err)
		}
		if c := cells(t, s, run.ID)[0]; c.Status != Done {
			t.Errorf("completed released cell %+v", c)
		}
	})
}

func TestResultAndDelete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openStore(t, dsn)
		r1 := createRun(t, s, "r1", 2)
		r2 := createRun(t, s, "r2", 2)
		if res, ok, err := s.Result(ctx, r1.ID); err != nil || ok || res != nil {
			t.Errorf("Result before SaveResult = %s, %v, %v", res, ok, err)
		}
		for _, want := range []string{`{"tables":[1]}`, `{"tables":[2,3]}`} {
			if err := s.SaveResult(ctx, r1.ID, json.RawMessage(want)); err != nil {
				t.Fatal(err)
			}
			if res, ok, err := s.Result(ctx, r1.ID); err != nil || !ok || string(res) != want {
				t.Errorf("Result = %s, %v, %v; want %s", res, ok, err, want)
			}
		}
		if !getRun(t, s, r1.ID).HasResult || getRun(t, s, r2.ID).HasResult {
			t.Error("HasResult wrong")
		}
		if _, _, err := s.Result(ctx, r2.ID+100); !errors.Is(err, ErrNotFound) {
			t.Errorf("Result of an absent run: %v", err)
		}
		if err := s.SaveResult(ctx, r2.ID+100, json.RawMessage(`{}`)); !errors.Is(err, ErrNotFound) {
			t.Errorf("SaveResult of an absent run: %v", err)
		}

		mustClaim(t, s, ClaimOptions{Runs: []int64{r1.ID}})
		if err := s.DeleteRun(ctx, r1.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetRun(ctx, r1.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetRun of a deleted run: %v", err)
		}
		if _, err := s.Cells(ctx, r1.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("Cells of a deleted run: %v", err)
		}
		if err := s.DeleteRun(ctx, r1.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("second DeleteRun: %v", err)
		}
		if runs, err := s.Runs(ctx); err != nil || len(runs) != 1 || runs[0].ID != r2.ID || runs[0].Cells != 2 {
			t.Errorf("Runs after delete = %+v, %v", runs, err)
		}
		if l := mustClaim(t, s, ClaimOptions{}); l.Run != r2.ID {
			t.Errorf("claimed %+v, want a cell of run %d", l, r2.ID)
		}
	})
}

func TestOpenConcurrentlyAndReopen(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		// Several handles creating the schema of a fresh database at once.
		var wg sync.WaitGroup
		stores := make([]*Store, 4)
		errs := make([]error, 4)
		for i := range stores {
			wg.Go(func() { stores[i], errs[i] = Open(ctx, dsn) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("concurrent Open %d: %v", i, err)
			}
			defer stores[i].Close()
		}
		run := createRun(t, stores[0], "persist", 2)
		if err := stores[0].Close(); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, dsn)
		if r := getRun(t, s, run.ID); r.Identity != "persist" || r.Cells != 2 {
			t.Errorf("run after reopening %+v", r)
		}
		want := map[bool]string{true: "postgres", false: "sqlite"}[strings.HasPrefix(dsn, "postgres")]
		if s.Kind() != want {
			t.Errorf("Kind = %q, want %q", s.Kind(), want)
		}
		var version int
		if err := s.db.QueryRow(`SELECT version FROM schema_version`).Scan(&version); err != nil || version != schemaVersion {
			t.Errorf("schema version %d, %v", version, err)
		}
		// A database from a newer program is refused.
		if _, err := s.db.Exec(`UPDATE schema_version SET version = 99`); err != nil {
			t.Fatal(err)
		}
		if s2, err := Open(ctx, dsn); err == nil || !strings.Contains(err.Error(), "newer") {
			t.Errorf("Open of a version 99 schema: %v", err)
			if err == nil {
				s2.Close()
			}
		}
	})
}

func TestSQLiteDSNForms(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, dsn := range []string{
		"sqlite://" + filepath.Join(dir, "a", "x.db"),
		"file:" + filepath.Join(dir, "b", "x.db"),
		"file://" + filepath.Join(dir, "c", "x.db"),
		filepath.Join(dir, "d", "e", "x.db") + "?_pragma=cache_size(-4000)",
	} {
		s, err := Open(ctx, dsn)
		if err != nil {
			t.Errorf("Open(%q): %v", dsn, err)
			continue
		}
		var mode string
		if err := s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("%s: journal_mode %q, %v", dsn, mode, err)
		}
		var busy int
		if err := s.db.QueryRow(`PRAGMA busy_timeout`).Scan(&busy); err != nil || busy < 10000 {
			t.Errorf("%s: busy_timeout %d, %v", dsn, busy, err)
		}
		if s.Kind() != "sqlite" || s.DSN() != dsn {
			t.Errorf("Kind %q DSN %q", s.Kind(), s.DSN())
		}
		s.Close()
	}
	for _, sub := range []string{"a", "b", "c", "d/e"} {
		if _, err := os.Stat(filepath.Join(dir, sub, "x.db")); err != nil {
			t.Error(err)
		}
	}
	// An in-memory database works through one connection.
	s, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	createRun(t, s, "mem", 2)
	if l := mustClaim(t, s, ClaimOptions{}); l.Index != 0 {
		t.Errorf("in-memory claim %+v", l)
	}
}

func TestDSNMasksPassword(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://u:secret@h:5432/db?sslmode=disable":     "postgres://u:xxxxx@h:5432/db?sslmode=disable",
		"postgresql://u@h/db?password=secret&sslmode=allow": "postgresql://u@h/db?password=xxxxx&sslmode=allow",
		"postgres://u@h/db": "postgres://u@h/db",
		"/tmp/x.db":         "/tmp/x.db",
	} {
		if got := maskDSN(dsn); got != want {
			t.Errorf("maskDSN(%q) = %q, want %q", dsn, got, want)
		}
	}
}

func TestMetricsEncoding(t *testing.T) {
	enc, err := encodeMetrics(map[string]float64{"a": 1.5, "n": math.NaN(), "p": math.Inf(1), "m": math.Inf(-1)})
	if err != nil {
		t.Fatal(err)
	}
	if enc != `{"a":1.5,"m":"-Inf","n":"NaN","p":"+Inf"}` {
		t.Errorf("encoded %v", enc)
	}
	if m, err := decodeMetrics([]byte(`{"x":"1.5"}`)); err == nil {
		t.Errorf("decoded a numeric string: %v", m)
	}
	if m, err := decodeMetrics(nil); err != nil || m != nil {
		t.Errorf("decodeMetrics(nil) = %v, %v", m, err)
	}
	if enc, err := encodeMetrics(nil); err != nil || enc != nil {
		t.Errorf("encodeMetrics(nil) = %v, %v", enc, err)
	}
}
