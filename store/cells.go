package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultLease is the lease length of a claim or heartbeat that does not give one.
const DefaultLease = 60 * time.Second

// ClaimOptions selects the cell Claim takes and says who takes it.
type ClaimOptions struct {
	// Runs limits the claim to these runs and orders them: a cell of a run listed earlier is
	// taken before any of a run listed later, so a worker given several runs moves on to the
	// next as soon as the current one has nothing claimable left. Empty: any run, lowest ID first.
	// Within a run, the lowest index first.
	Runs          []int64
	Shard, Shards int           // when Shards > 0, only cells with Index % Shards == Shard
	Worker        string        // who claims (host/pid/goroutine), stored on the cell; default host/pid
	Lease         time.Duration // lease length (default DefaultLease)
	// Build, when set, limits the claim to runs begun by that build or by an unknown one
	// (Run.Build ""): a build's products sum in its own order, so one run's cells are best
	// computed by the build that began it.
	Build string
}

// Lease is a claimed cell: what the worker needs to compute it and what identifies the claim.
type Lease struct {
	Run     int64
	Index   int
	Key     string
	Seed    uint64
	Config  json.RawMessage
	Worker  string
	Attempt int // 1 for the first claim, incremented on every claim
	// Progress is what the latest SaveProgress of an earlier attempt recorded (nil if none),
	// from which a long cell may go on instead of starting over.
	Progress json.RawMessage
}

// Outcome is what a finished cell produced.
type Outcome struct {
	Output  json.RawMessage    // the cell's full result
	Metrics map[string]float64 // headline numbers; NaN and ±Inf are kept
	History json.RawMessage    // optional per-step history
	// Seconds is the time the cell took, as its worker reports it (experiments' workers count
	// the earlier attempts whose saved progress the cell went on from).
	Seconds     float64
	CodeVersion string
	Host        string
}

// Cell is a cell with its state.
type Cell struct {
	CellSpec
	Status   Status
	Worker   string // the worker of the latest claim, or the one that completed the cell
	Attempts int    // how many times the cell was claimed
	Outcome  Outcome
	Error    string // the reason given to Fail, when failed
	// Started is the latest claim; Finished the completion or failure.
	Started, Finished time.Time
}

// defaultWorker names this process when ClaimOptions.Worker is empty.
var defaultWorker = func() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return host + "/" + strconv.Itoa(os.Getpid())
}()

