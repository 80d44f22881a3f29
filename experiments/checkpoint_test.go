package experiments_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	. "github.com/hyperflat/hyperflat/experiments"
)

// countingExperiment has one cell that takes `steps` steps, saving its progress after each,
// and records every step it computes. stop, when set, interrupts the run after that many steps.
type countingExperiment struct {
	steps int
	pause time.Duration // each step's time

	mu       sync.Mutex
	computed []int
	resumed  []int // the step each attempt started from
	stop     int
	cancel   context.CancelFunc
}

func (c *countingExperiment) experiment() Experiment {
	return Define("counting", "", "one cell of steps", func(ctx context.Context, opt Options, _ *soakConfig) (*Plan, error) {
		p := &Plan{Cells: []Cell{{Key: "steps", Seed: opt.Seed}}}
		p.Run = func(ctx context.Context, _, _ int) (CellResult, error) {
			cp := CheckpointOf(ctx)
			from, sum := 0, 0
			if saved := cp.Saved(); saved != nil {
				var s [2]int
				if err := json.Unmarshal(saved, &s); err != nil {
					return CellResult{}, err
				}
				from, sum = s[0], s[1]
			}
			c.mu.Lock()
			c.resumed = append(c.resumed, from)
			c.mu.Unlock()
			for step := from; step < c.steps; step++ {
				if err := ctx.Err(); err != nil {
					return CellResult{}, err
				}
				sum += step * step
				time.Sleep(c.pause)
				c.mu.Lock()
				c.computed = append(c.computed, step)
				if step+1 == c.stop {
					c.cancel()
				}
				c.mu.Unlock()
				if err := cp.Save(ctx, json.RawMessage(`[`+strconv.Itoa(step+1)+`,`+strconv.Itoa(sum)+`]`)); err != nil {
					return CellResult{}, err
				}
			}
			return CellResult{Output: sum, Metrics: map[string]float64{"sum": float64(sum)}}, nil
		}
		p.Assemble = func(outputs []json.RawMessage) (*Result, error) {
			t := Table{Name: "summary", Columns: []string{"sum"}}
			t.Add(string(outputs[0]))
			return &Result{Experiment: "counting", Tables: []Table{t}}, nil
		}
		return p, nil
	}, nil)
}

// TestCheckpointResume: a worker interrupted in the middle of a cell writes the progress the
// cell saved (including saves within CheckpointInterval of the last write), and the resumed
// run's cell goes on from there, computing each step once, with the uninterrupted result.
func TestCheckpointResume(t *testing.T) {
	st := openTestStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	c := &countingExperiment{steps: 6, stop: 4, cancel: cancel}
	e := c.experiment()
	_, err := (&Runner{Store: st}).Start(ctx, e, Options{Seed: 1, Config: &soakConfig{}}, Mode{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v, want context.Canceled", err)
	}
	status, err := (&Runner{Store: st}).Start(context.Background(), e, Options{Seed: 1, Config: &soakConfig{}}, Mode{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := status.Result.Tables[0].Rows[0][0]; got != "55" {
		t.Errorf("resumed sum %s, want 55 (0²+…+5²)", got)
	}
	if want := []int{0, 4}; len(c.resumed) != 2 || c.resumed[0] != want[0] || c.resumed[1] != want[1] {
		t.Errorf("attempts started at steps %v, want %v", c.resumed, want)
	}
	if len(c.computed) != 6 {
		t.Errorf("computed steps %v, want each of 0..5 once", c.computed)
	}

	// Without a store there is nothing to resume from, and saving is harmless.
	plain := &countingExperiment{steps: 3}
	res, err := plain.experiment().Run(context.Background(), Options{Seed: 1, Workers: 1, Config: &soakConfig{}})
	if err != nil || res.Tables[0].Rows[0][0] != "5" {
		t.Errorf("in-memory run: %v, %v", res, err)
	}
}

// TestCheckpointCountsEarlierAttempts: a cell that went on from an earlier attempt's progress
// reports the time of both attempts as its seconds (the store's run summary sums them), not
// only its last attempt's.
func TestCheckpointCountsEarlierAttempts(t *testing.T) {
	st := openTestStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	const pause = 40 * time.Millisecond
	c := &countingExperiment{steps: 6, stop: 4, cancel: cancel, pause: pause}
	e := c.experiment()
	began := time.Now()
	if _, err := (&Runner{Store: st}).Start(ctx, e, Options{Seed: 1, Config: &soakConfig{}}, Mode{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v, want context.Canceled", err)
	}
	status, err := (&Runner{Store: st}).Start(context.Background(), e, Options{Seed: 1, Config: &soakConfig{}}, Mode{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(began).Seconds()
	cells, err := st.Cells(context.Background(), status.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Six steps were computed in all, four of them by the first attempt.
	if got, least := cells[0].Outcome.Seconds, (6 * pause).Seconds(); got < least || got > wall {
		t.Errorf("cell seconds %.3f, want between the six steps' %.3f and the two runs' wall time %.3f", got, least, wall)
	}
	runs, err := st.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := runs[len(runs)-1].CellSeconds; got != cells[0].Outcome.Seconds {
		t.Errorf("run's cell seconds %.3f, want its one cell's %.3f", got, cells[0].Outcome.Seconds)
	}
}
