package datasets

// Issue 52's classes of hostile input for the readers: values that are not what they look
// like (6), input that names the wrong cause (9), and input that would exhaust memory (3).

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

func readText(in string, opt TableOptions) (*Dataset, error) {
	opt.Header, opt.Text = true, true
	return ReadTable(strings.NewReader(in), "t.csv", opt)
}

// A numeric column written with decimal commas was read as text and one-hot encoded into a
// category per value (the run then scored ROC-AUC 0.500 with exit 0).
func TestDecimalCommaColumnsAreRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("x\tz\ty\n")
	for i := range 40 {
		b.WriteString("0," + strings.Repeat("1", i%7+1) + "\t" + "a\t" + []string{"0", "1"}[i%2] + "\n")
	}
	_, err := readText(b.String(), TableOptions{Comma: '\t'})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || pe.Column != 1 || !strings.Contains(err.Error(), `column 1 ("x") holds numbers with decimal commas ("0,1"`) ||
		!strings.Contains(err.Error(), `"0.1"`) {
		t.Errorf("got %v, want a *ParseError at line 2, column 1 naming the decimal commas", err)
	}
	// A thousands point and a comma, in the target too.
	if _, err := readText("x;y\n1;1.234,5\n2;2,5\n3;7,25\n", TableOptions{Comma: ';'}); err == nil || !strings.Contains(err.Error(), "decimal commas") {
		t.Errorf("decimal-comma target: %v", err)
	}
	// Without Text, the error says what the field is.
	if _, err := ReadTable(strings.NewReader("x\ty\n0,5\t1\n"), "n.tsv", TableOptions{Comma: '\t', Header: true}); err == nil ||
		!strings.Contains(err.Error(), `"0,5" is a number with a decimal comma`) {
		t.Errorf("numeric table: %v", err)
	}
	// Text with a comma stays text: a category, not a number.
	d, err := readText("x\ty\nred, dark\t0\nblue\t1\nred, dark\t1\nblue\t0\n", TableOptions{Comma: '\t'})
	if err != nil || d.Features[0].Kind != Nominal {
		t.Errorf("text with commas: %v", err)
	}
}

// NaN (and the other spellings of a missing value) in the target became a class of its own.
func TestMissingTargetSpellingsAreRefused(t *testing.T) {
	for _, m := range []string{"NaN", "nan", "NA", "", "?", "N/A", "null"} {
		_, err := readText("a,y\n1,0\n2,1\n3,"+m+"\n4,1\n", TableOptions{})
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 4 || !strings.Contains(err.Error(), "missing class value") || !strings.Contains(err.Error(), "data row 3") {
			t.Errorf("target %q: got %v, want a *ParseError at line 4 naming data row 3", m, err)
		}
	}
	// In a feature column they are missing values (NaN), and the column stays numeric.
	d, err := readText("a,y\n1,0\nNA,1\nnan,0\n4,1\n", TableOptions{})
	if err != nil || d.Features[0].Kind != Numeric || d.X[1] == d.X[1] || d.X[2] == d.X[2] {
		t.Errorf("missing features: %+v, %v", d, err)
	}
}

