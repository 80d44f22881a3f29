package textable

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func checkWidth(t *testing.T, out string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("line of %d characters: %q", n, l)
		}
	}
}

func TestRenderFitsTheWidthAndKeepsHeaders(t *testing.T) {
	header := []string{"Name", "1st order max rel err", "n1", "mean_seconds", "Description"}
	rows := [][]string{
		{"ahsc", "1.00e-09", "15", "0.27", strings.Repeat("a long description of what this does ", 6)},
		{"path", "2.00e-10", "3", "1.5", "/a/very/long/path/without/any/spaces/" + strings.Repeat("x", 120)},
	}
	var b bytes.Buffer
	if err := Render(&b, header, rows, Width); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	checkWidth(t, out)
	for _, h := range []string{"Name", "1st order", "n1", "mean_seconds"} {
		if !strings.Contains(out, h) {
			t.Errorf("header %q is not printed as written:\n%s", h, out)
		}
	}
	if strings.Contains(out, "1 ST") || strings.Contains(out, "N 1") || strings.Contains(out, "MEAN SECONDS") {
		t.Errorf("headers reformatted:\n%s", out)
	}
	// The path cannot fit unbroken: its column is left out, and named.
	if strings.Contains(out, "xxxx") || !strings.Contains(out, "not shown (too wide): Description (in --format csv") {
		t.Errorf("the unbreakable column is drawn, or not named as left out:\n%s", out)
	}
}

// wideTable is a dataset × method table with more numeric columns than 100 columns hold.
func wideTable() ([]string, [][]string) {
	header := []string{"dataset", "method"}
	for i := range 12 {
		header = append(header, fmt.Sprintf("generalization_%d", i))
	}
	var rows [][]string
	for _, d := range []string{"iris", "blood-transfusion"} {
		for _, m := range []string{"ahsc", "random"} {
			r := []string{d, m}
			for i := range 12 {
				r = append(r, fmt.Sprintf("113012505265090%02d", i))
			}
			rows = append(rows, r)
		}
	}
	return header, rows
}

func TestATableThatCannotFitKeepsItsKeysAndBreaksNoNumber(t *testing.T) {
	header, rows := wideTable()
	for _, split := range []bool{false, true} {
		var b bytes.Buffer
		left, err := Draw(&b, header, rows, Options{Split: split, Elsewhere: "--verbose"})
		if err != nil {
			t.Fatal(err)
		}
		out := b.String()
		checkWidth(t, out)
		if split != (len(left) == 0) {
			t.Errorf("split %v: left out %v", split, left)
		}
		if !split && !strings.Contains(out, "not shown (too wide): generalization_") {
			t.Errorf("the columns left out are not named:\n%s", out)
		}
		// Every row line of every part starts with both keys; every number is whole.
		for _, l := range strings.Split(out, "\n") {
			if !strings.HasPrefix(l, "│") || strings.Contains(l, "dataset") {
				continue
			}
			cells := strings.Split(strings.Trim(l, "│"), "│")
			if d, m := strings.TrimSpace(cells[0]), strings.TrimSpace(cells[1]); d == "" || m == "" {
				t.Errorf("a row without its key: %q", l)
			}
			for _, c := range cells[2:] {
				if c = strings.TrimSpace(c); len(c) != 17 {
					t.Errorf("number broken or cut: %q in %q", c, l)
				}
			}
		}
		if parts := strings.Count(out, "┌"); split != (parts > 1) {
			t.Errorf("split %v: %d tables", split, parts)
		}
	}
}

func TestKeys(t *testing.T) {
	rows := [][]string{{"iris", "ahsc", "1"}, {"iris", "tpe", "1"}, {"wine", "ahsc", "1"}}
	if k := Keys([]string{"dataset", "method", "v"}, rows); k != 2 {
		t.Errorf("Keys = %d, want 2", k)
	}
	if k := Keys([]string{"dataset", "method", "v"}, rows[:1]); k != 1 {
		t.Errorf("one row: Keys = %d, want 1", k)
	}
	dup := [][]string{{"a", "b", "c", "d", "e"}, {"a", "b", "c", "d", "e"}}
	if k := Keys([]string{"1", "2", "3", "4", "5"}, dup); k != 1 {
		t.Errorf("no unique prefix: Keys = %d, want 1", k)
	}
}

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"84.27* (91.00)", 8, "84.27*\n(91.00)"},
		{"abcdefghij", 4, "abcd\nefgh\nij"},
		{"a bcdefgh i", 3, "a\nbcd\nefg\nh i"},
	} {
		if got := Wrap(c.in, c.width); got != c.want {
			t.Errorf("Wrap(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
	// A cell's word is never broken: abbreviated when nothing else fits.
	if got := wrapCell("sklearn/data/breast_cancer.csv 12", 10); got != "sklearn/d…\n12" {
		t.Errorf("wrapCell = %q", got)
	}
	if got := Abbreviate("μ strong convexity", 8); got != "μ stron…" {
		t.Errorf("Abbreviate = %q", got)
	}
}
