package ahsc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hyperflat/hyperflat/experiments"
)

// Writing a run's Bayesmark cells in Bayesmark's output layout, so that Bayesmark's own
// analysis (and `hyperflat bayesmark score`) reads them. Each run (dataset, method, repeat)
// is two studies, one per test case, as Bayesmark runs one study per function:
// MLP-adam_DATASET_acc (losses −accuracy, as Bayesmark's sklearn_funcs.py negates scores)
// and MLP-adam_DATASET_nll (log losses); the visible loss is the cross-validated one the
// search minimized, the generalization loss the test one. Only full-fidelity calls are
// written (BOHB's lower rungs are not calls of Bayesmark's objective); a failed call is an
// infinite loss. Random search, shown or the hidden reference, is named RandomSearch, the
// name experiment_baseline.py looks for.
//
// Written: eval/UUID.json and suggest_log/UUID.json per study, and derived/eval.json (the
// output of Bayesmark's aggregation) when every study has the same number of calls, which
// Bayesmark requires; no baseline.json (Bayesmark's analysis computes it when absent, and so
// does the scorer here), no time/ (the cells record their search times, not each call's).
// The UUIDs are derived from the study (dataset, method, repeat, test case), in repeat order
// within a function and optimizer, so that Bayesmark's trial k is repeat k.

// bmClassifier is Bayesmark's name of the model every Bayesmark cell here tunes.
const bmClassifier = "MLP-adam"

// bmStudyOut is one study to write.
type bmStudyOut struct {
	dataset, optimizer, metric string
	repeat                     int
	uuid                       string
	visible, generalization    []float64
	configs                    []string
}

// WriteBayesmark writes the Bayesmark cells of res (an ahsc run) under dir in Bayesmark's
// layout and returns the files written. dir is created; files of the same names are
// replaced.
func WriteBayesmark(res *experiments.Result, dir string) ([]string, error) {
	if res == nil || res.Experiment != "ahsc" {
		return nil, errors.New("ahsc: --bayesmark-out writes the Bayesmark cells of an ahsc run")
	}
	ev := res.Table("evaluations")
	if ev == nil {
		return nil, errors.New("ahsc: the run has no evaluations table")
	}
	rev := "seed" + strconv.FormatUint(res.Seed, 10)
	type key struct {
		dataset, method string
		repeat          int
		hidden          bool
	}
	byKey := map[key]int{}
	var studies []*bmStudyOut // acc, nll pairs
	for i := range ev.Rows {
		ds := ev.String(i, "dataset")
		if !slices.Contains(bayesmarkSets, ds) || !(ev.Float(i, "fidelity") >= 1) {
			continue
		}
		k := key{ds, ev.String(i, "method"), ev.Int(i, "repeat"), ev.Value(i, "hidden") == true}
		j, ok := byKey[k]
		if !ok {
			name := k.method
			if name == "random" {
				name = "RandomSearch"
			}
			opt := name + "_hyperflat_" + rev
			j = len(studies)
			byKey[k] = j
			for _, m := range []string{"acc", "nll"} {
				studies = append(studies, &bmStudyOut{dataset: ds, optimizer: opt, metric: m, repeat: k.repeat,
					uuid: bmUUID(ds, opt, m, k.repeat)})
			}
		}
		failed := ev.Value(i, "failed") == true
		lossOf := func(v float64, neg bool) float64 {
			if failed || math.IsNaN(v) {
				return math.Inf(1)
			}
			if neg {
				return -v
			}
			return v
		}
		acc, nll := studies[j], studies[j+1]
		acc.visible = append(acc.visible, lossOf(ev.Float(i, "val_accuracy"), true))
		acc.generalization = append(acc.generalization, lossOf(ev.Float(i, "test_accuracy"), true))
		nll.visible = append(nll.visible, lossOf(ev.Float(i, "val_log_loss"), false))
		nll.generalization = append(nll.generalization, lossOf(ev.Float(i, "test_log_loss"), false))
		cfg := ev.String(i, "config")
		acc.configs, nll.configs = append(acc.configs, cfg), append(nll.configs, cfg)
	}
	if len(studies) == 0 {
		return nil, errors.New("ahsc: the run has no Bayesmark cell (breast, digits, iris, wine) to write")
	}
	for _, sub := range []string{"derived", "eval", "suggest_log"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	var written []string
	write := func(rel string, b []byte) error {
		p := filepath.Join(dir, rel)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
		written = append(written, p)
		return nil
	}
	for _, s := range studies {
		meta := bmStudyMeta(s, rev)
		if err := write(filepath.Join("eval", s.uuid+".json"), bmStudyEval(meta, s)); err != nil {
			return written, err
		}
		sl, err := bmSuggestLog(meta, s)
		if err != nil {
			return written, err
		}
		if err := write(filepath.Join("suggest_log", s.uuid+".json"), sl); err != nil {
			return written, err
		}
	}
	if b, ok := bmDerivedEval(studies, rev); ok {
		if err := write(filepath.Join("derived", "eval.json"), b); err != nil {
			return written, err
		}
	}
	return written, nil
}

// bmUUID is a study's 32-hex-digit name: a hash of its function and optimizer, then its
// repeat, so that file-name order within a function and optimizer is repeat order.
func bmUUID(dataset, optimizer, metric string, repeat int) string {
	h := sha256.Sum256([]byte(bmClassifier + "_" + dataset + "_" + metric + "\x00" + optimizer))
	return hex.EncodeToString(h[:12]) + fmt.Sprintf("%08x", repeat)
}

// pyFloat is a float as Python's json writes it (NaN, Infinity, -Infinity bare).
func pyFloat(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// bmStudyMeta is a study file's meta, experiment.py's args.
func bmStudyMeta(s *bmStudyOut, rev string) string {
	args := fmt.Sprintf(`{"--uuid": %s, "-db-root": null, "--opt-root": null, "--data-root": null, "--db": null, `+
		`"--opt": %s, "--data": %s, "--classifier": %s, "--metric": %s, "--calls": %d, "--suggestions": 1, `+
		`"--jobs-file": null, "--verbose": false, "dry_run": false, "rev": %s, "opt_rev": "hyperflat"}`,
		jsonText(s.uuid), jsonText(strings.Split(s.optimizer, "_")[0]), jsonText(s.dataset), jsonText(bmClassifier),
		jsonText(s.metric), len(s.visible), jsonText(rev))
	// The signature (the objective at 5 fixed points, which Bayesmark compares between
	// studies of a function) is not computed here: ours is not Bayesmark's sklearn objective.
	return `{"args": ` + args + `, "signature": [[], []]}`
}

// coordsText writes xarray coords of 0..n−1 for each named dim.
func coordsText(dims []string, sizes []int) string {
	var b strings.Builder
	for i, d := range dims {
		if i > 0 {
			b.WriteString(", ")
		}
		idx := make([]int, sizes[i])
		for j := range idx {
			idx[j] = j
		}
		fmt.Fprintf(&b, `%s: {"dims": [%s], "attrs": {}, "data": %s}`, jsonText(d), jsonText(d), jsonText(idx))
	}
	return b.String()
}

// column is values as an (iter, suggestion) nested list of one suggestion.
func column(values []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("[" + v + "]")
	}
	b.WriteByte(']')
	return b.String()
}

func floats(xs []float64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = pyFloat(x)
	}
	return out
}

