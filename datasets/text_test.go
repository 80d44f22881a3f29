package datasets

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// Issue 16 item 10: a header naming two columns alike was accepted and --target took the
// first match.
func TestDuplicateHeaderRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		read func(*bytes.Reader) error
		want string
	}{
		{"csv", "a,b,a,y\n1,2,3,0\n", func(r *bytes.Reader) error {
			_, err := ReadTable(r, "d.csv", TableOptions{Header: true, Target: "y"})
			return err
		}, `d.csv: line 1, column 5: columns 1 and 3 are both named "a"`},
		{"target twice", "y,b,y\n1,2,0\n", func(r *bytes.Reader) error {
			_, err := ReadTable(r, "d.csv", TableOptions{Header: true, Target: "y", Text: true})
			return err
		}, `columns 1 and 3 are both named "y"`},
		{"pmlb", "target\tb\ttarget\n1\t2\t0\n", func(r *bytes.Reader) error {
			_, err := ReadPMLB(r, "d.tsv")
			return err
		}, `columns 1 and 3 are both named "target"`},
		{"sklearn names", "2,2,,\nx,x,t\n1,2,3\n4,5,6\n", func(r *bytes.Reader) error {
			_, err := ReadSklearnCSV(r, "b.csv")
			return err
		}, `columns 1 and 2 are both named "x"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.read(bytes.NewReader([]byte(c.in)))
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a *ParseError with %q", err, c.want)
			}
		})
	}
}

// Issue 16 item 10: degenerate problems trained to a NaN in every trial.
func TestCheckClassification(t *testing.T) {
	mk := func(y []int, classes ...string) *Dataset {
		d := &Dataset{Name: "d", N: len(y), D: 1, Shape: []int{1}, Y: y, Classes: classes}
		for i := range y {
			d.X = append(d.X, float64(i))
		}
		return d
	}
	for _, c := range []struct {
		name string
		d    *Dataset
		want string // "" accepts
	}{
		{"fine", mk([]int{0, 0, 0, 1, 1, 1}, "no", "yes"), ""},
		{"multiclass with a rare class", mk([]int{0, 0, 0, 1, 1, 1, 2}, "a", "b", "c"), ""},
		{"binary with 2 positives", mk([]int{0, 0, 0, 0, 1, 1}, "no", "yes"), `class "yes" has 2 row(s) of 6; a binary problem needs at least 3`},
		{"binary with 1 negative", mk([]int{0, 1, 1, 1, 1}, "no", "yes"), `class "no" has 1 row(s)`},
		{"declared class absent", mk([]int{0, 0, 0, 2, 2, 2}, "a", "b", "c"), `class "b" is declared but no row has it`},
		{"one class", mk([]int{0, 0, 0}, "a"), "a classification problem needs at least two"},
		{"regression", &Dataset{Name: "d", N: 1, D: 1, Shape: []int{1}, X: []float64{1}, Target: []float64{2}}, "regression"},
	} {
		err := CheckClassification(c.d)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
	// An ARFF declaring three classes with one present.
	arff := "@relation r\n@attribute a numeric\n@attribute c {x,y,z}\n@data\n1,x\n2,x\n3,x\n"
	d, err := ReadARFF(strings.NewReader(arff), "r.arff", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckClassification(d); err == nil || !strings.Contains(err.Error(), `class "y" is declared but no row has it`) {
		t.Errorf("ARFF with classes {x,y,z} and only x: %v", err)
	}
	for _, name := range EmbeddedNames() {
		d, err := LoadEmbedded(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckClassification(d); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Issue 16 item 3: a user's table with text labels and a text feature column was refused
// ("is not a number").
func TestReadTableText(t *testing.T) {
	in := "colour,size,label\n" +
		"red,1.5,yes\n" +
		"\"light green\",2.5,no\n" +
		"blue,?,yes\n" +
		",4,maybe\n" +
		"red,5,no\n"
	d, err := ReadTable(strings.NewReader(in), "u.csv", TableOptions{Header: true, Target: "label", Text: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Classes, []string{"maybe", "no", "yes"}) || !slices.Equal(d.Y, []int{2, 1, 2, 0, 1}) {
		t.Errorf("classes %v, labels %v", d.Classes, d.Y)
	}
	colour := d.Features[0]
	if colour.Kind != Nominal || !slices.Equal(colour.Categories, []string{"blue", "light green", "red"}) || d.Features[1].Kind != Numeric {
		t.Errorf("features %+v", d.Features)
	}
	want := []float64{2, 1.5, 1, 2.5, 0, math.NaN(), math.NaN(), 4, 2, 5}
	if !near(d.X, want) {
		t.Errorf("X %v, want %v", d.X, want)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	e, err := EncodeNominal(d)
	if err != nil {
		t.Fatal(err)
	}
	if e.D != 4 || e.Features[0].Name != "colour=blue" || !near(e.Row(3), []float64{0, 0, 0, 4}) {
		t.Errorf("one-hot: %v %v", e.Features, e.X)
	}
	// The same table with the text encoded as numbers gives the same dataset, classes aside.
	num := "colour,size,label\n2,1.5,2\n1,2.5,1\n0,0,2\n0,4,0\n2,5,1\n"
	dn, err := ReadTable(strings.NewReader(num), "n.csv", TableOptions{Header: true, Target: "label", Text: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dn.Y, d.Y) || !slices.Equal(dn.Classes, []string{"0", "1", "2"}) || dn.Features[0].Kind != Numeric {
		t.Errorf("numeric twin: %+v", dn)
	}
	// Integer labels, negative ones included, are classes in numeric order.
	dl, err := ReadTable(strings.NewReader("a,y\n1,-1\n2,10\n3,2\n4,-1\n"), "l.csv", TableOptions{Header: true, Text: true})
	if err != nil || !slices.Equal(dl.Classes, []string{"-1", "2", "10"}) || !slices.Equal(dl.Y, []int{0, 2, 1, 0}) {
		t.Errorf("integer labels: %v %v %v", dl.Classes, dl.Y, err)
	}
	// A real-valued target is regression, and is read as such when asked.
	reg := "a,price\n1,3.7\n2,4\n3,5.25\n"
	if _, err := ReadTable(strings.NewReader(reg), "r.csv", TableOptions{Header: true, Text: true}); err == nil ||
		!strings.Contains(err.Error(), `r.csv: line 2, column 3: target column 2 ("price") holds the non-integer number "3.7": a continuous target is regression`) {
		t.Errorf("continuous target: %v", err)
	}
	if dr, err := ReadTable(strings.NewReader(reg), "r.csv", TableOptions{Header: true, Text: true, Regression: true}); err != nil || !slices.Equal(dr.Target, []float64{3.7, 4, 5.25}) {
		t.Errorf("regression: %v", err)
	}
	// Refusals: a missing label, an identifier column, a numeric column with a stray word.
	var ids, stray strings.Builder
	ids.WriteString("id,y\n")
	stray.WriteString("x,y\n")
	for i := range MaxCategories + 1 {
		fmt.Fprintf(&ids, "u%d,%d\n", i, i%2)
		if i < 40 {
			fmt.Fprintf(&stray, "%d.5,%d\n", i, i%2)
		}
	}
	stray.WriteString("oops,1\n")
	for _, c := range []struct{ name, in, want string }{
		{"missing label", "a,y\n1,yes\n2,?\n", `line 3, column 3: target column 2 ("y"): missing class value`},
		{"identifier", ids.String(), `column 1 ("id") holds text ("u0") with 1001 distinct values, more than MaxCategories`},
		{"stray word", stray.String(), `line 42, column 1: column 1 ("x") holds numbers and the text "oops"`},
	} {
		_, err := ReadTable(strings.NewReader(c.in), "t.csv", TableOptions{Header: true, Text: true})
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a *ParseError with %q", c.name, err, c.want)
		}
	}
	// Without Text, text is still an error, as the registry's files need.
	if _, err := ReadTable(strings.NewReader(in), "u.csv", TableOptions{Header: true, Target: "label"}); err == nil || !strings.Contains(err.Error(), "is not a number") {
		t.Errorf("text without Text: %v", err)
	}
}
