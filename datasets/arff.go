package datasets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode"
)

type arffAttr struct {
	name       string
	nominal    bool
	categories []string
	index      map[string]int
	line       int
}

// ReadARFF parses an ARFF file (Weka's Attribute-Relation File Format), gzip-compressed or
// not: "@relation name", then "@attribute name type" lines with type numeric, real, integer
// or a nominal list {a,b,…}, then "@data" and one comma-separated row per line. Keywords are
// case-insensitive; "%" starts a comment outside quotes; names and values may be quoted with
// '…' or "…" (with backslash escapes); CRLF line ends are accepted. "?" is a missing value
// (NaN in X); the class may not be missing. A numeric value must be a finite decimal number:
// "NaN", "inf" and "Infinity" are errors (write ? for a missing value), as is a value beyond
// the float64 range.
//
// class names the class attribute; "" means the last one. A nominal class makes a
// classification dataset whose Classes are its categories; a numeric class makes a
// regression dataset. The other attributes become the features, nominal ones holding the
// index of their category, with the categories kept in Features. String, date, relational
// attributes and sparse rows are not supported and give an error.
func ReadARFF(r io.Reader, name, class string) (*Dataset, error) {
	if err := nilInput(r, name); err != nil {
		return nil, err
	}
	lr, err := newLineReader(r, name)
	if err != nil {
		return nil, err
	}
	var (
		attrs    []arffAttr
		byName   = map[string]int{}
		relation = 0 // line of @relation
		dataLine = 0 // line of @data
	)
	// Header.
	for dataLine == 0 {
		raw, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			if relation == 0 {
				return nil, lineErr(name, lr.line+1, "end of file, expected an ARFF header (@relation, @attribute…, @data)")
			}
			return nil, lineErr(name, lr.line+1, "end of file in the header, expected @data")
		}
		s, err := stripARFFComment(raw)
		if err != nil {
			return nil, lineErr(name, lr.line, "%v", err)
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		kw, rest := splitKeyword(s)
		switch strings.ToLower(kw) {
		case "@relation":
			if relation != 0 {
				return nil, lineErr(name, lr.line, "second @relation (the first is on line %d)", relation)
			}
			if strings.TrimSpace(rest) == "" {
				return nil, lineErr(name, lr.line, "@relation without a name")
			}
			relation = lr.line
		case "@attribute":
			if relation == 0 {
				return nil, lineErr(name, lr.line, "@attribute before @relation")
			}
			a, err := parseARFFAttribute(rest)
			if err != nil {
				return nil, lineErr(name, lr.line, "%v", err)
			}
			a.line = lr.line
			if prev, dup := byName[a.name]; dup {
				return nil, lineErr(name, lr.line, "attribute %q already declared on line %d", clip(a.name), attrs[prev].line)
			}
			byName[a.name] = len(attrs)
			attrs = append(attrs, a)
		case "@data":
			if relation == 0 {
				return nil, lineErr(name, lr.line, "@data before @relation")
			}
			if len(attrs) < 2 {
				return nil, lineErr(name, lr.line, "@data after %d attribute(s), expected at least one feature and the class", len(attrs))
			}
			dataLine = lr.line
		default:
			if strings.HasPrefix(kw, "@") {
				return nil, lineErr(name, lr.line, "unknown directive %q, expected @relation, @attribute or @data", clip(kw))
			}
			return nil, lineErr(name, lr.line, "%q in the header, expected @relation, @attribute or @data", clip(s))
		}
	}
	target := len(attrs) - 1
	if class != "" {
		i, ok := byName[class]
		if !ok {
			return nil, lineErr(name, dataLine, "no attribute named %q to use as the class", clip(class))
		}
		target = i
	}
	ds := &Dataset{Name: name, D: len(attrs) - 1}
	ds.Shape = []int{ds.D}
	for i, a := range attrs {
		if i == target {
			continue
		}
		f := Feature{Name: a.name, Kind: Numeric}
		if a.nominal {
			f.Kind, f.Categories = Nominal, a.categories
		}
		ds.Features = append(ds.Features, f)
	}
	classAttr := attrs[target]
	if classAttr.nominal {
		ds.Classes = classAttr.categories
		ds.Y = []int{}
	} else {
		ds.Target = []float64{}
	}
	// Data.
	var fields []arffField
	bud := newBudget(r)
	for {
		raw, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		s, err := stripARFFComment(raw)
		if err != nil {
			return nil, lineErr(name, lr.line, "%v", err)
		}
		lead := len(s) - len(strings.TrimLeftFunc(s, unicode.IsSpace))
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if s[0] == '{' {
			return nil, lineErr(name, lr.line, "sparse ARFF rows ({index value, …}) are not supported")
		}
		if s[0] == '@' {
			return nil, lineErr(name, lr.line, "directive %q after @data (line %d), expected data rows", clip(s), dataLine)
		}
		fields, err = splitARFFFields(s, fields[:0])
		if err != nil {
			return nil, lineErr(name, lr.line, "%v", err)
		}
		if len(fields) != len(attrs) {
			return nil, lineErr(name, lr.line, "%d values, expected %d (one per @attribute)", len(fields), len(attrs))
		}
		if err := bud.row(8 * int64(len(attrs))); err != nil {
			return nil, budgetErr(name, lr.line, err)
		}
		for j, f := range fields {
			a := &attrs[j]
			col := lead + f.pos + 1
			v := math.NaN()
			if f.quoted || f.text != "?" {
				if a.nominal {
					k, ok := a.index[f.text]
					if !ok {
						return nil, fieldErr(name, lr.line, col, "attribute %q: %q is not one of its categories {%s}",
							clip(a.name), clip(f.text), clip(strings.Join(a.categories, ",")))
					}
					v = float64(k)
				} else {
					x, err := parseNumber(f.text)
					if err != nil {
						return nil, fieldErr(name, lr.line, col, "attribute %q: %v (a missing value is written ?)", clip(a.name), err)
					}
					v = x
				}
			}
			switch {
			case j != target:
				ds.X = append(ds.X, v)
			case math.IsNaN(v):
				return nil, fieldErr(name, lr.line, col, "missing class value (attribute %q), expected a class", clip(a.name))
			case a.nominal:
				ds.Y = append(ds.Y, int(v))
			default:
				ds.Target = append(ds.Target, v)
			}
		}
		ds.N++
	}
	if ds.N == 0 {
		return nil, lineErr(name, lr.line+1, "no data rows after @data (line %d)", dataLine)
	}
	return ds, nil
}

