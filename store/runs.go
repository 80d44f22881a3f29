package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CellSpec is one cell of a run's plan.
type CellSpec struct {
	Index  int             // 0..n-1, plan order
	Key    string          // unique within the run, e.g. "iris/r3/tpe"
	Seed   uint64          // the seed the cell uses
	Config json.RawMessage // the cell's configuration (may be nil)
}

// RunSpec describes a run to create.
type RunSpec struct {
	Identity   string          // hash of everything that determines the results
	Experiment string          // the experiment's name
	Options    json.RawMessage // what is needed to rebuild the plan
	Cells      []CellSpec
	// Build names the program that began the run (experiments.CodeVersion): workers of
	// another build leave its cells alone (ClaimOptions.Build). "" is unknown (a run stored
	// before builds were recorded), which any build takes.
	Build string
}

// Status is a cell's state.
type Status string

// The states of a cell. A cell is Pending until claimed, Running while leased (also after the
// lease expired, until it is claimed again), and Done or Failed when its worker said so; Retired
// when its run was retired before it ended (Store.Retire), which no claim takes.
const (
	Pending Status = "pending"
	Running Status = "running"
	Done    Status = "done"
	Failed  Status = "failed"
	Retired Status = "retired"
)

// Run is a run with a summary of its cells.
type Run struct {
	ID         int64
	Identity   string
	Experiment string
	Options    json.RawMessage
	Created    time.Time
	// Cell counts: all, done, failed, running (status running, whether or not the lease has
	// expired) and retired.
	Cells, Done, Failed, Running, Retired int
	// Started is the first claim of any cell, Finished the last completion or failure (zero if
	// none).
	Started, Finished time.Time
	// CellSeconds is the sum of the seconds of the done and failed cells.
	CellSeconds float64
	// HasResult tells whether SaveResult stored an assembled result.
	HasResult bool
	// Build is the build that began the run (RunSpec.Build); "" when unknown.
	Build string
}

// Status names the run's state as hyperflat runs and the dashboard show it: finished (its
// assembled result is stored), failed (every cell ended, some failed), unassembled (every
// cell done, but no process has assembled the result yet: a run imported from exports, or one
// whose last worker stopped; hyperflat report reads it as it is, run --resume assembles it),
// retired (its unfinished cells were taken out of the work: Store.Retire), pending (nothing
// claimed or done) or running.
func (r Run) Status() string {
	switch {
	case r.HasResult:
		return "finished"
	case r.Retired > 0 && r.Done+r.Failed+r.Retired == r.Cells:
		return "retired"
	case r.Failed > 0 && r.Done+r.Failed == r.Cells:
		return "failed"
	case r.Cells > 0 && r.Done == r.Cells:
		return "unassembled"
	case r.Done == 0 && r.Running == 0:
		return "pending"
	}
	return "running"
}

// Left is how many of the run's cells are still to compute: pending or running.
func (r Run) Left() int { return r.Cells - r.Done - r.Failed - r.Retired }

// insertBatch is how many cells one INSERT statement carries (6 parameters each).
const insertBatch = 500

