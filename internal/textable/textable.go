// Package textable draws tables for a terminal. Headers are printed exactly as given (a column
// is named as in the CSV and JSON, so that a reader can find it there), and the table never
// grows past a width: long cells are wrapped at spaces, never inside a word or a number. A table
// whose columns cannot all fit leaves the rightmost ones out and says so under the table (or,
// with Options.Split, draws them as further tables that repeat the row's key columns), so that
// no row is ever shown without the columns that name it.
package textable

import (
	"fmt"
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

// maxKeys bounds the key columns Keys finds: a row named by more columns than this is named
// by its first one.
const maxKeys = 4

// Options says how Draw fits a table.
type Options struct {
	// Width is the widest a line may be; 0 means Width.
	Width int
	// Keys is the number of leading columns that name a row (dataset, method, …): they are
	// never left out and start every part of a split table. 0 finds them with Keys.
	Keys int
	// Split draws the columns that do not fit as further tables, each starting with the key
	// columns, instead of leaving them out.
	Split bool
	// Elsewhere says where the columns left out can be read (e.g. "--verbose"); it ends the
	// line that names them. "" names them without saying where.
	Elsewhere string
}

// Render writes header and rows as a boxed table no wider than width columns, leaving out the
// rightmost columns that do not fit (named on a line under the table).
func Render(w io.Writer, header []string, rows [][]string, width int) error {
	_, err := Draw(w, header, rows, Options{Width: width, Elsewhere: "--format csv or json"})
	return err
}

// Draw writes header and rows as one boxed table (several with opt.Split) no wider than
// opt.Width, and returns the names of the columns it left out. A cell is wrapped at spaces,
// never inside a word; a column whose longest word cannot fit is left out (the key columns are
// abbreviated instead, as a last resort).
func Draw(w io.Writer, header []string, rows [][]string, opt Options) ([]string, error) {
	width := opt.Width
	if width <= 0 {
		width = Width
	}
	keys := opt.Keys
	if keys <= 0 {
		keys = Keys(header, rows)
	}
	keys = min(keys, len(header))
	floors := floorWidths(header, rows)
	parts, left := layout(floors, keys, width, opt.Split)
	for i, cols := range parts {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return nil, err
			}
		}
		h, r := pick(header, rows, cols)
		h, r = Fit(h, r, width)
		if err := draw(w, h, r); err != nil {
			return nil, err
		}
	}
	var omitted []string
	for _, c := range left {
		omitted = append(omitted, header[c])
	}
	if len(omitted) > 0 {
		line := "not shown (too wide): " + strings.Join(omitted, ", ")
		if opt.Elsewhere != "" {
			line += " (in " + opt.Elsewhere + ")"
		}
		if _, err := fmt.Fprintln(w, Wrap(line, width)); err != nil {
			return nil, err
		}
	}
	return omitted, nil
}

func draw(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		// Fit has wrapped every cell already; tablewriter's own wrapping ignores the width
		// for words it cannot split.
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	t.Header(header)
	for _, row := range rows {
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// Keys returns how many leading columns name a row: the fewest (at most four) whose text
// tells every row apart, at least one. A table of one row per dataset × method has two.
func Keys(header []string, rows [][]string) int {
	for k := 1; k <= min(maxKeys, len(header)); k++ {
		seen := make(map[string]bool, len(rows))
		unique := true
		for _, r := range rows {
			id := strings.Join(r[:min(k, len(r))], "\x00")
			if seen[id] {
				unique = false
				break
			}
			seen[id] = true
		}
		if unique {
			return k
		}
	}
	return 1
}

// floorWidths returns each column's narrowest width that breaks no word: its longest word,
// in the header or any cell.
func floorWidths(header []string, rows [][]string) []int {
	_, words, _ := measure(header, rows)
	out := make([]int, len(header))
	for i, wd := range words {
		out[i] = max(wd, minColumn)
	}
	return out
}

// layout chooses the columns drawn: every key column, then the others left to right while
// they fit at their floor widths. Without split, the rest are left out (returned); with split,
// they are drawn as further parts, each starting with the key columns.
func layout(floors []int, keys, width int, split bool) (parts [][]int, left []int) {
	cost := func(i int) int { return floors[i] + 3 }
	base := 1
	var key []int
	for i := range keys {
		key = append(key, i)
		base += cost(i)
	}
	cur, used := append([]int(nil), key...), base
	for i := keys; i < len(floors); i++ {
		if used+cost(i) <= width || len(cur) == 0 {
			cur = append(cur, i)
			used += cost(i)
			continue
		}
		if !split || len(cur) == keys || base+cost(i) > width {
			left = append(left, i)
			continue
		}
		parts = append(parts, cur)
		cur, used = append(append([]int(nil), key...), i), base+cost(i)
	}
	return append(parts, cur), left
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
// long text column shrinks before narrow numeric ones, and a cell is wrapped at spaces only.
// When even the longest words do not fit (Draw leaves such columns out first), a word too
// long for its column is abbreviated with "…", never broken across lines.
func Fit(header []string, rows [][]string, width int) ([]string, [][]string) {
	n := len(header)
	if n == 0 {
		return header, rows
	}
	widths, words, _ := measure(header, rows)
	// Each column costs its text, a space either side and a border; plus the left border.
	budget := width - 3*n - 1
	// Narrow the wide columns to an even share, wrapping at spaces; then down to the longest
	// word; then, past any readable width, abbreviate.
	share := max(budget/n, minColumn)
	floors := []func(int) int{
		func(i int) int { return max(words[i], share) },
		func(i int) int { return max(words[i], minColumn) },
		func(int) int { return minColumn },
	}
	for _, floor := range floors {
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
				out[i] = wrapCell(c, widths[i])
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

// wrapCell wraps s at spaces into lines of at most width characters, abbreviating a word
// longer than width: a number or a path split across lines reads as two values.
func wrapCell(s string, width int) string {
	if width < 1 || longestLine(s) <= width {
		return s
	}
	var words []string
	for _, para := range strings.Split(s, "\n") {
		var ws []string
		for _, word := range strings.Fields(para) {
			ws = append(ws, Abbreviate(word, width))
		}
		words = append(words, strings.Join(ws, " "))
	}
	return Wrap(strings.Join(words, "\n"), width)
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

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}
