package ahsc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/hyperflat/hyperflat/internal/nanjson"
)

// Bayesmark's output folders (uber/bayesmark, serialize.py XRSerializer): a database folder
// DB holds derived/ (eval.json: every study's losses, aggregated by experiment_aggregate.py;
// baseline.json: experiment_baseline.py's opt and clip), eval/UUID.json (one study's losses),
// suggest_log/UUID.json (its suggestions), time/ and log/. Each JSON file is
// {"meta": …, "data": xarray.Dataset.to_dict()}: coords, dims and data_vars, every variable
// a nested list in the order of its dims. Python's json writes NaN and ±Infinity as bare
// tokens, which are read here too.

// Bounds on what a Bayesmark folder may hold: far above Bayesmark's own sizes (its largest
// derived files are a few MB), low enough that a wrong path fails at once.
const (
	maxBMFileBytes = 256 << 20 // one JSON file
	maxBMFiles     = 100000    // studies in eval/ or suggest_log/
	maxBMValues    = 1 << 26   // values of one variable
)

// Bayesmark's names (constants.py).
const (
	bmVisible        = "_visible_to_opt"
	bmGeneralization = "generalization"
)

// BayesmarkDB is one Bayesmark database folder as read: every study's losses under each
// test case (function) and optimizer, and the stored baseline when there is one.
type BayesmarkDB struct {
	// Dir is the folder, as named in its file system.
	Dir string
	// EvalFiles are the files the losses came from: derived/eval.json, or every eval/*.json.
	EvalFiles []string
	// BaselineFile is derived/baseline.json when present ("" otherwise).
	BaselineFile string
	functions    []string
	optimizers   []string
	// studies[function][optimizer] lists the studies in Bayesmark's trial order.
	studies  map[string]map[string][]bmLosses
	baseline map[[2]string]bmRef // (function, objective) → stored opt and clip
}

// bmLosses are one study's losses of one function, [call][suggestion].
type bmLosses struct{ visible, generalization [][]float64 }

// bmRef is a stored baseline's best (already padded) and clip.
type bmRef struct{ best, clip float64 }

// Functions lists the test cases read, sorted.
func (db *BayesmarkDB) Functions() []string { return slices.Clone(db.functions) }

// Optimizers lists the optimizers read, sorted.
func (db *BayesmarkDB) Optimizers() []string { return slices.Clone(db.optimizers) }

// IsBayesmarkDB reports whether dir of fsys looks like a Bayesmark database folder: it has
// derived/eval.json or an eval/ folder.
func IsBayesmarkDB(fsys fs.FS, dir string) bool {
	if st, err := fs.Stat(fsys, path.Join(dir, "derived", "eval.json")); err == nil && !st.IsDir() {
		return true
	}
	st, err := fs.Stat(fsys, path.Join(dir, "eval"))
	return err == nil && st.IsDir()
}

