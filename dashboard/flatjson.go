package dashboard

import (
	"encoding/json"
	"fmt"
)

// eachFlatObject calls member for every member of every object of b, a JSON array of objects
// as encoding/json writes them, and end after each object. Values are given raw: a string with its quotes, a number or literal
// as written, a nested array or object whole. It is the trials' hot path: a paper-scale run
// holds hundreds of thousands of evaluations, which encoding/json decodes into maps about ten
// times slower.
func eachFlatObject(b []byte, member func(key, raw []byte), end func()) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return fmt.Errorf("not an array")
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != ']' {
		var err error
		if i, err = eachMember(b, i, member); err != nil {
			return err
		}
		end()
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return nil
}

// eachMember calls member for each member of the object that starts at b[i] and returns the
// index just past it. Malformed input ends it with an error, never a panic.
func eachMember(b []byte, i int, member func(key, raw []byte)) (int, error) {
	if i >= len(b) || b[i] != '{' {
		return i, fmt.Errorf("byte %d: not an object", i)
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		if b[i] != '"' {
			return i, fmt.Errorf("byte %d: not a key", i)
		}
		ks := i
		i = skipString(b, i)
		if i > len(b) || i-1 <= ks {
			return i, fmt.Errorf("byte %d: unterminated key", ks)
		}
		key := b[ks+1 : i-1]
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, fmt.Errorf("byte %d: no colon", i)
		}
		i = skipSpace(b, i+1)
		vs := i
		i = min(skipValue(b, i), len(b))
		member(key, b[vs:i])
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	if i >= len(b) {
		return i, fmt.Errorf("unterminated object")
	}
	return i + 1, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at b[i] (its opening quote).
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index just past the value that starts at b[i].
func skipValue(b []byte, i int) int {
	switch {
	case i >= len(b):
		return i
	case b[i] == '"':
		return skipString(b, i)
	case b[i] == '{' || b[i] == '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\t' && b[i] != '\r' {
		i++
	}
	return i
}

// stringValue decodes a raw JSON string value (false when raw is not a string).
func stringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' {
			var s string
			err := json.Unmarshal(raw, &s)
			return s, err == nil
		}
	}
	return string(raw[1 : len(raw)-1]), true
}
