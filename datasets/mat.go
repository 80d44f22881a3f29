package datasets

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// MATLAB v5 data types (MAT-File Format, table 1-1).
const (
	miINT8       = 1
	miUINT8      = 2
	miINT16      = 3
	miUINT16     = 4
	miINT32      = 5
	miUINT32     = 6
	miSINGLE     = 7
	miDOUBLE     = 9
	miINT64      = 12
	miUINT64     = 13
	miMATRIX     = 14
	miCOMPRESSED = 15
	miUTF32      = 18
)

// MATLAB array classes that hold plain numeric arrays.
const (
	mxDOUBLE = 6
	mxUINT64 = 15
)

// matVar is one numeric variable of a MAT file: its dimensions and its real part, raw.
type matVar struct {
	name     string
	dims     []int
	dataType uint32
	data     []byte
	off      int64 // file offset of the variable's element
}

// matElemSize returns the byte size of a numeric MATLAB data type, or 0.
func matElemSize(t uint32) int {
	switch t {
	case miINT8, miUINT8:
		return 1
	case miINT16, miUINT16:
		return 2
	case miINT32, miUINT32, miSINGLE:
		return 4
	case miDOUBLE, miINT64, miUINT64:
		return 8
	}
	return 0
}

// at returns element i of the real part as float64.
func (v *matVar) at(i int) float64 {
	b := v.data
	switch v.dataType {
	case miINT8:
		return float64(int8(b[i]))
	case miUINT8:
		return float64(b[i])
	case miINT16:
		return float64(int16(binary.LittleEndian.Uint16(b[2*i:])))
	case miUINT16:
		return float64(binary.LittleEndian.Uint16(b[2*i:]))
	case miINT32:
		return float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case miUINT32:
		return float64(binary.LittleEndian.Uint32(b[4*i:]))
	case miSINGLE:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	case miDOUBLE:
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	case miINT64:
		return float64(int64(binary.LittleEndian.Uint64(b[8*i:])))
	case miUINT64:
		return float64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return math.NaN()
}

func (v *matVar) len() int { return len(v.data) / matElemSize(v.dataType) }

// readMAT reads the numeric variables named in want from a little-endian MATLAB v5 MAT file,
// with or without compression. Other variables are skipped; a wanted variable that is not a
// real numeric array is an error.
func readMAT(r io.Reader, name string, want map[string]bool, bud *budget) (vars map[string]*matVar, end int64, err error) {
	b := &binReader{r: &inputLimiter{r: r, left: bud.lim.input, limit: bud.lim.input}, name: name, budget: bud}
	var hdr [128]byte
	if err := b.full(hdr[:], "the 128-byte MAT-file header"); err != nil {
		return nil, 0, err
	}
	if bytes.HasPrefix(hdr[:], []byte("MATLAB 7.3")) {
		return nil, 0, b.errAt(0, "MATLAB v7.3 (HDF5) MAT-file, expected a MATLAB v5 file (save with -v7 or -v6)")
	}
	if string(hdr[126:128]) == "MI" {
		return nil, 0, b.errAt(126, "big-endian MAT-file, expected little-endian (endian indicator \"IM\")")
	}
	if string(hdr[126:128]) != "IM" || binary.LittleEndian.Uint16(hdr[124:126]) != 0x0100 {
		return nil, 0, b.errAt(124, "version 0x%04x, endian indicator %q: not a MATLAB v5 MAT-file (expected 0x0100 and \"IM\")",
			binary.LittleEndian.Uint16(hdr[124:126]), hdr[126:128])
	}
	vars = map[string]*matVar{}
	for {
		start := b.off
		var tag [8]byte
		n, err := io.ReadFull(b.r, tag[:])
		b.off += int64(n)
		if errors.Is(err, io.EOF) {
			return vars, b.off, nil
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, 0, b.errAt(start, "truncated: expected an 8-byte data element tag, got %d bytes", n)
			}
			e := b.errAt(start, "read error")
			e.Err = err
			return nil, 0, e
		}
		typ := binary.LittleEndian.Uint32(tag[:4])
		size := int64(binary.LittleEndian.Uint32(tag[4:]))
		if typ>>16 != 0 {
			return nil, 0, b.errAt(start, "small data element (type %d) at the top level, expected miMATRIX or miCOMPRESSED", typ&0xffff)
		}
		var content []byte
		switch typ {
		case miCOMPRESSED:
			content, err = readMATCompressed(b, start, size)
			if err != nil {
				return nil, 0, err
			}
		case miMATRIX:
			content, err = b.readN(size, "a miMATRIX element of "+strconv.FormatInt(size, 10)+" bytes")
			if err != nil {
				return nil, 0, err
			}
			if err := skipMATPadding(b, start); err != nil {
				return nil, 0, err
			}
		default:
			if typ == 0 || typ > miUTF32 {
				return nil, 0, b.errAt(start, "unknown data type %d, expected a MATLAB v5 data element", typ)
			}
			if _, err := b.readN(size, "a data element of "+strconv.FormatInt(size, 10)+" bytes"); err != nil {
				return nil, 0, err
			}
			if err := skipMATPadding(b, start); err != nil {
				return nil, 0, err
			}
			continue
		}
		v, err := parseMATMatrix(content, want)
		if err != nil {
			if typ == miCOMPRESSED {
				return nil, 0, b.errAt(start, "compressed miMATRIX element: %v", err)
			}
			return nil, 0, b.errAt(start, "miMATRIX element: %v", err)
		}
		if v != nil {
			if _, dup := vars[v.name]; dup {
				return nil, 0, b.errAt(start, "variable %q appears twice", v.name)
			}
			v.off = start
			vars[v.name] = v
		}
	}
}

