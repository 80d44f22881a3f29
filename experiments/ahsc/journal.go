package ahsc

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/search"
)

// journal is the objective of a cell that records its evaluations in the cell's checkpoint
// (experiments.Checkpoint), so that a worker taking the cell over after the previous one died
// replays them instead of training them again: a clean-protocol BOHB cell on phoneme trains
// for hours, longer than a worker may live. Every method is deterministic given its seed and
// the values its objective returns, so answering its calls in order from the record brings
// it back to where it was. Call k is answered from entry k while the configuration and the
// fidelity asked are the recorded ones, and evaluated from then on (a search that asks for
// something else, which a deterministic one never does, drops the rest of the record).
//
// The record also answers a call that asks again what an earlier call of the search asked
// (the same configuration at the same fidelity): an evaluation is a function of the two (within
// a repeat a configuration always starts from the same weights and batch order), so training it
// again would give the recorded scores to the bit. BOHB asks so most of the time once its model
// settles on a configuration of a discrete space (phoneme's clean cells: 88% of their training,
// weighted by its cost), and the other methods now and then. Only successful evaluations are
// answered so: a failure may be a timeout, which another attempt need not repeat.
//
// The search's wall time counts a replayed or repeated evaluation for the time it first took,
// not for its replay: seconds is what an uninterrupted search that trains every call would
// have reported, give or take the search's own work between the calls of the interrupted
// attempt, so that the methods' times stay comparable with the authors' code, which trains
// every call.
type journal struct {
	evaluate func(ctx context.Context, cfg search.Config, fidelity float64) convexity.Evaluation
	observe  func(convexity.Evaluation)
	cp       experiments.Checkpoint

	saved   []journalEntry // an earlier attempt's record, replayed in order
	entries []journalEntry // this attempt's record: the replayed entries, then the new ones
	start   time.Time
	offset  time.Duration // seconds() − wall time: the replayed evaluations' first cost, less their replay's
}

// journalEntry is one recorded evaluation (convexity.Evaluation): its scores as a cell's
// output stores them, and what else replaying it needs. JSON keeps every float64 bit for bit.
type journalEntry struct {
	evalJSON
	Values []experiments.F64 `json:"values"` // the configuration, exactly
	Epochs int               `json:"epochs"`
	Value  experiments.F64   `json:"value"`
	Err    string            `json:"err,omitempty"`
	At     experiments.F64   `json:"at"` // the search's seconds when the evaluation ended
	// Cost is the seconds the evaluation took when it was trained (absent in the records of
	// builds before repeated calls were answered from the record)
	Cost experiments.F64 `json:"cost,omitempty"`
}

// newJournal starts the search's clock and reads the cell's checkpoint from ctx: observe
// receives every evaluation, replayed or not. A record that cannot be read is ignored (the
// cell starts over, which gives the same result, later).
func newJournal(ctx context.Context, task *convexity.Task) *journal {
	j := &journal{evaluate: task.Evaluate, observe: task.Observe, cp: experiments.CheckpointOf(ctx), start: time.Now()}
	if saved := j.cp.Saved(); saved != nil {
		if err := json.Unmarshal(saved, &j.saved); err != nil {
			j.saved = nil
		}
	}
	return j
}

// seconds is the search's wall time so far, replayed evaluations counted for their first cost.
func (j *journal) seconds() float64 { return (time.Since(j.start) + j.offset).Seconds() }

// objective answers the search's calls: from the record while it lasts, then by evaluating.
func (j *journal) objective(ctx context.Context, cfg search.Config, fidelity float64) (float64, error) {
	k := len(j.entries)
	if k < len(j.saved) {
		if e := j.saved[k]; e.matches(cfg, fidelity) {
			j.entries = append(j.entries, e)
			j.offset = time.Duration(float64(e.At)*float64(time.Second)) - time.Since(j.start)
			return j.deliver(e.evaluation(cfg))
		}
		j.saved = nil
	}
	if e, ok := j.asked(cfg, fidelity); ok {
		j.offset += time.Duration(float64(e.Cost) * float64(time.Second))
		e.At = f64(j.seconds())
		j.record(ctx, e)
		return j.deliver(e.evaluation(cfg))
	}
	began := j.seconds()
	ev := j.evaluate(ctx, cfg, fidelity)
	if ctx.Err() != nil {
		return j.deliver(ev) // interrupted: nothing to record
	}
	at := j.seconds()
	e := newJournalEntry(ev, at)
	e.Cost = f64(at - began)
	j.record(ctx, e)
	return j.deliver(ev)
}

// asked returns the latest successful evaluation of cfg at the fidelity in this attempt's
// record, if there is one.
func (j *journal) asked(cfg search.Config, fidelity float64) (journalEntry, bool) {
	for i := len(j.entries) - 1; i >= 0; i-- {
		if e := j.entries[i]; e.Err == "" && e.matches(cfg, fidelity) {
			return e, true
		}
	}
	return journalEntry{}, false
}

// record appends e to the record and saves it. A record that cannot be written costs a later
// attempt time, never a different result, so it must not fail the evaluation (the search
// would count it as a failed trial).
func (j *journal) record(ctx context.Context, e journalEntry) {
	j.entries = append(j.entries, e)
	if b, err := json.Marshal(j.entries); err == nil {
		_ = j.cp.Save(ctx, b)
	}
}

func (j *journal) deliver(e convexity.Evaluation) (float64, error) {
	if j.observe != nil {
		j.observe(e)
	}
	return e.Value, e.Err
}

func newJournalEntry(e convexity.Evaluation, at float64) journalEntry {
	je := journalEntry{evalJSON: evalJSON{Config: e.Config.String(), Fidelity: f64(e.Fidelity), ValMetric: f64(e.ValMetric),
		ValLoss: f64(e.ValLoss), TestMetric: f64(e.TestMetric), TestAcc: f64(e.TestAccuracy), TestNLL: f64(e.TestLoss), Failed: e.Err != nil,
		Whitebox: whiteboxToJSON(e.Whitebox)},
		Values: experiments.F64s(e.Config.Values), Epochs: e.Epochs, Value: f64(e.Value), At: f64(at)}
	if e.Err != nil {
		je.Err = e.Err.Error()
	}
	return je
}

// matches reports whether the entry records the evaluation of cfg at the fidelity.
func (je journalEntry) matches(cfg search.Config, fidelity float64) bool {
	return float64(je.Fidelity) == fidelity && slices.Equal(experiments.Floats(je.Values), cfg.Values)
}

// evaluation is the recorded evaluation of cfg.
func (je journalEntry) evaluation(cfg search.Config) convexity.Evaluation {
	e := convexity.Evaluation{Config: cfg, Fidelity: float64(je.Fidelity), Epochs: je.Epochs, Value: float64(je.Value),
		ValMetric: float64(je.ValMetric), ValLoss: float64(je.ValLoss),
		TestMetric: float64(je.TestMetric), TestAccuracy: float64(je.TestAcc), TestLoss: float64(je.TestNLL),
		Whitebox: je.Whitebox.whitebox()}
	if je.Err != "" {
		e.Err = errors.New(je.Err)
	}
	return e
}
