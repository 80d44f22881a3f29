package ahsc

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hyperflat/hyperflat/experiments"
)

// RunProgress is a stored ahsc run not yet finished, which Table 1 lists as in progress so
// that a reader sees what is being computed (ParseRunProgress makes one from the store's
// record).
type RunProgress struct {
	ID                int64
	Dataset, Protocol string
	Done, Cells       int
	// Left estimates the core-seconds the unfinished cells will take. A method's cells cost
	// alike, and methods differ tenfold (a clean BOHB cell trains 30 full-fidelity
	// equivalents, AHSC screens for one epoch), so each cell counts at its method's mean: of
	// its finished cells and of its cells under way, each of these at the time its record has
	// reached (at least what it will take: a mean of finished cells alone would hold a method
	// at its one quick cell while others have run for hours), or at the mean of every finished
	// cell, at least, while its method has none finished. The finished cells are those of the
	// build that finished the latest cell, for a method it has finished cells of, and for the
	// mean of every finished cell (a later build is often several times faster). A cell under
	// way counts what is left of that mean after its record's time, or nothing past it. NaN
	// before any cell finished.
	Left float64
	// UnderWay are the unfinished cells that recorded evaluations (a cell's record survives
	// its worker: see journal), in cell order.
	UnderWay []CellRecord
}

// CellRecord is how far an unfinished cell's recorded search has come.
type CellRecord struct {
	Key         string
	Evaluations int
	Seconds     float64 // the search's time at its last recorded evaluation
}

// CellTime is where one cell of a run stands, for RunProgress.
type CellTime struct {
	Key     string // "dataset/rREPEAT/method", the ahsc plan's cell key
	Done    bool
	Seconds float64 // a done or failed cell's, as the store keeps it
	// Attempts is how many times the cell was claimed, and LastAttempt the seconds from the
	// latest claim to the completion.
	Attempts    int
	LastAttempt float64
	// Build is the code version that finished a done cell, and Finished when.
	Build    string
	Finished time.Time
	// Output is a done cell's output; its search's seconds (a resumed cell's replayed
	// evaluations at their first cost) count instead of Seconds where the store kept the last
	// attempt's time only.
	Output json.RawMessage
	// Record is an unfinished cell's saved progress as the store keeps it
	// (store.Store.SavedProgress), or nil.
	Record json.RawMessage
}

// cost is a done cell's core time. The store's seconds are the worker's own, across attempts,
// except for a cell resumed by a build that did not count its earlier attempts (before
// f023c7e): its seconds are no more than its last attempt's span, and its search's seconds,
// which count the evaluations it replayed at their first cost, are taken where they are more.
// The search's seconds are not taken otherwise: since 2f8dedb they also count a repeated call
// answered from the record at its first cost (to compare methods as the authors' code, which
// trains every call), up to 15 times a BOHB cell's core time.
func (c CellTime) cost() float64 {
	if c.Attempts <= 1 || c.Seconds > c.LastAttempt+1 {
		return c.Seconds
	}
	var out struct{ Seconds float64 }
	if json.Unmarshal(c.Output, &out) == nil && out.Seconds > c.Seconds {
		return out.Seconds
	}
	return c.Seconds
}

// CellSeconds is the time of a run's finished cells (StoredRun.CellSeconds): a done cell's
// cost, and a failed one's Seconds as the store keeps it (other cells have none).
func CellSeconds(cells []CellTime) float64 {
	var sum float64
	for _, c := range cells {
		if c.Done {
			sum += c.cost()
		} else {
			sum += c.Seconds
		}
	}
	return sum
}