// LoadARFF reads an ARFF file (see [ReadARFF]).
func LoadARFF(ctx context.Context, path, class string) (*Dataset, error) {
	return loadFile(ctx, path, func(r io.Reader, name string) (*Dataset, error) { return ReadARFF(r, name, class) })
}

// splitKeyword splits s at its first space or tab.
func splitKeyword(s string) (kw, rest string) {
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// stripARFFComment removes a "%" comment that is outside quotes.
func stripARFFComment(s string) (string, error) {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
		case c == '%':
			return s[:i], nil
		}
	}
	if quote != 0 {
		return "", fmt.Errorf("unterminated %c-quoted string", quote)
	}
	return s, nil
}

// readARFFQuoted reads the quoted string at the start of s (s[0] is the quote) and returns
// it unescaped and the rest of s.
func readARFFQuoted(s string) (string, string, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), s[i+1:], nil
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("unterminated %c-quoted string", q)
}

// parseARFFAttribute parses what follows "@attribute": a name and a type.
func parseARFFAttribute(s string) (arffAttr, error) {
	s = strings.TrimSpace(s)
	var a arffAttr
	if s == "" {
		return a, errors.New("@attribute without a name and type")
	}
	if s[0] == '\'' || s[0] == '"' {
		n, rest, err := readARFFQuoted(s)
		if err != nil {
			return a, err
		}
		a.name, s = n, rest
	} else {
		i := strings.IndexAny(s, " \t{")
		if i < 0 {
			return a, fmt.Errorf("@attribute %q has no type, expected numeric, real, integer or {categories}", clip(s))
		}
		a.name, s = s[:i], s[i:]
	}
	if a.name == "" {
		return a, errors.New("@attribute with an empty name")
	}
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		if !strings.HasSuffix(s, "}") {
			return a, fmt.Errorf("attribute %q: nominal list without a closing '}'", clip(a.name))
		}
		fields, err := splitARFFFields(s[1:len(s)-1], nil)
		if err != nil {
			return a, fmt.Errorf("attribute %q: %v", clip(a.name), err)
		}
		a.nominal = true
		a.index = make(map[string]int, len(fields))
		for _, f := range fields {
			if f.text == "" && !f.quoted {
				return a, fmt.Errorf("attribute %q: empty category in {%s}", clip(a.name), clip(s[1:len(s)-1]))
			}
			if _, dup := a.index[f.text]; dup {
				return a, fmt.Errorf("attribute %q: category %q appears twice", clip(a.name), clip(f.text))
			}
			a.index[f.text] = len(a.categories)
			a.categories = append(a.categories, f.text)
		}
		return a, nil
	}
	typ, _ := splitKeyword(s)
	switch strings.ToLower(typ) {
	case "numeric", "real", "integer":
		return a, nil
	case "string", "date", "relational":
		return a, fmt.Errorf("attribute %q: %s attributes are not supported (only numeric, real, integer and nominal)", clip(a.name), strings.ToLower(typ))
	case "":
		return a, fmt.Errorf("attribute %q has no type, expected numeric, real, integer or {categories}", clip(a.name))
	}
	return a, fmt.Errorf("attribute %q: unknown type %q, expected numeric, real, integer or {categories}", clip(a.name), clip(typ))
}

type arffField struct {
	text   string
	quoted bool
	pos    int // byte offset of the field in the string it was split from
}

// splitARFFFields splits s (without comments) at commas outside quotes, trimming spaces and
// unquoting quoted values; the fields are appended to dst.
func splitARFFFields(s string, dst []arffField) ([]arffField, error) {
	whole := len(s)
	for {
		s = strings.TrimLeft(s, " \t")
		f := arffField{pos: whole - len(s)}
		if s != "" && (s[0] == '\'' || s[0] == '"') {
			text, rest, err := readARFFQuoted(s)
			if err != nil {
				return nil, err
			}
			f.text, f.quoted = text, true
			s = strings.TrimLeft(rest, " \t")
			if s != "" && s[0] != ',' {
				return nil, fmt.Errorf("%q after the quoted value %q, expected ','", clip(s), clip(text))
			}
		} else {
			i := strings.IndexByte(s, ',')
			if i < 0 {
				i = len(s)
			}
			f.text = strings.TrimSpace(s[:i])
			s = s[i:]
		}
		dst = append(dst, f)
		if s == "" {
			return dst, nil
		}
		s = s[1:] // the comma
	}
}
