package experiments

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The stored form of a result keeps every table cell's type, so that a result read back from
// the store renders exactly as it did when it was made: integers stay integers, floats stay
// floats (3.0 is written 3.0, not 3), and NaN and infinities, which JSON numbers cannot hold,
// are written as {"float":"NaN"}.

type storedTable struct {
	Name     string              `json:"name"`
	Detail   bool                `json:"detail,omitempty"`
	Headline bool                `json:"headline,omitempty"`
	Columns  []string            `json:"columns"`
	Rows     [][]json.RawMessage `json:"rows"`
}

type storedResult struct {
	Experiment string            `json:"experiment"`
	Preset     string            `json:"preset"`
	Seed       uint64            `json:"seed"`
	Params     map[string]string `json:"params,omitempty"`
	Tables     []storedTable     `json:"tables"`
	Answer     string            `json:"answer,omitempty"`
	Legend     []string          `json:"legend,omitempty"`
	View       *storedTable      `json:"view,omitempty"`
}

// MarshalStored encodes the result for a results store (artifacts are left out: they are
// paths on the machine that wrote them).
func (r *Result) MarshalStored() ([]byte, error) {
	s := storedResult{Experiment: r.Experiment, Preset: r.Preset, Seed: r.Seed, Params: r.Params, Answer: r.Answer, Legend: r.Legend}
	for _, t := range r.Tables {
		st, err := storeTable(t)
		if err != nil {
			return nil, err
		}
		s.Tables = append(s.Tables, st)
	}
	if r.View != nil {
		st, err := storeTable(*r.View)
		if err != nil {
			return nil, err
		}
		s.View = &st
	}
	return json.Marshal(s)
}

func storeTable(t Table) (storedTable, error) {
	st := storedTable{Name: t.Name, Detail: t.Detail, Headline: t.Headline, Columns: t.Columns, Rows: make([][]json.RawMessage, len(t.Rows))}
	for i, row := range t.Rows {
		st.Rows[i] = make([]json.RawMessage, len(row))
		for j, c := range row {
			b, err := encodeCell(c)
			if err != nil {
				return st, fmt.Errorf("table %s row %d column %s: %w", t.Name, i, t.Columns[j], err)
			}
			st.Rows[i][j] = b
		}
	}
	return st, nil
}

// UnmarshalStoredResult decodes what MarshalStored wrote.
func UnmarshalStoredResult(b []byte) (*Result, error) {
	var s storedResult
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("stored result: %w", err)
	}
	r := &Result{Experiment: s.Experiment, Preset: s.Preset, Seed: s.Seed, Params: s.Params, Answer: s.Answer, Legend: s.Legend}
	for _, st := range s.Tables {
		t, err := loadTable(st)
		if err != nil {
			return nil, err
		}
		r.Tables = append(r.Tables, t)
	}
	if s.View != nil {
		t, err := loadTable(*s.View)
		if err != nil {
			return nil, err
		}
		r.View = &t
	}
	return r, nil
}

func loadTable(st storedTable) (Table, error) {
	t := Table{Name: st.Name, Detail: st.Detail, Headline: st.Headline, Columns: st.Columns, Rows: make([][]any, len(st.Rows))}
	for i, row := range st.Rows {
		if len(row) != len(st.Columns) {
			return t, fmt.Errorf("stored result: table %s row %d has %d cells for %d columns", st.Name, i, len(row), len(st.Columns))
		}
		t.Rows[i] = make([]any, len(row))
		for j, raw := range row {
			v, err := decodeCell(raw)
			if err != nil {
				return t, fmt.Errorf("stored result: table %s row %d column %s: %w", st.Name, i, st.Columns[j], err)
			}
			t.Rows[i][j] = v
		}
	}
	return t, nil
}

func encodeCell(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case float32:
		return encodeFloat(float64(x)), nil
	case float64:
		return encodeFloat(x), nil
	case Param: // read back as a float64
		return encodeFloat(float64(x)), nil
	case int, int64, int32, uint64, uint32, bool, string:
		return json.Marshal(x)
	}
	return nil, fmt.Errorf("cell of type %T", v)
}

// encodeFloat tags non-finite floats, {"float":"NaN"}, so that they are not mistaken for the
// string cell "NaN".
func encodeFloat(x float64) json.RawMessage {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		b, _ := json.Marshal(map[string]F64{"float": F64(x)})
		return b
	}
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return json.RawMessage(s)
}

func decodeCell(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty cell")
	}
	switch raw[0] {
	case 'n':
		return nil, nil
	case 't', 'f':
		var b bool
		err := json.Unmarshal(raw, &b)
		return b, err
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '{':
		var m map[string]F64
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		f, ok := m["float"]
		if !ok || len(m) != 1 {
			return nil, fmt.Errorf("cell %s: want {\"float\": …}", raw)
		}
		return float64(f), nil
	}
	s := string(raw)
	if strings.ContainsAny(s, ".eE") {
		return strconv.ParseFloat(s, 64)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return int(n), nil
	}
	return strconv.ParseUint(s, 10, 64)
}