// CreateRun creates a new run with all its cells pending, atomically. It always creates a new
// run, even if one with the same identity exists (see FindRun). Cell indices must be 0..n-1,
// each once, and keys unique.
func (s *Store) CreateRun(ctx context.Context, spec RunSpec) (Run, error) {
	if spec.Identity == "" {
		return Run{}, errors.New("store: create run: empty identity")
	}
	seen := make([]bool, len(spec.Cells))
	keys := make(map[string]bool, len(spec.Cells))
	for _, c := range spec.Cells {
		if c.Index < 0 || c.Index >= len(spec.Cells) || seen[c.Index] {
			return Run{}, fmt.Errorf("store: create run: cell %q has index %d: want each of 0..%d once", c.Key, c.Index, len(spec.Cells)-1)
		}
		seen[c.Index] = true
		if keys[c.Key] {
			return Run{}, fmt.Errorf("store: create run: duplicate cell key %q", c.Key)
		}
		keys[c.Key] = true
	}
	run := Run{
		Identity:   spec.Identity,
		Experiment: spec.Experiment,
		Options:    spec.Options,
		Cells:      len(spec.Cells),
		Build:      spec.Build,
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		var created float64
		err := tx.QueryRowContext(ctx,
			`INSERT INTO runs (identity, experiment, options, created, build) VALUES ($1, $2, $3, `+s.d.now+`, $4) RETURNING id, created`,
			spec.Identity, spec.Experiment, jsonArg(spec.Options), spec.Build).Scan(&run.ID, &created)
		if err != nil {
			return err
		}
		run.Created = epochTime(created)
		for start := 0; start < len(spec.Cells); start += insertBatch {
			batch := spec.Cells[start:min(start+insertBatch, len(spec.Cells))]
			var q strings.Builder
			q.WriteString(`INSERT INTO cells (run_id, idx, cell_key, seed, config, status) VALUES `)
			args := make([]any, 0, 5*len(batch)+2)
			args = append(args, run.ID, string(Pending))
			for i, c := range batch {
				if i > 0 {
					q.WriteString(", ")
				}
				n := len(args)
				fmt.Fprintf(&q, "($1, $%d, $%d, $%d, $%d, $2)", n+1, n+2, n+3, n+4)
				args = append(args, c.Index, c.Key, strconv.FormatUint(c.Seed, 10), jsonArg(c.Config))
			}
			if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Run{}, fmt.Errorf("store: create run: %w", err)
	}
	return run, nil
}

// runSelect selects runs with their cell summaries; the build column (” before version 3)
// goes at the first %s and, for GROUP BY, the third; a WHERE clause on r at the second.
const runSelect = `SELECT r.id, r.identity, r.experiment, r.options, r.created, %s,
	CASE WHEN r.result IS NULL THEN 0 ELSE 1 END,
	COUNT(c.idx),
	COALESCE(SUM(CASE WHEN c.status = 'done' THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN c.status = 'failed' THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN c.status = 'running' THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN c.status = 'retired' THEN 1 ELSE 0 END), 0),
	MIN(c.first_claimed),
	MAX(c.finished),
	COALESCE(SUM(c.seconds), 0)
FROM runs r LEFT JOIN cells c ON c.run_id = r.id
%s
GROUP BY r.id, r.identity, r.experiment, r.options, r.created, r.result%s
ORDER BY r.id`

func (s *Store) queryRuns(ctx context.Context, where string, args ...any) ([]Run, error) {
	build, group := "r.build", ", r.build"
	if s.version < 3 {
		build, group = "''", ""
	}
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf(runSelect, build, where, group), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		var (
			r                 Run
			options           []byte
			created, seconds  float64
			hasResult         int
			started, finished sql.NullFloat64
		)
		err := rows.Scan(&r.ID, &r.Identity, &r.Experiment, &options, &created, &r.Build, &hasResult,
			&r.Cells, &r.Done, &r.Failed, &r.Running, &r.Retired, &started, &finished, &seconds)
		if err != nil {
			return nil, err
		}
		r.Options = json.RawMessage(options)
		r.Created = epochTime(created)
		r.HasResult = hasResult != 0
		r.Started = nullTime(started)
		r.Finished = nullTime(finished)
		r.CellSeconds = seconds
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

// FindRun returns the latest run (highest ID) with the identity, and whether there is one.
func (s *Store) FindRun(ctx context.Context, identity string) (Run, bool, error) {
	runs, err := s.queryRuns(ctx, `WHERE r.id = (SELECT MAX(id) FROM runs WHERE identity = $1)`, identity)
	if err != nil {
		return Run{}, false, fmt.Errorf("store: find run %q: %w", identity, err)
	}
	if len(runs) == 0 {
		return Run{}, false, nil
	}
	return runs[0], true, nil
}

// GetRun returns the run with the ID, or an error wrapping ErrNotFound.
func (s *Store) GetRun(ctx context.Context, id int64) (Run, error) {
	runs, err := s.queryRuns(ctx, `WHERE r.id = $1`, id)
	if err != nil {
		return Run{}, fmt.Errorf("store: get run %d: %w", id, err)
	}
	if len(runs) == 0 {
		return Run{}, fmt.Errorf("store: run %d: %w", id, ErrNotFound)
	}
	return runs[0], nil
}

// Runs returns all runs in ID order.
func (s *Store) Runs(ctx context.Context) ([]Run, error) {
	runs, err := s.queryRuns(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("store: runs: %w", err)
	}
	return runs, nil
}

// SaveResult stores the run's assembled result, replacing any earlier one. A nil result removes it.
func (s *Store) SaveResult(ctx context.Context, run int64, result json.RawMessage) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET result = $1 WHERE id = $2`, jsonArg(result), run)
		return affected(res, err, ErrNotFound)
	})
	if err != nil {
		return fmt.Errorf("store: save result of run %d: %w", run, err)
	}
	return nil
}

// Result returns the run's assembled result and whether there is one. An absent run is an
// error wrapping ErrNotFound.
func (s *Store) Result(ctx context.Context, run int64) (json.RawMessage, bool, error) {
	var result []byte
	err := s.db.QueryRowContext(ctx, `SELECT result FROM runs WHERE id = $1`, run).Scan(&result)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: result of run %d: %w", run, err)
	}
	if result == nil {
		return nil, false, nil
	}
	return json.RawMessage(result), true, nil
}

// DeleteRun deletes the run and its cells.
func (s *Store) DeleteRun(ctx context.Context, run int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM cells WHERE run_id = $1`, run); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = $1`, run)
		return affected(res, err, ErrNotFound)
	})
	if err != nil {
		return fmt.Errorf("store: delete run %d: %w", run, err)
	}
	return nil
}

// runExists reports whether the run exists.
func (s *Store) runExists(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, run int64) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE id = $1`, run).Scan(&n)
	return n > 0, err
}

// affected turns an Exec that changed no row into errNone.
func affected(res sql.Result, err, errNone error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return errNone
	}
	return nil
}
