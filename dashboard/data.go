package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"html/template"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/store"
)

// runView is one run as the runs list and its JSON show it.
type runView struct {
	ID          int64     `json:"id"`
	Experiment  string    `json:"experiment"`
	Preset      string    `json:"preset"`
	Options     string    `json:"options"`
	Status      string    `json:"status"`
	Cells       int       `json:"cells"`
	Done        int       `json:"done"`
	Failed      int       `json:"failed"`
	Running     int       `json:"running"`
	Pending     int       `json:"pending"`
	Retired     int       `json:"retired"`
	Wall        string    `json:"wall"`
	CellSeconds float64   `json:"cell_seconds"`
	Created     time.Time `json:"created"`
	Started     time.Time `json:"started"`
	Finished    time.Time `json:"finished"`
	HasResult   bool      `json:"has_result"`
}

func (s *Server) view(r store.Run) runView {
	v := runView{ID: r.ID, Experiment: r.Experiment, Status: r.Status(), Cells: r.Cells, Done: r.Done,
		Failed: r.Failed, Running: r.Running, Pending: r.Left() - r.Running, Retired: r.Retired,
		CellSeconds: r.CellSeconds, Created: r.Created, Started: r.Started, Finished: r.Finished, HasResult: r.HasResult}
	if !r.Started.IsZero() && !r.Finished.IsZero() {
		v.Wall = r.Finished.Sub(r.Started).Round(time.Second).String()
	}
	var o struct {
		Preset string `json:"preset"`
		Seed   uint64 `json:"seed"`
	}
	json.Unmarshal(r.Options, &o) // an unreadable options document shows as no preset
	v.Preset = o.Preset
	s.mu.Lock()
	opts, ok := s.options[r.ID]
	s.mu.Unlock()
	if !ok {
		// A run's options never change, and summarising them resolves the preset's defaults.
		if s.cfg.Options != nil {
			opts = s.cfg.Options(r)
		} else {
			opts = fmt.Sprintf("preset=%s seed=%d", o.Preset, o.Seed)
		}
		s.mu.Lock()
		s.options[r.ID] = opts
		s.mu.Unlock()
	}
	v.Options = opts
	return v
}

func (s *Server) runViews(ctx context.Context) ([]runView, error) {
	runs, err := s.st.Runs(ctx)
	if err != nil {
		return nil, err
	}
	views := make([]runView, len(runs))
	// Latest first: the run being watched is usually the newest.
	for i, r := range runs {
		views[len(runs)-1-i] = s.view(r)
	}
	return views, nil
}

