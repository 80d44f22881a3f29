package experiments_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/datasets"
	. "github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/store"
	"github.com/hyperflat/hyperflat/train"
	"gorgonia.org/tensor"
)

// soakExperiment has n cells, each training a small MLP on iris for two epochs from its own
// seed: many short trials, the load a search puts on the runner and the store.
func soakExperiment(n int) Experiment {
	type out struct {
		Index int `json:"index"`
		Loss  F64 `json:"loss"`
	}
	return Define("soak", "", "many short trials", func(ctx context.Context, opt Options, _ *soakConfig) (*Plan, error) {
		data, err := datasets.LoadEmbedded("iris")
		if err != nil {
			return nil, err
		}
		p := &Plan{Best: "loss"}
		for i := range n {
			p.Cells = append(p.Cells, Cell{Key: fmt.Sprintf("c%05d", i), Seed: opt.Seed + uint64(i)})
		}
		p.Run = func(ctx context.Context, i, _ int) (CellResult, error) {
			net, err := layers.NewNet(tensor.Float64, p.Cells[i].Seed)
			if err != nil {
				return CellResult{}, err
			}
			m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: data.D, Hidden: []int{8}, Out: 3})
			if err != nil {
				return CellResult{}, err
			}
			h, err := train.Fit(ctx, m, samplers.NewAdam(0.01), data, nil, train.Config{Epochs: 2, BatchSize: 32, Seed: p.Cells[i].Seed})
			if err != nil {
				return CellResult{}, err
			}
			loss := h.Epochs[len(h.Epochs)-1].Loss
			return CellResult{Output: out{i, F64(loss)}, Metrics: map[string]float64{"loss": loss}}, nil
		}
		p.Assemble = func(outputs []json.RawMessage) (*Result, error) {
			t := Table{Name: "summary", Columns: []string{"cell", "loss"}}
			for i, raw := range outputs {
				var o out
				if err := json.Unmarshal(raw, &o); err != nil {
					return nil, err
				}
				if o.Index != i {
					return nil, fmt.Errorf("cell %d holds the output of cell %d", i, o.Index)
				}
				t.Add(i, float64(o.Loss))
			}
			return &Result{Experiment: "soak", Tables: []Table{t}}, nil
		}
		return p, nil
	}, nil)
}

// soakConfig is the soak experiment's (empty) configuration.
type soakConfig struct{}

func (*soakConfig) Finish(string) error { return nil }

// heapSampler is a Monitor that records the live heap after every `every` finished cells.
type heapSampler struct {
	mu       sync.Mutex
	every    int
	finished int
	failed   []string
	heap     []uint64
}

func (h *heapSampler) Begin(int, int, string, bool) {}
func (h *heapSampler) Started(int, string)          {}
func (h *heapSampler) Finished(_ int, key string, _ CellResult, _ float64, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.failed = append(h.failed, key+": "+err.Error())
	}
	h.finished++
	if h.finished%h.every == 0 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.heap = append(h.heap, ms.HeapAlloc)
	}
}

// TestSoak runs many small trials on 4 workers through a SQLite store and checks that the
// live heap stays flat and that every cell is stored exactly once, by one claim, with its
// own output. HYPERFLAT_SOAK_CELLS makes it longer (default 4000 cells, about 20 s on 2 cores).
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test")
	}
	n := 4000
	if v, err := strconv.Atoi(os.Getenv("HYPERFLAT_SOAK_CELLS")); err == nil && v > 0 {
		n = v
	}
	st := openTestStore(t)
	mon := &heapSampler{every: n / 10}
	start := time.Now()
	status, err := (&Runner{Store: st, Workers: 4, Monitor: mon}).Start(context.Background(), soakExperiment(n), Options{Seed: 1}, Mode{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cells in %v; live heap every %d cells (MiB): %v", n, time.Since(start).Round(time.Millisecond), mon.every, mib(mon.heap))
	if len(mon.failed) > 0 {
		t.Fatalf("%d cells failed, first: %s", len(mon.failed), mon.failed[0])
	}
	// Flat: after warm-up (the first tenth), the live heap grows by less than 8 MiB.
	if len(mon.heap) < 4 {
		t.Fatalf("only %d heap samples", len(mon.heap))
	}
	base, peak := mon.heap[1], uint64(0)
	for _, h := range mon.heap[1:] {
		peak = max(peak, h)
	}
	if peak > base+8<<20 {
		t.Errorf("live heap grew from %.1f MiB to %.1f MiB over the run", float64(base)/(1<<20), float64(peak)/(1<<20))
	}
	cells, err := st.Cells(context.Background(), status.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != n || status.Computed != n {
		t.Fatalf("%d cells stored, %d computed; want %d", len(cells), status.Computed, n)
	}
	seen := map[string]bool{}
	for i, c := range cells {
		var o struct {
			Index int `json:"index"`
			Loss  F64 `json:"loss"`
		}
		if err := json.Unmarshal(c.Outcome.Output, &o); err != nil {
			t.Fatalf("cell %s: %v", c.Key, err)
		}
		if c.Status != store.Done || c.Attempts != 1 || seen[c.Key] || c.Index != i || o.Index != i || math.IsNaN(float64(o.Loss)) {
			t.Fatalf("cell %d: %s status %s, attempts %d, output %+v", i, c.Key, c.Status, c.Attempts, o)
		}
		seen[c.Key] = true
	}
	if status.Result == nil || len(status.Result.Table("summary").Rows) != n {
		t.Error("the run was not assembled")
	}
}

func mib(xs []uint64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%.1f", float64(x)/(1<<20))
	}
	return out
}
