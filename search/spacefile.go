package search

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// A space file declares a search space in YAML or JSON (JSON is read as the YAML it is):
//
//	parameters:
//	  - {name: depth, type: int, low: 1, high: 3}
//	  - {name: learning_rate, type: float, low: 1e-4, high: 1e-1, log: true}
//	  - {name: padding, type: categorical, choices: [valid, same]}
//
// Each dimension has a name, a type (float, int or categorical), and either inclusive bounds
// low < high (log: true samples them log-uniformly and needs low > 0) or a non-empty list of
// distinct choices. The order of the list is the order of the space, which the samplers'
// streams depend on.

// Limits of a space file: far above any real space, only there so that a wrong file (a data
// set given as --space) is refused before it is read into memory.
const (
	MaxSpaceFileBytes = 1 << 20
	maxSpaceParams    = 256
	maxSpaceChoices   = 4096
)

// SpaceError is a malformed space file: the file, the line (0: none) and the field at fault.
type SpaceError struct {
	File  string
	Line  int
	Field string // "" when the error is not one field's
	Msg   string
}

func (e *SpaceError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": " + clipText(e.Field))
	}
	return b.String() + ": " + e.Msg
}

// SpaceFile is a search space read from a file, with the line declaring each dimension.
type SpaceFile struct {
	File  string
	Space Space
	Lines []int // Lines[i] is the line of Space[i]
}

// Errorf is a SpaceError about dimension i of the file (field "" for the whole dimension).
func (f *SpaceFile) Errorf(i int, field, format string, a ...any) error {
	name := f.Space[i].Name
	if field != "" {
		name += "." + field
	}
	return &SpaceError{File: f.File, Line: f.Lines[i], Field: name, Msg: fmt.Sprintf(format, a...)}
}

// ReadSpaceFile reads and validates a space file: a regular file of at most MaxSpaceFileBytes.
func ReadSpaceFile(path string) (*SpaceFile, error) {
	// Checked before the open, which waits for a writer on a FIFO, beyond the reach of
	// signals; a device could give endless bytes or none.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &SpaceError{File: path, Msg: fmt.Sprintf("is not a regular file (mode %v): a space file is a file on disk, read again when a run resumes", fi.Mode().Type())}
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxSpaceFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxSpaceFileBytes {
		return nil, &SpaceError{File: path, Msg: fmt.Sprintf("is over %d bytes: a space file lists a few dimensions", MaxSpaceFileBytes)}
	}
	return ParseSpaceFile(path, data)
}

// ParseSpaceFile parses and validates the text of a space file named file (for messages).
func ParseSpaceFile(file string, data []byte) (*SpaceFile, error) {
	fail := func(n *yaml.Node, field, format string, a ...any) error {
		line := 0
		if n != nil {
			line = n.Line
		}
		return &SpaceError{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamlSyntaxError(err)
		return nil, &SpaceError{File: file, Line: line, Msg: msg}
	}
	if len(doc.Content) == 0 {
		return nil, fail(nil, "", "is empty: want a mapping with a parameters list")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fail(root, "", "want a mapping with a parameters list, not %s", kindName(root))
	}
	var params *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch {
		case k.Value != "parameters":
			return nil, fail(k, k.Value, "unknown key: want parameters")
		case params != nil:
			return nil, fail(k, k.Value, "is given twice (first at line %d)", params.Line)
		}
		params = v
	}
	if params == nil {
		return nil, fail(root, "parameters", "is missing")
	}
	if params.Kind != yaml.SequenceNode || len(params.Content) == 0 {
		return nil, fail(params, "parameters", "want a non-empty list of dimensions, not %s", kindName(params))
	}
	if len(params.Content) > maxSpaceParams {
		return nil, fail(params, "parameters", "has %d dimensions: at most %d", len(params.Content), maxSpaceParams)
	}
	sf := &SpaceFile{File: file}
	lines := map[string]int{}
	for i, n := range params.Content {
		p, err := parseParam(file, i, n)
		if err != nil {
			return nil, err
		}
		if l, ok := lines[p.Name]; ok {
			return nil, fail(n, p.Name, "is a duplicate name (first at line %d)", l)
		}
		lines[p.Name] = n.Line
		sf.Space, sf.Lines = append(sf.Space, p), append(sf.Lines, n.Line)
	}
	if err := sf.Space.Validate(); err != nil { // what the checks above missed is a bug here
		return nil, &SpaceError{File: file, Msg: err.Error()}
	}
	return sf, nil
}

