package dashboard

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/store"
)

// doneCell is a done cell with the given configuration, output and metrics (JSON).
func doneCell(i int, key, config, output string, metrics map[string]float64) store.Cell {
	c := store.Cell{CellSpec: store.CellSpec{Index: i, Key: key, Config: json.RawMessage(config)}, Status: store.Done,
		Finished: time.Unix(int64(1000+i), 0)}
	c.Outcome.Output, c.Outcome.Metrics = json.RawMessage(output), metrics
	return c
}

// evals is an output of evaluations, each "config|val_metric[|fidelity]".
func evals(es ...string) string {
	var parts []string
	for _, e := range es {
		f := strings.Split(e, "|")
		fid := "1"
		if len(f) > 2 {
			fid = f[2]
		}
		parts = append(parts, fmt.Sprintf(`{"config":%q,"val_metric":%s,"fidelity":%s}`, f[0], f[1], fid))
	}
	return `{"evaluations":[` + strings.Join(parts, ",") + `]}`
}

func analyse(t *testing.T, experiment string, cells ...store.Cell) *analysis {
	t.Helper()
	ts := newTrialSet()
	ts.update(cells)
	return ts.snapshot(experiment)
}

func mustQuery(t *testing.T, a *analysis, v url.Values) query {
	t.Helper()
	q, err := a.parseQuery(v)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestTrialsGeneric: every number of an evaluation is a column, whatever its name (a field
// added later shows without a change here); configuration words are categories; a cell without
// evaluations is one trial of its numeric configuration and metrics; hidden cells are left out.
func TestTrialsGeneric(t *testing.T) {
	a := analyse(t, "ahsc",
		doneCell(0, "d/r0/tpe", `{"dataset":"d","method":"tpe","repeat":0,"hidden":false}`,
			`{"evaluations":[{"config":"lr=0.1 act=relu","val_metric":0.5,"hessian_trace":3.5,"failed":false,"test_metric":"NaN"},
			{"config":"lr=0.01 act=tanh","val_metric":0.7,"hessian_trace":"+Inf","failed":true}]}`, nil),
		doneCell(1, "d/r0/random", `{"dataset":"d","method":"random","repeat":0,"hidden":true}`, evals("lr=1 act=relu|0.9"), nil),
		doneCell(2, "x/r1/z=30", `{"dataset":"x","replicate":1,"zeta":30}`, `{"history":[]}`, map[string]float64{"test_acc": 0.25}),
	)
	if a.hidden != 1 || len(a.cells) != 2 {
		t.Fatalf("hidden %d, cells %d: want 1 and 2", a.hidden, len(a.cells))
	}
	var params, values []string
	for _, c := range a.params {
		params = append(params, c.Name)
	}
	for _, c := range a.values {
		values = append(values, c.Name)
	}
	if want := []string{"lr", "act", "zeta"}; !reflect.DeepEqual(params, want) {
		t.Errorf("params %q, want %q", params, want)
	}
	if want := []string{"val_metric", "hessian_trace", "failed", "test_metric", "test_acc"}; !reflect.DeepEqual(values, want) {
		t.Errorf("values %q, want %q", values, want)
	}
	if got := a.params[1].Cats; !reflect.DeepEqual(got, []string{"relu", "tanh"}) {
		t.Errorf("act's categories %q", got)
	}
	x := a.cells[1]
	if x.group != "x" || x.repeat != 1 || len(x.trials) != 1 || x.trials[0].param(2) != 30 || x.trials[0].value(4) != 0.25 {
		t.Errorf("the cell without evaluations: %+v", x)
	}
	q := mustQuery(t, a, url.Values{"group": {"d"}})
	tv, err := a.trials(q, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(tv.Columns, ","), "hessian_trace") || tv.Total != 2 {
		t.Errorf("trial table %q, %d rows", tv.Columns, tv.Total)
	}
	// The failed evaluation is in the table and out of the ranking.
	if p := a.progress(); len(p.Rows) != 2 || p.Rows[0].Trials != 1 || *p.Rows[0].Best != 0.5 {
		t.Errorf("progress %+v", p.Rows)
	}
	if _, err := a.parseQuery(url.Values{"objective": {"nope"}}); err == nil || !strings.Contains(err.Error(), "val_metric") {
		t.Errorf("an unknown objective: %v", err)
	}
}

// TestImportanceHandDerived: η² by hand. A category splitting y = 1,3 | 5,7 explains
// (2·2² + 2·2²) / (9+1+1+9) = 0.8 of the variance; x = 1..20 with y = x in 10 bins of two
// explains 2·Σ(2k−9)² / Σ(x−10.5)² = 660/665.
func TestImportanceHandDerived(t *testing.T) {
	var cells []store.Cell
	for i := range 20 {
		cat := "a"
		if i >= 10 {
			cat = "b"
		}
		cells = append(cells, doneCell(i, fmt.Sprint(i), `{"dataset":"d","method":"m","repeat":`+fmt.Sprint(i)+`}`,
			evals(fmt.Sprintf("x=%d c=%s|%d", 20-i, cat, 20-i)), nil))
	}
	a := analyse(t, "ahsc", cells...)
	imp := a.importance(mustQuery(t, a, nil))
	if imp.Trials != 20 || len(imp.Params) != 2 || imp.Params[0].Name != "x" || imp.Params[1].Name != "c" {
		t.Fatalf("importance %+v", imp)
	}
	if got, want := imp.Params[0].Importance, 660.0/665; math.Abs(got-want) > 1e-12 {
		t.Errorf("x: %v, want %v", got, want)
	}
	// c splits y into 11..20 and 1..10: between 2·10·5² = 500 of 665.
	if got, want := imp.Params[1].Importance, 500.0/665; math.Abs(got-want) > 1e-12 {
		t.Errorf("c: %v, want %v", got, want)
	}
	small := analyse(t, "ahsc",
		doneCell(0, "0", `{"dataset":"d","method":"m"}`, evals("c=a|1", "c=a|3", "c=b|5", "c=b|7"), nil))
	if got := small.importance(mustQuery(t, small, nil)).Params[0].Importance; math.Abs(got-0.8) > 1e-12 {
		t.Errorf("the four-trial category: %v, want 0.8", got)
	}
	again := analyse(t, "ahsc", cells...)
	if !reflect.DeepEqual(again.importance(mustQuery(t, again, nil)), imp) {
		t.Error("the same trials gave other importances")
	}
}

// TestHistoryHandDerived: the best so far per repeat, its median and quartiles per step; a
// repeat that ended early keeps its best; lower fidelities are left out.
func TestHistoryHandDerived(t *testing.T) {
	a := analyse(t, "ahsc",
		doneCell(0, "r0", `{"dataset":"d","method":"m","repeat":0}`, evals("x=1|1", "x=1|100|0.5", "x=1|3", "x=1|2"), nil),
		doneCell(1, "r1", `{"dataset":"d","method":"m","repeat":1}`, evals("x=1|2", "x=1|2", "x=1|5"), nil),
		doneCell(2, "r2", `{"dataset":"d","method":"m","repeat":2}`, evals("x=1|0", "x=1|4"), nil),
		// A failed first evaluation: no best at step 1, then 7 from step 2.
		doneCell(3, "r3", `{"dataset":"d","method":"other","repeat":0}`, evals("x=1|\"NaN\"", "x=1|7"), nil),
	)
	h := a.history(mustQuery(t, a, nil))
	if len(h.Methods) != 2 || h.Methods[1].Median[0] != nil || *h.Methods[1].Median[1] != 7 || h.Methods[1].N[0] != 0 {
		t.Errorf("a failed first evaluation: %+v", h.Methods)
	}
	if len(h.Methods) < 1 {
		t.Fatalf("history %+v", h)
	}
	m := h.Methods[0]
	got := func(xs []*float64) []float64 {
		var out []float64
		for _, x := range xs {
			out = append(out, *x)
		}
		return out
	}
	if m.Repeats != 3 || !reflect.DeepEqual(m.Step, []int{1, 2, 3}) || !reflect.DeepEqual(got(m.Median), []float64{1, 3, 4}) ||
		!reflect.DeepEqual(got(m.Q25), []float64{0.5, 2.5, 3.5}) || !reflect.DeepEqual(got(m.Q75), []float64{1.5, 3.5, 4.5}) {
		t.Errorf("history %+v: want medians 1 3 4, quartiles 0.5 2.5 3.5 and 1.5 3.5 4.5", m)
	}
	lower := a.history(mustQuery(t, a, url.Values{"higher": {"0"}}))
	if med := got(lower.Methods[0].Median); !reflect.DeepEqual(med, []float64{1, 1, 1}) {
		t.Errorf("lower is better: medians %v, want 1 1 1", med)
	}
}

// TestViewsBounded: past the bound a view keeps every k-th point and says so.
func TestViewsBounded(t *testing.T) {
	var es []string
	for i := range 5000 {
		es = append(es, fmt.Sprintf("x=%d|%d", i, i%7))
	}
	a := analyse(t, "ahsc", doneCell(0, "0", `{"dataset":"d","method":"m"}`, evals(es...), nil))
	q := mustQuery(t, a, nil)
	s := a.slices(q)
	if s.Sampled == nil || s.Sampled.Total != 5000 || s.Sampled.Stride != 3 || len(s.Rows) != 1667 || s.Sampled.Shown != 1667 {
		t.Errorf("slices of 5000 trials: %d rows, %+v", len(s.Rows), s.Sampled)
	}
	h := a.history(q)
	if hs := h.Methods[0].Sampled; hs == nil || hs.Total != 5000 || len(h.Methods[0].Step) > maxSteps+1 || h.Methods[0].Step[len(h.Methods[0].Step)-1] != 5000 {
		t.Errorf("history of 5000 steps: %d steps, %+v", len(h.Methods[0].Step), hs)
	}
	tv, err := a.trials(q, url.Values{"filter": {"val_metric>5"}, "sort": {"x"}, "desc": {"1"}})
	if err != nil {
		t.Fatal(err)
	}
	matched, top := 0, 0
	for i := range 5000 {
		if i%7 > 5 {
			matched, top = matched+1, i
		}
	}
	if tv.Total != 5000 || tv.Matched != matched || len(tv.Rows) != maxTrialRows || tv.Rows[0][5] != float64(top) {
		t.Errorf("filtered and sorted: total %d, matched %d, %d rows, first %v", tv.Total, tv.Matched, len(tv.Rows), tv.Rows[0])
	}
	if _, err := a.trials(q, url.Values{"filter": {"nope>1"}}); err == nil {
		t.Error("a filter on no column: no error")
	}
}

// TestWhiteBoxViews: the screening view's ρ over the trained configurations and Figure 4.3's
// points and ρ, on values whose ranks agree or disagree exactly.
func TestWhiteBoxViews(t *testing.T) {
	a := analyse(t, "ahsc", doneCell(0, "d/r0/ahsc", `{"dataset":"d","method":"ahsc","repeat":0}`,
		`{"evaluations":[{"config":"x=1","val_metric":1}],"screenings":[
		{"score":1,"trained":true,"val_objective":-1,"test_metric":3},{"score":2,"trained":true,"val_objective":-2,"test_metric":2},
		{"score":3,"trained":true,"val_objective":-3,"test_metric":1},{"score":4,"val_objective":"NaN","test_metric":"NaN"}]}`, nil))
	sv := a.screenings(mustQuery(t, a, nil))
	if len(sv.Methods) != 1 || sv.Methods[0].Screened != 4 || sv.Methods[0].Trained != 3 || math.Abs(*sv.Methods[0].RhoTest+1) > 1e-12 ||
		math.Abs(*sv.Methods[0].RhoVal+1) > 1e-12 || len(sv.Methods[0].Points) != 4 {
		t.Errorf("screenings %+v: ρ %v, %v", sv.Methods, *sv.Methods[0].RhoTest, *sv.Methods[0].RhoVal)
	}
	hist := `{"history":[{"step":1,"val_acc":0.5,"test_acc":0.4,"distance":1},{"step":2,"val_acc":0.9,"test_acc":0.6,"distance":2},{"step":3,"val_acc":1,"test_acc":0.5,"distance":3}]}`
	w := analyse(t, "weightdecay",
		doneCell(0, "r0/zeta=0", `{"dataset":"c","model":"linear","replicate":0,"zeta":0}`, hist, map[string]float64{"val_acc": 1}),
		doneCell(1, "r0/zeta=30", `{"dataset":"c","model":"linear","replicate":0,"zeta":30}`, hist, map[string]float64{"val_acc": 1}))
	g := w.gap(mustQuery(t, w, nil))
	if g.N != 6 || len(g.Series) != 2 || g.Series[1].Name != "ζ = 30" || g.Rho == nil || math.Abs(*g.Rho-1) > 1e-12 {
		t.Errorf("gap %+v", g)
	}
	cv, err := w.curves(mustQuery(t, w, nil), "")
	if err != nil || cv.Field != "val_acc" || len(cv.Curves) != 2 || len(cv.Curves[0].Y) != 3 {
		t.Errorf("curves %+v, %v", cv, err)
	}
}

// TestFlatJSON: the in-place reader gives every member of every evaluation, nested values
// whole and escapes decoded, and a truncated or malformed output ends it without a panic.
func TestFlatJSON(t *testing.T) {
	doc := `[{"config":"a=1 b=x\"y","v":1.5e-3,"nested":{"k":[1,"]"]},"s":"NaN","t":true} , {"config":"a=2"}]`
	var got []string
	ends := 0
	err := eachFlatObject([]byte(doc), func(key, raw []byte) { got = append(got, string(key)+"="+string(raw)) }, func() { ends++ })
	want := []string{`config="a=1 b=x\"y"`, `v=1.5e-3`, `nested={"k":[1,"]"]}`, `s="NaN"`, `t=true`, `config="a=2"`}
	if err != nil || ends != 2 || !reflect.DeepEqual(got, want) {
		t.Errorf("members %q, %d objects, %v; want %q", got, ends, err, want)
	}
	if s, ok := stringValue([]byte(`"a=1 b=x\"y"`)); !ok || s != `a=1 b=x"y` {
		t.Errorf("escaped string: %q", s)
	}
	for i := range len(doc) {
		eachFlatObject([]byte(doc[:i]), func(key, raw []byte) {}, func() {})
		eachFlatObject([]byte(doc[i:]), func(key, raw []byte) {}, func() {})
	}
}

// TestTrialSetsBounded: the parsed trials of at most maxTrialSets runs are kept, the least
// recently used forgotten first.
func TestTrialSetsBounded(t *testing.T) {
	s := &Server{trials: map[int64]*trialSet{}}
	base := time.Now()
	for id := int64(1); id <= maxTrialSets+3; id++ {
		ts := newTrialSet()
		ts.used = base.Add(time.Duration(id) * time.Second)
		s.trials[id] = ts
		s.evictTrials(id)
	}
	if len(s.trials) != maxTrialSets || s.trials[1] != nil || s.trials[maxTrialSets+3] == nil || s.trials[4] == nil {
		t.Errorf("kept runs: %v", len(s.trials))
	}
}

// TestSignalsView: the white-box record nested in an evaluation ("whitebox": {...}, as run
// ahsc --whitebox stores it) gives whitebox_* columns, and the signals view draws each signal
// against the test metric with Spearman's ρ: μ rises with it (ρ = 1), the trace falls (ρ = −1).
func TestSignalsView(t *testing.T) {
	ev := func(mu, trace, test float64) string {
		return fmt.Sprintf(`{"config":"x=%g","val_metric":0.5,"test_metric":%g,"whitebox":{"mu":%g,"trace":%g,"probes":4,"top_eigenvalue":"NaN"}}`,
			mu, test, mu, trace)
	}
	a := analyse(t, "ahsc", doneCell(0, "d/r0/random", `{"dataset":"d","method":"random","repeat":0}`,
		`{"evaluations":[`+ev(1, 9, 0.1)+`,`+ev(2, 8, 0.2)+`,`+ev(3, 7, 0.3)+`]}`, nil))
	var values []string
	for _, c := range a.values {
		values = append(values, c.Name)
	}
	if got := strings.Join(values, ","); !strings.Contains(got, "whitebox_mu,whitebox_trace,whitebox_probes") {
		t.Fatalf("columns %s: the nested record is not flattened", got)
	}
	if !a.hasSignals() {
		t.Fatal("hasSignals: false")
	}
	sv := a.signals(mustQuery(t, a, nil))
	if len(sv.Signals) != 3 || sv.Signals[0].Field != "whitebox_mu" || sv.Signals[0].N != 3 || math.Abs(*sv.Signals[0].Rho-1) > 1e-12 ||
		math.Abs(*sv.Signals[1].Rho+1) > 1e-12 || sv.Signals[2].N != 0 || sv.Signals[2].Rho != nil {
		t.Errorf("signals %+v", sv.Signals)
	}
	if p := sv.Signals[0].Points; len(p) != 3 || p[2][0] != 3.0 || p[2][1] != 0.3 || p[2][2] != 0 {
		t.Errorf("μ's points %v", p)
	}
}

// TestPerMethodObjective: freedman's runs are ranked by the selected model's test MSE, the
// scale shared by every method; asked for "objective", each method's own criterion, the
// ranking views say that its values compare within a method only.
func TestPerMethodObjective(t *testing.T) {
	a := analyse(t, "freedman",
		doneCell(0, "v", `{"method":"validation","repeat":0}`, `{}`, map[string]float64{"objective": 0.9, "test_mse": 1.2}),
		doneCell(1, "b", `{"method":"bic","repeat":0}`, `{}`, map[string]float64{"objective": 140, "test_mse": 1.1}),
	)
	q := mustQuery(t, a, nil)
	if a.values[q.objective].Name != "test_mse" || q.higher {
		t.Fatalf("freedman's default objective %q (higher %t), want test_mse, lower is better", a.values[q.objective].Name, q.higher)
	}
	if h, v, s := a.history(q), a.importance(q), a.slices(q); h.Caveat+v.Caveat+s.Caveat != "" {
		t.Errorf("a caveat on test_mse: %q %q %q", h.Caveat, v.Caveat, s.Caveat)
	}
	own := mustQuery(t, a, url.Values{"objective": {"objective"}})
	for view, c := range map[string]string{"history": a.history(own).Caveat, "importance": a.importance(own).Caveat, "slices": a.slices(own).Caveat} {
		if !strings.Contains(c, "each method's own criterion") || !strings.Contains(c, "BIC") {
			t.Errorf("%s on freedman's objective: caveat %q", view, c)
		}
	}
	b := analyse(t, "ahsc", doneCell(0, "r", `{"dataset":"d","method":"m"}`, evals("x=1|1"), nil))
	if c := b.caveat(mustQuery(t, b, nil)); c != "" {
		t.Errorf("ahsc's objective has a caveat: %q", c)
	}
}
