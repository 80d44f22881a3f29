package experiments

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hyperflat/hyperflat/internal/textable"
)

// Table is a named table of results. Cells are strings, numbers (float64 or int) or booleans.
type Table struct {
	Name string `json:"name"`
	// Detail marks a long table of raw records: CSV and JSON include it, the terminal view
	// names it instead of printing it.
	Detail bool `json:"detail,omitempty"`
	// Headline marks the tables that answer the question a run asks (the paper's table, the
	// summary): the terminal view prints only these, so that the answer is not buried among
	// the records it was computed from, and names the others. A result without headline
	// tables (one stored before the flag existed) prints every table.
	Headline bool     `json:"headline,omitempty"`
	Columns  []string `json:"columns"`
	Rows     [][]any  `json:"rows"`
}

// NotesTable is the name of the table whose rows are remarks on the run (a dataset skipped,
// and why): the terminal view prints each as one line.
const NotesTable = "notes"

// Add appends a row, which must have one cell per column.
func (t *Table) Add(cells ...any) {
	if len(cells) != len(t.Columns) {
		panic(fmt.Sprintf("experiments: table %s has %d columns, row has %d cells", t.Name, len(t.Columns), len(cells)))
	}
	t.Rows = append(t.Rows, cells)
}

// Column returns the index of the named column, or -1.
func (t *Table) Column(name string) int {
	for i, c := range t.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// Value returns row i's cell in the named column (nil when there is no such column).
func (t *Table) Value(i int, column string) any {
	if j := t.Column(column); j >= 0 && i >= 0 && i < len(t.Rows) {
		return t.Rows[i][j]
	}
	return nil
}

// Float returns row i's number in the named column, whether the table was built in this
// process or decoded from the store; NaN when the cell is missing or not a number.
func (t *Table) Float(i int, column string) float64 {
	switch x := t.Value(i, column).(type) {
	case float64:
		return x
	case float32:
		return float64(x)
	case Param:
		return float64(x)
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return math.NaN()
}

// Int returns row i's integer in the named column (0 when missing or not a number).
func (t *Table) Int(i int, column string) int {
	switch x := t.Value(i, column).(type) {
	case int:
		return x
	case int64:
		return int(x)
	case uint64:
		return int(x)
	case float64:
		return int(x)
	}
	return 0
}

// String returns row i's cell in the named column as text ("" when missing).
func (t *Table) String(i int, column string) string {
	v := t.Value(i, column)
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// Result is what a run produced.
type Result struct {
	Experiment string `json:"experiment"`
	Preset     string `json:"preset"`
	Seed       uint64 `json:"seed"`
	// Params are the experiment's own flags the run used, defaults included.
	Params    map[string]string `json:"params,omitempty"`
	Tables    []Table           `json:"tables"`
	Artifacts []string          `json:"artifacts"`
	// Answer is the result in one sentence (which method ranks first and last, with values,
	// and whether the differences are significant at this n): the terminal view's first line.
	Answer string `json:"answer,omitempty"`
	// Legend explains each mark the terminal's table uses ("* no other method …").
	Legend []string `json:"legend,omitempty"`
	// View is the one table the terminal view prints under the answer: a row per method (per
	// dataset where there are several), formatted for reading. It is built from the other
	// tables, which hold the same numbers for CSV and JSON, so it is not exported (the store
	// keeps it, to print a stored run as it was); without it the terminal prints the
	// headline tables.
	View *Table `json:"-"`
}

// Table returns the named table, or nil.
func (r *Result) Table(name string) *Table {
	for i := range r.Tables {
		if r.Tables[i].Name == name {
			return &r.Tables[i]
		}
	}
	return nil
}

// FormatCell formats a table cell as the table and CSV outputs print it (5 significant
// digits, NaN spelled out, nil empty).
func FormatCell(v any) string {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) {
			return "NaN"
		}
		return strconv.FormatFloat(x, 'g', 5, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', 5, 32)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// JSONCell is a table cell as the JSON output holds it: NaN and infinities, which JSON
// numbers cannot hold, become null.
func JSONCell(v any) any {
	if p, ok := v.(Param); ok {
		v = float64(p)
	}
	if x, ok := v.(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
		return nil
	}
	return v
}

// Write renders the result: "table" prints the headline tables for a terminal (see
// WriteTables); "csv" prints each table as CSV after a "# name" line; "json" prints exactly
// one JSON object.
func (r *Result) Write(w io.Writer, format string) error {
	switch format {
	case "json":
		out := *r
		out.Tables = make([]Table, len(r.Tables))
		for i, t := range r.Tables {
			out.Tables[i] = Table{Name: t.Name, Columns: t.Columns, Rows: make([][]any, len(t.Rows))}
			for j, row := range t.Rows {
				cells := make([]any, len(row))
				for k, c := range row {
					cells[k] = JSONCell(c)
				}
				out.Tables[i].Rows[j] = cells
			}
		}
		if out.Artifacts == nil {
			out.Artifacts = []string{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "csv":
		for i, t := range r.Tables {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "# %s\n", t.Name)
			if err := t.WriteCSV(w); err != nil {
				return err
			}
		}
		return nil
	case "table", "":
		return r.WriteTables(w, false)
	}
	return fmt.Errorf("unknown format %q", format)
}

// WriteCSV writes the table as CSV: a header of its columns, then its rows as FormatCell
// prints them.
func (t *Table) WriteCSV(w io.Writer) error {
	c := csv.NewWriter(w)
	if err := c.Write(t.Columns); err != nil {
		return err
	}
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for k, v := range row {
			cells[k] = FormatCell(v)
		}
		if err := c.Write(cells); err != nil {
			return err
		}
	}
	c.Flush()
	return c.Error()
}

// SaveTables writes every table as NAME.csv and the whole result as result.json under dir,
// recording them as artifacts. Each file is written as WriteArtifact writes it: a symlink in
// its place is refused, and an existing file is replaced whole or not at all.
func (r *Result) SaveTables(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, t := range r.Tables {
		p, err := artifactPath(dir, t.Name+".csv")
		if err != nil {
			return err
		}
		if err := WriteArtifact(p, func(w io.Writer) error { return t.WriteCSV(w) }); err != nil {
			return err
		}
		r.Artifacts = append(r.Artifacts, p)
	}
	p := filepath.Join(dir, "result.json")
	r.Artifacts = append(r.Artifacts, p)
	return WriteArtifact(p, func(w io.Writer) error { return r.Write(w, "json") })
}

// artifactPath is dir/name for an output file, or an error when name is not one plain file
// name: names are made of what a store holds (a dataset named in an imported run's options,
// say), and an output stays in the folder the user named.
func artifactPath(dir, name string) (string, error) {
	if !filepath.IsLocal(name) || filepath.Base(name) != name {
		return "", fmt.Errorf("experiments: output file name %q would leave %s", name, dir)
	}
	return filepath.Join(dir, name), nil
}

// WriteArtifact writes an output file (a table, a figure) at path with write: into a
// temporary file in the same directory, renamed over path once complete, so that a crash or
// a full disk never leaves a truncated artifact and a reader sees the old file or the new one.
// A symbolic link at path is refused rather than followed: --out may be a shared folder, and
// following a planted link would overwrite whatever it points to.
func WriteArtifact(path string, write func(io.Writer) error) (err error) {
	if fi, err := os.Lstat(path); err == nil {
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("experiments: refusing to write %s: it is a symbolic link (remove it, or choose another --out)", path)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("experiments: refusing to write %s: it is not a regular file (%s)", path, fi.Mode().Type())
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	// CreateTemp makes the file private; an artifact is as readable as os.Create makes it.
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Rename replaces whatever is at path now, a link planted since the check included,
	// without following it.
	return os.Rename(f.Name(), path)
}

// WriteTables prints the result for a terminal, every line within textable.Width. By default
// it prints what a person asked for: the answer sentence, the one table that shows it (View,
// or else the headline tables), a legend of its marks, then one line per note, a line naming
// the other tables and the files written. A table too wide for the terminal leaves columns
// out and names them. With all, it prints every table under its name (wide ones split, each
// part repeating the row's key columns; detail tables only by name) and every file written.
func (r *Result) WriteTables(w io.Writer, all bool) error {
	if r.Answer != "" {
		fmt.Fprintln(w, textable.Wrap(r.Answer, textable.Width))
	}
	if all {
		for i, t := range r.Tables {
			if i > 0 || r.Answer != "" {
				fmt.Fprintln(w)
			}
			if err := writeText(w, t, true); err != nil {
				return err
			}
		}
		r.writeLegend(w)
		if len(r.Artifacts) > 0 {
			fmt.Fprintln(w)
			for _, a := range r.Artifacts {
				fmt.Fprintf(w, "wrote %s\n", a)
			}
		}
		return nil
	}
	shown := func(t Table) bool { return t.Headline }
	if r.View == nil && !slices.ContainsFunc(r.Tables, shown) {
		shown = func(t Table) bool { return t.Name != NotesTable } // stored before headline tables existed
	}
	var others []string
	var notes *Table
	printed := r.Answer != ""
	if r.View != nil {
		fmt.Fprintln(w)
		if err := writeTable(w, *r.View, false); err != nil {
			return err
		}
	}
	for i, t := range r.Tables {
		switch {
		case t.Name == NotesTable:
			notes = &r.Tables[i]
		case r.View == nil && shown(t):
			if printed {
				fmt.Fprintln(w)
			}
			printed = true
			if err := writeText(w, t, false); err != nil {
				return err
			}
		default:
			others = append(others, t.Name)
		}
	}
	r.writeLegend(w)
	if notes != nil {
		for _, row := range notes.Rows {
			cells := make([]string, len(row))
			for k, c := range row {
				cells[k] = FormatCell(c)
			}
			// One line each, however long the reason: the whole text is in --verbose.
			fmt.Fprintln(w, textable.Abbreviate("note: "+strings.Join(cells, ": "), textable.Width))
		}
	}
	if len(others) > 0 {
		line := "more tables: " + strings.Join(others, ", ") + " (--verbose prints them)"
		fmt.Fprintln(w, textable.Wrap(line, textable.Width))
	}
	if len(r.Artifacts) > 0 {
		fmt.Fprintln(w, textable.Wrap(artifactSummary(r.Artifacts), textable.Width))
	}
	return nil
}

func (r *Result) writeLegend(w io.Writer) {
	if len(r.Legend) > 0 {
		fmt.Fprintln(w, textable.Wrap("legend: "+strings.Join(r.Legend, "; "), textable.Width))
	}
}

// artifactSummary says how many files were written where: a run with --out writes a file per
// table and figure, too many lines for the short view.
func artifactSummary(paths []string) string {
	var dirs []string
	count := map[string]int{}
	for _, p := range paths {
		d := filepath.Dir(p)
		if count[d] == 0 {
			dirs = append(dirs, d)
		}
		count[d]++
	}
	parts := make([]string, len(dirs))
	for i, d := range dirs {
		parts[i] = fmt.Sprintf("%d in %s", count[d], d)
	}
	if len(dirs) == 1 {
		return fmt.Sprintf("wrote %d files in %s", len(paths), dirs[0])
	}
	return "wrote " + strconv.Itoa(len(paths)) + " files: " + strings.Join(parts, ", ")
}

// writeText prints a table under its name; split draws a table too wide for the terminal as
// parts that each repeat the row's key columns, instead of leaving columns out.
func writeText(w io.Writer, t Table, split bool) error {
	if t.Detail {
		_, err := fmt.Fprintf(w, "%s: %d rows (in --format csv or json, and %s.csv under --out)\n", t.Name, len(t.Rows), t.Name)
		return err
	}
	fmt.Fprintf(w, "%s\n", t.Name)
	return writeTable(w, t, split)
}

func writeTable(w io.Writer, t Table, split bool) error {
	rows := make([][]string, len(t.Rows))
	for j, row := range t.Rows {
		rows[j] = make([]string, len(row))
		for k, c := range row {
			rows[j][k] = FormatCell(c)
		}
	}
	_, err := textable.Draw(w, t.Columns, rows, textable.Options{Split: split, Elsewhere: "--verbose"})
	return err
}