// FindBayesmarkDBs lists the database folders at or below dir, at most two levels down
// (Bayesmark's db_root/db and the authors' results/NAME/run_*), in lexical order.
func FindBayesmarkDBs(fsys fs.FS, dir string) ([]string, error) {
	if IsBayesmarkDB(fsys, dir) {
		return []string{dir}, nil
	}
	var out []string
	var walk func(d string, depth int) error
	walk = func(d string, depth int) error {
		ents, err := fs.ReadDir(fsys, d)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			sub := path.Join(d, e.Name())
			if IsBayesmarkDB(fsys, sub) {
				out = append(out, sub)
			} else if depth > 1 {
				if err := walk(sub, depth-1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(dir, 2); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no Bayesmark output folder (one with derived/eval.json or eval/) here or two levels below", dir)
	}
	return out, nil
}

// ReadBayesmarkDB reads the database folder dir of fsys: derived/eval.json when present (as
// Bayesmark's analysis reads it), else every eval/*.json (as its aggregation step does), and
// derived/baseline.json when present. raw forces eval/*.json.
func ReadBayesmarkDB(fsys fs.FS, dir string, raw bool) (*BayesmarkDB, error) {
	db := &BayesmarkDB{Dir: dir, studies: map[string]map[string][]bmLosses{}}
	derived := path.Join(dir, "derived", "eval.json")
	var err error
	if _, serr := fs.Stat(fsys, derived); serr == nil && !raw {
		err = db.readDerived(fsys, derived)
	} else {
		err = db.readRaw(fsys, path.Join(dir, "eval"))
	}
	if err != nil {
		return nil, err
	}
	for f := range db.studies {
		db.functions = append(db.functions, f)
		for o := range db.studies[f] {
			if !slices.Contains(db.optimizers, o) {
				db.optimizers = append(db.optimizers, o)
			}
		}
	}
	slices.Sort(db.functions)
	slices.Sort(db.optimizers)
	if len(db.functions) == 0 {
		return nil, fmt.Errorf("%s: no study", dir)
	}
	base := path.Join(dir, "derived", "baseline.json")
	if _, serr := fs.Stat(fsys, base); serr == nil {
		if db.baseline, err = readBaseline(fsys, base); err != nil {
			return nil, err
		}
		db.BaselineFile = base
	}
	return db, nil
}

// xrFile is a serialized xarray Dataset with its meta.
type xrFile struct {
	Meta json.RawMessage `json:"meta"`
	Data struct {
		Coords   map[string]xrVar `json:"coords"`
		DataVars map[string]xrVar `json:"data_vars"`
	} `json:"data"`
}

type xrVar struct {
	Dims []string        `json:"dims"`
	Data json.RawMessage `json:"data"`
}

// readXR reads one serialized file, bounded.
func readXR(fsys fs.FS, name string) (*xrFile, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBMFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxBMFileBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB, more than any Bayesmark output file", name, maxBMFileBytes>>20)
	}
	var x xrFile
	if err := json.Unmarshal(pythonJSON(b), &x); err != nil {
		return nil, fmt.Errorf("%s: not a Bayesmark (xarray JSON) file: %w", name, err)
	}
	if x.Data.DataVars == nil {
		return nil, fmt.Errorf("%s: not a Bayesmark (xarray JSON) file: no data.data_vars", name)
	}
	return &x, nil
}

// pythonJSON rewrites Python's bare NaN, Infinity and -Infinity tokens (outside strings) as
// the strings nanjson reads.
func pythonJSON(b []byte) []byte {
	if !bytes.Contains(b, []byte("NaN")) && !bytes.Contains(b, []byte("Infinity")) {
		return b
	}
	out := make([]byte, 0, len(b)+64)
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			out = append(out, c)
		case bytes.HasPrefix(b[i:], []byte("NaN")):
			out, i = append(out, `"NaN"`...), i+2
		case bytes.HasPrefix(b[i:], []byte("-Infinity")):
			out, i = append(out, `"-Inf"`...), i+8
		case bytes.HasPrefix(b[i:], []byte("Infinity")):
			out, i = append(out, `"+Inf"`...), i+7
		default:
			out = append(out, c)
		}
	}
	return out
}

// strings reads a coordinate of strings (or numbers, written as text).
func (x *xrFile) coord(name, file string) ([]string, error) {
	c, ok := x.Data.Coords[name]
	if !ok {
		return nil, fmt.Errorf("%s: no coordinate %q", file, name)
	}
	var vals []any
	if err := json.Unmarshal(c.Data, &vals); err != nil {
		return nil, fmt.Errorf("%s: coordinate %q: %w", file, name, err)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = fmt.Sprint(v)
	}
	return out, nil
}

