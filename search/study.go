package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// State is how a trial ended.
type State int

// Trial states.
const (
	Running State = iota
	Complete
	Failed // the objective returned an error or a non-finite value; Err says why
)

// Trial is one evaluation of a configuration. Value is minimized.
type Trial struct {
	ID       int
	Config   Config
	Value    float64
	Fidelity float64 // fraction of the full training budget used (1 for a full evaluation)
	State    State
	Err      string
}

// Sampler proposes configurations from the trials seen so far (Optuna's sampler; Goptuna's
// too). It must draw every random number from rng, so that a seed fixes its proposals.
type Sampler interface {
	Ask(rng *rand.Rand, space Space, trials []Trial) (Config, error)
}

// Objective evaluates a configuration at a fidelity in (0, 1] (a fraction of the full training
// budget; methods without multi-fidelity always pass 1) and returns the loss to minimize.
type Objective func(ctx context.Context, cfg Config, fidelity float64) (float64, error)

// Method is a complete search strategy that spends a budget of full-fidelity-equivalent
// evaluations of an objective (model-based samplers, BOHB, AHSC).
type Method interface {
	Name() string
	Search(ctx context.Context, rng *rand.Rand, space Space, obj Objective, budget int) ([]Trial, error)
}

// Study records trials and asks its sampler for new ones: the ask/tell interface through which
// any loop can drive a sampler. It is safe for concurrent use, so that parallel workers can
// share one study: each Ask sees every trial told before it, and asks are serialized (a
// sampler and its random stream are not safe for concurrent use). With several workers the
// order of asks and tells, hence the proposals, depends on timing; one worker is
// deterministic for a seed.
type Study struct {
	Space   Space
	Sampler Sampler
	mu      sync.Mutex
	rng     *rand.Rand
	trials  []Trial
}

// errNilRand is what the samplers and searches return without a random source: every draw
// comes from the caller's rng, so that a seed fixes the search.
var errNilRand = errors.New("search: a nil random source (*rand.Rand); pass rand.New(rand.NewPCG(seed, …))")

// errNilStudy is what a Study's methods return when it was not made by NewStudy.
var errNilStudy = errors.New("search: a nil Study, or one not made by NewStudy")

// NewStudy starts a study over space whose sampler draws from a generator seeded with seed.
func NewStudy(space Space, sampler Sampler, seed uint64) (*Study, error) {
	if err := space.Validate(); err != nil {
		return nil, err
	}
	if sampler == nil {
		return nil, fmt.Errorf("search: study without a sampler")
	}
	return &Study{Space: space, Sampler: sampler, rng: rand.New(rand.NewPCG(seed, 0x57d7))}, nil
}