// parseParam reads dimension i of the parameters list.
func parseParam(file string, i int, n *yaml.Node) (Param, error) {
	var p Param
	label := fmt.Sprintf("parameters[%d]", i)
	fail := func(at *yaml.Node, field, format string, a ...any) error {
		if field != "" {
			field = label + "." + field
		} else {
			field = label
		}
		return &SpaceError{File: file, Line: at.Line, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	if n.Kind != yaml.MappingNode {
		return p, fail(n, "", "want a mapping of name, type, low, high, log or choices, not %s", kindName(n))
	}
	for j := 0; j+1 < len(n.Content); j += 2 { // messages name the dimension once it has a name
		if k, v := n.Content[j], n.Content[j+1]; k.Value == "name" && v.Kind == yaml.ScalarNode && v.Value != "" {
			label = v.Value
		}
	}
	fields := map[string]*yaml.Node{}
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		switch k.Value {
		case "name", "type", "low", "high", "log", "choices":
		default:
			return p, fail(k, k.Value, "unknown key: want name, type, low, high, log or choices")
		}
		if prev, ok := fields[k.Value]; ok {
			return p, fail(k, k.Value, "is given twice (first at line %d)", prev.Line)
		}
		fields[k.Value] = v
	}
	name, ok := fields["name"]
	if !ok {
		return p, fail(n, "name", "is missing")
	}
	if name.Kind != yaml.ScalarNode || name.Tag != "!!str" || strings.TrimSpace(name.Value) == "" || strings.ContainsAny(name.Value, " \t\n=") {
		return p, fail(name, "name", "want a name without spaces or '=', not %s", kindName(name))
	}
	p.Name = name.Value
	typ, ok := fields["type"]
	if !ok {
		return p, fail(n, "type", "is missing: want float, int or categorical")
	}
	switch typ.Value {
	case "float":
		p.Kind = Float
	case "int":
		p.Kind = Int
	case "categorical":
		p.Kind = Categorical
	default:
		return p, fail(typ, "type", "%s: want float, int or categorical", quoteClipped(typ.Value))
	}
	if p.Kind == Categorical {
		for _, f := range []string{"low", "high", "log"} {
			if v, ok := fields[f]; ok {
				return p, fail(v, f, "does not apply to a categorical dimension (it has choices)")
			}
		}
		cs, ok := fields["choices"]
		if !ok {
			return p, fail(n, "choices", "is missing: a categorical dimension lists its choices")
		}
		if cs.Kind != yaml.SequenceNode || len(cs.Content) == 0 {
			return p, fail(cs, "choices", "want a non-empty list, not %s", kindName(cs))
		}
		if len(cs.Content) > maxSpaceChoices {
			return p, fail(cs, "choices", "has %d choices: at most %d", len(cs.Content), maxSpaceChoices)
		}
		seen := map[string]bool{}
		for _, c := range cs.Content {
			if c.Kind != yaml.ScalarNode || c.Value == "" || c.Tag == "!!null" {
				return p, fail(c, "choices", "want a number or a word, not %s", kindName(c))
			}
			if seen[c.Value] {
				return p, fail(c, "choices", "repeats %s", quoteClipped(c.Value))
			}
			seen[c.Value] = true
			p.Choices = append(p.Choices, c.Value)
		}
		return p, nil
	}
	if v, ok := fields["choices"]; ok {
		return p, fail(v, "choices", "applies to a categorical dimension only (this one has low and high)")
	}
	var lowNode *yaml.Node
	for _, f := range []string{"low", "high"} {
		v, ok := fields[f]
		if !ok {
			return p, fail(n, f, "is missing: a %s dimension has low and high", typ.Value)
		}
		x, err := finite(v)
		if err != nil {
			return p, fail(v, f, "%v", err)
		}
		if p.Kind == Int && x != math.Trunc(x) {
			return p, fail(v, f, "%s: an int dimension has integer bounds", clipText(v.Value))
		}
		if f == "low" {
			p.Low, lowNode = x, v
		} else {
			p.High = x
		}
	}
	if !(p.Low < p.High) {
		return p, fail(fields["high"], "high", "%g is not above low %g (a fixed value is a categorical dimension of one choice)", p.High, p.Low)
	}
	if v, ok := fields["log"]; ok {
		if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
			return p, fail(v, "log", "want true or false, not %s", kindName(v))
		}
		p.Log = v.Value == "true" || v.Value == "True" || v.Value == "TRUE"
		if p.Log && p.Low <= 0 {
			return p, fail(lowNode, "low", "%g: a log-scaled dimension needs low > 0", p.Low)
		}
	}
	return p, nil
}