// variable reads a data variable as a flat array in the order of want (a permutation of its
// dims), checking that it is a full nested array of the coordinates' lengths.
func (x *xrFile) variable(name, file string, want []string, sizes map[string]int) ([]float64, error) {
	v, ok := x.Data.DataVars[name]
	if !ok {
		return nil, fmt.Errorf("%s: no variable %q", file, name)
	}
	if len(v.Dims) != len(want) {
		return nil, fmt.Errorf("%s: variable %q has dims %v, want %v", file, name, v.Dims, want)
	}
	perm := make([]int, len(want)) // perm[i]: the position of want[i] in v.Dims
	shape := make([]int, len(v.Dims))
	total := 1
	for i, d := range v.Dims {
		n, ok := sizes[d]
		if !ok || !slices.Contains(want, d) {
			return nil, fmt.Errorf("%s: variable %q has dims %v, want %v", file, name, v.Dims, want)
		}
		shape[i] = n
		total *= n
		if total > maxBMValues {
			return nil, fmt.Errorf("%s: variable %q holds more than %d values", file, name, maxBMValues)
		}
	}
	// Each value takes at least two bytes of text (a digit and a separator): a shape larger
	// than the text allows is refused before anything of its size is allocated.
	if total > len(v.Data)/2+1 {
		return nil, fmt.Errorf("%s: variable %q holds fewer values than its dims %v say (%d)", file, name, v.Dims, total)
	}
	for i, w := range want {
		perm[i] = slices.Index(v.Dims, w)
	}
	var nested any
	dec := json.NewDecoder(bytes.NewReader(v.Data))
	dec.UseNumber()
	if err := dec.Decode(&nested); err != nil {
		return nil, fmt.Errorf("%s: variable %q: %w", file, name, err)
	}
	flat := make([]float64, 0, total)
	var walk func(a any, depth int) error
	walk = func(a any, depth int) error {
		if depth == len(shape) {
			b, _ := json.Marshal(a)
			var f nanjson.Float
			if err := f.UnmarshalJSON(b); err != nil {
				return err
			}
			flat = append(flat, float64(f))
			return nil
		}
		l, ok := a.([]any)
		if !ok || len(l) != shape[depth] {
			return fmt.Errorf("a list of %d along %q expected", shape[depth], v.Dims[depth])
		}
		for _, e := range l {
			if err := walk(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(nested, 0); err != nil {
		return nil, fmt.Errorf("%s: variable %q: %w", file, name, err)
	}
	// Transpose into want's order.
	strides := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = s
		s *= shape[i]
	}
	out := make([]float64, total)
	idx := make([]int, len(want))
	for o := range out {
		src := 0
		for i := range want {
			src += idx[i] * strides[perm[i]]
		}
		out[o] = flat[src]
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < shape[perm[i]] {
				break
			}
			idx[i] = 0
		}
	}
	return out, nil
}

// checkLosses refuses NaN losses, which Bayesmark's analysis refuses too (get_perf_array).
func checkLosses(file, name string, v []float64) error {
	for _, x := range v {
		if x != x {
			return fmt.Errorf("%s: variable %q holds NaN, which Bayesmark's analysis refuses (a missing study or call)", file, name)
		}
	}
	return nil
}

// readDerived reads derived/eval.json: dims (iter, suggestion, function, optimizer, study_id).
func (db *BayesmarkDB) readDerived(fsys fs.FS, name string) error {
	x, err := readXR(fsys, name)
	if err != nil {
		return err
	}
	dims := []string{"function", "optimizer", "study_id", "iter", "suggestion"}
	coords := map[string][]string{}
	sizes := map[string]int{}
	for _, d := range dims {
		if coords[d], err = x.coord(d, name); err != nil {
			return err
		}
		sizes[d] = len(coords[d])
		if sizes[d] == 0 {
			return fmt.Errorf("%s: coordinate %q is empty", name, d)
		}
	}
	vals := map[string][]float64{}
	for _, v := range []string{bmVisible, bmGeneralization} {
		if vals[v], err = x.variable(v, name, dims, sizes); err != nil {
			return err
		}
		if err := checkLosses(name, v, vals[v]); err != nil {
			return err
		}
	}
	nf, no, nt, ni, ns := sizes["function"], sizes["optimizer"], sizes["study_id"], sizes["iter"], sizes["suggestion"]
	for f := 0; f < nf; f++ {
		fn := coords["function"][f]
		db.studies[fn] = map[string][]bmLosses{}
		for o := 0; o < no; o++ {
			var list []bmLosses
			for t := 0; t < nt; t++ {
				l := bmLosses{visible: make([][]float64, ni), generalization: make([][]float64, ni)}
				for i := 0; i < ni; i++ {
					off := (((f*no+o)*nt+t)*ni + i) * ns
					l.visible[i] = vals[bmVisible][off : off+ns : off+ns]
					l.generalization[i] = vals[bmGeneralization][off : off+ns : off+ns]
				}
				list = append(list, l)
			}
			db.studies[fn][coords["optimizer"][o]] = list
		}
	}
	db.EvalFiles = []string{name}
	return nil
}

// studyMeta is the part of a study file's meta naming its test case and optimizer
// (experiment.py's args).
type studyMeta struct {
	Args struct {
		UUID       string  `json:"--uuid"`
		Opt        string  `json:"--opt"`
		Data       string  `json:"--data"`
		Classifier string  `json:"--classifier"`
		Metric     string  `json:"--metric"`
		OptRev     *string `json:"opt_rev"`
		Rev        *string `json:"rev"`
	} `json:"args"`
}

// studyKey is a study file's function and optimizer as experiment_aggregate.py names them.
func studyKey(meta json.RawMessage, file string) (function, optimizer string, err error) {
	var m studyMeta
	if err := json.Unmarshal(pythonJSON(meta), &m); err != nil {
		return "", "", fmt.Errorf("%s: meta: %w", file, err)
	}
	a := m.Args
	if a.Opt == "" || a.Data == "" || a.Classifier == "" || a.Metric == "" {
		return "", "", fmt.Errorf("%s: meta.args lacks --opt, --data, --classifier or --metric", file)
	}
	rev := func(p *string) string {
		if p == nil {
			return "None"
		}
		return *p
	}
	return a.Classifier + "_" + a.Data + "_" + a.Metric, a.Opt + "_" + rev(a.OptRev) + "_" + rev(a.Rev), nil
}

// readRaw reads every eval/*.json, each one study of dims (iter, suggestion), in file-name
// order (Bayesmark's get_uuids sorts them; its trial counter numbers the studies of a
// function and optimizer in that order).
func (db *BayesmarkDB) readRaw(fsys fs.FS, dir string) error {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return fmt.Errorf("%s: neither derived/eval.json nor eval/: %w", path.Dir(dir), err)
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	if len(names) > maxBMFiles {
		return fmt.Errorf("%s: %d study files, more than %d", dir, len(names), maxBMFiles)
	}
	slices.Sort(names)
	for _, n := range names {
		name := path.Join(dir, n)
		x, err := readXR(fsys, name)
		if err != nil {
			return err
		}
		fn, opt, err := studyKey(x.Meta, name)
		if err != nil {
			return err
		}
		dims := []string{"iter", "suggestion"}
		sizes := map[string]int{}
		for _, d := range dims {
			c, err := x.coord(d, name)
			if err != nil {
				return err
			}
			if len(c) == 0 {
				return fmt.Errorf("%s: coordinate %q is empty", name, d)
			}
			sizes[d] = len(c)
		}
		l := bmLosses{}
		for _, v := range []string{bmVisible, bmGeneralization} {
			vals, err := x.variable(v, name, dims, sizes)
			if err != nil {
				return err
			}
			if err := checkLosses(name, v, vals); err != nil {
				return err
			}
			rows := make([][]float64, sizes["iter"])
			for i := range rows {
				rows[i] = vals[i*sizes["suggestion"] : (i+1)*sizes["suggestion"]]
			}
			if v == bmVisible {
				l.visible = rows
			} else {
				l.generalization = rows
			}
		}
		if db.studies[fn] == nil {
			db.studies[fn] = map[string][]bmLosses{}
		}
		db.studies[fn][opt] = append(db.studies[fn][opt], l)
		db.EvalFiles = append(db.EvalFiles, name)
	}
	if len(db.EvalFiles) == 0 {
		return fmt.Errorf("%s: no study file (*.json)", dir)
	}
	return nil
}

// readBaseline reads derived/baseline.json's best and clip, dims (function, objective).
func readBaseline(fsys fs.FS, name string) (map[[2]string]bmRef, error) {
	x, err := readXR(fsys, name)
	if err != nil {
		return nil, err
	}
	dims := []string{"function", "objective"}
	coords := map[string][]string{}
	sizes := map[string]int{}
	for _, d := range dims {
		if coords[d], err = x.coord(d, name); err != nil {
			return nil, err
		}
		sizes[d] = len(coords[d])
	}
	best, err := x.variable("best", name, dims, sizes)
	if err != nil {
		return nil, err
	}
	clip, err := x.variable("clip", name, dims, sizes)
	if err != nil {
		return nil, err
	}
	out := map[[2]string]bmRef{}
	for f, fn := range coords["function"] {
		for o, obj := range coords["objective"] {
			i := f*sizes["objective"] + o
			if !(clip[i] > best[i]) {
				return nil, fmt.Errorf("%s: %s %s: clip %v is not above best %v", name, fn, obj, clip[i], best[i])
			}
			out[[2]string{fn, obj}] = bmRef{best: best[i], clip: clip[i]}
		}
	}
	return out, nil
}

// errNoBaseline is returned when a stored baseline is asked for and there is none.
var errNoBaseline = errors.New("no derived/baseline.json")

// BayesmarkPicks are the values one hyperparameter took in the suggestions of one optimizer.
type BayesmarkPicks struct {
	Optimizer string
	Values    []float64
}

// ReadBayesmarkSuggestions reads param from every suggest_log/*.json of the database folder
// dir: the values suggested, per optimizer (sorted), over every study, call and suggestion;
// and the files read.
func ReadBayesmarkSuggestions(fsys fs.FS, dir, param string) ([]BayesmarkPicks, []string, error) {
	sdir := path.Join(dir, "suggest_log")
	ents, err := fs.ReadDir(fsys, sdir)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: no suggest_log/: %w", dir, err)
	}
	if len(ents) > maxBMFiles {
		return nil, nil, fmt.Errorf("%s: %d suggestion files, more than %d", sdir, len(ents), maxBMFiles)
	}
	byOpt := map[string][]float64{}
	var files []string
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		name := path.Join(sdir, e.Name())
		x, err := readXR(fsys, name)
		if err != nil {
			return nil, nil, err
		}
		_, opt, err := studyKey(x.Meta, name)
		if err != nil {
			return nil, nil, err
		}
		dims := []string{"iter", "suggestion"}
		sizes := map[string]int{}
		for _, d := range dims {
			c, err := x.coord(d, name)
			if err != nil {
				return nil, nil, err
			}
			sizes[d] = len(c)
		}
		v, err := x.variable(param, name, dims, sizes)
		if err != nil {
			return nil, nil, err
		}
		byOpt[opt] = append(byOpt[opt], v...)
		files = append(files, name)
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("%s: no suggestion file (*.json)", sdir)
	}
	var out []BayesmarkPicks
	for o, v := range byOpt {
		out = append(out, BayesmarkPicks{o, v})
	}
	slices.SortFunc(out, func(a, b BayesmarkPicks) int { return strings.Compare(a.Optimizer, b.Optimizer) })
	return out, files, nil
}