// Integer labels were parsed as float64: 2^53 and 2^53+1 were one class, and a 20-digit
// integer was called a non-integer.
func TestIntegerLabelsAreExact(t *testing.T) {
	d, err := readText("a,y\n1,9007199254740992\n2,9007199254740993\n3,9007199254740992\n4,99999999999999999999\n5,-3\n6,+007\n7,7.0\n", TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-3", "7", "9007199254740992", "9007199254740993", "99999999999999999999"}
	if !slices.Equal(d.Classes, want) || !slices.Equal(d.Y, []int{2, 3, 2, 4, 0, 1, 1}) {
		t.Errorf("classes %q, y %v; want %q, [2 3 2 4 0 1 1]", d.Classes, d.Y, want)
	}
	if _, err := readText("a,y\n1,1e20\n2,3\n", TableOptions{}); err == nil || !strings.Contains(err.Error(), "not written as an exact integer") {
		t.Errorf("1e20 as a label: %v", err)
	}
}

// 1e309 or an 801-digit number made a one-category text column.
func TestOverflowingNumbersNameTheCell(t *testing.T) {
	for _, v := range []string{"1e309", "-1e400", "1" + strings.Repeat("0", 800)} {
		_, err := readText("a,b,y\n1,2,0\n3,"+v+",1\n", TableOptions{})
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 3 || pe.Column != 3 || !strings.Contains(err.Error(), "beyond the float64 range") {
			t.Errorf("%.10s…: got %v, want a *ParseError at line 3, column 3 saying beyond the float64 range", v, err)
		}
	}
	if _, err := readText("a,y\n1,1e309\n", TableOptions{Regression: true}); err == nil || !strings.Contains(err.Error(), "beyond the float64 range") {
		t.Errorf("overflowing regression target: %v", err)
	}
}

func gzipBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Files that are not UTF-8 text with LF or CRLF line ends, or are compressed twice, failed
// with messages about their content ("columns 24 and 64 are both named …").
func TestWrongKindOfTextNamesTheCause(t *testing.T) {
	table := "a,b,c\n1,2,0\n3,4,1\n5,6,0\n"
	utf16le := func(s string, bom bool) []byte {
		var b []byte
		if bom {
			b = append(b, 0xff, 0xfe)
		}
		for _, u := range utf16.Encode([]rune(s)) {
			b = binary.LittleEndian.AppendUint16(b, u)
		}
		return b
	}
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"CR line ends", []byte(strings.ReplaceAll(table, "\n", "\r")), "lines end in CR alone"},
		{"UTF-16 with BOM", utf16le(table, true), "UTF-16 text"},
		{"UTF-16 without BOM", utf16le(table, false), "UTF-16 text without a byte-order mark"},
		{"gzip of gzip", gzipBytes(t, gzipBytes(t, []byte(table))), "gzip-compressed twice"},
	}
	readers := map[string]func(io.Reader, string) (*Dataset, error){
		"table": func(r io.Reader, n string) (*Dataset, error) {
			return ReadTable(r, n, TableOptions{Header: true, Text: true})
		},
		"arff": func(r io.Reader, n string) (*Dataset, error) { return ReadARFF(r, n, "") },
	}
	for _, c := range cases {
		for rn, read := range readers {
			_, err := read(bytes.NewReader(c.in), "f")
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s (%s): got %v, want a *ParseError saying %q", c.name, rn, err, c.want)
			}
		}
	}
	// CRLF and a last line without a newline stay fine.
	if _, err := readText(strings.ReplaceAll(table, "\n", "\r\n"), TableOptions{}); err != nil {
		t.Errorf("CRLF: %v", err)
	}
}

// lazyGzip streams the gzip compression of src through a pipe.
func lazyGzip(src io.Reader) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		zw, _ := gzip.NewWriterLevel(pw, gzip.BestSpeed)
		_, err := io.Copy(zw, src)
		if err == nil {
			err = zw.Close()
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// allocDuring returns the bytes allocated while f runs.
func allocDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A gzipped IDX file whose header claims 60000 images of 1024×1024 pixels was decompressed
// whole (33 s, 5 GB) before anything failed; it is refused from its header.
func TestIDXHeaderBeyondMemoryIsRefusedUpFront(t *testing.T) {
	const n = 60000
	labels := append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 0x801), n), make([]byte, n)...)
	hdr := binary.BigEndian.AppendUint32(nil, 0x803)
	for _, v := range []uint32{n, 1024, 1024} {
		hdr = binary.BigEndian.AppendUint32(hdr, v)
	}
	images := lazyGzip(io.MultiReader(bytes.NewReader(hdr), &repeatReader{0, 1 << 40}))
	defer images.Close()
	var err error
	alloc := allocDuring(func() { _, err = ReadIDX(images, "im.gz", bytes.NewReader(labels), "lb") })
	if err == nil || !strings.Contains(err.Error(), "im.gz: decompressed byte offset 4: header: 60000 images of 1024×1024 pixels") ||
		!strings.Contains(err.Error(), "datasets.MaxDatasetBytes") {
		t.Errorf("got %v, want a refusal from the header naming MaxDatasetBytes", err)
	}
	if alloc > 16<<20 {
		t.Errorf("allocated %d MiB before refusing", alloc>>20)
	}
}

