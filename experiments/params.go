package experiments

import (
	"slices"
	"strconv"
	"strings"
)

// ParamPrefix starts the name of a table's column of one hyperparameter (as Optuna's
// trials_dataframe does with params_), so that pandas reads each as a column of its own.
const ParamPrefix = "param_"

// Param is a numeric hyperparameter's value in a table: a number in JSON and the store, and
// in CSV and the terminal every digit the configuration was written with (FormatCell rounds
// a float64 to 5 significant digits, too few to train the configuration again).
type Param float64

// String formats the value in the fewest digits that read back as the same number.
func (p Param) String() string { return strconv.FormatFloat(float64(p), 'g', -1, 64) }

// AddParams appends one column per hyperparameter named in the table's packed configuration
// column (name=value pairs separated by spaces, as search.Config.String writes them), named
// ParamPrefix+name, in the order the names first appear. A column is numeric (Param) when
// every value given parses as a number, text otherwise; a row whose configuration lacks the
// name (another search space, a failed run) has no value there. The packed column stays, for
// a reader who wants the whole configuration in one cell.
func (t *Table) AddParams(column string) {
	c := t.Column(column)
	if c < 0 {
		return
	}
	var names []string
	values := make([]map[string]string, len(t.Rows))
	numeric := map[string]bool{}
	for i, row := range t.Rows {
		s, _ := row[c].(string)
		values[i] = parseParams(s)
		for _, f := range strings.Fields(s) {
			name, v, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			if !slices.Contains(names, name) {
				names = append(names, name)
				numeric[name] = true
			}
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				numeric[name] = false
			}
		}
	}
	for _, name := range names {
		t.Columns = append(t.Columns, ParamPrefix+name)
	}
	for i := range t.Rows {
		for _, name := range names {
			var cell any // absent: an empty CSV cell, NaN to pandas
			if v, ok := values[i][name]; ok {
				cell = v
				if numeric[name] {
					x, _ := strconv.ParseFloat(v, 64)
					cell = Param(x)
				}
			}
			t.Rows[i] = append(t.Rows[i], cell)
		}
	}
}

func parseParams(s string) map[string]string {
	out := map[string]string{}
	for _, f := range strings.Fields(s) {
		if name, v, ok := strings.Cut(f, "="); ok {
			out[name] = v
		}
	}
	return out
}
