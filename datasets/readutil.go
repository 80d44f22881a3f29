package datasets

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ctxReader fails reads once ctx is done, so long loads can be cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// gunzipIfGzip returns r, decompressed when it starts with the gzip magic bytes, and limited
// to the input's MaxInputBytes (counted after decompression). The bool reports whether it
// was compressed. A gzip stream that holds another gzip stream is refused: the readers
// decompress once, and the inner stream's bytes would otherwise be parsed as data.
func gunzipIfGzip(r io.Reader, name string) (io.Reader, bool, error) {
	lim := limitsOf(r)
	br := bufio.NewReaderSize(r, 1<<16)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, &ParseError{File: name, Msg: "read error", Err: err}
	}
	if !bytes.Equal(magic, gzipMagic) {
		return &inputLimiter{r: br, left: lim.input, limit: lim.input}, false, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, true, &ParseError{File: name, Msg: "invalid gzip header", Err: err}
	}
	inner := bufio.NewReaderSize(&inputLimiter{r: zr, left: lim.input, limit: lim.input}, 1<<16)
	if m, _ := inner.Peek(2); bytes.Equal(m, gzipMagic) {
		return nil, true, &ParseError{File: name, Decompressed: true, Msg: "gzip-compressed twice (the decompressed data is gzip again): decompress it once (gunzip) and read the result"}
	}
	return inner, true, nil
}

// openFile opens path for a Load function. The open does not block (a FIFO without a
// writer would otherwise hang in it, beyond the reach of ctx and of signals), and the reads
// are cancellable through ctx, even one that waits on a pipe or a FIFO. A file that is not a
// regular one (a FIFO, /dev/stdin) is read once, as it comes.
func openFile(ctx context.Context, path string) (io.ReadCloser, error) {
	f, _, err := openInput(ctx, path, nil)
	return f, err
}

// input is an open file of a Load function; see openInput.
type input struct {
	ctx     context.Context
	f       *os.File
	r       io.Reader // f, or f teed into a hash
	regular bool
	n       int64 // bytes read
	stop    func() bool
}

// errNilContext is what the Load functions return for a nil context (the context
// package's rule is never to pass one; context.TODO is the placeholder).
var errNilContext = errors.New("datasets: nil context.Context (pass context.Background() or context.TODO())")

// nilInput is the error of a Read function given a nil reader, nil otherwise.
func nilInput(r io.Reader, name string) error {
	if r == nil {
		return fmt.Errorf("datasets: reading %s from a nil io.Reader", name)
	}
	return nil
}

// openInput opens path for reading without blocking, makes its reads fail with ctx's error
// once ctx is done, and, when h is not nil, writes every byte read into h.
func openInput(ctx context.Context, path string, h io.Writer) (*input, bool, error) {
	if ctx == nil {
		return nil, false, errNilContext
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false, err
	}
	in := &input{ctx: ctx, f: f, r: f, regular: fi.Mode().IsRegular()}
	if h != nil {
		in.r = io.TeeReader(f, h)
	}
	// A read of a regular file ends by itself; one of a pipe waits in the poller, whose
	// deadline ends it when ctx is done.
	in.stop = context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Now()) })
	return in, in.regular, nil
}

func (in *input) Read(p []byte) (int, error) {
	if err := in.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := in.r.Read(p)
	in.n += int64(n)
	if err != nil {
		if cerr := in.ctx.Err(); cerr != nil {
			return n, cerr
		}
		if errors.Is(err, io.EOF) && in.n == 0 && !in.regular {
			return 0, fmt.Errorf("%s is not a regular file and gave no data (a FIFO reads as empty when nothing writes to it)", in.f.Name())
		}
	}
	return n, err
}

func (in *input) Close() error {
	in.stop()
	return in.f.Close()
}