// describe is "run 8, 9/120 cells, ≈ 11.5 core-hours left" (the estimate once a cell
// finished), followed by the cells under way with their records.
func (p RunProgress) describe() string {
	s := fmt.Sprintf("run %d, %d/%d cells", p.ID, p.Done, p.Cells)
	if !math.IsNaN(p.Left) {
		s += fmt.Sprintf(", ≈ %.1f core-hours left", p.Left/3600)
	}
	for i, r := range p.UnderWay {
		sep := "; under way: "
		if i > 0 {
			sep = ", "
		}
		evals := fmt.Sprintf("%d evaluations", r.Evaluations)
		if r.Evaluations == 1 {
			evals = "1 evaluation"
		}
		span := fmt.Sprintf("%.1f h", r.Seconds/3600)
		if r.Seconds < 3600 {
			span = fmt.Sprintf("%.0f min", r.Seconds/60)
		}
		s += fmt.Sprintf("%s%s with %s recorded over %s of search", sep, r.Key, evals, span)
	}
	return s
}

// recordOf summarizes a cell's saved record (journal entries), or reports false when there is
// none it can read.
func recordOf(key string, stored json.RawMessage) (CellRecord, bool) {
	if stored == nil {
		return CellRecord{}, false
	}
	progress, err := experiments.SavedRecord(stored)
	var entries []struct {
		At experiments.F64 `json:"at"`
	}
	if err != nil || json.Unmarshal(progress, &entries) != nil || len(entries) == 0 {
		return CellRecord{}, false
	}
	return CellRecord{Key: key, Evaluations: len(entries), Seconds: float64(entries[len(entries)-1].At)}, true
}

// ParseRunProgress reads the dataset and protocol of a run from its stored options (the
// experiments package's {"preset", "seed", "config"} record) and estimates its time left
// from its cells.
func ParseRunProgress(id int64, options []byte, cells []CellTime) (RunProgress, error) {
	var rec struct {
		Config Config `json:"config"`
	}
	if err := json.Unmarshal(options, &rec); err != nil {
		return RunProgress{}, fmt.Errorf("ahsc: run %d's options: %w", id, err)
	}
	p := RunProgress{ID: id, Dataset: rec.Config.Dataset, Protocol: rec.Config.Protocol, Cells: len(cells), Left: math.NaN()}
	if p.Dataset == "" {
		p.Dataset = "iris"
	}
	if p.Protocol == "" {
		p.Protocol = protocolClean
	}
	type tally struct {
		n, done int
		sum     float64
	}
	byMethod, all := map[string]tally{}, tally{}
	method := func(key string) string { return key[strings.LastIndexByte(key, '/')+1:] }
	newest, newestAt := "", time.Time{}
	for _, c := range cells {
		if c.Done && c.Finished.After(newestAt) {
			newest, newestAt = c.Build, c.Finished
		}
	}
	newestDone := map[string]bool{}
	for _, c := range cells {
		if c.Done && c.Build == newest {
			newestDone[method(c.Key)] = true
		}
	}
	spent := map[string]float64{} // cells under way: their records' time
	for _, c := range cells {
		switch r, ok := recordOf(c.Key, c.Record); {
		case c.Done:
			p.Done++
			if c.Build != newest && newestDone[method(c.Key)] {
				continue
			}
			cost := c.cost()
			t := byMethod[method(c.Key)]
			byMethod[method(c.Key)] = tally{t.n + 1, t.done + 1, t.sum + cost}
			if c.Build == newest {
				all = tally{all.n + 1, all.done + 1, all.sum + cost}
			}
		case ok:
			p.UnderWay = append(p.UnderWay, r)
			spent[c.Key] = r.Seconds
			t := byMethod[method(c.Key)]
			byMethod[method(c.Key)] = tally{t.n + 1, t.done, t.sum + r.Seconds}
		}
	}
	if all.n == 0 {
		return p, nil
	}
	mean := func(t tally) float64 { return t.sum / float64(t.n) }
	p.Left = 0
	for _, c := range cells {
		if c.Done {
			continue
		}
		t := byMethod[method(c.Key)]
		each := mean(all)
		switch {
		case t.done > 0:
			each = mean(t)
		case t.n > 0:
			each = max(each, mean(t))
		}
		p.Left += max(each-spent[c.Key], 0)
	}
	return p, nil
}