// A 2 MB gzip that expands to 1 GiB of CSV ended in the runtime's fatal out-of-memory. Every
// text reader now accounts what it holds and the rows and bytes it reads, while it reads.
func TestTextReadersAreBoundedWhileReading(t *testing.T) {
	row := "1.5,2.25,hello,0\n"
	readers := []struct {
		name string
		head string
		read func(io.Reader, string) (*Dataset, error)
	}{
		{"text table", "a,b,c,y\n", func(r io.Reader, n string) (*Dataset, error) {
			return ReadTable(r, n, TableOptions{Header: true, Text: true})
		}},
		{"numeric table", "a,b,y\n", func(r io.Reader, n string) (*Dataset, error) { return ReadTable(r, n, TableOptions{Header: true}) }},
		{"arff", "@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute y {0,1}\n@data\n", func(r io.Reader, n string) (*Dataset, error) { return ReadARFF(r, n, "") }},
		{"sklearn csv", "100000000,2,a,b\n", ReadSklearnCSV},
	}
	limits := []struct {
		name string
		lim  limitSet
		want string
	}{
		{"memory", limitSet{input: 1 << 40, memory: 4 << 20, rows: 1 << 30}, "datasets.MaxDatasetBytes"},
		{"rows", limitSet{input: 1 << 40, memory: 1 << 40, rows: 1000}, "more than 1,000 rows, the limit of a reader (datasets.MaxRows)"},
		{"input", limitSet{input: 1 << 20, memory: 1 << 40, rows: 1 << 30}, "datasets.MaxInputBytes"},
	}
	for _, rd := range readers {
		r := row
		if rd.name != "text table" {
			r = "1.5,2.25,0\n"
		}
		for _, l := range limits {
			src := lazyGzip(io.MultiReader(strings.NewReader(rd.head), &lineRepeater{line: r, n: 1 << 40}))
			var err error
			alloc := allocDuring(func() { _, err = rd.read(limitedInput{src, l.lim}, "big.csv.gz") })
			src.Close()
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 2 || !strings.Contains(err.Error(), l.want) {
				t.Errorf("%s, %s limit: got %v, want a *ParseError at a line naming %q", rd.name, l.name, err, l.want)
			}
			if alloc > 64<<20 {
				t.Errorf("%s, %s limit: allocated %d MiB", rd.name, l.name, alloc>>20)
			}
		}
	}
}

// lineRepeater yields n copies of line.
type lineRepeater struct {
	line string
	n    int64
	off  int
}

func (l *lineRepeater) Read(p []byte) (int, error) {
	k := 0
	for k < len(p) && l.n > 0 {
		c := copy(p[k:], l.line[l.off:])
		k += c
		l.off += c
		if l.off == len(l.line) {
			l.off = 0
			l.n--
		}
	}
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}

// A registry file was parsed (a gzip bomb decompressed whole) before its size and checksum
// were compared with the registry's; they are now checked first.
func TestRegistryFilesAreCheckedBeforeParsing(t *testing.T) {
	in, _ := Lookup("mnist")
	dir := t.TempDir()
	write := func(i int, b []byte) {
		p := filepath.Join(dir, filepath.FromSlash(in.Files[i].Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hdr := binary.BigEndian.AppendUint32(nil, 0x803)
	for _, v := range []uint32{60000, 28, 28} {
		hdr = binary.BigEndian.AppendUint32(hdr, v)
	}
	bomb, err := io.ReadAll(lazyGzip(io.MultiReader(bytes.NewReader(hdr), &repeatReader{0, 60000 * 28 * 28})))
	if err != nil {
		t.Fatal(err)
	}
	labels := gzipBytes(t, append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 0x801), 60000), make([]byte, 60000)...))
	for i, f := range in.Files {
		switch {
		case strings.Contains(f.Path, "train-images"):
			write(i, bomb)
		case strings.Contains(f.Path, "train-labels"):
			write(i, labels)
		default:
			write(i, []byte("x"))
		}
	}
	var lerr error
	alloc := allocDuring(func() { _, _, lerr = Load(context.Background(), "mnist", dir) })
	var ce *ChecksumError
	if !errors.As(lerr, &ce) || ce.Kind != "size" || !strings.Contains(ce.File, "train-images") {
		t.Errorf("got %v, want the size mismatch of the training images", lerr)
	}
	if alloc > 8<<20 {
		t.Errorf("allocated %d MiB: the file was parsed before its size was checked", alloc>>20)
	}
}

