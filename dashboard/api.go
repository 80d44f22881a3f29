package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// viewsMeta is /api/runs/{id}/views: what the interactive views of a run can show.
type viewsMeta struct {
	Run        int64         `json:"run"`
	Experiment string        `json:"experiment"`
	Groups     []string      `json:"groups"`
	Params     []column      `json:"params"`
	Values     []string      `json:"values"`
	Objective  string        `json:"objective"`
	Higher     bool          `json:"higher"`
	Cells      int           `json:"cells"`
	Trials     int           `json:"trials"`
	Curves     bool          `json:"curves"`
	Screenings bool          `json:"screenings"`
	Gap        bool          `json:"gap"`
	Signals    bool          `json:"signals"`
	Estimator  string        `json:"importance_estimator"`
	Progress   *progressView `json:"progress"`
}

func (a *analysis) meta(id int64) *viewsMeta {
	m := &viewsMeta{Run: id, Experiment: a.experiment, Groups: a.groups(), Params: a.params, Values: []string{},
		Cells: len(a.cells), Estimator: ImportanceEstimator, Progress: a.progress()}
	if m.Groups == nil {
		m.Groups = []string{}
	}
	if m.Params == nil {
		m.Params = []column{}
	}
	for _, c := range a.values {
		m.Values = append(m.Values, c.Name)
	}
	m.Signals = a.hasSignals()
	if q, err := a.parseQuery(nil); err == nil && q.objective >= 0 {
		m.Objective, m.Higher = a.values[q.objective].Name, q.higher
	}
	for _, c := range a.cells {
		m.Trials += len(c.trials)
		m.Curves = m.Curves || len(c.steps) > 0
		m.Screenings = m.Screenings || len(c.screenings) > 0
		m.Gap = m.Gap || (c.curves["distance"] != nil && c.curves["val_acc"] != nil && c.curves["test_acc"] != nil)
	}
	return m
}

// maxMemo bounds the view answers kept per state of a run (the trial table's filters are
// free text: past the bound, answers are computed and not kept).
const maxMemo = 256

// handleView serves one view of a run's trials as JSON: views (what there is), trials,
// history, importance, slices (also the parallel coordinates' points), curves, screenings
// (AHSC's μ against the final metrics) and gap (weightdecay's Figure 4.3). Each is computed
// once per state of the run and query.
func (s *Server) handleView(w http.ResponseWriter, r *http.Request) {
	id, err := runID(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	view := r.PathValue("view")
	switch view {
	case "views", "trials", "history", "importance", "slices", "curves", "screenings", "gap", "signals":
	default:
		s.fail(w, fmt.Errorf("view %q (want views, trials, history, importance, slices, curves, screenings, gap or signals): %w", view, errNoSuch))
		return
	}
	run, err := s.sharedRun(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	sum, err := s.cellSummary(r.Context(), run, true)
	if err != nil {
		s.fail(w, err)
		return
	}
	a := sum.analysis
	v := r.URL.Query()
	v.Del("token")
	key := view + "?" + v.Encode()
	if b, ok := a.memo.Load(key); ok {
		writeJSONBytes(w, b.([]byte))
		return
	}
	q, err := a.parseQuery(v)
	if err != nil {
		http.Error(w, "hyperflat serve: "+err.Error(), http.StatusBadRequest)
		return
	}
	var out any
	switch view {
	case "views":
		out = a.meta(id)
	case "trials":
		out, err = a.trials(q, v)
	case "history":
		out = a.history(q)
	case "importance":
		out = a.importance(q)
	case "slices":
		out = a.slices(q)
	case "curves":
		out, err = a.curves(q, v.Get("field"))
	case "screenings":
		out = a.screenings(q)
	case "gap":
		out = a.gap(q)
	case "signals":
		out = a.signals(q)
	}
	if err != nil {
		http.Error(w, "hyperflat serve: "+err.Error(), http.StatusBadRequest)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		s.fail(w, err)
		return
	}
	if a.memoLen.Add(1) <= maxMemo {
		a.memo.Store(key, b)
	}
	writeJSONBytes(w, b)
}

func writeJSONBytes(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b)
	w.Write([]byte("\n"))
}

// handleCompare shows two runs side by side: /compare?a=ID&b=ID.
func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	var ds [2]*runDetail
	for i, name := range []string{"a", "b"} {
		id, err := strconv.ParseInt(r.URL.Query().Get(name), 10, 64)
		if err != nil || id <= 0 {
			http.Error(w, "hyperflat serve: /compare wants two run IDs: /compare?a=ID&b=ID", http.StatusBadRequest)
			return
		}
		if ds[i], err = s.runDetail(r.Context(), id, 0, forAPI); err != nil {
			s.fail(w, err)
			return
		}
	}
	s.render(w, "compare.html", fmt.Sprintf("runs %d and %d", ds[0].Run.ID, ds[1].Run.ID), ds)
}

// favicon is the dashboard's icon: served at /favicon.ico too, where browsers look for it.
func serveFavicon(w http.ResponseWriter, r *http.Request) {
	b, err := assets.ReadFile("assets/static/favicon.svg")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Write(b)
}
