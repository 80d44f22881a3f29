package experiments

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is an experiment's typed configuration: a pointer to a struct whose exported fields
// with a `flag:"name"` tag are the experiment's command-line flags. The tags give everything
// the command line, `hyperflat list` and `go doc` show, from one place:
//
//	flag:"n1"            the flag's name; the field's json tag must name it the same
//	quick:"15" paper:"50" the field's default in each preset (default:"…" sets both)
//	derived:"…"          for a default that Finish resolves from other fields (a zero one, or a
//	                     keyword such as auto): what it becomes
//	usage:"…"            one line of help
//	choices:"a,b,c"      the values a string (or each element of a list) may take
//
// Supported field types: string, bool, int, int64, uint64, float64, time.Duration, and
// comma-separated []string, []int and []float64.
//
// A run's identity is the hash of its resolved Config (with the preset and seed), the stored
// run holds it as JSON, and a worker decodes it back into the same struct.
type Config interface {
	// Finish fills the fields left at zero whose defaults depend on other fields (the
	// `derived` tag says how), then validates the whole configuration. Errors that name a flag
	// should be FlagErrors.
	Finish(preset string) error
}

// Presets are the names a run's --preset may take.
var presets = []string{Quick, PaperScale}

// Field describes one flag of a Config.
type Field struct {
	Name    string
	Type    string // the value's kind as help shows it: string, int, float, duration, bool, uint, or a list of them ("floats")
	Usage   string
	Quick   string // the quick preset's default, as the flag would be written
	Paper   string // the paper preset's default
	Derived string // what a zero default becomes (see the derived tag); "" for none
	Choices []string
	index   int
}

// Defaults describes the field's defaults for help texts: "quick 15, paper 50", or one value
// when both presets agree.
func (f Field) Defaults() string {
	show := func(v string) string {
		if f.Derived != "" && isZeroText(v) {
			return f.Derived
		}
		if v == "" {
			return `""`
		}
		return v
	}
	if f.Quick == f.Paper {
		return show(f.Quick)
	}
	return "quick " + show(f.Quick) + "; paper " + show(f.Paper)
}

// HelpText is the field's usage with its choices and defaults, as the command line shows it.
func (f Field) HelpText() string {
	s := f.Usage
	if len(f.Choices) > 0 {
		s += " (" + strings.Join(f.Choices, "|") + ")"
	}
	return s + " [default: " + f.Defaults() + "]"
}

func isZeroText(v string) bool { return v == "" || v == "0" || v == "0s" }

// Fields lists the flags of a config type.
func Fields(cfg Config) ([]Field, error) {
	t := reflect.TypeOf(cfg)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("experiments: config %T is not a pointer to a struct", cfg)
	}
	t = t.Elem()
	var out []Field
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, ok := sf.Tag.Lookup("flag")
		if !ok || !sf.IsExported() {
			continue
		}
		if name == "" || seen[name] {
			return nil, fmt.Errorf("experiments: %s.%s: empty or repeated flag name %q", t.Name(), sf.Name, name)
		}
		seen[name] = true
		if j, _, _ := strings.Cut(sf.Tag.Get("json"), ","); j != name {
			return nil, fmt.Errorf("experiments: %s.%s: json name %q differs from its flag --%s", t.Name(), sf.Name, j, name)
		}
		if err := checkKind(sf.Type); err != nil {
			return nil, fmt.Errorf("experiments: %s.%s: %w", t.Name(), sf.Name, err)
		}
		f := Field{Name: name, Type: typeName(sf.Type), Usage: sf.Tag.Get("usage"), Derived: sf.Tag.Get("derived"), index: i}
		f.Quick, f.Paper = sf.Tag.Get("quick"), sf.Tag.Get("paper")
		if d, ok := sf.Tag.Lookup("default"); ok {
			f.Quick, f.Paper = d, d
		}
		if c := sf.Tag.Get("choices"); c != "" {
			f.Choices = strings.Split(c, ",")
		}
		out = append(out, f)
	}
	return out, nil
}

var durationType = reflect.TypeFor[time.Duration]()

func typeName(t reflect.Type) string {
	if t == durationType {
		return "duration"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "int"
	case reflect.Uint64:
		return "uint"
	case reflect.Float64:
		return "float"
	case reflect.Slice:
		return typeName(t.Elem()) + "s"
	}
	return t.Kind().String()
}

func checkKind(t reflect.Type) error {
	if t == durationType {
		return nil
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64:
		return nil
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.String, reflect.Int, reflect.Float64:
			return nil
		}
	}
	return fmt.Errorf("unsupported flag type %s", t)
}

// ApplyPreset sets every flag field of cfg to its default in the preset.
func ApplyPreset(cfg Config, preset string) error {
	if !slices.Contains(presets, preset) {
		return FlagErrorf("preset", "%q: want %s", preset, strings.Join(presets, " or "))
	}
	fields, err := Fields(cfg)
	if err != nil {
		return err
	}
	v := reflect.ValueOf(cfg).Elem()
	for _, f := range fields {
		def := f.Quick
		if preset == PaperScale {
			def = f.Paper
		}
		if err := setValue(v.Field(f.index), f, def, false); err != nil {
			return fmt.Errorf("experiments: %T: the %s default of --%s: %w", cfg, preset, f.Name, err)
		}
	}
	return nil
}