// LoadHashed's digest is that of the bytes it parsed, trailing bytes included.
func TestLoadHashedDigestsTheBytesRead(t *testing.T) {
	content := gzipBytes(t, []byte("a,y\n1,0\n2,1\n"))
	p := filepath.Join(t.TempDir(), "d.csv.gz")
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	d, dg, err := LoadHashed(context.Background(), p, func(r io.Reader, n string) (*Dataset, error) {
		return ReadTable(r, n, TableOptions{Header: true, Text: true})
	})
	sum := sha256.Sum256(content)
	if err != nil || d.N != 2 || dg.SHA256 != hex.EncodeToString(sum[:]) || dg.Bytes != int64(len(content)) {
		t.Errorf("got %+v, %v; want sha256 %x of %d bytes", dg, err, sum, len(content))
	}
}

// One-hot encodings are bounded like the readers: a matrix beyond MaxDatasetBytes is refused
// before it is allocated.
func TestEncodingsAreBounded(t *testing.T) {
	cats := make([]string, 1000)
	for i := range cats {
		cats[i] = strconv.Itoa(i)
	}
	const n = 1 << 20
	d := &Dataset{Name: "wide", N: n, D: 1, Shape: []int{1}, X: make([]float64, n), Y: make([]int, n), Classes: []string{"a"},
		Features: []Feature{{Name: "c", Kind: Nominal, Categories: cats}}}
	if _, err := EncodeNominal(d); err == nil || !strings.Contains(err.Error(), "datasets.MaxDatasetBytes") {
		t.Errorf("EncodeNominal of 2^20 rows × 1000 categories: %v", err)
	}
}

// Issue 52: the hash stored with a run's cells came from a second read of the file, so a file
// replaced during the run gave the new file's hash for cells trained on the old one.
// LoadHashed's digest is of the bytes parsed even when the file is replaced meanwhile.
func TestLoadHashedIsOfTheBytesParsedWhenTheFileIsReplaced(t *testing.T) {
	dir := t.TempDir()
	p, other := filepath.Join(dir, "d.csv"), filepath.Join(dir, "new.csv")
	old, replacement := []byte("a,y\n1,0\n2,1\n"), []byte("a,y\n5,1\n6,0\n7,1\n")
	if err := os.WriteFile(p, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, replacement, 0o644); err != nil {
		t.Fatal(err)
	}
	d, dg, err := LoadHashed(context.Background(), p, func(r io.Reader, n string) (*Dataset, error) {
		d, err := ReadTable(r, n, TableOptions{Header: true, Text: true})
		if rerr := os.Rename(other, p); rerr != nil {
			t.Fatal(rerr)
		}
		return d, err
	})
	sum := sha256.Sum256(old)
	if err != nil || d.N != 2 || dg.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("got %d rows, %+v, %v; want the 2 rows and the hash of the file parsed", d.N, dg, err)
	}
}

// A semicolon-separated export (the usual one where the decimal separator is a comma) was
// refused for a target column it has ("no target column "y" in the header (columns: a;b;y)"),
// as if the column were missing; the error names the separator.
func TestOtherSeparatorIsNamed(t *testing.T) {
	in := "a;b;y\n0,5;1,5;0\n1,5;2,5;1\n"
	for _, opt := range []TableOptions{{Header: true, Target: "y", Text: true}, {Header: true, Text: true}} {
		_, err := ReadTable(strings.NewReader(in), "f.csv", opt)
		if err == nil || !strings.Contains(err.Error(), `the file looks separated by ';', not by ','`) {
			t.Errorf("target %q: got %v, want the separator named", opt.Target, err)
		}
	}
	if _, err := ReadTable(strings.NewReader("a,b\n1,0\n"), "f.csv", TableOptions{Header: true, Target: "y"}); err == nil ||
		strings.Contains(err.Error(), "looks separated") {
		t.Errorf("a comma-separated file without the target: %v", err)
	}
}