// loadFile opens path and parses it with read.
func loadFile[T any](ctx context.Context, path string, read func(io.Reader, string) (T, error)) (T, error) {
	f, err := openFile(ctx, path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return read(bufio.NewReaderSize(f, 1<<16), path)
}

// Digest identifies the bytes a load read from its file, as stored (compressed or not).
type Digest struct {
	SHA256 string // hex
	Bytes  int64
}

// LoadHashed opens path and parses it with read (a Read function of this package, in a
// closure for its options), hashing the bytes as they are read: the digest is that of the very
// bytes the dataset was parsed from, read once. A file replaced while it is read, a FIFO or
// /dev/stdin thus cannot give a dataset of one content and the hash of another (a second read
// to hash the file could). Bytes the parser leaves unread are read and hashed too, up to
// MaxInputBytes. Reads stop when ctx is done.
func LoadHashed(ctx context.Context, path string, read func(io.Reader, string) (*Dataset, error)) (*Dataset, Digest, error) {
	if read == nil {
		return nil, Digest{}, errors.New("datasets: LoadHashed with a nil read function")
	}
	h := sha256.New()
	in, _, err := openInput(ctx, path, h)
	if err != nil {
		return nil, Digest{}, err
	}
	defer in.Close()
	d, err := read(bufio.NewReaderSize(in, 1<<16), path)
	if err != nil {
		return nil, Digest{}, err
	}
	// What read buffered and left, and what it never read.
	rest, err := io.Copy(io.Discard, io.LimitReader(in, MaxInputBytes+1))
	if err != nil {
		return nil, Digest{}, fmt.Errorf("datasets: %s: %w", path, err)
	}
	if rest > MaxInputBytes {
		return nil, Digest{}, fmt.Errorf("datasets: %s: more than %s bytes after the data (datasets.MaxInputBytes)", path, groupDigits(MaxInputBytes))
	}
	return d, Digest{SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: in.n}, nil
}

// MaxLineBytes is the longest line the text readers (CSV, TSV, ARFF and the other delimited
// formats) accept, counted in decompressed bytes. A longer line is an error naming the file
// and the line, raised after reading at most about this many bytes of it, so a corrupt or
// hostile file (one gigabyte-long field compressed into a few megabytes, say) cannot exhaust
// memory. The widest registry table has lines of a few kilobytes.
const MaxLineBytes = 4 << 20

// errLineTooLong is what a lineLimiter fails with; the parsers turn it into a *ParseError
// at the right line.
type errLineTooLong struct{ line int }

func (e *errLineTooLong) Error() string {
	return fmt.Sprintf("line %d is longer than %d bytes (datasets.MaxLineBytes)", e.line, MaxLineBytes)
}

// lineLimiter fails once MaxLineBytes bytes have passed without a newline. It sits below any
// buffering, so a long line is refused before a buffer grows to hold it.
type lineLimiter struct {
	r    io.Reader
	run  int // bytes since the last newline
	line int // 1-based physical line being read
	err  error
}

func newLineLimiter(r io.Reader) *lineLimiter { return &lineLimiter{r: r, line: 1} }

func (l *lineLimiter) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	for i, c := range p[:n] {
		if c == '\n' {
			l.run = 0
			l.line++
			continue
		}
		l.run++
		if l.run > MaxLineBytes {
			l.err = &errLineTooLong{line: l.line}
			return i, l.err
		}
	}
	return n, err
}

// lineTooLong turns a read error caused by the line limit into a *ParseError.
func lineTooLong(name string, err error) (*ParseError, bool) {
	var e *errLineTooLong
	if !errors.As(err, &e) {
		return nil, false
	}
	return &ParseError{File: name, Line: e.line, Msg: fmt.Sprintf("line longer than %d bytes, the limit of the text readers (datasets.MaxLineBytes)", MaxLineBytes)}, true
}

// lineReader reads text lines, without their "\n" or "\r\n", counting them from 1.
type lineReader struct {
	r    *bufio.Reader
	name string
	line int  // number of the line last returned
	eof  bool // the input is exhausted
}

func newLineReader(r io.Reader, name string) (*lineReader, error) {
	r, _, err := gunzipIfGzip(r, name)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(newLineLimiter(r), 1<<16)
	peek, perr := br.Peek(1 << 16)
	if err := sniffText(peek, perr != nil, name); err != nil {
		return nil, err
	}
	return &lineReader{r: br, name: name}, nil
}

// next returns the next line; ok is false at the end of the input. A read error (I/O,
// corrupt gzip data, cancellation) is returned as a *ParseError at the line being read.
func (lr *lineReader) next() (line string, ok bool, err error) {
	if lr.eof {
		return "", false, nil
	}
	s, err := lr.r.ReadString('\n')
	if err != nil {
		if pe, ok := lineTooLong(lr.name, err); ok {
			return "", false, pe
		}
		if !errors.Is(err, io.EOF) {
			return "", false, &ParseError{File: lr.name, Line: lr.line + 1, Msg: readErrorMsg(err), Err: err}
		}
		lr.eof = true
		if s == "" {
			return "", false, nil
		}
	}
	lr.line++
	s = strings.TrimSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\r")
	if lr.line == 1 {
		s = strings.TrimPrefix(s, "\ufeff")
	}
	return s, true, nil
}

// numKind classifies a field that parseNumber refuses (or numOK).
type numKind int

const (
	numOK       numKind = iota
	numEmpty            // an empty field
	numNaN              // "NaN" in any case, with or without a sign
	numInf              // an infinity
	numText             // not a number
	numOverflow         // a decimal number beyond the float64 range
	numComma            // a number written with a decimal comma ("0,123", "1.234,5")
)

// parseNumber parses a finite decimal number such as "3", "-0.25" or "1e-3", trimming
// surrounding spaces. Everything else is an error that says what was found: an empty field,
// text, a hexadecimal or otherwise non-decimal number, "NaN", an infinity ("inf", "Infinity"),
// a value beyond the float64 range or a number with a decimal comma. Missing values are not
// NaN text: the formats that allow them have their own notation (ARFF "?"), handled by their
// readers.
func parseNumber(s string) (float64, error) {
	v, _, err := classifyNumber(s)
	return v, err
}

