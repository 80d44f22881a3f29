package search

import (
	"errors"
	"testing"
)

// FuzzParseSpaceFile (issue 52): a space file is user input. Whatever its bytes, parsing
// returns a valid space or a *SpaceError of bounded length (a wrong file quoted whole made a
// megabyte-long message), never panics; and a parsed space's canonical form parses back to the
// same space (so that its hash, stored with every cell, identifies it).
func FuzzParseSpaceFile(f *testing.F) {
	f.Add([]byte(yamlSpace))
	f.Add([]byte(`{"parameters": [{"name": "a", "type": "float", "low": 0.5, "high": 2, "log": true}]}`))
	f.Add([]byte("parameters:\n  - {name: c, type: categorical, choices: [\"x y\", 'z', \"\\u00e9\"]}\n"))
	f.Add([]byte("parameters:\n  - {name: a, type: int, low: 1, high: 2}\n  - {type: int, low: 1, high: 2}\n"))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := ParseSpaceFile("f.yaml", data)
		if err != nil {
			var se *SpaceError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T) is not a *SpaceError", err, err)
			}
			if n := len(err.Error()); n > 1000 {
				t.Fatalf("a message of %d bytes: %.200s…", n, err)
			}
			return
		}
		if err := sf.Space.Validate(); err != nil {
			t.Fatalf("parsed an invalid space: %v", err)
		}
		again, err := ParseSpaceFile("canonical.json", sf.Space.Canonical())
		if err != nil {
			t.Fatalf("the canonical form %s does not parse: %v", sf.Space.Canonical(), err)
		}
		if again.Space.Hash() != sf.Space.Hash() {
			t.Fatalf("the canonical form %s parses to %s", sf.Space.Canonical(), again.Space.Canonical())
		}
	})
}
