package store

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// A Span is the interval during which a cell was computed: its last claim to its completion.
type Span struct {
	Start, End time.Time
}

// CellSpans returns the spans of run's done cells, in the order of their starts. A run
// resumed across sessions computes in bursts, and the union of its spans (Covered) is the
// time it was being computed, which its first claim to its last completion overstates by
// every hour between the bursts.
func (s *Store) CellSpans(ctx context.Context, run int64) ([]Span, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT started, finished FROM cells
WHERE run_id = $1 AND status = 'done' AND started IS NOT NULL AND finished IS NOT NULL
ORDER BY started, finished`, run)
	if err != nil {
		return nil, fmt.Errorf("store: cell spans of run %d: %w", run, err)
	}
	defer rows.Close()
	var spans []Span
	for rows.Next() {
		var started, finished float64
		if err := rows.Scan(&started, &finished); err != nil {
			return nil, fmt.Errorf("store: cell spans of run %d: %w", run, err)
		}
		spans = append(spans, Span{epochTime(started), epochTime(finished)})
	}
	return spans, rows.Err()
}

// Covered is the length of the union of spans: the time during which at least one of them
// was under way. Spans that end before they start count for nothing.
func Covered(spans ...Span) time.Duration {
	sorted := slices.Clone(spans)
	slices.SortFunc(sorted, func(a, b Span) int { return a.Start.Compare(b.Start) })
	var total time.Duration
	var lo, hi time.Time
	open := false
	for _, sp := range sorted {
		if !sp.End.After(sp.Start) {
			continue
		}
		switch {
		case !open:
			lo, hi, open = sp.Start, sp.End, true
		case sp.Start.After(hi):
			total += hi.Sub(lo)
			lo, hi = sp.Start, sp.End
		case sp.End.After(hi):
			hi = sp.End
		}
	}
	if open {
		total += hi.Sub(lo)
	}
	return total
}
