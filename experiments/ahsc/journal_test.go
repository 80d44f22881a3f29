package ahsc

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
)

// recordingCheckpoint offers saved and keeps every save.
type recordingCheckpoint struct {
	saved json.RawMessage
	saves []json.RawMessage
}

func (c *recordingCheckpoint) Saved() json.RawMessage { return c.saved }
func (c *recordingCheckpoint) Save(_ context.Context, p json.RawMessage) error {
	c.saves = append(c.saves, p)
	return nil
}

// TestJournalResume: a cell that goes on from a part of an earlier attempt's record trains
// only the evaluations after it and stores exactly the uninterrupted cell's output (wall time
// aside); a record the search does not ask for again is dropped, not trusted.
func TestJournalResume(t *testing.T) {
	p, sp := blobsProblem()
	cfg := DefaultConfig(experiments.Quick)
	for _, method := range []string{"bohb", "tpe", "ahsc"} {
		run := func(cp *recordingCheckpoint) (run, []byte) {
			t.Helper()
			ctx := experiments.WithCheckpoint(context.Background(), cp)
			r, err := runOne(ctx, p, sp, cfg, method, 0, seeds{weights: 1, search: 2}, limits{}, 1)
			if err != nil || r.err != "" {
				t.Fatalf("%s: %v %s", method, err, r.err)
			}
			j := r.toJSON()
			j.Seconds = 0
			b, err := json.Marshal(j)
			if err != nil {
				t.Fatal(err)
			}
			return r, b
		}
		first := &recordingCheckpoint{}
		r0, want := run(first)
		if len(first.saves) != r0.calls || r0.calls < 3 {
			t.Fatalf("%s: %d saves for %d calls; want one per call, and at least 3 calls", method, len(first.saves), r0.calls)
		}
		var record []journalEntry
		if err := json.Unmarshal(first.saves[len(first.saves)-1], &record); err != nil || len(record) != r0.calls {
			t.Fatalf("%s: record of %d entries (%v), want %d", method, len(record), err, r0.calls)
		}

		k := r0.calls / 2
		resumed := &recordingCheckpoint{saved: first.saves[k-1]}
		r1, got := run(resumed)
		if string(got) != string(want) {
			t.Errorf("%s: the resumed cell's output differs:\n%s\nwant\n%s", method, got, want)
		}
		if fresh := len(resumed.saves); fresh != r0.calls-k {
			t.Errorf("%s: resumed after %d of %d calls, trained %d; want %d", method, k, r0.calls, fresh, r0.calls-k)
		}
		if at := float64(record[k-1].At); r1.seconds < at {
			t.Errorf("%s: resumed search reports %.3g s, less than the %.3g s its replayed part took", method, r1.seconds, at)
		}

		// A record of other evaluations (here, another configuration first) is not replayed.
		record[0].Values[0]++
		other, _ := json.Marshal(record)
		stale := &recordingCheckpoint{saved: other}
		if _, got := run(stale); string(got) != string(want) || len(stale.saves) != r0.calls {
			t.Errorf("%s: a record that does not match: %d evaluations trained (want all %d), output same %v",
				method, len(stale.saves), r0.calls, string(got) == string(want))
		}
	}
}