// skipMATPadding skips the padding of an element that began at start to 8 bytes.
func skipMATPadding(b *binReader, start int64) error {
	if pad := (8 - (b.off-start)%8) % 8; pad > 0 {
		var p [8]byte
		return b.full(p[:pad], "padding to an 8-byte boundary")
	}
	return nil
}

// readMATCompressed reads a miCOMPRESSED element of size bytes whose tag began at start and
// returns the content of the miMATRIX element it holds.
func readMATCompressed(b *binReader, start, size int64) ([]byte, error) {
	lr := &io.LimitedReader{R: b.r, N: size}
	zr, err := zlib.NewReader(lr)
	if err != nil {
		return nil, b.errAt(start, "miCOMPRESSED element: invalid zlib stream: %v", err)
	}
	inner := &binReader{r: zr, name: b.name, budget: b.budget}
	fail := func(err error) error {
		var pe *ParseError
		if errors.As(err, &pe) {
			msg := pe.Msg
			if pe.Err != nil {
				msg += ": " + pe.Err.Error()
			}
			return b.errAt(start, "miCOMPRESSED element, decompressed offset %d: %s", pe.Offset, msg)
		}
		return b.errAt(start, "miCOMPRESSED element: %v", err)
	}
	var tag [8]byte
	if err := inner.full(tag[:], "the tag of the compressed element"); err != nil {
		return nil, fail(err)
	}
	if t := binary.LittleEndian.Uint32(tag[:4]); t != miMATRIX {
		return nil, b.errAt(start, "miCOMPRESSED element holds data type %d, expected miMATRIX (%d)", t, miMATRIX)
	}
	n := int64(binary.LittleEndian.Uint32(tag[4:]))
	content, err := inner.readN(n, "a miMATRIX element of "+strconv.FormatInt(n, 10)+" bytes")
	if err != nil {
		return nil, fail(err)
	}
	// Read to the end of the zlib stream, which verifies its checksum.
	if extra, err := io.Copy(io.Discard, zr); err != nil {
		return nil, fail(err)
	} else if extra > 0 {
		return nil, b.errAt(start, "miCOMPRESSED element: %d bytes after its miMATRIX element", extra)
	}
	if _, err := io.Copy(io.Discard, lr); err != nil {
		e := b.errAt(start, "read error")
		e.Err = err
		return nil, e
	}
	b.off = start + 8 + size - lr.N
	if lr.N > 0 {
		return nil, b.errAt(b.off, "truncated: the miCOMPRESSED element at offset %d announces %d bytes", start, size)
	}
	return content, nil
}

