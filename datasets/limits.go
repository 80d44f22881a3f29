package datasets

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The bounds every reader enforces while it reads, so that a hostile or corrupt file (a
// gzip bomb, a header that announces billions of values) fails with an error naming the file,
// where in it, and the limit, after reading and allocating at most about the limit, instead of
// exhausting memory. The registry's largest file (SVHN's training set: 73,257 images, 1.8 GB
// as float64) is well within them.
const (
	// MaxInputBytes is the most bytes a reader takes from one input, counted after gzip
	// decompression.
	MaxInputBytes int64 = 4 << 30
	// MaxRows is the most rows (examples) a dataset read from one input may have.
	MaxRows = 1 << 24
	// MaxDatasetBytes is the most memory a reader may hold for one input's dataset: the
	// values (8 bytes each), the labels and, for a table read with TableOptions.Text, the
	// fields kept as text until the end.
	MaxDatasetBytes int64 = 4 << 30
)

// limitSet is the bounds a read runs under: the exported constants, or lower ones that a test
// attaches to its input (see limitsOf).
type limitSet struct {
	input, memory int64
	rows          int
}

var defaultLimits = limitSet{input: MaxInputBytes, memory: MaxDatasetBytes, rows: MaxRows}

// limitedInput is an input that carries its own (lower) limits; only tests make one, so that
// they can exercise a limit without gigabytes of input.
type limitedInput struct {
	io.Reader
	lim limitSet
}

// limitsOf returns the limits of a read of r.
func limitsOf(r io.Reader) limitSet {
	if l, ok := r.(limitedInput); ok {
		return l.lim
	}
	return defaultLimits
}

// errInputTooLarge is what an inputLimiter fails with.
type errInputTooLarge struct{ limit int64 }

func (e *errInputTooLarge) Error() string {
	return fmt.Sprintf("more than %s bytes of (decompressed) input, the limit of a reader (datasets.MaxInputBytes)", groupDigits(e.limit))
}

// inputLimiter fails once more than limit bytes have been read.
type inputLimiter struct {
	r     io.Reader
	left  int64
	limit int64
}

func (l *inputLimiter) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// Only more data is an error: an input of exactly the limit ends normally.
		var one [1]byte
		if n, err := l.r.Read(one[:]); n == 0 {
			if err == nil {
				return 0, nil
			}
			return 0, err
		}
		return 0, &errInputTooLarge{l.limit}
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// budget counts what a reader holds and the rows it has read against its limits.
type budget struct {
	lim   limitSet
	bytes int64
	rows  int
}

func newBudget(r io.Reader) *budget { return &budget{lim: limitsOf(r)} }

// errBudget reports an exceeded memory or row limit; the readers put it in a *ParseError at
// the place it was exceeded.
type errBudget struct{ msg string }

func (e *errBudget) Error() string { return e.msg }

// hold accounts for n more bytes held.
func (b *budget) hold(n int64) error {
	b.bytes += n
	if b.bytes > b.lim.memory {
		return &errBudget{fmt.Sprintf("the data read so far needs more than %s bytes of memory, the limit of a reader (datasets.MaxDatasetBytes)",
			groupDigits(b.lim.memory))}
	}
	return nil
}

// row accounts for one more row of n bytes held.
func (b *budget) row(n int64) error {
	b.rows++
	if b.rows > b.lim.rows {
		return &errBudget{fmt.Sprintf("more than %s rows, the limit of a reader (datasets.MaxRows)", groupDigits(int64(b.lim.rows)))}
	}
	return b.hold(n)
}

// announce checks, before anything is read, that a header's announced size fits: rows rows
// holding bytes bytes in all.
func (b *budget) announce(rows, bytes int64) error {
	if rows > int64(b.lim.rows) {
		return &errBudget{fmt.Sprintf("%s rows announced, more than the limit of a reader (datasets.MaxRows = %s)",
			groupDigits(rows), groupDigits(int64(b.lim.rows)))}
	}
	if bytes > b.lim.memory-b.bytes {
		return &errBudget{fmt.Sprintf("the announced data needs %s bytes of memory, more than the limit of a reader (datasets.MaxDatasetBytes = %s)",
			groupDigits(bytes), groupDigits(b.lim.memory))}
	}
	return nil
}

// sniffText refuses input that is not the UTF-8 (or ASCII) text with LF or CRLF line ends
// that the text readers parse, naming what it is instead: without the check, a UTF-16 file or
// one with classic Mac OS line ends (CR alone) fails later with a message about its content
// (one header line holding the whole file, say, whose "columns 24 and 64 are both named…").
// It looks at the first bytes only.
func sniffText(peek []byte, eof bool, name string) error {
	switch {
	case bytes.HasPrefix(peek, []byte{0xff, 0xfe}), bytes.HasPrefix(peek, []byte{0xfe, 0xff}):
		return &ParseError{File: name, Line: 1, Msg: "UTF-16 text (it starts with a UTF-16 byte-order mark): save the file as UTF-8"}
	}
	if i := bytes.IndexByte(peek, 0); i >= 0 {
		return &ParseError{File: name, Line: 1 + bytes.Count(peek[:i], []byte{'\n'}), Msg: fmt.Sprintf(
			"a NUL byte at byte offset %d: UTF-16 text without a byte-order mark, or a binary file, not UTF-8 text (save it as UTF-8)", i)}
	}
	if i := bytes.IndexAny(peek, "\r\n"); i >= 0 && peek[i] == '\r' && (i+1 < len(peek) || eof) && (i+1 == len(peek) || peek[i+1] != '\n') {
		// The first line ends in a lone CR. A file of one line ending so is the same mistake.
		if bytes.IndexByte(peek, '\n') < 0 {
			return &ParseError{File: name, Line: 1, Msg: "the lines end in CR alone (classic Mac OS line ends), not LF or CRLF: convert the line ends (e.g. tr '\\r' '\\n')"}
		}
	}
	return nil
}

// gzipMagic starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// budgetErr turns a limit error into a *ParseError at a line, or returns err unchanged.
func budgetErr(name string, line int, err error) error {
	var be *errBudget
	if errors.As(err, &be) {
		return lineErr(name, line, "%s", be.msg)
	}
	return err
}

// rowNumber is "row 12" for messages that count data rows as well as lines.
func rowNumber(i int) string { return "row " + strconv.Itoa(i) }
