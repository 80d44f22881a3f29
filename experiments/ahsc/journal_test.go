package ahsc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/search"
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
	cfg := defaultConfig(t, experiments.Quick)
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

// TestJournalRepeats: a call that asks again what an earlier call asked is answered from the
// record — the same scores, no training — and counted for the time the first took; a failed
// evaluation is asked again; and a record holding such answers replays like any other.
func TestJournalRepeats(t *testing.T) {
	const cost = 30 * time.Millisecond
	var trained []string
	evaluate := func(_ context.Context, cfg search.Config, fidelity float64) convexity.Evaluation {
		time.Sleep(cost)
		trained = append(trained, fmt.Sprint(cfg.Values, fidelity))
		e := convexity.Evaluation{Config: cfg, Fidelity: fidelity, Epochs: 3, Value: -cfg.Values[0] * fidelity,
			ValMetric: cfg.Values[0] * fidelity, ValLoss: 0.5, TestMetric: math.NaN(), TestAccuracy: math.NaN(), TestLoss: math.NaN()}
		if cfg.Values[0] == 3 {
			e.Err, e.Value = errors.New("diverged"), math.NaN()
		}
		return e
	}
	a, b, c := search.Config{Values: []float64{1, 2}}, search.Config{Values: []float64{2, 2}}, search.Config{Values: []float64{3, 2}}
	calls := []struct {
		cfg      search.Config
		fidelity float64
	}{{a, 1. / 3}, {b, 1. / 3}, {a, 1. / 3}, {a, 1}, {c, 1}, {a, 1. / 3}, {c, 1}, {a, 1}}
	wantTrained := "[[1 2] 0.3333333333333333 [2 2] 0.3333333333333333 [1 2] 1 [3 2] 1 [3 2] 1]"
	run := func(cp *recordingCheckpoint) (values []float64, seconds float64) {
		j := &journal{evaluate: evaluate, cp: cp, start: time.Now()}
		if cp.saved != nil {
			if err := json.Unmarshal(cp.saved, &j.saved); err != nil {
				t.Fatal(err)
			}
		}
		for _, call := range calls {
			v, err := j.objective(context.Background(), call.cfg, call.fidelity)
			if (err != nil) != (call.cfg.Values[0] == 3) {
				t.Fatalf("%v at %v: error %v", call.cfg.Values, call.fidelity, err)
			}
			values = append(values, v)
		}
		return values, j.seconds()
	}
	first := &recordingCheckpoint{}
	values, seconds := run(first)
	if got := fmt.Sprint(trained); got != wantTrained {
		t.Fatalf("trained %s, want %s", got, wantTrained)
	}
	if want := "[-0.3333333333333333 -0.6666666666666666 -0.3333333333333333 -1 NaN -0.3333333333333333 NaN -1]"; fmt.Sprint(values) != want {
		t.Errorf("values %v, want %s", values, want)
	}
	if len(first.saves) != len(calls) {
		t.Errorf("%d saves for %d calls, want one each", len(first.saves), len(calls))
	}
	if min := float64(len(calls)) * cost.Seconds(); seconds < min {
		t.Errorf("the search reports %.3f s, less than its %d calls at %v each", seconds, len(calls), cost)
	}

	// Resumed after five calls (two of them answered from the record): only the failure is
	// trained again, and the answers are the same.
	trained = nil
	resumed := &recordingCheckpoint{saved: first.saves[4]}
	again, _ := run(resumed)
	if fmt.Sprint(again) != fmt.Sprint(values) || fmt.Sprint(trained) != "[[3 2] 1]" {
		t.Errorf("resumed: values %v, trained %v; want %v and [[3 2] 1] only", again, trained, values)
	}
}
