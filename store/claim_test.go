package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClaimRunsInOrder: a claim given several runs takes the runs in the order listed (not by
// ID), moves to the next listed run once the current one has nothing claimable, takes an
// expired lease of an earlier run before a pending cell of a later one, and never touches a run
// not listed.
func TestClaimRunsInOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		r1 := createRun(t, s, "one", 2)
		r2 := createRun(t, s, "two", 2)
		r3 := createRun(t, s, "three", 2)
		runs := []int64{r3.ID, r1.ID}
		var order []string
		for range 4 {
			l := mustClaim(t, s, ClaimOptions{Runs: runs, Worker: "w", Lease: 50 * time.Millisecond})
			order = append(order, fmt.Sprintf("%d/%d", l.Run, l.Index))
		}
		want := fmt.Sprint([]string{fmt.Sprintf("%d/0", r3.ID), fmt.Sprintf("%d/1", r3.ID),
			fmt.Sprintf("%d/0", r1.ID), fmt.Sprintf("%d/1", r1.ID)})
		if fmt.Sprint(order) != want {
			t.Errorf("claim order %v, want %v", order, want)
		}
		if l := claim(t, s, ClaimOptions{Runs: runs}); l != nil {
			t.Errorf("claimed %+v with every listed run's cells held", l)
		}
		time.Sleep(120 * time.Millisecond) // every lease expires; r3's come first again
		if l := mustClaim(t, s, ClaimOptions{Runs: runs, Worker: "w2"}); l.Run != r3.ID || l.Index != 0 || l.Attempt != 2 {
			t.Errorf("after expiry claimed %d/%d attempt %d, want %d/0 attempt 2", l.Run, l.Index, l.Attempt, r3.ID)
		}
		if r := getRun(t, s, r2.ID); r.Running != 0 || r.Done != 0 {
			t.Errorf("unlisted run 2 touched: %+v", r)
		}
	})
}

func TestClaimOrderAndShards(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openStore(t, dsn)
		r1 := createRun(t, s, "one", 2)
		r2 := createRun(t, s, "two", 8)

		// Run 0: lowest run first, then lowest index.
		var order []string
		for range 3 {
			l := mustClaim(t, s, ClaimOptions{Worker: "w", Lease: time.Minute})
			order = append(order, fmt.Sprintf("%d/%d", l.Run, l.Index))
			if l.Attempt != 1 || l.Worker != "w" || l.Key != fmt.Sprintf("c%d", l.Index) ||
				l.Seed != uint64(1000+l.Index) || string(l.Config) != fmt.Sprintf(`{"i":%d}`, l.Index) {
				t.Errorf("lease %+v", l)
			}
		}
		want := []string{fmt.Sprintf("%d/0", r1.ID), fmt.Sprintf("%d/1", r1.ID), fmt.Sprintf("%d/0", r2.ID)}
		if fmt.Sprint(order) != fmt.Sprint(want) {
			t.Errorf("claim order %v, want %v", order, want)
		}

		// Shard 1 of 3 of run 2: indices 1, 4, 7.
		var idx []int
		for {
			l := claim(t, s, ClaimOptions{Runs: []int64{r2.ID}, Shard: 1, Shards: 3})
			if l == nil {
				break
			}
			if l.Run != r2.ID {
				t.Fatalf("claimed run %d, want %d", l.Run, r2.ID)
			}
			idx = append(idx, l.Index)
		}
		if fmt.Sprint(idx) != "[1 4 7]" {
			t.Errorf("shard 1/3 claimed %v, want [1 4 7]", idx)
		}
		// Shard 0 of 3: index 0 is taken already.
		if l := mustClaim(t, s, ClaimOptions{Runs: []int64{r2.ID}, Shard: 0, Shards: 3}); l.Index != 3 {
			t.Errorf("shard 0/3 claimed %d, want 3", l.Index)
		}
		if _, err := s.Claim(ctx, ClaimOptions{Shard: 3, Shards: 3}); err == nil {
			t.Error("Claim with shard 3 of 3 succeeded")
		}
		// Run 1 is all taken; a claim for it finds nothing.
		if l := claim(t, s, ClaimOptions{Runs: []int64{r1.ID}}); l != nil {
			t.Errorf("claimed %+v from a run with no claimable cell", l)
		}
		// The default worker names host and process.
		if l := mustClaim(t, s, ClaimOptions{Runs: []int64{r2.ID}}); !strings.HasSuffix(l.Worker, fmt.Sprintf("/%d", os.Getpid())) {
			t.Errorf("default worker %q", l.Worker)
		}
		// Failed and done cells are not claimable.
		l := mustClaim(t, s, ClaimOptions{Runs: []int64{r2.ID}})
		if err := s.Fail(ctx, l, "x", 0); err != nil {
			t.Fatal(err)
		}
		l = mustClaim(t, s, ClaimOptions{Runs: []int64{r2.ID}})
		if err := s.Complete(ctx, l, Outcome{}); err != nil {
			t.Fatal(err)
		}
		if l := claim(t, s, ClaimOptions{Runs: []int64{r2.ID}}); l != nil {
			t.Errorf("claimed %+v from a run with no claimable cell", l)
		}
		if r := getRun(t, s, r2.ID); r.Running != 6 || r.Done != 1 || r.Failed != 1 {
			t.Errorf("run 2 counts %+v", r)
		}
	})
}

// TestClaimByBuild: a claim limited to a build takes cells of that build's runs and of runs
// of unknown build, never of another build's; the build survives an export and import.
func TestClaimByBuild(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openStore(t, dsn)
		mk := func(id, build string) Run {
			sp := spec(id, 1)
			sp.Build = build
			r, err := s.CreateRun(ctx, sp)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		other, mine, unknown := mk("other", "v2 blas=gonum"), mk("mine", "v1 blas=gonum"), mk("unknown", "")
		if r := getRun(t, s, other.ID); r.Build != "v2 blas=gonum" {
			t.Errorf("stored build %q", r.Build)
		}
		var got []int64
		for {
			l, err := s.Claim(ctx, ClaimOptions{Build: "v1 blas=gonum"})
			if err != nil {
				t.Fatal(err)
			}
			if l == nil {
				break
			}
			got = append(got, l.Run)
		}
		if len(got) != 2 || got[0] != mine.ID || got[1] != unknown.ID {
			t.Errorf("build v1 claimed cells of runs %v, want %d and %d (not %d)", got, mine.ID, unknown.ID, other.ID)
		}
		var export bytes.Buffer
		if err := s.ExportRun(ctx, other.ID, &export); err != nil {
			t.Fatal(err)
		}
		dst := openStore(t, filepath.Join(t.TempDir(), "copy.db"))
		st, err := dst.ImportRun(ctx, &export)
		if err != nil || st.Run.Build != "v2 blas=gonum" {
			t.Errorf("imported run's build %q (%v)", st.Run.Build, err)
		}
	})
}
