// Package nanjson is the project's one JSON form of floating-point numbers that may be NaN or
// infinite, which encoding/json refuses as numbers: they are written as the strings "NaN",
// "+Inf" and "-Inf", finite values as the shortest decimal that reads back exactly.
package nanjson

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Float is a float64 that survives JSON.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return []byte(`"NaN"`), nil
	case math.IsInf(x, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, x, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler. null reads as NaN; "Inf" as +Inf.
func (f *Float) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "NaN":
			*f = Float(math.NaN())
		case "+Inf", "Inf":
			*f = Float(math.Inf(1))
		case "-Inf":
			*f = Float(math.Inf(-1))
		default:
			return fmt.Errorf("nanjson: %q is not a number", s)
		}
		return nil
	}
	if string(b) == "null" {
		*f = Float(math.NaN())
		return nil
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("nanjson: %s is not a number", b)
	}
	*f = Float(x)
	return nil
}

// Map converts a map of floats to its JSON-safe form.
func Map(m map[string]float64) map[string]Float {
	if m == nil {
		return nil
	}
	out := make(map[string]Float, len(m))
	for k, v := range m {
		out[k] = Float(v)
	}
	return out
}

// Unmap converts back what Map made.
func Unmap(m map[string]Float) map[string]float64 {
	if m == nil {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = float64(v)
	}
	return out
}
