package store

import (
	"context"
	"sync"
	"testing"
)

// TestFindOrCreateRunConcurrently starts eight "shards" at once, each with its own store
// handle: they must all join one run, and a later run with another identity is separate.
func TestFindOrCreateRunConcurrently(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ids := make([]int64, 8)
		var wg sync.WaitGroup
		errs := make([]error, len(ids))
		for i := range ids {
			s := openStore(t, dsn)
			wg.Add(1)
			go func() {
				defer wg.Done()
				run, err := s.FindOrCreateRun(context.Background(), spec("shared", 5))
				ids[i], errs[i] = run.ID, err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("shard %d: %v", i, err)
			}
			if ids[i] != ids[0] {
				t.Fatalf("shards got runs %v, want one run", ids)
			}
		}
		s := openStore(t, dsn)
		runs, err := s.Runs(context.Background())
		if err != nil || len(runs) != 1 || runs[0].Cells != 5 {
			t.Fatalf("store holds %+v (%v), want one run of 5 cells", runs, err)
		}
		other, err := s.FindOrCreateRun(context.Background(), spec("other", 2))
		if err != nil || other.ID == ids[0] || other.Cells != 2 {
			t.Errorf("another identity: %+v %v", other, err)
		}
	})
}
