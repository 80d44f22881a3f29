package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestRetire: a retired run's unfinished cells leave the work (no claim takes them, a worker
// whose lease had expired loses it), its finished cells and recorded progress stay, a live
// lease refuses the retirement and changes nothing, an export and an import into a store
// without the run keep it retired, and Reopen puts the cells back where they were.
func TestRetire(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openStore(t, dsn)
		run := createRun(t, s, "retire", 5)
		other := createRun(t, s, "other", 1)
		only := ClaimOptions{Runs: []int64{run.ID}, Worker: "w", Lease: time.Minute}
		if err := s.Complete(ctx, mustClaim(t, s, only), Outcome{Metrics: map[string]float64{"x": 1}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Fail(ctx, mustClaim(t, s, only), "diverged", 2); err != nil {
			t.Fatal(err)
		}
		expired := mustClaim(t, s, ClaimOptions{Runs: []int64{run.ID}, Worker: "gone", Lease: 50 * time.Millisecond})
		held := mustClaim(t, s, only)
		progress := json.RawMessage(`{"evaluations":3}`)
		if err := s.SaveProgress(ctx, held, progress); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond) // expired's lease runs out; held's does not

		before := statuses(t, s, run.ID)
		if _, err := s.Retire(ctx, run.ID); !errors.Is(err, ErrLeased) {
			t.Fatalf("Retire with cell 3 leased: %v, want ErrLeased", err)
		}
		if got := statuses(t, s, run.ID); got != before {
			t.Fatalf("a refused Retire changed the cells: %s, was %s", got, before)
		}
		if err := s.Release(ctx, held); err != nil {
			t.Fatal(err)
		}
		n, err := s.Retire(ctx, run.ID)
		if err != nil || n != 3 {
			t.Fatalf("Retire = %d, %v; want 3 (the expired lease's cell and two pending)", n, err)
		}
		const retired = "done failed retired retired retired"
		if got := statuses(t, s, run.ID); got != retired {
			t.Fatalf("cells %s after Retire, want %s", got, retired)
		}
		if r := getRun(t, s, run.ID); r.Retired != 3 || r.Running != 0 || r.Status() != "retired" {
			t.Errorf("retired run %+v, status %q", r, r.Status())
		}
		if l := claim(t, s, ClaimOptions{Worker: "any"}); l == nil || l.Run != other.ID {
			t.Errorf("a worker serving every run claimed %+v, want the other run's cell", l)
		}
		if l := claim(t, s, only); l != nil {
			t.Errorf("claimed %+v of a retired run", l)
		}
		if err := s.Heartbeat(ctx, expired, time.Minute); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Heartbeat of a retired cell: %v, want ErrLeaseLost", err)
		}
		if n, err := s.Retire(ctx, run.ID); n != 0 || err != nil {
			t.Errorf("second Retire = %d, %v; want 0, nil", n, err)
		}
		if _, err := s.Retire(ctx, run.ID+100); !errors.Is(err, ErrNotFound) {
			t.Errorf("Retire of an absent run: %v, want ErrNotFound", err)
		}
		if _, err := s.Reopen(ctx, run.ID+100); !errors.Is(err, ErrNotFound) {
			t.Errorf("Reopen of an absent run: %v, want ErrNotFound", err)
		}

		var export bytes.Buffer
		if err := s.ExportRun(ctx, run.ID, &export); err != nil {
			t.Fatal(err)
		}
		dst := openStore(t, filepath.Join(t.TempDir(), "copy.db"))
		st, err := dst.ImportRun(ctx, bytes.NewReader(export.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		copied := st.Run.ID
		if st.Retired != 3 || st.Run.Status() != "retired" || statuses(t, dst, copied) != retired {
			t.Errorf("imported %+v: cells %s, want %s", st, statuses(t, dst, copied), retired)
		}
		// into a store that computes the run, an export's retirement does not stop it
		if st, err := dst.ImportRun(ctx, bytes.NewReader(export.Bytes())); err != nil || st.Retired != 0 {
			t.Errorf("import into the same run again: %+v, %v; want nothing retired", st, err)
		}

		for st, id := range map[*Store]int64{s: run.ID, dst: copied} {
			if n, err := st.Reopen(ctx, id); err != nil || n != 3 {
				t.Fatalf("Reopen = %d, %v; want 3", n, err)
			}
			if got, want := statuses(t, st, id), "done failed pending pending pending"; got != want {
				t.Fatalf("cells %s after Reopen, want %s", got, want)
			}
			if n, err := st.Reopen(ctx, id); err != nil || n != 0 {
				t.Errorf("second Reopen = %d, %v; want 0", n, err)
			}
			if r := getRun(t, st, id); r.Retired != 0 || r.Status() != "running" {
				t.Errorf("reopened run %+v, status %q", r, r.Status())
			}
		}
		l := mustClaim(t, s, only)
		if l.Index != 2 || l.Attempt != 2 {
			t.Errorf("first claim after Reopen %+v, want cell 2, attempt 2", l)
		}
		l = mustClaim(t, s, only)
		if l.Index != 3 || !bytes.Equal(l.Progress, progress) {
			t.Errorf("cell 3 after Reopen: %+v, want its progress %s", l, progress)
		}
	})
}

// statuses lists the run's cells' statuses in index order.
func statuses(t *testing.T, s *Store, run int64) string {
	t.Helper()
	var b bytes.Buffer
	for i, c := range cells(t, s, run) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(string(c.Status))
	}
	return b.String()
}