// Claim leases the lowest claimable cell, one whose status is pending or whose status is running
// and lease has expired, to o.Worker, and returns it; it returns (nil, nil) when there is none.
// The claim is one statement in one transaction: SELECT ... FOR UPDATE SKIP LOCKED in
// PostgreSQL, BEGIN IMMEDIATE in SQLite, so no two workers get the same cell. Lease expiry
// follows the database clock.
func (s *Store) Claim(ctx context.Context, o ClaimOptions) (*Lease, error) {
	if o.Shards > 0 && (o.Shard < 0 || o.Shard >= o.Shards) {
		return nil, fmt.Errorf("store: claim: shard %d not in 0..%d", o.Shard, o.Shards-1)
	}
	if o.Worker == "" {
		o.Worker = defaultWorker
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	now := s.d.now
	q := `UPDATE cells SET status = 'running', worker = ` + arg(o.Worker) + `, attempts = attempts + 1,
	lease_until = ` + now + ` + ` + arg(o.Lease.Seconds()) + `, started = ` + now + `,
	first_claimed = COALESCE(first_claimed, ` + now + `), finished = NULL
WHERE (run_id, idx) = (SELECT run_id, idx FROM cells
	WHERE status IN ('pending', 'running') AND (status = 'pending' OR lease_until < ` + now + `)`
	order := "run_id"
	if len(o.Runs) > 0 {
		in, rank := make([]string, len(o.Runs)), "CASE run_id"
		for i, id := range o.Runs {
			in[i] = arg(id)
			rank += " WHEN " + in[i] + " THEN " + strconv.Itoa(i)
		}
		q += ` AND run_id IN (` + strings.Join(in, ", ") + `)`
		order = rank + " END"
	}
	if o.Shards > 0 {
		q += ` AND idx % ` + arg(o.Shards) + ` = ` + arg(o.Shard)
	}
	if o.Build != "" {
		q += ` AND run_id IN (SELECT id FROM runs WHERE build = '' OR build = ` + arg(o.Build) + `)`
	}
	q += `
	ORDER BY ` + order + `, idx LIMIT 1` + s.d.skipLocked + `)
RETURNING run_id, idx, cell_key, seed, config, attempts, progress`
	l := &Lease{Worker: o.Worker}
	err := s.write(ctx, func(tx *sql.Tx) error {
		var seed string
		var config, progress []byte
		err := tx.QueryRowContext(ctx, q, args...).Scan(&l.Run, &l.Index, &l.Key, &seed, &config, &l.Attempt, &progress)
		if err != nil {
			return err
		}
		l.Config = json.RawMessage(config)
		if progress != nil {
			l.Progress = json.RawMessage(progress)
		}
		l.Seed, err = strconv.ParseUint(seed, 10, 64)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: claim: %w", err)
	}
	return l, nil
}

// heldBy is the condition that the cell $1/$2 is still held by the worker $3 at attempt $4.
const heldBy = `run_id = $1 AND idx = $2 AND status = 'running' AND worker = $3 AND attempts = $4`

// Heartbeat extends the lease to lease from now (DefaultLease if lease <= 0), by the database
// clock. It returns an error wrapping ErrLeaseLost when the cell is no longer held by l: another
// worker claimed it after the lease expired, or it was completed, failed or released. A lease
// that expired but whose cell nobody claimed since is still held and extended.
func (s *Store) Heartbeat(ctx context.Context, l *Lease, lease time.Duration) error {
	if lease <= 0 {
		lease = DefaultLease
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE cells SET lease_until = `+s.d.now+` + $5 WHERE `+heldBy,
			l.Run, l.Index, l.Worker, l.Attempt, lease.Seconds())
		return affected(res, err, ErrLeaseLost)
	})
	if err != nil {
		return fmt.Errorf("store: heartbeat %s: %w", l, err)
	}
	return nil
}

// SaveProgress records a cell's progress so far (JSON), replacing what was saved before, if l
// still holds the cell; otherwise it returns an error wrapping ErrLeaseLost. The next claim of
// the cell, after this worker dies or releases it, returns it as Lease.Progress; completing the
// cell discards it, and Retry and Release keep it.
func (s *Store) SaveProgress(ctx context.Context, l *Lease, progress json.RawMessage) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE cells SET progress = $5 WHERE `+heldBy,
			l.Run, l.Index, l.Worker, l.Attempt, jsonArg(progress))
		return affected(res, err, ErrLeaseLost)
	})
	if err != nil {
		return fmt.Errorf("store: save progress of %s: %w", l, err)
	}
	return nil
}

// Complete records the cell's outcome and marks it done, atomically. The rule, since results
// are deterministic and valid whoever computed them:
//
//   - a cell that is already done is left as it is, and Complete returns nil;
//   - otherwise the outcome is recorded, whether or not l still holds the cell (its lease
//     expired, it was released, failed, or retried), unless another claim holds it with an
//     unexpired lease: then Complete records nothing and returns an error wrapping
//     ErrLeaseLost, and that claim's worker will complete it.
func (s *Store) Complete(ctx context.Context, l *Lease, o Outcome) error {
	metrics, err := encodeMetrics(o.Metrics)
	if err != nil {
		return fmt.Errorf("store: complete %s: %w", l, err)
	}
	now := s.d.now
	err = s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE cells SET status = 'done', worker = $3,
	output = $5, metrics = $6, history = $7, seconds = $8, code_version = $9, host = $10,
	error = '', finished = `+now+`, lease_until = NULL, progress = NULL
WHERE run_id = $1 AND idx = $2 AND status <> 'done'
	AND NOT (status = 'running' AND NOT (worker = $3 AND attempts = $4) AND COALESCE(lease_until, 0) >= `+now+`)`,
			l.Run, l.Index, l.Worker, l.Attempt,
			jsonArg(o.Output), metrics, jsonArg(o.History), o.Seconds, o.CodeVersion, o.Host)
		if err := affected(res, err, ErrLeaseLost); !errors.Is(err, ErrLeaseLost) {
			return err
		}
		var status string
		err = tx.QueryRowContext(ctx, `SELECT status FROM cells WHERE run_id = $1 AND idx = $2`, l.Run, l.Index).Scan(&status)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ErrNotFound
		case err != nil:
			return err
		case Status(status) == Done:
			return nil
		}
		return ErrLeaseLost
	})
	if err != nil {
		return fmt.Errorf("store: complete %s: %w", l, err)
	}
	return nil
}

// Fail marks the cell failed with the reason and the seconds spent, if l still holds it;
// otherwise it returns an error wrapping ErrLeaseLost.
func (s *Store) Fail(ctx context.Context, l *Lease, reason string, seconds float64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE cells SET status = 'failed', error = $5, seconds = $6,
	finished = `+s.d.now+`, lease_until = NULL WHERE `+heldBy,
			l.Run, l.Index, l.Worker, l.Attempt, reason, seconds)
		return affected(res, err, ErrLeaseLost)
	})
	if err != nil {
		return fmt.Errorf("store: fail %s: %w", l, err)
	}
	return nil
}