// yamlParserErrors begin the messages of yaml.v3's parser (parserc.go), whose "line N" is
// counted from 0 and left out on the first line (decode.go's parser.fail adds 1 for the
// scanner's errors only): it is the line where the unfinished mapping or list began.
var yamlParserErrors = []string{"did not find expected", "found duplicate %", "found incompatible YAML", "found undefined tag"}

// yamlSyntaxError is the line (counted from 1) and the message of a yaml.v3 syntax error.
func yamlSyntaxError(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ": "); ok {
			if v, err := strconv.Atoi(n); err == nil {
				line, msg = v, tail
			}
		}
	}
	for _, p := range yamlParserErrors {
		if strings.HasPrefix(msg, p) {
			return line + 1, msg
		}
	}
	return line, msg
}

// finite reads a number node, refusing text and infinities.
func finite(n *yaml.Node) (float64, error) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		return 0, fmt.Errorf("want a number, not %s", kindName(n))
	}
	var x float64
	if err := n.Decode(&x); err != nil {
		return 0, fmt.Errorf("%s: %v", quoteClipped(n.Value), err)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%s: want a finite number", clipText(n.Value))
	}
	return x, nil
}

// kindName describes a node for messages: a scalar by its text, others by their kind.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return quoteClipped(n.Value)
	}
	return "an alias or an empty document"
}

// maxQuoted is the most bytes of a file's text that a message repeats: a wrong file (a data
// set given as --space) would otherwise put megabytes of it into one error.
const maxQuoted = 80

// clipText is s, cut to about maxQuoted bytes (at a character boundary) with "…" when longer.
func clipText(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// quoteClipped is s quoted, clipped as clipText clips it.
func quoteClipped(s string) string {
	c := clipText(s)
	if c == s {
		return strconv.Quote(s)
	}
	return strconv.Quote(strings.TrimSuffix(c, "…")) + "…"
}

// canonicalParam is the JSON form of a Param that Canonical writes.
type canonicalParam struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Low     *float64 `json:"low,omitempty"`
	High    *float64 `json:"high,omitempty"`
	Log     bool     `json:"log,omitempty"`
	Choices []string `json:"choices,omitempty"`
}

// Canonical is the space as one line of JSON in a fixed form (the space file's layout,
// comments and format play no part): what identifies a space, as its Hash.
func (s Space) Canonical() []byte {
	out := make([]canonicalParam, len(s))
	for i, p := range s {
		c := canonicalParam{Name: p.Name, Type: kindText(p.Kind), Log: p.Log, Choices: p.Choices}
		if p.Kind != Categorical {
			c.Low, c.High = &p.Low, &p.High
		}
		out[i] = c
	}
	b, err := json.Marshal(struct {
		Parameters []canonicalParam `json:"parameters"`
	}{out})
	if err != nil {
		panic(err) // strings, finite floats and bools always marshal
	}
	return b
}

// Hash is the hex SHA-256 of the space's Canonical form.
func (s Space) Hash() string {
	h := sha256.Sum256(s.Canonical())
	return hex.EncodeToString(h[:])
}

func kindText(k Kind) string {
	switch k {
	case Float:
		return "float"
	case Int:
		return "int"
	case Categorical:
		return "categorical"
	}
	return fmt.Sprintf("kind%d", int(k))
}

// Describe is the space in one line for notes: "depth int [1, 3]; lr float [0.0001, 0.1] log".
func (s Space) Describe() string {
	parts := make([]string, len(s))
	for i, p := range s {
		switch p.Kind {
		case Categorical:
			parts[i] = fmt.Sprintf("%s categorical {%s}", p.Name, strings.Join(p.Choices, ", "))
		default:
			parts[i] = fmt.Sprintf("%s %s [%g, %g]", p.Name, kindText(p.Kind), p.Low, p.High)
			if p.Log {
				parts[i] += " log"
			}
		}
	}
	return strings.Join(parts, "; ")
}