// bmStudyEval is eval/UUID.json: dims (iter, suggestion), the two objectives.
func bmStudyEval(meta string, s *bmStudyOut) []byte {
	n := len(s.visible)
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\"meta\": %s,\n\"data\": {\"coords\": {%s}, \"attrs\": {}, \"dims\": {\"iter\": %d, \"suggestion\": 1}, \"data_vars\": {", meta,
		coordsText([]string{"iter", "suggestion"}, []int{n, 1}), n)
	fmt.Fprintf(&b, `%s: {"dims": ["iter", "suggestion"], "attrs": {}, "data": %s}, `, jsonText(bmVisible), column(floats(s.visible)))
	fmt.Fprintf(&b, `%s: {"dims": ["iter", "suggestion"], "attrs": {}, "data": %s}`, jsonText(bmGeneralization), column(floats(s.generalization)))
	b.WriteString("}}}\n")
	return b.Bytes()
}

// bmSuggestLog is suggest_log/UUID.json: each hyperparameter of the calls' configurations
// (name=value text) as a variable of dims (iter, suggestion); numbers stay numbers.
func bmSuggestLog(meta string, s *bmStudyOut) ([]byte, error) {
	var names []string
	vals := map[string][]string{}
	for i, c := range s.configs {
		for _, kv := range strings.Fields(c) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("ahsc: %s repeat %d call %d: configuration %q is not name=value pairs", s.dataset, s.repeat, i, c)
			}
			if _, seen := vals[k]; !seen {
				names = append(names, k)
			}
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				v = pyFloat(f)
				if _, err := strconv.Atoi(kv[len(k)+1:]); err == nil {
					v = kv[len(k)+1:]
				}
			} else {
				v = jsonText(v)
			}
			vals[k] = append(vals[k], v)
		}
	}
	n := len(s.configs)
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\"meta\": %s,\n\"data\": {\"coords\": {%s}, \"attrs\": {}, \"dims\": {\"iter\": %d, \"suggestion\": 1}, \"data_vars\": {", meta,
		coordsText([]string{"iter", "suggestion"}, []int{n, 1}), n)
	for i, k := range names {
		if len(vals[k]) != n {
			return nil, fmt.Errorf("ahsc: %s repeat %d: hyperparameter %q is missing from some calls", s.dataset, s.repeat, k)
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `%s: {"dims": ["iter", "suggestion"], "attrs": {}, "data": %s}`, jsonText(k), column(vals[k]))
	}
	b.WriteString("}}}\n")
	return b.Bytes(), nil
}