// Ask starts a new full-fidelity trial at the sampler's next proposal.
func (s *Study) Ask() (Trial, error) {
	if s == nil || s.Sampler == nil {
		return Trial{}, errNilStudy
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg, err := s.Sampler.Ask(s.rng, s.Space, append([]Trial(nil), s.trials...))
	if err != nil {
		return Trial{}, err
	}
	return s.add(cfg, 1), nil
}

// Add starts a trial at a configuration chosen elsewhere (a multi-fidelity schedule, a user's
// own guess), at the given fidelity.
func (s *Study) Add(cfg Config, fidelity float64) Trial {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.add(cfg, fidelity)
}

func (s *Study) add(cfg Config, fidelity float64) Trial {
	t := Trial{ID: len(s.trials), Config: cfg, Fidelity: fidelity, State: Running}
	s.trials = append(s.trials, t)
	return t
}

// Tell finishes trial id with its value, or as failed when err is non-nil or the value is not
// finite.
func (s *Study) Tell(id int, value float64, err error) error {
	if s == nil {
		return errNilStudy
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id < 0 || id >= len(s.trials) || s.trials[id].State != Running {
		return fmt.Errorf("search: trial %d is not running", id)
	}
	t := &s.trials[id]
	switch {
	case err != nil:
		t.State, t.Err, t.Value = Failed, err.Error(), math.NaN()
	case math.IsNaN(value) || math.IsInf(value, 0):
		t.State, t.Err, t.Value = Failed, fmt.Sprintf("objective value %v", value), math.NaN()
	default:
		t.State, t.Value = Complete, value
	}
	return nil
}

// Trials returns a copy of every trial so far.
func (s *Study) Trials() []Trial {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Trial(nil), s.trials...)
}

// Best returns the complete full-fidelity (Fidelity ≥ 1) trial of least finite value; trials
// at a lower fidelity are not comparable with it and are skipped, and so are failed trials
// (diverged, timed out, too big) and any trial whose value is NaN or infinite.
func Best(trials []Trial) (Trial, error) {
	best := -1
	for i, t := range trials {
		finite := !math.IsNaN(t.Value) && !math.IsInf(t.Value, 0)
		if t.State == Complete && finite && t.Fidelity >= 1 && (best < 0 || t.Value < trials[best].Value) {
			best = i
		}
	}
	if best < 0 {
		failed := 0
		for _, t := range trials {
			if t.State == Failed {
				failed++
			}
		}
		if failed > 0 {
			return Trial{}, fmt.Errorf("search: no complete full-fidelity trial (%d of %d failed; first: %s)", failed, len(trials), firstErr(trials))
		}
		return Trial{}, errors.New("search: no complete full-fidelity trial")
	}
	return trials[best], nil
}

func firstErr(trials []Trial) string {
	for _, t := range trials {
		if t.State == Failed {
			return t.Err
		}
	}
	return ""
}

// Failures counts the failed trials.
func Failures(trials []Trial) int {
	n := 0
	for _, t := range trials {
		if t.State == Failed {
			n++
		}
	}
	return n
}

// Sequential is the Method that runs a Sampler for budget full evaluations, one at a time.
// Failed evaluations count against the budget, as in the papers' code: an evaluation whose
// objective returns an error (a diverged training, a timed-out or too-big trial) or a NaN or
// infinite value is recorded as a Failed trial with the reason in Err, and the search goes on;
// how the sampler treats failed trials is the sampler's (see Random, TPE, TuRBO). Cancelling
// ctx stops the search: the interrupted trial is marked Failed with ctx's error and Search
// returns ctx.Err().
type Sequential struct {
	Label   string
	Sampler Sampler
}

// Name is the method's label.
func (m Sequential) Name() string { return m.Label }

// Search asks, evaluates and tells budget times. Failed evaluations count against the budget,
// as in the papers' code, and the search goes on.
func (m Sequential) Search(ctx context.Context, rng *rand.Rand, space Space, obj Objective, budget int) ([]Trial, error) {
	if err := space.Validate(); err != nil {
		return nil, err
	}
	if m.Sampler == nil {
		return nil, fmt.Errorf("search: %s has no sampler", m.Label)
	}
	if rng == nil {
		return nil, errNilRand
	}
	if obj == nil {
		return nil, fmt.Errorf("search: %s without an objective", m.Label)
	}
	st := &Study{Space: space, Sampler: m.Sampler, rng: rng}
	for i := 0; i < budget; i++ {
		if err := ctx.Err(); err != nil {
			return st.Trials(), err
		}
		t, err := st.Ask()
		if err != nil {
			return st.Trials(), err
		}
		v, err := obj(ctx, t.Config, 1)
		if ctxErr := ctx.Err(); ctxErr != nil {
			_ = st.Tell(t.ID, math.NaN(), ctxErr) // an interrupted trial failed, as in BOHB
			return st.Trials(), ctxErr
		}
		if err := st.Tell(t.ID, v, err); err != nil {
			return st.Trials(), err
		}
	}
	return st.Trials(), nil
}

// Random samples every dimension independently and uniformly (log-uniformly where Log is set).
// It ignores the trials, failed ones included.
type Random struct{}

// Ask draws a uniform point of the space.
func (Random) Ask(rng *rand.Rand, space Space, _ []Trial) (Config, error) {
	if rng == nil {
		return Config{}, errNilRand
	}
	u := make([]float64, len(space))
	for i := range u {
		u[i] = rng.Float64()
	}
	return space.FromUnit(u), nil
}
