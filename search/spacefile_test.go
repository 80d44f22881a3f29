package search

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const yamlSpace = `# a comment
parameters:
  - {name: depth, type: int, low: 1, high: 3}
  - name: lr
    type: float
    low: 1e-4
    high: 0.1
    log: true
  - {name: padding, type: categorical, choices: [valid, same]}
`

func TestParseSpaceFile(t *testing.T) {
	sf, err := ParseSpaceFile("s.yaml", []byte(yamlSpace))
	if err != nil {
		t.Fatal(err)
	}
	want := Space{IntParam("depth", 1, 3, false), FloatParam("lr", 1e-4, 0.1, true), CategoricalParam("padding", "valid", "same")}
	if !reflect.DeepEqual(sf.Space, want) {
		t.Errorf("space %+v, want %+v", sf.Space, want)
	}
	if !reflect.DeepEqual(sf.Lines, []int{3, 4, 9}) {
		t.Errorf("lines %v, want [3 4 9]", sf.Lines)
	}
	// The same space in JSON (tab-indented, as Go's encoders write it) has the same
	// canonical form and hash; another bound has another.
	js := "{\n\t\"parameters\": [\n\t\t{\"name\": \"depth\", \"type\": \"int\", \"low\": 1, \"high\": 3},\n" +
		"\t\t{\"type\": \"float\", \"name\": \"lr\", \"low\": 0.0001, \"high\": 1e-1, \"log\": true},\n" +
		"\t\t{\"name\": \"padding\", \"type\": \"categorical\", \"choices\": [\"valid\", \"same\"]}\n\t]\n}\n"
	sj, err := ParseSpaceFile("s.json", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if sj.Space.Hash() != sf.Space.Hash() || string(sj.Space.Canonical()) != string(sf.Space.Canonical()) {
		t.Errorf("JSON and YAML differ: %s vs %s", sj.Space.Canonical(), sf.Space.Canonical())
	}
	other := strings.Replace(yamlSpace, "high: 3", "high: 4", 1)
	so, err := ParseSpaceFile("s.yaml", []byte(other))
	if err != nil {
		t.Fatal(err)
	}
	if so.Space.Hash() == sf.Space.Hash() {
		t.Error("a changed bound keeps the hash")
	}
}

func TestParseSpaceFileErrors(t *testing.T) {
	head := "parameters:\n"
	for _, c := range []struct{ text, want string }{
		{head + "  - {name: a, type: int, low: 1, high: 3, step: 2}\n", "s.yaml:2: a.step: unknown key"},
		{head + "  - {name: a, type: int, low: one, high: 3}\n", `s.yaml:2: a.low: want a number, not "one"`},
		{head + "  - {name: a, type: int, low: 1.5, high: 3}\n", "s.yaml:2: a.low: 1.5: an int dimension has integer bounds"},
		{head + "  - name: a\n    type: float\n    low: 2\n    high: 1\n", "s.yaml:5: a.high: 1 is not above low 2"},
		{head + "  - {name: a, type: float, low: 2, high: 2}\n", "s.yaml:2: a.high: 2 is not above low 2"},
		{head + "  - name: a\n    type: float\n    low: 0\n    high: 1\n    log: true\n", "s.yaml:4: a.low: 0: a log-scaled dimension needs low > 0"},
		{head + "  - {name: a, type: categorical, choices: []}\n", "s.yaml:2: a.choices: want a non-empty list"},
		{head + "  - {name: a, type: categorical, choices: [x, x]}\n", `s.yaml:2: a.choices: repeats "x"`},
		{head + "  - {name: a, type: int, low: 1, high: 3}\n  - {name: a, type: int, low: 1, high: 3}\n", "s.yaml:3: a: is a duplicate name (first at line 2)"},
		{head + "  - {name: a, type: double, low: 1, high: 3}\n", `s.yaml:2: a.type: "double": want float, int or categorical`},
		{head + "  - {name: a, type: int, high: 3}\n", "s.yaml:2: a.low: is missing"},
		{head + "  - {name: a, type: int, low: 1, high: 3, log: yes}\n", `s.yaml:2: a.log: want true or false, not "yes"`},
		{head + "  - {name: a, type: categorical, choices: [x], low: 1}\n", "s.yaml:2: a.low: does not apply to a categorical"},
		{head + "  - {name: a, type: int, low: 1, high: .inf}\n", "s.yaml:2: a.high: .inf: want a finite number"},
		{"params:\n  - {name: a}\n", "s.yaml:1: params: unknown key: want parameters"},
		{"parameters:\n  - {name: a, type: int\n", "s.yaml:2: did not find expected ',' or '}'"},
		{"parameters:\n  - name: a\n   type: int\n", "s.yaml:2: did not find expected '-' indicator"},
		{"parameters:\n  - name: a\n    type: int\n  bad\n", "s.yaml:4: could not find expected ':'"},
		{"{\"parameters\": [\n {\"name\": \"a\",,\n \"type\": \"int\"}\n]}\n", "s.yaml:2: did not find expected node content"},
		{"parameters: [\n", "s.yaml:2: did not find expected node content"}, // at the end of the file
		{"[1, 2]\n", "s.yaml:1: want a mapping with a parameters list, not a list"},
		{"", "s.yaml: is empty"},
	} {
		_, err := ParseSpaceFile("s.yaml", []byte(c.text))
		var se *SpaceError
		if err == nil || !errors.As(err, &se) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s…", c.text, err, c.want)
		}
	}
}

func TestReadSpaceFileBounded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.yaml")
	big := yamlSpace + "#" + strings.Repeat("x", MaxSpaceFileBytes) + "\n"
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSpaceFile(path); err == nil || !strings.Contains(err.Error(), "is over") {
		t.Errorf("a file over the limit: %v", err)
	}
	if err := os.WriteFile(path, []byte(yamlSpace), 0o644); err != nil {
		t.Fatal(err)
	}
	sf, err := ReadSpaceFile(path)
	if err != nil || len(sf.Space) != 3 || sf.Space.Validate() != nil {
		t.Errorf("ReadSpaceFile: %v, %v", sf, err)
	}
	if d := sf.Space.Describe(); d != "depth int [1, 3]; lr float [0.0001, 0.1] log; padding categorical {valid, same}" {
		t.Errorf("Describe: %s", d)
	}
}

func TestSpaceFileNamesAnUnnamedDimensionByIndex(t *testing.T) {
	_, err := ParseSpaceFile("s.yaml", []byte("parameters:\n  - {name: a, type: int, low: 1, high: 2}\n  - {type: int, low: 1, high: 2}\n"))
	if err == nil || err.Error() != "s.yaml:3: parameters[1].name: is missing" {
		t.Errorf("got %v", err)
	}
}

// Issue 52 (class 3): a wrong file's text was quoted whole in the message.
func TestSpaceFileMessagesQuoteClipped(t *testing.T) {
	for _, text := range []string{strings.Repeat("x", 100000), "parameters:\n  - {name: a, type: " + strings.Repeat("é", 50000) + "}\n"} {
		_, err := ParseSpaceFile("s.yaml", []byte(text))
		if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), "…") {
			t.Errorf("a long value: %d bytes of message: %.300s", len(err.Error()), err)
		}
	}
}
