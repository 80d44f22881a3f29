package store

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// ExportFormat names the line-oriented text form ExportRun writes and ImportRun reads; its
// first line carries it, so that a later format can be told apart.
const ExportFormat = "hyperflat-run/1"

// exportHeader is an export's first line: the run, without its cells.
type exportHeader struct {
	Format     string          `json:"format"`
	Identity   string          `json:"identity"`
	Experiment string          `json:"experiment"`
	Options    json.RawMessage `json:"options,omitempty"`
	Created    float64         `json:"created"`
	Cells      int             `json:"cells"`
	Build      string          `json:"build,omitempty"`
}

// exportCell is one cell as a line of an export: every column of the cells table but the
// lease, with the times in seconds since the Unix epoch. Progress is an unfinished cell's
// (Store.SaveProgress): an export carries a long cell's progress to the store it is imported
// into, which a machine that does not outlive its session needs.
type exportCell struct {
	Index        int             `json:"index"`
	Key          string          `json:"key"`
	Seed         string          `json:"seed"`
	Config       json.RawMessage `json:"config,omitempty"`
	Status       Status          `json:"status"`
	Worker       string          `json:"worker,omitempty"`
	Attempts     int             `json:"attempts,omitempty"`
	FirstClaimed *float64        `json:"first_claimed,omitempty"`
	Started      *float64        `json:"started,omitempty"`
	Finished     *float64        `json:"finished,omitempty"`
	Seconds      *float64        `json:"seconds,omitempty"`
	Output       json.RawMessage `json:"output,omitempty"`
	Metrics      json.RawMessage `json:"metrics,omitempty"`
	History      json.RawMessage `json:"history,omitempty"`
	CodeVersion  string          `json:"code_version,omitempty"`
	Host         string          `json:"host,omitempty"`
	Error        string          `json:"error,omitempty"`
	Progress     json.RawMessage `json:"progress,omitempty"`
}

