package experiments

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/olekukonko/tablewriter"
)

// Table is a named table of results. Cells are strings, numbers (float64 or int) or booleans.
type Table struct {
	Name string `json:"name"`
	// Detail marks a long table of raw records: CSV and JSON include it, the terminal view
	// names it instead of printing it.
	Detail  bool     `json:"detail,omitempty"`
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// Add appends a row, which must have one cell per column.
func (t *Table) Add(cells ...any) {
	if len(cells) != len(t.Columns) {
		panic(fmt.Sprintf("experiments: table %s has %d columns, row has %d cells", t.Name, len(t.Columns), len(cells)))
	}
	t.Rows = append(t.Rows, cells)
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

func cellString(v any) string {
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

// jsonCell keeps JSON valid: NaN and infinities become null.
func jsonCell(v any) any {
	if x, ok := v.(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
		return nil
	}
	return v
}

// Write renders the result: "table" prints each table under its name; "csv" prints each table
// as CSV after a "# name" line; "json" prints exactly one JSON object.
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
					cells[k] = jsonCell(c)
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
			if err := writeCSV(w, t); err != nil {
				return err
			}
		}
		return nil
	case "table", "":
		for i, t := range r.Tables {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if t.Detail {
				fmt.Fprintf(w, "%s: %d rows (in --format csv or json, and %s.csv under --out)\n", t.Name, len(t.Rows), t.Name)
				continue
			}
			fmt.Fprintf(w, "%s\n", t.Name)
			tw := tablewriter.NewWriter(w)
			tw.Header(t.Columns)
			for _, row := range t.Rows {
				cells := make([]string, len(row))
				for k, c := range row {
					cells[k] = cellString(c)
				}
				if err := tw.Append(cells); err != nil {
					return err
				}
			}
			if err := tw.Render(); err != nil {
				return err
			}
		}
		if len(r.Artifacts) > 0 {
			fmt.Fprintln(w)
			for _, a := range r.Artifacts {
				fmt.Fprintf(w, "wrote %s\n", a)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown format %q", format)
}

func writeCSV(w io.Writer, t Table) error {
	c := csv.NewWriter(w)
	if err := c.Write(t.Columns); err != nil {
		return err
	}
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for k, v := range row {
			cells[k] = cellString(v)
		}
		if err := c.Write(cells); err != nil {
			return err
		}
	}
	c.Flush()
	return c.Error()
}

// SaveTables writes every table as NAME.csv and the whole result as result.json under dir,
// recording them as artifacts.
func (r *Result) SaveTables(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, t := range r.Tables {
		p := filepath.Join(dir, t.Name+".csv")
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		if err := writeCSV(f, t); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		r.Artifacts = append(r.Artifacts, p)
	}
	p := filepath.Join(dir, "result.json")
	r.Artifacts = append(r.Artifacts, p)
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if err := r.Write(f, "json"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