// matCursor walks the sub-elements of a miMATRIX element.
type matCursor struct {
	b   []byte
	pos int
}

// next returns the next sub-element's type and data.
func (c *matCursor) next(what string) (uint32, []byte, error) {
	if len(c.b)-c.pos < 8 {
		return 0, nil, fmt.Errorf("offset %d: truncated, expected the %s sub-element", c.pos, what)
	}
	w := binary.LittleEndian.Uint32(c.b[c.pos:])
	if n := w >> 16; n != 0 { // small data element: type and size in one word, data in the next 4 bytes
		if n > 4 {
			return 0, nil, fmt.Errorf("offset %d: %s: small data element of %d bytes, at most 4 fit", c.pos, what, n)
		}
		data := c.b[c.pos+4 : c.pos+4+int(n)]
		c.pos += 8
		return w & 0xffff, data, nil
	}
	n := int(binary.LittleEndian.Uint32(c.b[c.pos+4:]))
	if n > len(c.b)-c.pos-8 {
		return 0, nil, fmt.Errorf("offset %d: %s: %d bytes announced, %d left in the element", c.pos, what, n, len(c.b)-c.pos-8)
	}
	data := c.b[c.pos+8 : c.pos+8+n]
	c.pos += 8 + n
	c.pos = min(c.pos+(8-n%8)%8, len(c.b))
	return w, data, nil
}

// parseMATMatrix parses a miMATRIX element's content. It returns nil for a variable that is
// not wanted (or an empty element).
func parseMATMatrix(content []byte, want map[string]bool) (*matVar, error) {
	if len(content) == 0 {
		return nil, nil
	}
	c := &matCursor{b: content}
	typ, flags, err := c.next("array flags")
	if err != nil {
		return nil, err
	}
	if typ != miUINT32 || len(flags) != 8 {
		return nil, fmt.Errorf("array flags of type %d and %d bytes, expected miUINT32 (6) and 8 bytes", typ, len(flags))
	}
	class := flags[0]
	complexFlag := flags[1]&0x08 != 0
	typ, dimBytes, err := c.next("dimensions")
	if err != nil {
		return nil, err
	}
	if typ != miINT32 || len(dimBytes) < 8 || len(dimBytes)%4 != 0 {
		return nil, fmt.Errorf("dimensions of type %d and %d bytes, expected miINT32 (5) and at least 2 dimensions", typ, len(dimBytes))
	}
	dims := make([]int, len(dimBytes)/4)
	for i := range dims {
		d := int32(binary.LittleEndian.Uint32(dimBytes[4*i:]))
		if d < 0 {
			return nil, fmt.Errorf("negative dimension %d", d)
		}
		dims[i] = int(d)
	}
	typ, nameBytes, err := c.next("array name")
	if err != nil {
		return nil, err
	}
	if typ != miINT8 {
		return nil, fmt.Errorf("array name of type %d, expected miINT8 (1)", typ)
	}
	name := string(nameBytes)
	if !want[name] {
		return nil, nil
	}
	if class < mxDOUBLE || class > mxUINT64 {
		return nil, fmt.Errorf("variable %q has array class %d, expected a numeric array (classes %d-%d)", name, class, mxDOUBLE, mxUINT64)
	}
	if complexFlag {
		return nil, fmt.Errorf("variable %q is complex, expected real values", name)
	}
	typ, data, err := c.next("real part of " + strconv.Quote(name))
	if err != nil {
		return nil, err
	}
	es := matElemSize(typ)
	if es == 0 {
		return nil, fmt.Errorf("variable %q: real part of data type %d, expected a numeric type", name, typ)
	}
	count := 1
	for _, d := range dims {
		if d != 0 && count > math.MaxInt32/d {
			return nil, fmt.Errorf("variable %q: dimensions %v too large", name, dims)
		}
		count *= d
	}
	if len(data) != count*es {
		return nil, fmt.Errorf("variable %q: dimensions %v need %d bytes of data type %d, the real part has %d",
			name, dims, count*es, typ, len(data))
	}
	return &matVar{name: name, dims: dims, dataType: typ, data: data}, nil
}