// ExportRun writes run id to w as text, one JSON document per line: a header with the run's
// identity, experiment and options, then every cell in index order with its state and, when
// done or failed, its outcome exactly as stored; one not done, the progress it saved. A cell
// still running is written as pending (its lease means nothing elsewhere). The export is what
// a store holds of the run, so that a run can be kept in version control, moved between stores
// and continued (ImportRun) or reported on.
func (s *Store) ExportRun(ctx context.Context, id int64, w io.Writer) error {
	run, err := s.GetRun(ctx, id)
	if err != nil {
		return fmt.Errorf("store: export run %d: %w", id, err)
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	h := exportHeader{Format: ExportFormat, Identity: run.Identity, Experiment: run.Experiment,
		Options: run.Options, Created: float64(run.Created.UnixMicro()) / 1e6, Cells: run.Cells, Build: run.Build}
	if err := enc.Encode(h); err != nil {
		return fmt.Errorf("store: export run %d: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT idx, cell_key, seed, config, status, worker, attempts,
	first_claimed, started, finished, seconds, output, metrics, history, code_version, host, error,
	CASE WHEN status = 'done' THEN NULL ELSE progress END
FROM cells WHERE run_id = $1 ORDER BY idx`, id)
	if err != nil {
		return fmt.Errorf("store: export run %d: %w", id, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var c exportCell
		var config, output, metrics, history, progress sql.NullString
		var first, started, finished, secs sql.NullFloat64
		if err := rows.Scan(&c.Index, &c.Key, &c.Seed, &config, &c.Status, &c.Worker, &c.Attempts,
			&first, &started, &finished, &secs, &output, &metrics, &history, &c.CodeVersion, &c.Host, &c.Error, &progress); err != nil {
			return fmt.Errorf("store: export run %d: %w", id, err)
		}
		c.Config, c.Output, c.Metrics, c.History = rawJSON(config), rawJSON(output), rawJSON(metrics), rawJSON(history)
		c.FirstClaimed, c.Started, c.Finished, c.Seconds = floatPtr(first), floatPtr(started), floatPtr(finished), floatPtr(secs)
		c.Progress = rawJSON(progress)
		if c.Status == Running {
			// Exported without its claim: a pending cell that whoever imports it computes.
			c = exportCell{Index: c.Index, Key: c.Key, Seed: c.Seed, Config: c.Config, Status: Pending, Progress: c.Progress}
		}
		if err := enc.Encode(c); err != nil {
			return fmt.Errorf("store: export run %d, cell %q: %w", id, c.Key, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: export run %d: %w", id, err)
	}
	if n != run.Cells {
		return fmt.Errorf("store: export run %d: read %d cells of %d", id, n, run.Cells)
	}
	return bw.Flush()
}

func rawJSON(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return nil
	}
	return json.RawMessage(s.String)
}

func floatPtr(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	return &f.Float64
}

// ImportStats says what ImportRun did.
type ImportStats struct {
	Run     Run  // the run imported into, as it stands after the import
	Created bool // whether the run was new to the store
	// Filled counts the exported done or failed cells that were pending here and now hold the
	// export's outcome; Kept those this store had already finished (its own outcome stays), of
	// which Differ in status or headline metrics from the export's (computed twice, e.g. by two
	// builds; the seconds an output records are not compared).
	Filled, Kept, Differ int
	// Resumable counts the unfinished cells that gained the export's saved progress (a cell
	// that has progress of its own keeps it).
	Resumable int
	// Retired counts the cells retired in the export (Store.Retire) and so here: only in a run
	// the import created, so that a retired run stays retired through an export and an import
	// while the cells of a run this store computes stay in the work.
	Retired int
}

// ImportRun reads an export (ExportRun's text, or the same gzip-compressed) into the store. A
// run with the export's identity that the store lacks is created with the export's cells; one
// it has gains the outcomes of the exported cells that are done or failed where its own are
// still pending, so that several exports of one run (or an export and a run in progress) merge,
// and the progress an exported cell saved where the store's cell is unfinished and has none.
// A run the import creates keeps the export's retired cells retired (ImportStats.Retired).
// The plans must agree: a cell whose key, seed or configuration differs from the store's is an
// error, and nothing is written.
//
// Nothing is written unless the whole export is valid: its lines within MaxExportLineBytes and
// its text (decompressed) within MaxExportBytes, and a run it merges into has the same options.
func (s *Store) ImportRun(ctx context.Context, r io.Reader) (ImportStats, error) {
	return s.ImportRunChecked(ctx, r, nil)
}

// ImportRunChecked is ImportRun with check, when not nil, given the export's run (identity,
// experiment, options and cells as CreateRun would take them) after the whole export has been
// read and before anything is written: its error refuses the import. A caller that knows the
// experiments checks there what the store cannot: that the experiment exists, that the
// identity is the hash of the options, and that the cells are the plan of those options.
func (s *Store) ImportRunChecked(ctx context.Context, r io.Reader, check func(RunSpec) error) (ImportStats, error) {
	h, cells, spec, err := readChecked(r, check)
	if err != nil {
		return ImportStats{}, fmt.Errorf("store: import: %w", err)
	}
	var st ImportStats
	unlock, err := s.lockIdentity(ctx, h.Identity)
	if err != nil {
		return st, fmt.Errorf("store: import: %w", err)
	}
	defer unlock()
	run, found, err := s.FindRun(ctx, h.Identity)
	if err != nil {
		return st, fmt.Errorf("store: import: %w", err)
	}
	if found && run.Experiment != h.Experiment {
		return st, fmt.Errorf("store: import: run %d has the export's identity but experiment %q, not %q", run.ID, run.Experiment, h.Experiment)
	}
	if found && !sameJSON(run.Options, h.Options) {
		return st, fmt.Errorf("store: import: run %d has the export's identity but other options (%s here, %s in the export): not the same run, nothing imported",
			run.ID, abbreviate(run.Options), abbreviate(h.Options))
	}
	if !found {
		if run, err = s.CreateRun(ctx, spec); err != nil {
			return st, fmt.Errorf("store: import: %w", err)
		}
		st.Created = true
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT idx, cell_key, seed, config, status, metrics FROM cells WHERE run_id = $1 ORDER BY idx`, run.ID)
		if err != nil {
			return err
		}
		type have struct {
			key, seed       string
			config, metrics sql.NullString
			status          Status
		}
		var here []have
		for rows.Next() {
			var c have
			var idx int
			if err := rows.Scan(&idx, &c.key, &c.seed, &c.config, &c.status, &c.metrics); err != nil {
				rows.Close()
				return err
			}
			here = append(here, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(here) != len(cells) {
			return fmt.Errorf("run %d has %d cells, the export %d: not the same plan", run.ID, len(here), len(cells))
		}
		for i, c := range cells {
			hc := here[i]
			if hc.key != c.Key || hc.seed != c.Seed || !sameJSON(rawJSON(hc.config), c.Config) {
				return fmt.Errorf("cell %d is %q (seed %s) in run %d and %q (seed %s) in the export, or their configurations differ: not the same plan",
					i, hc.key, hc.seed, run.ID, c.Key, c.Seed)
			}
		}
		if st.Created {
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET created = $1 WHERE id = $2`, h.Created, run.ID); err != nil {
				return err
			}
		}
		for i, c := range cells {
			if c.Status != Done && c.Status != Failed {
				continue
			}
			if here[i].status == Done || here[i].status == Failed {
				st.Kept++
				if here[i].status != c.Status || !sameJSON(rawJSON(here[i].metrics), c.Metrics) {
					st.Differ++
				}
				continue
			}
			// Guarded by status too, so that a cell a worker finished since the read above keeps its outcome.
			res, err := tx.ExecContext(ctx, `UPDATE cells SET status = $1, worker = $2, attempts = $3, lease_until = NULL,
	first_claimed = $4, started = $5, finished = $6, seconds = $7, output = $8, metrics = $9, history = $10,
	code_version = $11, host = $12, error = $13 WHERE run_id = $14 AND idx = $15 AND status NOT IN ('done', 'failed')`,
				string(c.Status), c.Worker, c.Attempts, nullFloat(c.FirstClaimed), nullFloat(c.Started), nullFloat(c.Finished),
				nullFloat(c.Seconds), jsonArg(c.Output), jsonArg(c.Metrics), jsonArg(c.History), c.CodeVersion, c.Host, c.Error,
				run.ID, c.Index)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 1 {
				st.Filled++
			} else {
				st.Kept++
			}
		}
		if st.Created {
			for _, c := range cells {
				if c.Status != Retired {
					continue
				}
				if _, err := tx.ExecContext(ctx, `UPDATE cells SET status = 'retired' WHERE run_id = $1 AND idx = $2`, run.ID, c.Index); err != nil {
					return err
				}
				st.Retired++
			}
		}
		return importProgress(ctx, tx, run.ID, cells, &st)
	})
	if err != nil {
		if st.Created {
			// The run was made for this import only: leave no half of it behind.
			_ = s.DeleteRun(ctx, run.ID)
		}
		return ImportStats{}, fmt.Errorf("store: import: %w", err)
	}
	if st.Run, err = s.GetRun(ctx, run.ID); err != nil {
		return st, fmt.Errorf("store: import: %w", err)
	}
	return st, nil
}

// importProgress gives the run's unfinished cells without progress the exported cells'.
func importProgress(ctx context.Context, tx *sql.Tx, run int64, cells []exportCell, st *ImportStats) error {
	for _, c := range cells {
		if c.Progress == nil {
			continue
		}
		res, err := tx.ExecContext(ctx, `UPDATE cells SET progress = $1
WHERE run_id = $2 AND idx = $3 AND status <> 'done' AND progress IS NULL`, jsonArg(c.Progress), run, c.Index)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		st.Resumable += int(n)
	}
	return nil
}

func nullFloat(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// sameJSON compares two JSON documents by value, so that a store that normalizes JSON (a
// PostgreSQL jsonb column, or re-encoding) still matches the export.
func sameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return bytes.Equal(ax, by)
}

// CheckExport reads a whole export as ImportRunChecked would, and checks it as that would
// before writing: without a store, so that a command importing several files can refuse them
// all before it creates or changes anything. It returns the export's run.
func CheckExport(r io.Reader, check func(RunSpec) error) (RunSpec, error) {
	_, _, spec, err := readChecked(r, check)
	return spec, err
}

// readChecked reads an export, gives its run to check (when not nil) and returns both forms.
func readChecked(r io.Reader, check func(RunSpec) error) (exportHeader, []exportCell, RunSpec, error) {
	h, cells, err := readExport(r)
	if err != nil {
		return h, nil, RunSpec{}, err
	}
	spec := RunSpec{Identity: h.Identity, Experiment: h.Experiment, Options: h.Options, Cells: make([]CellSpec, len(cells)), Build: h.Build}
	for i, c := range cells {
		seed, _ := strconv.ParseUint(c.Seed, 10, 64) // checked by readExport
		spec.Cells[i] = CellSpec{Index: c.Index, Key: c.Key, Seed: seed, Config: c.Config}
	}
	if check != nil {
		if err := check(spec); err != nil {
			return h, nil, RunSpec{}, err
		}
	}
	return h, cells, spec, nil
}

// ExportInfo is what an export's header says of its run.
type ExportInfo struct {
	Identity, Experiment string
	Created              time.Time // when the run was created in the store it was exported from
	Cells                int
}

// ReadExportInfo reads only the header of an export (plain or gzip-compressed). Importing
// several exports in the order of their Created times gives their runs IDs in the order the
// original store had, so that what picks the latest run of a kind picks the same one.
func ReadExportInfo(r io.Reader) (ExportInfo, error) {
	br, closeFn, err := exportReader(r)
	if err != nil {
		return ExportInfo{}, err
	}
	defer closeFn()
	h, err := readHeader(json.NewDecoder(br))
	if err != nil {
		return ExportInfo{}, err
	}
	return ExportInfo{Identity: h.Identity, Experiment: h.Experiment, Created: epochTime(h.Created), Cells: h.Cells}, nil
}

// The bounds of what ImportRun and ReadExportInfo read, checked while reading, so that a small
// file that decompresses to gigabytes, or one endless line, fails at the bound instead of
// being held in memory whole. The published exports are a few MB with lines of ~130 kB.
const (
	// MaxExportBytes is the most text (after decompression) an export may hold.
	MaxExportBytes = 512 << 20
	// MaxExportLineBytes is the longest line an export may have.
	MaxExportLineBytes = 32 << 20
)

// The bounds in force; tests lower them.
var maxExportBytes, maxExportLineBytes int64 = MaxExportBytes, MaxExportLineBytes

// exportLimiter fails the read that passes MaxExportBytes in all or MaxExportLineBytes since
// the last newline.
type exportLimiter struct {
	r          io.Reader
	total, run int64
	line       int // 1-based line being read
}

func (l *exportLimiter) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.total += int64(n)
	if l.total > maxExportBytes {
		return 0, fmt.Errorf("the export is longer than %d bytes (store.MaxExportBytes) once decompressed", maxExportBytes)
	}
	for chunk := p[:n]; ; {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			l.run += int64(len(chunk))
		} else {
			l.run += int64(i)
		}
		if l.run > maxExportLineBytes {
			return 0, fmt.Errorf("line %d is longer than %d bytes (store.MaxExportLineBytes)", l.line, maxExportLineBytes)
		}
		if i < 0 {
			break
		}
		l.run, l.line, chunk = 0, l.line+1, chunk[i+1:]
	}
	return n, err
}

// exportReader gunzips r when it starts with gzip's magic bytes, and bounds what it yields.
func exportReader(r io.Reader) (*bufio.Reader, func(), error) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		return bufio.NewReader(&exportLimiter{r: zr, line: 1}), func() { zr.Close() }, nil
	}
	return bufio.NewReader(&exportLimiter{r: br, line: 1}), func() {}, nil
}

// abbreviate shows a JSON document in a message, cut to 200 bytes.
func abbreviate(b json.RawMessage) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func readHeader(dec *json.Decoder) (exportHeader, error) {
	var h exportHeader
	if err := dec.Decode(&h); err != nil {
		if errors.Is(err, io.EOF) {
			return h, errors.New("empty export")
		}
		return h, fmt.Errorf("header: %w", err)
	}
	if h.Format != ExportFormat {
		return h, fmt.Errorf("format %q; this build reads %q", h.Format, ExportFormat)
	}
	if h.Identity == "" || h.Experiment == "" {
		return h, errors.New("header without identity or experiment")
	}
	// Both name files (an export's name is made of them): nothing that could leave a folder.
	for _, f := range []struct{ what, v string }{{"experiment", h.Experiment}, {"identity", h.Identity}} {
		if !plainName(f.v) {
			return h, fmt.Errorf("header: %s %q: want letters, digits, '.', '_' and '-', not starting with '.'", f.what, f.v)
		}
	}
	return h, nil
}

// readExport parses an export, gunzipping it first when it starts with gzip's magic bytes, and
// checks that its cells are the header's count, in index order, with decimal seeds.
func readExport(r io.Reader) (exportHeader, []exportCell, error) {
	br, closeFn, err := exportReader(r)
	if err != nil {
		return exportHeader{}, nil, err
	}
	defer closeFn()
	dec := json.NewDecoder(br)
	h, err := readHeader(dec)
	if err != nil {
		return h, nil, err
	}
	var cells []exportCell
	for {
		var c exportCell
		err := dec.Decode(&c)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return h, nil, fmt.Errorf("cell %d: %w", len(cells), err)
		}
		if c.Index != len(cells) {
			return h, nil, fmt.Errorf("cell %q has index %d at position %d", c.Key, c.Index, len(cells))
		}
		// The seed is stored as text and compared as text when runs merge, so only the form the
		// exporter writes is accepted: "007" would be seed 7 to a trial and another seed to a merge.
		if seed, err := strconv.ParseUint(c.Seed, 10, 64); err != nil {
			return h, nil, fmt.Errorf("cell %q: seed %q: %w", c.Key, c.Seed, err)
		} else if strconv.FormatUint(seed, 10) != c.Seed {
			return h, nil, fmt.Errorf("cell %q: seed %q is not written as the exporter writes it (%d)", c.Key, c.Seed, seed)
		}
		switch c.Status {
		case Pending, Done, Failed, Retired:
		default:
			return h, nil, fmt.Errorf("cell %q: status %q", c.Key, c.Status)
		}
		cells = append(cells, c)
	}
	if len(cells) != h.Cells {
		return h, nil, fmt.Errorf("%d cells; the header says %d (a truncated export?)", len(cells), h.Cells)
	}
	return h, cells, nil
}

// plainName reports whether s is a plain file-name part: ASCII letters, digits, '.', '_' and
// '-', at most 200 bytes, not starting with '.'.
func plainName(s string) bool {
	if s == "" || len(s) > 200 || s[0] == '.' {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