// Release puts the cell back to pending, if l still holds it, so that the next Claim takes it
// at once (the next claim is still a new attempt); otherwise it returns an error wrapping
// ErrLeaseLost. Used when a worker stops: give it a context that is not cancelled yet
// (context.WithoutCancel).
func (s *Store) Release(ctx context.Context, l *Lease) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE cells SET status = 'pending', lease_until = NULL WHERE `+heldBy,
			l.Run, l.Index, l.Worker, l.Attempt)
		return affected(res, err, ErrLeaseLost)
	})
	if err != nil {
		return fmt.Errorf("store: release %s: %w", l, err)
	}
	return nil
}

// String names the lease in messages.
func (l *Lease) String() string {
	return fmt.Sprintf("run %d cell %d (%s, attempt %d of %s)", l.Run, l.Index, l.Key, l.Attempt, l.Worker)
}

// Cells returns the run's cells in index order, or an error wrapping ErrNotFound if there is no
// such run. The Outcome is filled for done cells (and its Seconds for failed ones).
func (s *Store) Cells(ctx context.Context, run int64) ([]Cell, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT idx, cell_key, seed, config, status, worker, attempts,
	output, metrics, history, seconds, code_version, host, error, started, finished
FROM cells WHERE run_id = $1 ORDER BY idx`, run)
	if err != nil {
		return nil, fmt.Errorf("store: cells of run %d: %w", run, err)
	}
	cells, err := scanCells(rows)
	if err == nil && len(cells) == 0 {
		var ok bool
		if ok, err = s.runExists(ctx, s.db, run); err == nil && !ok {
			err = ErrNotFound
		}
	}
	if err != nil {
		return nil, fmt.Errorf("store: cells of run %d: %w", run, err)
	}
	return cells, nil
}