// ReadSVHN parses an SVHN "cropped digits" file (train_32x32.mat, test_32x32.mat): a
// little-endian MATLAB v5 MAT-file, compressed (miCOMPRESSED) or not, with X, uint8
// [H W C N] in MATLAB's column-major layout, and y, [N 1] labels 1…10 where 10 means digit 0.
//
// The images are transposed to row-major N×C×H×W (per-example shape [C H W], [3 32 32] for
// SVHN) with pixels scaled to [0, 1]; Classes are "0" … "9". X may hold any real numeric
// type, but every value must be a pixel value 0…255 (not NaN); every label must be an
// integer 1…10. An error names the byte offset of the variable's element.
func ReadSVHN(r io.Reader, name string) (*Dataset, error) {
	if err := nilInput(r, name); err != nil {
		return nil, err
	}
	bud := newBudget(r)
	vars, end, err := readMAT(r, name, map[string]bool{"X": true, "y": true}, bud)
	if err != nil {
		return nil, err
	}
	xv, yv := vars["X"], vars["y"]
	if xv == nil || yv == nil {
		missing := "X"
		if xv != nil {
			missing = "y"
		}
		return nil, &ParseError{File: name, Offset: end, Msg: "end of file without a variable " + missing + ", expected X (images) and y (labels)"}
	}
	dims := xv.dims
	if len(dims) == 3 { // MATLAB drops a trailing singleton dimension
		dims = append(dims, 1)
	}
	if len(dims) != 4 || dims[0] == 0 || dims[1] == 0 || dims[2] == 0 {
		return nil, &ParseError{File: name, Offset: xv.off, Msg: fmt.Sprintf("X has dimensions %v, expected [height width channels N]", xv.dims)}
	}
	h, w, ch, n := dims[0], dims[1], dims[2], dims[3]
	if n == 0 {
		return nil, &ParseError{File: name, Offset: xv.off, Msg: fmt.Sprintf("X has dimensions %v: no images, expected at least one", xv.dims)}
	}
	if yv.len() != n || len(yv.dims) != 2 || (yv.dims[0] != 1 && yv.dims[1] != 1) {
		return nil, &ParseError{File: name, Offset: yv.off, Msg: fmt.Sprintf("y has dimensions %v, expected [%d 1] (one label per image of X)", yv.dims, n)}
	}
	y := make([]int, n)
	for i := range y {
		v := yv.at(i)
		if v != math.Trunc(v) || v < 1 || v > 10 {
			return nil, &ParseError{File: name, Offset: yv.off, Msg: fmt.Sprintf("y[%d] = %v, expected a label 1…10 (10 means digit 0)", i, v)}
		}
		y[i] = int(v) % 10
	}
	d := ch * h * w
	if err := bud.announce(int64(n), 8*int64(n)*int64(d)); err != nil {
		return nil, &ParseError{File: name, Offset: xv.off, Msg: fmt.Sprintf("X has dimensions %v: %v", xv.dims, err)}
	}
	x := make([]float64, n*d)
	plane := h * w
	// MATLAB index of (row r, col c, channel k, image i): r + h*(c + w*(k + ch*i)).
	for i := range n {
		for k := range ch {
			src := plane * (k + ch*i)
			dst := x[i*d+k*plane : i*d+(k+1)*plane]
			for c := range w {
				for r := range h {
					var v float64
					if xv.dataType == miUINT8 {
						v = float64(xv.data[src+r+h*c])
					} else if v = xv.at(src + r + h*c); !(v >= 0 && v <= 255) {
						return nil, &ParseError{File: name, Offset: xv.off, Msg: fmt.Sprintf(
							"X(%d,%d,%d,%d) = %v, expected a pixel value 0…255", r+1, c+1, k+1, i+1, v)}
					}
					dst[r*w+c] = v / 255
				}
			}
		}
	}
	return &Dataset{
		Name: name, X: x, N: n, D: d, Shape: []int{ch, h, w}, Y: y, Classes: numberedNames("", 10),
	}, nil
}

// LoadSVHN reads an SVHN .mat file (see [ReadSVHN]).
func LoadSVHN(ctx context.Context, path string) (*Dataset, error) {
	return loadFile(ctx, path, ReadSVHN)
}
