package experiments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/store"
)

// ImportChecker checks exported runs before they are imported (store.Store.ImportRunChecked),
// so that an export cannot make the store hold what no run of this program would: its
// experiment must be one of Experiments, its identity the hash of its options (Identity), its
// options ones this build decodes, and its cells exactly the plan those options make — keys,
// seeds and configurations, the hashes of the data files they read included. Building the plan
// may read datasets from DataDir, as a worker's would; a plan is built once per options.
type ImportChecker struct {
	Experiments Registry
	DataDir     string
	// SkipPlan leaves out the comparison with the plan, for exports whose data is not at hand;
	// everything else is still checked.
	SkipPlan bool
	// plans are the plans built, by experiment and options
	plans map[string]*Plan
}

// Check is the check for store.Store.ImportRunChecked.
func (c *ImportChecker) Check(ctx context.Context, spec store.RunSpec) error {
	e, err := c.Experiments.Lookup(spec.Experiment)
	if err != nil {
		return err
	}
	want, err := storedIdentity(spec.Experiment, spec.Options)
	if err != nil {
		return err
	}
	if want != spec.Identity {
		return fmt.Errorf("identity %s is not the hash of the export's options (%s): a changed export", spec.Identity, want)
	}
	opt, err := DecodeOptions(e, spec.Options)
	if err != nil {
		return err
	}
	if c.SkipPlan {
		return nil
	}
	key := spec.Experiment + "\x00" + string(spec.Options)
	p, ok := c.plans[key]
	if !ok {
		opt.DataDir, opt.Workers = c.DataDir, 1
		if _, p, err = e.plan(ctx, opt); err != nil {
			return fmt.Errorf("building the plan of the export's options to check its cells (--data-dir or $%s names the datasets' folder; "+
				"--no-plan-check imports without this check): %w", datasets.EnvDataDir, err)
		}
		if c.plans == nil {
			c.plans = map[string]*Plan{}
		}
		c.plans[key] = p
	}
	return samePlan(spec.Cells, p)
}

// storedIdentity is the identity of a run with these stored options: Identity's hash of the
// options as stored, so that a run stored by an earlier build, whose configuration type has
// gained fields since, keeps its identity.
func storedIdentity(experiment string, options json.RawMessage) (string, error) {
	var so storedOptions
	if err := json.Unmarshal(options, &so); err != nil {
		return "", fmt.Errorf("the export's options: %w", err)
	}
	b, err := json.Marshal(struct {
		Experiment string `json:"experiment"`
		storedOptions
	}{experiment, so})
	if err != nil {
		return "", fmt.Errorf("the export's options: %w", err)
	}
	h := sha256.Sum256(b)
	return experiment + "-" + hex.EncodeToString(h[:8]), nil
}

// samePlan says how exported cells differ from a plan's.
func samePlan(cells []store.CellSpec, p *Plan) error {
	if len(cells) != len(p.Cells) {
		return fmt.Errorf("the export has %d cells, the plan of its options %d: not that plan", len(cells), len(p.Cells))
	}
	for i, c := range cells {
		pc := p.Cells[i]
		if c.Key != pc.Key || c.Seed != pc.Seed {
			return fmt.Errorf("the export's cell %d is %s (seed %d), the plan's is %s (seed %d): not that plan", i, c.Key, c.Seed, pc.Key, pc.Seed)
		}
		change, err := configChange(c.Key, c.Config, pc.Config)
		if err != nil {
			return fmt.Errorf("the export's cell %s: %w", c.Key, err)
		}
		if change != "" {
			return fmt.Errorf("the export's %s: not that plan", change)
		}
	}
	return nil
}