// classifyNumber is parseNumber, also saying what kind of field a refused one is.
func classifyNumber(s string) (float64, numKind, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, numEmpty, errors.New("empty field, expected a finite number")
	}
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case "nan":
		return 0, numNaN, fmt.Errorf("NaN (%q), expected a finite number", t)
	case "inf", "infinity":
		return 0, numInf, fmt.Errorf("infinity (%q), expected a finite number", t)
	}
	if strings.Trim(t, "0123456789+-.eE") != "" {
		if decimalComma(t) {
			return 0, numComma, fmt.Errorf("%q is a number with a decimal comma: write decimal numbers with a point (%q)", clip(t), clip(commaToPoint(t)))
		}
		return 0, numText, fmt.Errorf("%q is not a number, expected a finite decimal number", clip(t))
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, numOverflow, fmt.Errorf("%q is beyond the float64 range, expected a finite number", clip(t))
		}
		return 0, numText, fmt.Errorf("%q is not a number, expected a finite decimal number", clip(t))
	}
	return v, numOK, nil
}

// decimalComma reports whether t is a decimal number written with a decimal comma, as many
// locales write them: "0,123", "-1,5e3", "1.234,5" (a point grouping thousands).
func decimalComma(t string) bool {
	if strings.Count(t, ",") != 1 || strings.Trim(t, "0123456789+-.,eE") != "" {
		return false
	}
	whole, frac, _ := strings.Cut(strings.TrimLeft(t, "+-"), ",")
	if frac == "" || frac[0] < '0' || frac[0] > '9' {
		return false
	}
	if strings.Contains(whole, ".") {
		// Points before the comma must group thousands: 1.234.567,8.
		groups := strings.Split(whole, ".")
		if len(groups[0]) == 0 || len(groups[0]) > 3 {
			return false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return false
			}
		}
	}
	_, err := strconv.ParseFloat(commaToPoint(t), 64)
	return err == nil
}

// commaToPoint rewrites a decimal-comma number with a decimal point.
func commaToPoint(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, ".", ""), ",", ".")
}

// parseClassCode parses an integral class code such as "3" or "3.0".
func parseClassCode(s string) (int, error) {
	v, err := parseNumber(s)
	if err != nil {
		return 0, err
	}
	if v != math.Trunc(v) || v < 0 || v > 1<<30 {
		return 0, fmt.Errorf("class label %q, expected a non-negative integer class code", clip(strings.TrimSpace(s)))
	}
	return int(v), nil
}

// clip shortens s for error messages.
func clip(s string) string {
	const n = 40
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// binReader reads a binary stream, counting the offset for error messages.
type binReader struct {
	r            io.Reader
	name         string
	off          int64
	decompressed bool
	budget       *budget // what the read may hold; nil: no limit
}

// errAt returns a *ParseError at byte offset off.
func (b *binReader) errAt(off int64, format string, args ...any) *ParseError {
	return &ParseError{File: b.name, Offset: off, Decompressed: b.decompressed, Msg: fmt.Sprintf(format, args...)}
}

// full reads exactly len(p) bytes; what names the data for the truncation message.
func (b *binReader) full(p []byte, what string) error {
	n, err := io.ReadFull(b.r, p)
	start := b.off
	b.off += int64(n)
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return b.errAt(b.off, "truncated: expected %s (%d bytes from offset %d), got %d bytes", what, len(p), start, n)
	}
	e := b.errAt(b.off, "read error in %s", what)
	e.Err = err
	return e
}

// readN reads exactly n bytes without trusting n for the allocation: the buffer starts small
// and doubles as data arrives, so a corrupt size field cannot exhaust memory (or time) before
// the input runs out.
func (b *binReader) readN(n int64, what string) ([]byte, error) {
	const initial = 1 << 16
	if b.budget != nil {
		if err := b.budget.hold(n); err != nil {
			return nil, b.errAt(b.off, "%s: %v", what, err)
		}
	}
	buf := make([]byte, 0, min(n, initial))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(n-int64(len(buf)), int64(cap(buf)))))
		}
		got, err := io.ReadFull(b.r, buf[len(buf):int(min(int64(cap(buf)), n))])
		buf = buf[:len(buf)+got]
		b.off += int64(got)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, b.errAt(b.off, "truncated: expected %s (%d bytes from offset %d), got %d bytes",
					what, n, b.off-int64(len(buf)), len(buf))
			}
			e := b.errAt(b.off, "read error in %s", what)
			e.Err = err
			return nil, e
		}
	}
	return buf, nil
}

// expectEOF fails if any byte follows.
func (b *binReader) expectEOF(what string) error {
	var p [1]byte
	n, err := io.ReadFull(b.r, p[:])
	if n > 0 {
		return b.errAt(b.off, "unexpected data after %s", what)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		e := b.errAt(b.off, "read error after %s", what)
		e.Err = err
		return e
	}
	return nil
}

// readErrorMsg describes an error of the underlying reader.
func readErrorMsg(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "read error (truncated compressed data)"
	}
	return "read error"
}
