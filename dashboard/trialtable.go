package dashboard

import (
	"cmp"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// trialsView is a page of the trial table: every trial of the group, every hyperparameter and
// value a column, sorted and filtered on the server so that a page of a large run is exact.
type trialsView struct {
	Group   string   `json:"group"`
	Columns []string `json:"columns"`
	Kinds   []string `json:"kinds"` // "label", "param" or "value", per column
	Rows    [][]any  `json:"rows"`
	Total   int      `json:"total"`   // trials of the group
	Matched int      `json:"matched"` // after the filter
	Offset  int      `json:"offset"`
}

// trials answers ?sort=COLUMN&desc=1&filter=TEXT&offset=N: rows whose method or any
// category contains TEXT (or, for "COLUMN<X" / "COLUMN>X", whose number compares so), sorted
// (NaN last), at most maxTrialRows from offset.
func (a *analysis) trials(q query, v url.Values) (*trialsView, error) {
	tv := &trialsView{Group: q.group, Columns: []string{"cell", "key", "method", "repeat", "evaluation"}, Kinds: []string{"label", "label", "label", "label", "label"}}
	for _, p := range a.params {
		tv.Columns = append(tv.Columns, p.Name)
		tv.Kinds = append(tv.Kinds, "param")
	}
	for _, c := range a.values {
		tv.Columns = append(tv.Columns, c.Name)
		tv.Kinds = append(tv.Kinds, "value")
	}
	type ref struct {
		c *cellTrials
		t *trial
	}
	var refs []ref
	for _, c := range a.cells {
		if c.group != q.group {
			continue
		}
		for i := range c.trials {
			refs = append(refs, ref{c, &c.trials[i]})
		}
	}
	np := len(a.params)
	// cell is column k of a trial: a number (NaN when missing) or a text.
	cell := func(r ref, k int) (float64, string, bool) {
		switch {
		case k == 0:
			return float64(r.c.index), "", false
		case k == 1:
			return 0, r.c.key, true
		case k == 2:
			return 0, methodName(r.c.method), true
		case k == 3:
			return float64(r.c.repeat), "", false
		case k == 4:
			return float64(r.t.order + 1), "", false
		case k < 5+np:
			x := r.t.param(k - 5)
			if cats := a.params[k-5].Cats; len(cats) > 0 {
				if math.IsNaN(x) {
					return math.NaN(), "", false
				}
				return 0, cats[int(x)], true
			}
			return x, "", false
		}
		return r.t.value(k - 5 - np), "", false
	}
	tv.Total = len(refs)
	if f := strings.TrimSpace(v.Get("filter")); f != "" {
		keep, err := rowFilter(f, tv.Columns, func(r int, k int) (float64, string, bool) { return cell(refs[r], k) })
		if err != nil {
			return nil, err
		}
		kept := refs[:0:0]
		for i, r := range refs {
			if keep(i) {
				kept = append(kept, r)
			}
		}
		refs = kept
	}
	tv.Matched = len(refs)
	if s := v.Get("sort"); s != "" {
		k := slices.Index(tv.Columns, s)
		if k < 0 {
			return nil, fmt.Errorf("sort=%q: no such column", s)
		}
		desc := v.Get("desc") == "1"
		type keyed struct {
			x    float64
			text string
			r    ref
		}
		ks := make([]keyed, len(refs))
		for i, r := range refs {
			x, text, _ := cell(r, k)
			ks[i] = keyed{x, text, r}
		}
		slices.SortStableFunc(ks, func(p, q keyed) int {
			// Missing numbers last, whichever the direction.
			if pn, qn := math.IsNaN(p.x), math.IsNaN(q.x); pn || qn {
				switch {
				case pn && qn:
					return 0
				case pn:
					return 1
				}
				return -1
			}
			c := cmp.Compare(p.x, q.x)
			if c == 0 {
				c = strings.Compare(p.text, q.text)
			}
			if desc {
				c = -c
			}
			return c
		})
		for i := range ks {
			refs[i] = ks[i].r
		}
	}
	off, _ := strconv.Atoi(v.Get("offset"))
	tv.Offset = min(max(off, 0), len(refs))
	tv.Rows = [][]any{}
	for _, r := range refs[tv.Offset:min(tv.Offset+maxTrialRows, len(refs))] {
		row := make([]any, len(tv.Columns))
		for k := range row {
			x, text, isText := cell(r, k)
			if isText {
				row[k] = text
			} else {
				row[k] = jsonNum(x)
			}
		}
		tv.Rows = append(tv.Rows, row)
	}
	return tv, nil
}

// rowFilter parses a filter: "COLUMN<X", "COLUMN>X" (numbers), or text that some text cell of
// the row contains (case aside). cell reads row r's column k.
func rowFilter(f string, columns []string, cell func(r, k int) (float64, string, bool)) (func(r int) bool, error) {
	for _, op := range []string{"<", ">"} {
		if name, num, ok := strings.Cut(f, op); ok {
			k := slices.Index(columns, strings.TrimSpace(name))
			x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if k < 0 || err != nil {
				return nil, fmt.Errorf("filter %q: want COLUMN%sNUMBER with a column of the table", f, op)
			}
			return func(r int) bool {
				y, _, isText := cell(r, k)
				return !isText && (op == "<" && y < x || op == ">" && y > x)
			}, nil
		}
	}
	f = strings.ToLower(f)
	return func(r int) bool {
		for k := range columns {
			if _, text, isText := cell(r, k); isText && strings.Contains(strings.ToLower(text), f) {
				return true
			}
		}
		return false
	}, nil
}