// sharedRunViews is runViews, read at most once per half poll interval however many event
// streams are open, since each read aggregates every cell of the store.
//
// One stream reads while the others wait for what it read: hundreds of streams whose ticks
// fall together would otherwise all miss the memo at once and read the store side by side.
func (s *Server) sharedRunViews(ctx context.Context) ([]runView, error) {
	fresh := func() ([]runView, bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.runsMemo, !s.runsAt.IsZero() && time.Since(s.runsAt) < s.cfg.Poll/2
	}
	if v, ok := fresh(); ok {
		return v, nil
	}
	if err := lockCtx(ctx, s.runsRead); err != nil {
		return nil, err
	}
	defer func() { <-s.runsRead }()
	if v, ok := fresh(); ok {
		return v, nil
	}
	v, err := s.runViews(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.runsAt, s.runsMemo = time.Now(), v
	s.mu.Unlock()
	return v, nil
}

// sharedRunDetail is a run's detail for the event streams, read at most once per half poll
// interval however many streams watch the run, by one stream while the others wait.
func (s *Server) sharedRunDetail(ctx context.Context, id int64) (*runDetail, error) {
	fresh := func() (*runDetail, bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		e, ok := s.details[id]
		return e.d, ok && time.Since(e.at) < s.cfg.Poll/2
	}
	if d, ok := fresh(); ok {
		return d, nil
	}
	if err := lockCtx(ctx, s.detailRead); err != nil {
		return nil, err
	}
	defer func() { <-s.detailRead }()
	if d, ok := fresh(); ok {
		return d, nil
	}
	d, err := s.runDetail(ctx, id, 0, forEvents)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.details[id] = detailEntry{at: time.Now(), d: d}
	s.mu.Unlock()
	return d, nil
}

// sharedRun is GetRun, read at most once per half poll interval per run for all the pages and
// streams that show it: each read sums every cell of the run, and a page is no fresher than
// the live updates that follow it.
func (s *Server) sharedRun(ctx context.Context, id int64) (store.Run, error) {
	s.mu.Lock()
	e, ok := s.runs[id]
	s.mu.Unlock()
	if ok && time.Since(e.at) < s.cfg.Poll/2 {
		return e.run, nil
	}
	// One request reads while the others wait for what it read.
	if err := lockCtx(ctx, s.runRead); err != nil {
		return store.Run{}, err
	}
	defer func() { <-s.runRead }()
	s.mu.Lock()
	e, ok = s.runs[id]
	s.mu.Unlock()
	if ok && time.Since(e.at) < s.cfg.Poll/2 {
		return e.run, nil
	}
	r, err := s.st.GetRun(ctx, id)
	if err != nil {
		return r, err
	}
	s.mu.Lock()
	s.runs[id] = runEntry{at: time.Now(), run: r} // bounded by the store's runs: a missing one is not kept
	s.mu.Unlock()
	return r, nil
}

// runEntry is a run as sharedRun last read it.
type runEntry struct {
	at  time.Time
	run store.Run
}

// detailEntry is a run's detail as the event streams last read it.
type detailEntry struct {
	at time.Time
	d  *runDetail
}

// workerView is one worker's share of a run.
type workerView struct {
	Name         string    `json:"name"`
	Running      int       `json:"running"`
	Done         int       `json:"done"`
	Failed       int       `json:"failed"`
	Seconds      float64   `json:"seconds"`
	LastActivity time.Time `json:"last_activity"`
}

// failureView is one failed cell.
type failureView struct {
	Index    int       `json:"index"`
	Key      string    `json:"key"`
	Worker   string    `json:"worker"`
	Attempts int       `json:"attempts"`
	Seconds  float64   `json:"seconds"`
	Finished time.Time `json:"finished"`
	Error    string    `json:"error"`
}

// cellSummary is what the run page shows of a run's cells: aggregates and the failures, never
// the cells themselves, so that a page of a 10,000-cell run stays small.
type cellSummary struct {
	Workers  []workerView
	Failures []failureView
	// analysis is the run's trials as the interactive views read them.
	analysis *analysis
}

// cellsEntry caches a run's cell summary for as long as the run's counts stay the same.
type cellsEntry struct {
	key runKey
	at  time.Time
	sum *cellSummary
	// kept are the cells read without their trials parsed, for the views that a page's load
	// asks for next: they parse these instead of reading the run again.
	kept []store.Cell
}

// runKey is what changes whenever a cell is claimed, completed or failed.
type runKey struct {
	cells, done, failed, running int
	finished                     time.Time
	seconds                      float64
}

// cellsTTL bounds how stale a cached summary may be: a claim of an expired lease by another
// worker changes the worker table without changing the counts.
const cellsTTL = 5 * time.Second

// cellSummary is the run's summary; with trials, its parsed trials too (the interactive
// views, and the partial results of a run without its result), which a finished run's page
// does without: parsing a paper-scale run's evaluations costs more than reading them.
func (s *Server) cellSummary(ctx context.Context, r store.Run, trials bool) (*cellSummary, error) {
	key := runKey{r.Cells, r.Done, r.Failed, r.Running, r.Finished, r.CellSeconds}
	cached := func() *cellSummary {
		s.mu.Lock()
		defer s.mu.Unlock()
		if e := s.cells[r.ID]; e != nil && e.key == key && time.Since(e.at) < cellsTTL && (!trials || e.sum.analysis != nil) {
			return e.sum
		}
		return nil
	}
	if sum := cached(); sum != nil {
		return sum, nil
	}
	// Reading every cell of a large run is the costliest read there is: one at a time, and
	// the streams that wait take what it read.
	if err := lockCtx(ctx, s.cellsRead); err != nil {
		return nil, err
	}
	defer func() { <-s.cellsRead }()
	if sum := cached(); sum != nil {
		return sum, nil
	}
	var cells []store.Cell
	at := time.Now()
	s.mu.Lock()
	if e := s.cells[r.ID]; e != nil && e.key == key && time.Since(e.at) < cellsTTL && e.kept != nil {
		cells, at = e.kept, e.at
	}
	s.mu.Unlock()
	if cells == nil {
		var err error
		if cells, err = s.st.Cells(ctx, r.ID); err != nil {
			return nil, err
		}
	}
	sum := &cellSummary{Workers: []workerView{}, Failures: []failureView{}}
	if trials {
		// Only the holder of cellsRead updates a run's trials: parsed once per completed cell.
		ts := s.trials[r.ID]
		if ts == nil {
			ts = newTrialSet()
			s.trials[r.ID] = ts
			s.evictTrials(r.ID)
		}
		ts.used = time.Now()
		ts.update(cells)
		sum.analysis = ts.snapshot(r.Experiment)
	}
	byName := map[string]*workerView{}
	for _, c := range cells {
		if c.Status == store.Failed {
			sum.Failures = append(sum.Failures, failureView{Index: c.Index, Key: c.Key, Worker: c.Worker,
				Attempts: c.Attempts, Seconds: c.Outcome.Seconds, Finished: c.Finished, Error: c.Error})
		}
		if c.Worker == "" {
			continue
		}
		w := byName[c.Worker]
		if w == nil {
			w = &workerView{Name: c.Worker}
			byName[c.Worker] = w
		}
		switch c.Status {
		case store.Running:
			w.Running++
		case store.Done:
			w.Done++
			w.Seconds += c.Outcome.Seconds
		case store.Failed:
			w.Failed++
			w.Seconds += c.Outcome.Seconds
		}
		for _, t := range []time.Time{c.Started, c.Finished} {
			if t.After(w.LastActivity) {
				w.LastActivity = t
			}
		}
	}
	for _, w := range byName {
		sum.Workers = append(sum.Workers, *w)
	}
	sort.Slice(sum.Workers, func(i, j int) bool { return sum.Workers[i].Name < sum.Workers[j].Name })
	s.mu.Lock()
	e := &cellsEntry{key: key, at: at, sum: sum}
	if !trials {
		e.kept = cells
	}
	s.cells[r.ID] = e
	s.mu.Unlock()
	return sum, nil
}

// maxTrialSets bounds the runs whose parsed trials are kept: a store of many large runs
// would otherwise keep every run anyone looked at.
const maxTrialSets = 8

// evictTrials forgets the least recently used runs' trials past maxTrialSets (keeping run
// keep); the holder of cellsRead calls it.
func (s *Server) evictTrials(keep int64) {
	for len(s.trials) > maxTrialSets {
		var oldest int64
		for id, ts := range s.trials {
			if id != keep && (oldest == 0 || ts.used.Before(s.trials[oldest].used)) {
				oldest = id
			}
		}
		delete(s.trials, oldest)
	}
}

// failuresPerPage is how many failed cells one page lists.
const failuresPerPage = 50

// runDetail is one run's page and JSON.
type runDetail struct {
	Run       runView       `json:"run"`
	Workers   []workerView  `json:"workers"`
	Failures  []failureView `json:"failures"`
	Page      int           `json:"page"`
	Pages     int           `json:"pages"`
	FailedAll int           `json:"failed_total"`
	Tables    []tableView   `json:"tables"`
	// Answer, Legend and View are the terminal's answer: its sentence, its one table (nil
	// when the result has none: then the headline tables) and the legend of its marks.
	Answer string     `json:"answer,omitempty"`
	Legend []string   `json:"legend,omitempty"`
	View   *tableView `json:"-"`
	// Progress is the live partial result: per method, the finished cells and the best so far.
	Progress *progressView `json:"progress,omitempty"`
	// Figures and FigureError are for the page only.
	Figures     []figure `json:"-"`
	FigureError string   `json:"-"`
}

// tableView is a result table as the page shows it: cells formatted, long tables cut.
type tableView struct {
	Name   string `json:"name"`
	Detail bool   `json:"detail"`
	// Headline marks the tables the terminal prints; the page shows the others collapsed.
	Headline bool         `json:"headline"`
	Columns  []string     `json:"columns"`
	Rows     [][]cellView `json:"-"`
	Total    int          `json:"rows"`
}

// cellView is one formatted table cell; numbers are aligned right, text left.
type cellView struct {
	Text string
	Num  bool
}

// maxTableRows is the most rows of one table the page shows; the downloads have them all.
const maxTableRows = 200

// detailFor says what a runDetail is for: the page (rendered tables and figures), the JSON API
// (the tables' names), or the event stream (neither: the stored result is not read again on
// every poll).
type detailFor int

const (
	forPage detailFor = iota
	forAPI
	forEvents
)

func (s *Server) runDetail(ctx context.Context, id int64, pageNo int, use detailFor) (*runDetail, error) {
	r, err := s.sharedRun(ctx, id)
	if err != nil {
		return nil, err
	}
	// The partial results are shown until the run has its result. The page does not wait for
	// the trials to be parsed (a paper-scale run's first parse takes longer than its page may):
	// it shows them when they are, and the event stream, which parses them, brings them.
	sum, err := s.cellSummary(ctx, r, !r.HasResult && use == forEvents)
	if err != nil {
		return nil, err
	}
	d := &runDetail{Run: s.view(r), Workers: sum.Workers, FailedAll: len(sum.Failures), Tables: []tableView{}}
	if sum.analysis != nil {
		d.Progress = sum.analysis.progress()
	}
	d.Pages = max(1, (len(sum.Failures)+failuresPerPage-1)/failuresPerPage)
	d.Page = min(max(pageNo, 1), d.Pages)
	lo := (d.Page - 1) * failuresPerPage
	d.Failures = sum.Failures[lo:min(lo+failuresPerPage, len(sum.Failures))]
	if !r.HasResult || use == forEvents {
		return d, nil
	}
	e, err := s.result(ctx, id)
	if err != nil || e == nil {
		return d, err
	}
	d.Answer, d.Legend = e.res.Answer, e.res.Legend
	// A result stored before headline tables existed shows every table first, as the terminal does.
	anyHeadline := slices.ContainsFunc(e.res.Tables, func(t experiments.Table) bool { return t.Headline })
	for _, t := range e.res.Tables {
		tv := tableView{Name: t.Name, Detail: t.Detail, Headline: t.Headline || (!anyHeadline && t.Name != experiments.NotesTable),
			Columns: t.Columns, Total: len(t.Rows)}
		if use == forPage && !t.Detail {
			tv.Rows = formatRows(t.Rows)
		}
		d.Tables = append(d.Tables, tv)
	}
	if e.res.View != nil {
		v := e.res.View
		d.View = &tableView{Name: v.Name, Headline: true, Columns: v.Columns, Total: len(v.Rows), Rows: formatRows(v.Rows)}
	}
	if use == forPage {
		figs := e.figures(s)
		d.Figures, d.FigureError = figs.list, figs.err
	}
	return d, nil
}

// formatRows formats a table's first maxTableRows rows as the terminal does.
func formatRows(rows [][]any) [][]cellView {
	var out [][]cellView
	for _, row := range rows[:min(len(rows), maxTableRows)] {
		cells := make([]cellView, len(row))
		for k, c := range row {
			_, text := c.(string)
			cells[k] = cellView{Text: experiments.FormatCell(c), Num: !text && c != nil}
		}
		out = append(out, cells)
	}
	return out
}

// resultEntry is a decoded stored result and, once asked for, its figures.
type resultEntry struct {
	hash    uint64
	checked time.Time // when the stored bytes were last read (under Server.mu)
	res     *experiments.Result
	once    sync.Once
	figs    figureSet
}

// result returns the run's stored result, nil if it has none. It is decoded again only when
// the stored bytes change (SaveResult may replace it).
//
// The bytes are read at most once per half poll interval: a page in a flood of requests then
// costs the store nothing, and the store's connections stay free for what must read them.
func (s *Server) result(ctx context.Context, id int64) (*resultEntry, error) {
	s.mu.Lock()
	e := s.results[id]
	fresh := e != nil && time.Since(e.checked) < s.cfg.Poll/2
	s.mu.Unlock()
	if fresh {
		return e, nil
	}
	b, ok, err := s.st.Result(ctx, id)
	if err != nil || !ok {
		return nil, err
	}
	h := fnv.New64a()
	h.Write(b)
	sum := h.Sum64()
	if e != nil && e.hash == sum {
		s.mu.Lock()
		e.checked = time.Now()
		s.mu.Unlock()
		return e, nil
	}
	res, err := experiments.UnmarshalStoredResult(b)
	if err != nil {
		return nil, fmt.Errorf("run %d: %w", id, err)
	}
	e = &resultEntry{hash: sum, res: res, checked: time.Now()}
	s.mu.Lock()
	s.results[id] = e
	s.mu.Unlock()
	return e, nil
}

// figure is one image of a run: a PNG the experiment drew, or an SVG chart drawn here.
type figure struct {
	Name  string
	Title string
	path  string
	svg   []byte
}

type figureSet struct {
	list []figure
	err  string
}

func (f figureSet) lookup(name string) (figure, bool) {
	for _, x := range f.list {
		if x.Name == name {
			return x, true
		}
	}
	return figure{}, false
}

// figures draws the result's figures the first time they are asked for: the experiment's own
// PNGs into the cache directory (a folder per stored result, so a replaced result gets new
// files), then the distribution charts.
func (e *resultEntry) figures(s *Server) figureSet {
	e.once.Do(func() {
		dir := filepath.Join(s.cacheDir, fmt.Sprintf("%s-%x", e.res.Experiment, e.hash))
		paths, err := s.cfg.Experiments.Plots(e.res, dir)
		if err != nil {
			e.figs.err = err.Error()
		}
		for _, p := range paths {
			base := filepath.Base(p)
			e.figs.list = append(e.figs.list, figure{Name: base, Title: base, path: p})
		}
		charts, err := distributionCharts(e.res)
		if err != nil && e.figs.err == "" {
			e.figs.err = err.Error()
		}
		e.figs.list = append(e.figs.list, charts...)
	})
	return e.figs
}

// writeTableJSON writes one table as Result.Write's JSON holds it: full precision, NaN and
// infinities as null.
func writeTableJSON(w io.Writer, t *experiments.Table) error {
	rows := make([][]any, len(t.Rows))
	for i, row := range t.Rows {
		rows[i] = make([]any, len(row))
		for k, v := range row {
			rows[i][k] = experiments.JSONCell(v)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Name    string   `json:"name"`
		Columns []string `json:"columns"`
		Rows    [][]any  `json:"rows"`
	}{t.Name, t.Columns, rows})
}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format("2006-01-02 15:04:05")
	},
	"seconds": func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) },
	"add":     func(a, b int) int { return a + b },
	"fmtp": func(x *float64) string {
		if x == nil {
			return ""
		}
		return experiments.FormatCell(*x)
	},
}

// lockCtx takes the lock held by a value in the channel of capacity one, or gives up when ctx
// ends (a client that left stops waiting).
func lockCtx(ctx context.Context, lock chan struct{}) error {
	select {
	case lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
