package datasets

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// ParseError reports malformed input: the file, where in it, and what was expected.
//
// Its message reads "datasets: FILE: line 12, column 3: …" for text formats (the column is
// left out when the error concerns a whole line) and "datasets: FILE: byte offset 16: …" for
// binary formats ("decompressed byte offset" when the file is gzip-compressed).
type ParseError struct {
	File string // the file name, or the name given to a Read function
	// Line is the 1-based line of a text format; 0 for binary formats.
	Line int
	// Column is the 1-based byte column in Line of the offending field; 0 when the error
	// concerns the whole line.
	Column int
	// Offset is the byte offset of a binary format (when Line is 0).
	Offset int64
	// Decompressed says that Offset counts bytes of the gzip-decompressed data, not of the file.
	Decompressed bool
	Msg          string
	Err          error // the underlying error, if any
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString("datasets: " + e.File)
	switch {
	case e.Line > 0:
		b.WriteString(": line " + strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteString(", column " + strconv.Itoa(e.Column))
		}
	case e.Decompressed:
		b.WriteString(": decompressed byte offset " + strconv.FormatInt(e.Offset, 10))
	default:
		b.WriteString(": byte offset " + strconv.FormatInt(e.Offset, 10))
	}
	b.WriteString(": " + e.Msg)
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// lineErr returns a *ParseError for line line of a text file.
func lineErr(file string, line int, format string, args ...any) *ParseError {
	return &ParseError{File: file, Line: max(line, 1), Msg: fmt.Sprintf(format, args...)}
}

// fieldErr returns a *ParseError for the field at column col (1-based bytes) of line line.
func fieldErr(file string, line, col int, format string, args ...any) *ParseError {
	return &ParseError{File: file, Line: max(line, 1), Column: max(col, 0), Msg: fmt.Sprintf(format, args...)}
}

// ChecksumError reports a file whose content is not the one the registry describes.
type ChecksumError struct {
	File     string
	Kind     string // "sha256", "md5" or "size"
	Expected string
	Actual   string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("%s: %s mismatch: expected %s, got %s (corrupt, truncated or a different version of the file)",
		e.File, e.Kind, e.Expected, e.Actual)
}

// MissingError reports that files of a registry dataset are not in the data directory.
// It matches fs.ErrNotExist under errors.Is.
type MissingError struct {
	Dataset string
	Paths   []string // the missing files' full paths
	Hint    string   // where to obtain them
}

func (e *MissingError) Error() string {
	if len(e.Paths) == 1 {
		return fmt.Sprintf("%s: %s not found; %s", e.Dataset, e.Paths[0], e.Hint)
	}
	return fmt.Sprintf("%s: %s not found; %s", e.Dataset, strings.Join(e.Paths, ", "), e.Hint)
}

func (e *MissingError) Unwrap() error { return fs.ErrNotExist }
