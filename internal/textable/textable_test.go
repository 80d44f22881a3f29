package textable

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

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
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("line of %d characters: %q", n, l)
		}
	}
	for _, h := range []string{"Name", "1st order", "n1", "mean_seconds"} {
		if !strings.Contains(out, h) {
			t.Errorf("header %q is not printed as written:\n%s", h, out)
		}
	}
	if strings.Contains(out, "1 ST") || strings.Contains(out, "N 1") || strings.Contains(out, "MEAN SECONDS") {
		t.Errorf("headers reformatted:\n%s", out)
	}
	// Nothing is lost: every character of the long cells is somewhere in the table.
	if got := strings.Count(out, "x"); got < 120 {
		t.Errorf("%d of the path's 120 x's printed", got)
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
	if got := Abbreviate("μ strong convexity", 8); got != "μ stron…" {
		t.Errorf("Abbreviate = %q", got)
	}
}