// SetFlag sets the field of cfg whose flag is name from its command-line text.
func SetFlag(cfg Config, name, value string) error {
	fields, err := Fields(cfg)
	if err != nil {
		return err
	}
	for _, f := range fields {
		if f.Name == name {
			dst := reflect.ValueOf(cfg).Elem().Field(f.index)
			if err := setValue(dst, f, value, true); err != nil {
				return err
			}
			// A derived flag's zero is what leaving the flag out means: Finish would silently
			// replace a zero the user gave (--tpe-startup 0 ran 7 or 20 random trials).
			if f.Derived != "" && dst.IsZero() && dst.Kind() != reflect.String && dst.Kind() != reflect.Slice {
				return FlagErrorf(name, "%s: 0 is what leaving the flag out means (derived: %s); give a positive value, or leave the flag out", strings.TrimSpace(value), f.Derived)
			}
			return nil
		}
	}
	return FlagErrorf(name, "is not a flag of this experiment")
}

// FlagValues returns every flag of cfg as the command line would write it.
func FlagValues(cfg Config) map[string]string {
	fields, err := Fields(cfg)
	if err != nil {
		return nil
	}
	v := reflect.ValueOf(cfg).Elem()
	out := make(map[string]string, len(fields))
	for _, f := range fields {
		out[f.Name] = formatValue(v.Field(f.index))
	}
	return out
}

// setValue parses text into dst. A list the user gives must have an element: an empty one is
// a mistake, not a request for the default (which is what leaving the flag out is).
func setValue(dst reflect.Value, f Field, text string, user bool) error {
	text = strings.TrimSpace(text)
	bad := func(want string) error { return FlagErrorf(f.Name, "%q: want %s", text, want) }
	choice := func(s string) error {
		if len(f.Choices) > 0 && !slices.Contains(f.Choices, s) {
			return FlagErrorf(f.Name, "%q: want one of %s", s, strings.Join(f.Choices, ", "))
		}
		return nil
	}
	if dst.Type() == durationType {
		if text == "" {
			dst.SetInt(0)
			return nil
		}
		d, err := time.ParseDuration(text)
		if err != nil {
			return bad("a duration such as 90s or 10m")
		}
		dst.SetInt(int64(d))
		return nil
	}
	switch dst.Kind() {
	case reflect.String:
		if err := choice(text); err != nil {
			return err
		}
		dst.SetString(text)
	case reflect.Bool:
		if text == "" {
			dst.SetBool(false)
			return nil
		}
		b, err := strconv.ParseBool(text)
		if err != nil {
			return bad("true or false")
		}
		dst.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := parseInt(text)
		if err != nil {
			return bad("an integer")
		}
		dst.SetInt(n)
	case reflect.Uint64:
		if text == "" {
			dst.SetUint(0)
			return nil
		}
		n, err := strconv.ParseUint(text, 10, 64)
		if err != nil {
			return bad("a non-negative integer")
		}
		dst.SetUint(n)
	case reflect.Float64:
		x, err := parseFloat(text)
		if err != nil {
			return bad("a finite number")
		}
		dst.SetFloat(x)
	case reflect.Slice:
		parts := splitList(text)
		s := reflect.MakeSlice(dst.Type(), len(parts), len(parts))
		for i, p := range parts {
			switch dst.Type().Elem().Kind() {
			case reflect.String:
				if err := choice(p); err != nil {
					return err
				}
				s.Index(i).SetString(p)
			case reflect.Int:
				n, err := parseInt(p)
				if err != nil {
					return FlagErrorf(f.Name, "has %q: want comma-separated integers", p)
				}
				s.Index(i).SetInt(n)
			case reflect.Float64:
				x, err := parseFloat(p)
				if err != nil {
					return FlagErrorf(f.Name, "has %q: want comma-separated finite numbers", p)
				}
				s.Index(i).SetFloat(x)
			}
		}
		if len(parts) == 0 {
			if user {
				return FlagErrorf(f.Name, "%q has no value: want a comma-separated list", text)
			}
			s = reflect.Zero(dst.Type())
		}
		dst.Set(s)
	}
	return nil
}

func parseInt(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

func parseFloat(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err == nil && (math.IsNaN(x) || math.IsInf(x, 0)) {
		err = fmt.Errorf("not finite")
	}
	return x, err
}

// splitList splits a comma-separated list, dropping empty elements.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func formatValue(v reflect.Value) string {
	if v.Type() == durationType {
		if v.Int() == 0 {
			return "0"
		}
		return time.Duration(v.Int()).String()
	}
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = formatValue(v.Index(i))
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v.Interface())
}

// decodeConfig decodes a stored configuration into a new config of e's type, refusing
// fields the type does not have (the code changed since the run was stored).
func (e Experiment) decodeConfig(b []byte) (Config, error) {
	cfg := e.NewConfig()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		return nil, fmt.Errorf("stored %s config: %w", e.Name, err)
	}
	return cfg, nil
}

// CheckRange is a FlagError unless lo ≤ v ≤ hi. A count flag's upper bound is what a run can
// hold: without one, a mistyped count (--repeats 300000000000) is not a usage error but an
// exhausted memory, after the allocation it asks for.
func CheckRange(flag string, v, lo, hi int) error {
	if v < lo || v > hi {
		return FlagErrorf(flag, "%d: want an integer from %d to %d", v, lo, hi)
	}
	return nil
}

// Count is a count flag's value and its range, for CheckCounts.
type Count struct {
	Flag      string
	V, Lo, Hi int
}

// CheckCounts checks each count with CheckRange, in order, and returns the first error.
func CheckCounts(counts ...Count) error {
	for _, c := range counts {
		if err := CheckRange(c.Flag, c.V, c.Lo, c.Hi); err != nil {
			return err
		}
	}
	return nil
}
