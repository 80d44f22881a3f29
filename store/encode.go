package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/hyperflat/hyperflat/internal/nanjson"
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
	b, err := json.Marshal(nanjson.Map(m))
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
	var raw map[string]nanjson.Float
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return nanjson.Unmap(raw), nil
}
