// Package textable draws tables for a terminal. Headers are printed exactly as given (a column
// is named as in the CSV and JSON, so that a reader can find it there), and the table never
// grows past a width: long cells are wrapped at spaces, and a word too long for its column is
// broken, instead of pushing the table off the screen.
package textable

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Width is a terminal's usual width, the one every table fits by default.
const Width = 100

// minColumn is the narrowest a column is squeezed to: below it, cells become unreadable.
const minColumn = 4

// Render writes header and rows as boxed tables no wider than width columns. A table with
// more columns than fit readably is drawn as several, each repeating the first column (the
// row's name), rather than squeezing every column to a few letters.
func Render(w io.Writer, header []string, rows [][]string, width int) error {
	for i, cols := range groups(header, rows, width) {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		h, r := pick(header, rows, cols)
		h, r = Fit(h, r, width)
		t := tablewriter.NewTable(w,
			tablewriter.WithHeaderAutoFormat(tw.Off),
			// Fit has wrapped every cell already; tablewriter's own wrapping ignores the
			// width for words it cannot split.
			tablewriter.WithHeaderAutoWrap(tw.WrapNone),
			tablewriter.WithRowAutoWrap(tw.WrapNone),
		)
		t.Header(h)
		for _, row := range r {
			if err := t.Append(row); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	return nil
}

// comfortable is the narrowest a column reads well at: its natural width, or else wide
// enough for its header's words and for cells of up to ten characters unbroken.
const comfortable = 10

// groups splits the columns into runs that each fit width at their comfortable widths,
// every run after the first starting with column 0.
func groups(header []string, rows [][]string, width int) [][]int {
	n := len(header)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	if n < 2 {
		return [][]int{all}
	}
	natural, words, heads := measure(header, rows)
	cost := func(i int) int {
		return min(natural[i], max(heads[i], min(words[i], comfortable), minColumn)) + 3
	}
	var out [][]int
	cur, used := []int{0}, 1+cost(0)
	for i := 1; i < n; i++ {
		if used+cost(i) > width && len(cur) > 1 {
			out = append(out, cur)
			cur, used = []int{0}, 1+cost(0)
		}
		cur = append(cur, i)
		used += cost(i)
	}
	return append(out, cur)
}

func pick(header []string, rows [][]string, cols []int) ([]string, [][]string) {
	if len(cols) == len(header) {
		return header, rows
	}
	sel := func(r []string) []string {
		out := make([]string, len(cols))
		for k, c := range cols {
			if c < len(r) {
				out[k] = r[c]
			}
		}
		return out
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = sel(r)
	}
	return sel(header), out
}

// measure returns each column's natural width (its longest line), longest word and its
// header's longest word.
func measure(header []string, rows [][]string) (natural, words, heads []int) {
	n := len(header)
	natural, words, heads = make([]int, n), make([]int, n), make([]int, n)
	add := func(cells []string, isHeader bool) {
		for i, c := range cells {
			if i >= n {
				break
			}
			natural[i] = max(natural[i], longestLine(c))
			for _, w := range strings.Fields(c) {
				words[i] = max(words[i], utf8.RuneCountInString(w))
				if isHeader {
					heads[i] = max(heads[i], utf8.RuneCountInString(w))
				}
			}
		}
	}
	add(header, true)
	for _, r := range rows {
		add(r, false)
	}
	return natural, words, heads
}

// Fit returns header and rows with every cell wrapped (lines joined by "\n") so that the table
// drawn from them is at most width characters wide: the widest columns give way first, so a
// long text column shrinks before narrow numeric ones.
func Fit(header []string, rows [][]string, width int) ([]string, [][]string) {
	n := len(header)
	if n == 0 {
		return header, rows
	}
	widths, words, heads := measure(header, rows)
	// Each column costs its text, a space either side and a border; plus the left border.
	budget := width - 3*n - 1
	// Narrow the wide columns to an even share, wrapping at spaces; then wrap at spaces down
	// to the longest word; only then break the words that are longer than a share (a path, a
	// long number); then anything.
	share := max(budget/n, minColumn)
	floors := []func(int) int{
		func(i int) int { return max(words[i], share) },
		func(i int) int { return max(words[i], minColumn) },
		func(i int) int { return max(min(words[i], share), min(heads[i], share), minColumn) },
		func(int) int { return minColumn },
	}
	for k, floor := range floors {
		if k == 1 && sumOf(n, floor) > budget {
			continue // words must break anyway: break the long ones, leave the rest readable
		}
		for sum(widths) > budget {
			widest := -1
			for i, wd := range widths {
				if wd > floor(i) && (widest < 0 || wd > widths[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				break // too many columns for the width: overflow rather than lose every cell
			}
			widths[widest]--
		}
	}
	wrapAll := func(cells []string) []string {
		out := make([]string, len(cells))
		for i, c := range cells {
			if i < n {
				out[i] = Wrap(c, widths[i])
			} else {
				out[i] = c
			}
		}
		return out
	}
	wrapped := make([][]string, len(rows))
	for i, r := range rows {
		wrapped[i] = wrapAll(r)
	}
	return wrapAll(header), wrapped
}

// Wrap breaks s into lines of at most width characters, at spaces where it can and inside a
// word only when the word alone is longer than width.
func Wrap(s string, width int) string {
	if width < 1 || longestLine(s) <= width {
		return s
	}
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			for utf8.RuneCountInString(word) > width {
				if line != "" {
					lines = append(lines, line)
					line = ""
				}
				head, rest := splitRunes(word, width)
				lines = append(lines, head)
				word = rest
			}
			switch {
			case line == "":
				line = word
			case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
				line += " " + word
			default:
				lines = append(lines, line)
				line = word
			}
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// Abbreviate shortens s to at most width characters, ending it with "…" when it was cut.
func Abbreviate(s string, width int) string {
	if utf8.RuneCountInString(s) <= width || width < 1 {
		return s
	}
	head, _ := splitRunes(s, width-1)
	return head + "…"
}

func splitRunes(s string, n int) (string, string) {
	i := 0
	for k := range s {
		if i == n {
			return s[:k], s[k:]
		}
		i++
	}
	return s, ""
}

func longestLine(s string) int {
	m := 0
	for _, l := range strings.Split(s, "\n") {
		m = max(m, utf8.RuneCountInString(l))
	}
	return m
}

func sumOf(n int, f func(int) int) int {
	s := 0
	for i := range n {
		s += f(i)
	}
	return s
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}