// bmDerivedEval is derived/eval.json, dims (iter, suggestion, function, optimizer, study_id),
// when every study has the same calls and every function and optimizer the same studies (as
// experiment_aggregate.py requires); ok false otherwise.
func bmDerivedEval(studies []*bmStudyOut, rev string) ([]byte, bool) {
	var fns, opts []string
	for _, s := range studies {
		f := bmClassifier + "_" + s.dataset + "_" + s.metric
		if !slices.Contains(fns, f) {
			fns = append(fns, f)
		}
		if !slices.Contains(opts, s.optimizer) {
			opts = append(opts, s.optimizer)
		}
	}
	slices.Sort(fns)
	slices.Sort(opts)
	cell := map[[2]string][]*bmStudyOut{}
	for _, s := range studies {
		k := [2]string{bmClassifier + "_" + s.dataset + "_" + s.metric, s.optimizer}
		cell[k] = append(cell[k], s)
	}
	calls, trials := len(studies[0].visible), len(cell[[2]string{fns[0], opts[0]}])
	for _, f := range fns {
		for _, o := range opts {
			c := cell[[2]string{f, o}]
			if len(c) != trials || trials == 0 {
				return nil, false
			}
			slices.SortFunc(c, func(a, b *bmStudyOut) int { return strings.Compare(a.uuid, b.uuid) })
			for _, s := range c {
				if len(s.visible) != calls {
					return nil, false
				}
			}
		}
	}
	nested := func(gen bool) string {
		var b strings.Builder
		b.WriteByte('[')
		for i := 0; i < calls; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("[[") // iter, suggestion
			for fi, f := range fns {
				if fi > 0 {
					b.WriteString(", ")
				}
				b.WriteByte('[')
				for oi, o := range opts {
					if oi > 0 {
						b.WriteString(", ")
					}
					b.WriteByte('[')
					for t, s := range cell[[2]string{f, o}] {
						if t > 0 {
							b.WriteString(", ")
						}
						v := s.visible[i]
						if gen {
							v = s.generalization[i]
						}
						b.WriteString(pyFloat(v))
					}
					b.WriteByte(']')
				}
				b.WriteByte(']')
			}
			b.WriteString("]]")
		}
		b.WriteByte(']')
		return b.String()
	}
	sig := map[string][]float64{}
	for _, f := range fns {
		sig[f] = []float64{}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\"meta\": {\"args\": {\"-db-root\": null, \"--opt-root\": null, \"--db\": null, \"--jobs-file\": null, \"--ravel\": false, "+
		"\"--verbose\": false, \"dry_run\": false, \"rev\": %s, \"opt_rev\": null}, \"signature\": %s},\n", jsonText(rev), jsonText(sig))
	fmt.Fprintf(&b, `"data": {"coords": {%s, "function": {"dims": ["function"], "attrs": {}, "data": %s}, `+
		`"optimizer": {"dims": ["optimizer"], "attrs": {}, "data": %s}, %s}, "attrs": {}, `,
		coordsText([]string{"iter", "suggestion"}, []int{calls, 1}), jsonText(fns), jsonText(opts),
		coordsText([]string{"study_id"}, []int{trials}))
	fmt.Fprintf(&b, `"dims": {"iter": %d, "suggestion": 1, "function": %d, "optimizer": %d, "study_id": %d}, "data_vars": {`,
		calls, len(fns), len(opts), trials)
	dims := `["iter", "suggestion", "function", "optimizer", "study_id"]`
	fmt.Fprintf(&b, `%s: {"dims": %s, "attrs": {}, "data": %s}, `, jsonText(bmVisible), dims, nested(false))
	fmt.Fprintf(&b, `%s: {"dims": %s, "attrs": {}, "data": %s}`, jsonText(bmGeneralization), dims, nested(true))
	b.WriteString("}}}\n")
	return b.Bytes(), true
}
