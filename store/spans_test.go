package store

import (
	"testing"
	"time"
)

func TestCovered(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 19, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	span := func(a, b int) Span { return Span{at(a), at(b)} }
	for _, tc := range []struct {
		name  string
		spans []Span
		want  time.Duration
	}{
		{"none", nil, 0},
		{"one", []Span{span(0, 10)}, 10 * time.Minute},
		// two workers side by side: the union, not the sum
		{"overlapping", []Span{span(0, 10), span(5, 20)}, 20 * time.Minute},
		{"nested", []Span{span(0, 30), span(5, 10)}, 30 * time.Minute},
		{"touching", []Span{span(0, 10), span(10, 15)}, 15 * time.Minute},
		// two sessions two days apart: the gap is not counted
		{"sessions", []Span{span(2*24*60, 2*24*60+40), span(0, 60), span(30, 90)}, 130 * time.Minute},
		{"unsorted", []Span{span(50, 60), span(0, 10), span(5, 12)}, 22 * time.Minute},
		{"empty and reversed spans count for nothing", []Span{span(0, 10), span(20, 20), span(40, 30)}, 10 * time.Minute},
	} {
		if got := Covered(tc.spans...); got != tc.want {
			t.Errorf("%s: Covered = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRunStatus(t *testing.T) {
	for _, tc := range []struct {
		run  Run
		want string
	}{
		{Run{Cells: 3}, "pending"},
		{Run{Cells: 3, Running: 1}, "running"},
		{Run{Cells: 3, Done: 1}, "running"},
		{Run{Cells: 3, Done: 2, Failed: 1}, "failed"},
		{Run{Cells: 3, Done: 1, Failed: 1, Running: 1}, "running"},
		// every cell done, no result stored: an imported run, or its last worker stopped
		{Run{Cells: 3, Done: 3}, "unassembled"},
		{Run{Cells: 3, Done: 3, HasResult: true}, "finished"},
		{Run{Cells: 3, Done: 2, Failed: 1, HasResult: true}, "finished"},
	} {
		if got := tc.run.Status(); got != tc.want {
			t.Errorf("%+v: Status %q, want %q", tc.run, got, tc.want)
		}
	}
}
