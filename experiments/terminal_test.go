package experiments

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func terminalResult() *Result {
	long := strings.Repeat("a reason that goes on and on ", 8)
	r := &Result{Experiment: "x", Tables: []Table{
		{Name: "runs", Columns: []string{"dataset", "n1", "mean_seconds"}, Rows: [][]any{{"iris", 3, 0.5}}},
		{Name: "summary", Headline: true, Columns: []string{"dataset", "median"}, Rows: [][]any{{"iris", 84.2}}},
		{Name: NotesTable, Columns: []string{"dataset", "note"}, Rows: [][]any{{"svhn", "skipped: " + long}, {"mnist", "skipped"}}},
		{Name: "table1", Headline: true, Columns: []string{"dataset", "ahsc"}, Rows: [][]any{{"iris", "84.27* (91.00)"}}},
	}, Artifacts: []string{"out/a.csv", "out/b.csv", "out/fig/c.png"}}
	return r
}

func TestTheTerminalViewAnswersFirst(t *testing.T) {
	r := terminalResult()
	r.Answer = "On iris, ahsc ranks first (84.20); n = 1 is too few for any difference to be significant."
	r.Legend = []string{"(x) the paper's value"}
	r.View = &Table{Name: "answer", Columns: []string{"dataset", "method", "value"}, Rows: [][]any{{"iris", "ahsc", "84.20 (91.00)"}}}
	for _, view := range []bool{true, false} {
		if !view {
			r.View = nil
		}
		var b bytes.Buffer
		if err := r.Write(&b, "table"); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		for _, l := range lines {
			if utf8.RuneCountInString(l) > 100 {
				t.Errorf("line of %d characters: %q", utf8.RuneCountInString(l), l)
			}
		}
		if !strings.HasPrefix(out, "On iris, ahsc ranks first") {
			t.Errorf("view %v: the answer is not the first line:\n%s", view, out)
		}
		more := "more tables: runs, summary, table1 (--verbose"
		if !view {
			more = "more tables: runs (--verbose"
		}
		for _, want := range []string{more, "note: svhn: skipped: a reason", "note: mnist: skipped\n",
			"wrote 3 files: 2 in out, 1 in out/fig", "┘\nlegend: (x) the paper's value\nnote: svhn"} {
			if !strings.Contains(out, want) {
				t.Errorf("view %v: lacks %q:\n%s", view, want, out)
			}
		}
		if strings.Contains(out, "mean_seconds") || view == strings.Contains(out, "table1\n┌") {
			t.Errorf("view %v: want the view, or else the headline tables:\n%s", view, out)
		}
	}
}

func TestTheVerboseViewPrintsEveryTable(t *testing.T) {
	r := terminalResult()
	var b bytes.Buffer
	if err := r.WriteTables(&b, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"runs\n", "mean_seconds", " n1 ", "notes\n", "wrote out/fig/c.png"} {
		if !strings.Contains(out, want) {
			t.Errorf("--verbose lacks %q:\n%s", want, out)
		}
	}
	// A result without headline tables (stored before they existed) prints them all.
	for i := range r.Tables {
		r.Tables[i].Headline = false
	}
	b.Reset()
	if err := r.Write(&b, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "mean_seconds") {
		t.Errorf("no headline tables: want every table\n%s", b.String())
	}
	// The flag survives the store.
	enc, err := terminalResult().MarshalStored()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalStoredResult(enc)
	if err != nil || !back.Tables[1].Headline || back.Tables[0].Headline {
		t.Errorf("stored headline flags: %v", err)
	}
}