// CodeVersions returns the distinct code versions (Outcome.CodeVersion) that completed the
// run's cells, sorted, without reading their outputs; empty ones are left out.
func (s *Store) CodeVersions(ctx context.Context, run int64) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT code_version FROM cells
WHERE run_id = $1 AND status = 'done' AND code_version <> '' ORDER BY code_version`, run)
	if err != nil {
		return nil, fmt.Errorf("store: code versions of run %d: %w", run, err)
	}
	defer rows.Close()
	var vs []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("store: code versions of run %d: %w", run, err)
		}
		vs = append(vs, v)
	}
	return vs, rows.Err()
}

func scanCells(rows *sql.Rows) ([]Cell, error) {
	defer rows.Close()
	cells := []Cell{}
	for rows.Next() {
		var (
			c                                Cell
			seed, status                     string
			config, output, metrics, history []byte
			seconds, started, finished       sql.NullFloat64
		)
		err := rows.Scan(&c.Index, &c.Key, &seed, &config, &status, &c.Worker, &c.Attempts,
			&output, &metrics, &history, &seconds, &c.Outcome.CodeVersion, &c.Outcome.Host, &c.Error,
			&started, &finished)
		if err != nil {
			return nil, err
		}
		if c.Seed, err = strconv.ParseUint(seed, 10, 64); err != nil {
			return nil, fmt.Errorf("cell %d: seed: %w", c.Index, err)
		}
		if c.Outcome.Metrics, err = decodeMetrics(metrics); err != nil {
			return nil, fmt.Errorf("cell %d: %w", c.Index, err)
		}
		c.Config = json.RawMessage(config)
		c.Status = Status(status)
		c.Outcome.Output = json.RawMessage(output)
		c.Outcome.History = json.RawMessage(history)
		c.Outcome.Seconds = seconds.Float64
		c.Started = nullTime(started)
		c.Finished = nullTime(finished)
		cells = append(cells, c)
	}
	return cells, rows.Err()
}

// SavedProgress returns the progress saved (SaveProgress) by the run's unfinished cells that
// saved any, by cell index, so that a report can say how far a long cell has come. A version
// 1 database, opened read-only, has none.
func (s *Store) SavedProgress(ctx context.Context, run int64) (map[int]json.RawMessage, error) {
	saved := map[int]json.RawMessage{}
	if s.version < 2 {
		return saved, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT idx, progress FROM cells
WHERE run_id = $1 AND status <> 'done' AND progress IS NOT NULL`, run)
	if err != nil {
		return nil, fmt.Errorf("store: saved progress of run %d: %w", run, err)
	}
	defer rows.Close()
	for rows.Next() {
		var idx int
		var progress []byte
		if err := rows.Scan(&idx, &progress); err != nil {
			return nil, fmt.Errorf("store: saved progress of run %d: %w", run, err)
		}
		saved[idx] = json.RawMessage(progress)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: saved progress of run %d: %w", run, err)
	}
	return saved, nil
}

// Retry puts the run's failed cells back to pending and returns how many there were.
func (s *Store) Retry(ctx context.Context, run int64) (int, error) {
	return s.updateCells(ctx, "retry", run, `UPDATE cells SET status = 'pending', error = '', seconds = NULL,
	finished = NULL, lease_until = NULL WHERE run_id = $1 AND status = 'failed'`)
}

// updateCells runs update, a statement on the cells of run $1, and returns how many it changed;
// when none, a run that does not exist is ErrNotFound. Errors name op.
func (s *Store) updateCells(ctx context.Context, op string, run int64, update string) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, update, run)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		if ok, err := s.runExists(ctx, tx, run); err != nil || !ok {
			return cmp.Or(err, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: %s run %d: %w", op, run, err)
	}
	return int(n), nil
}

// Retire takes the run's unfinished cells out of the work, for a run that is superseded or
// abandoned: its pending cells, and its running ones whose lease has expired, become Retired,
// which Claim never gives out, so that workers (those serving every run included) pass it by.
// Its done and failed cells, and the progress unfinished ones recorded (SaveProgress), stay.
// It returns how many cells it retired. A cell still leased to a worker is an error wrapping
// ErrLeased, and nothing changes: stop that worker, or wait for its lease to expire. A worker
// whose lease had expired and that completes its cell after all still stores the outcome
// (Complete). Reopen undoes it.
func (s *Store) Retire(ctx context.Context, run int64) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		// Retire first, then look for a live lease, so that a cell claimed in between is seen.
		res, err := tx.ExecContext(ctx, `UPDATE cells SET status = 'retired', lease_until = NULL
WHERE run_id = $1 AND (status = 'pending' OR (status = 'running' AND lease_until < `+s.d.now+`))`, run)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		var key, worker string
		err = tx.QueryRowContext(ctx, `SELECT cell_key, worker FROM cells WHERE run_id = $1 AND status = 'running'
ORDER BY idx LIMIT 1`, run).Scan(&key, &worker)
		switch {
		case err == nil:
			return fmt.Errorf("%w: cell %s is held by %s (stop that worker, or wait for its lease to expire)", ErrLeased, key, worker)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		case n == 0:
			if ok, err := s.runExists(ctx, tx, run); err != nil || !ok {
				return cmp.Or(err, ErrNotFound)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: retire run %d: %w", run, err)
	}
	return int(n), nil
}

// Reopen puts the run's retired cells back to pending, each to go on from the progress it
// recorded, and returns how many there were.
func (s *Store) Reopen(ctx context.Context, run int64) (int, error) {
	return s.updateCells(ctx, "reopen", run, `UPDATE cells SET status = 'pending' WHERE run_id = $1 AND status = 'retired'`)
}
