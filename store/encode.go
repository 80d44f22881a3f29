package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// jsonArg is a JSON document as a query argument: text, or NULL for nil.
func jsonArg(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// epochTime converts seconds since the Unix epoch to a UTC time, to the microsecond.
func epochTime(sec float64) time.Time {
	whole := math.Floor(sec)
	return time.Unix(int64(whole), int64((sec-whole)*1e9)).Round(time.Microsecond).UTC()
}

// nullTime is epochTime, or the zero time for NULL.
func nullTime(sec sql.NullFloat64) time.Time {
	if !sec.Valid {
		return time.Time{}
	}
	return epochTime(sec.Float64)
}

// encodeMetrics encodes metrics as a JSON object whose non-finite values are the strings
// "NaN", "+Inf" and "-Inf". A nil map is NULL.
func encodeMetrics(m map[string]float64) (any, error) {
	if m == nil {
		return nil, nil
	}
	enc := make(map[string]any, len(m))
	for k, v := range m {
		switch {
		case math.IsNaN(v):
			enc[k] = "NaN"
		case math.IsInf(v, 1):
			enc[k] = "+Inf"
		case math.IsInf(v, -1):
			enc[k] = "-Inf"
		default:
			enc[k] = v
		}
	}
	b, err := json.Marshal(enc)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// decodeMetrics reverses encodeMetrics.
func decodeMetrics(b []byte) (map[string]float64, error) {
	if b == nil {
		return nil, nil
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	m := make(map[string]float64, len(raw))
	for k, v := range raw {
		switch v := v.(type) {
		case float64:
			m[k] = v
		case string:
			switch v {
			case "NaN":
				m[k] = math.NaN()
			case "+Inf", "Inf":
				m[k] = math.Inf(1)
			case "-Inf":
				m[k] = math.Inf(-1)
			default:
				return nil, fmt.Errorf("metrics: %s is %q, not a number", k, v)
			}
		default:
			return nil, fmt.Errorf("metrics: %s is %v, not a number", k, v)
		}
	}
	return m, nil
}
