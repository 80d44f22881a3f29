package datasets

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
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

// gunzipIfGzip returns r, decompressed when it starts with the gzip magic bytes.
// The bool reports whether it was compressed.
func gunzipIfGzip(r io.Reader, name string) (io.Reader, bool, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, &ParseError{File: name, Msg: "read error", Err: err}
	}
	if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, false, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, true, &ParseError{File: name, Msg: "invalid gzip header", Err: err}
	}
	return zr, true, nil
}

// openFile opens path for a Load function: cancellable through ctx.
func openFile(ctx context.Context, path string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{ctxReader{ctx, bufio.NewReaderSize(f, 1<<16)}, f}, nil
}

// loadFile opens path and parses it with read.
func loadFile[T any](ctx context.Context, path string, read func(io.Reader, string) (T, error)) (T, error) {
	f, err := openFile(ctx, path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return read(f, path)
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
	return &lineReader{r: bufio.NewReaderSize(newLineLimiter(r), 1<<16), name: name}, nil
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

// parseNumber parses a finite decimal number such as "3", "-0.25" or "1e-3", trimming
// surrounding spaces. Everything else is an error that says what was found: an empty field,
// text, a hexadecimal or otherwise non-decimal number, "NaN", an infinity ("inf", "Infinity")
// or a value beyond the float64 range. Missing values are not NaN text: the formats that
// allow them have their own notation (ARFF "?"), handled by their readers.
func parseNumber(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty field, expected a finite number")
	}
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case "nan":
		return 0, fmt.Errorf("NaN (%q), expected a finite number", t)
	case "inf", "infinity":
		return 0, fmt.Errorf("infinity (%q), expected a finite number", t)
	}
	if strings.Trim(t, "0123456789+-.eE") != "" {
		return 0, fmt.Errorf("%q is not a number, expected a finite decimal number", clip(t))
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%q is beyond the float64 range, expected a finite number", clip(t))
		}
		return 0, fmt.Errorf("%q is not a number, expected a finite decimal number", clip(t))
	}
	return v, nil
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
