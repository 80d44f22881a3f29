package datasets

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"testing"
)

// A minimal little-endian MATLAB v5 writer, enough to produce SVHN-like files.

func matHeader() []byte {
	h := make([]byte, 128)
	copy(h, "MATLAB 5.0 MAT-file, Platform: GLNXA64, Created by: hyperflat tests")
	for i := len("MATLAB 5.0 MAT-file, Platform: GLNXA64, Created by: hyperflat tests"); i < 116; i++ {
		h[i] = ' '
	}
	binary.LittleEndian.PutUint16(h[124:], 0x0100)
	copy(h[126:], "IM")
	return h
}

// matElement returns a data element: tag, data, padding to 8 bytes.
func matElement(typ uint32, data []byte) []byte {
	b := make([]byte, 8, 8+len(data)+7)
	binary.LittleEndian.PutUint32(b, typ)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(data)))
	b = append(b, data...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// matSmall returns a small data element (at most 4 bytes of data).
func matSmall(typ uint32, data []byte) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint32(b, uint32(len(data))<<16|typ)
	copy(b[4:], data)
	return b
}

type matArray struct {
	name     string
	class    byte
	complex  bool
	dims     []int32
	dataType uint32
	data     []byte
	small    bool // write the name as a small data element
}

func (a matArray) element() []byte {
	flags := make([]byte, 8)
	flags[0] = a.class
	if a.complex {
		flags[1] = 0x08
	}
	dims := make([]byte, 4*len(a.dims))
	for i, d := range a.dims {
		binary.LittleEndian.PutUint32(dims[4*i:], uint32(d))
	}
	name := matElement(miINT8, []byte(a.name))
	if a.small {
		name = matSmall(miINT8, []byte(a.name))
	}
	content := cat(matElement(miUINT32, flags), matElement(miINT32, dims), name, matElement(a.dataType, a.data))
	if a.complex {
		content = append(content, matElement(a.dataType, a.data)...)
	}
	return matElement(miMATRIX, content)
}

// matCompress wraps an element in a miCOMPRESSED element (not padded, as MATLAB writes it).
func matCompress(elem []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(elem)
	w.Close()
	b := make([]byte, 8)
	binary.LittleEndian.PutUint32(b, miCOMPRESSED)
	binary.LittleEndian.PutUint32(b[4:], uint32(buf.Len()))
	return append(b, buf.Bytes()...)
}

// svhnPixel is the test value at row r, column c, channel k of image i.
func svhnPixel(r, c, k, i int) byte { return byte(r + 3*c + 101*k + 37*i) }

// svhnX returns X as MATLAB stores it: uint8 [32 32 3 n], column-major.
func svhnX(n int) matArray {
	data := make([]byte, 0, 32*32*3*n)
	for i := range n {
		for k := range 3 {
			for c := range 32 {
				for r := range 32 {
					data = append(data, svhnPixel(r, c, k, i))
				}
			}
		}
	}
	return matArray{name: "X", class: 9, dims: []int32{32, 32, 3, int32(n)}, dataType: miUINT8, data: data, small: true}
}

// svhnXDouble returns X of n images as doubles, with element bad (column-major) set to v.
func svhnXDouble(n, bad int, v float64) matArray {
	u := svhnX(n)
	data := make([]byte, 8*len(u.data))
	for i, p := range u.data {
		f := float64(p)
		if i == bad {
			f = v
		}
		binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(f))
	}
	u.class, u.dataType, u.data = mxDOUBLE, miDOUBLE, data
	return u
}

func withDims(a matArray, dims ...int32) matArray { a.dims = dims; return a }

// elementWith returns the element with data instead of a.data.
func (a matArray) elementWith(data []byte) []byte {
	a.data = data
	return a.element()
}

func svhnYDouble(labels ...float64) matArray {
	data := make([]byte, 8*len(labels))
	for i, l := range labels {
		binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(l))
	}
	return matArray{name: "y", class: mxDOUBLE, dims: []int32{int32(len(labels)), 1}, dataType: miDOUBLE, data: data, small: true}
}

// svhnYUint8 stores double labels as uint8 data, as MATLAB does to save space.
func svhnYUint8(labels ...byte) matArray {
	return matArray{name: "y", class: mxDOUBLE, dims: []int32{int32(len(labels)), 1}, dataType: miUINT8, data: labels}
}

func TestReadSVHN(t *testing.T) {
	labels := []float64{10, 1, 5}
	other := matArray{name: "meta", class: 4, dims: []int32{1, 2}, dataType: 16, data: []byte("hi")}
	files := map[string][]byte{
		"uncompressed": cat(matHeader(), other.element(), svhnX(3).element(), svhnYDouble(labels...).element()),
		"compressed":   cat(matHeader(), matCompress(svhnYUint8(10, 1, 5).element()), matCompress(other.element()), matCompress(svhnX(3).element())),
	}
	for name, file := range files {
		t.Run(name, func(t *testing.T) {
			d, err := ReadSVHN(bytes.NewReader(file), "s.mat")
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			if d.N != 3 || d.D != 3072 || !slices.Equal(d.Shape, []int{3, 32, 32}) || !slices.Equal(d.Y, []int{0, 1, 5}) || len(d.Classes) != 10 {
				t.Fatalf("got %d×%d shape %v y %v", d.N, d.D, d.Shape, d.Y)
			}
			// Row-major N×C×H×W: element (i, k, r, c) at ((i·3+k)·32+r)·32+c.
			for i := range 3 {
				for k := range 3 {
					for r := range 32 {
						for c := range 32 {
							got := d.X[((i*3+k)*32+r)*32+c]
							if want := float64(svhnPixel(r, c, k, i)) / 255; got != want {
								t.Fatalf("image %d channel %d row %d col %d: %v, want %v", i, k, r, c, got, want)
							}
						}
					}
				}
			}
		})
	}
	// One image: MATLAB drops the trailing singleton dimension.
	x := svhnX(1)
	x.dims = x.dims[:3]
	d, err := ReadSVHN(bytes.NewReader(cat(matHeader(), x.element(), svhnYDouble(3).element())), "s.mat")
	if err != nil || d.N != 1 || d.Y[0] != 3 {
		t.Fatalf("single image: %v", err)
	}
}

func TestReadSVHNErrors(t *testing.T) {
	x, y := svhnX(2), svhnYDouble(1, 2)
	good := cat(matHeader(), x.element(), y.element())
	v73 := matHeader()
	copy(v73, "MATLAB 7.3 MAT-file")
	bigEndian := matHeader()
	copy(bigEndian[126:], "MI")
	badVersion := matHeader()
	badVersion[124] = 2
	compressed := cat(matHeader(), matCompress(x.element()), matCompress(y.element()))
	corruptZ := slices.Clone(compressed)
	corruptZ[128+8+40] ^= 0xff
	cplx := x
	cplx.complex = true
	cellX := x
	cellX.class = 1
	unknown := slices.Clone(matElement(99, []byte{1, 2, 3, 4}))
	cases := []errCase{
		{"empty", nil, "s.mat: byte offset 0: ", "truncated: expected the 128-byte MAT-file header"},
		{"short header", good[:100], "s.mat: byte offset 100: ", "truncated: expected the 128-byte MAT-file header"},
		{"v7.3", cat(v73, make([]byte, 400)), "s.mat: byte offset 0: ", "MATLAB v7.3 (HDF5) MAT-file"},
		{"big-endian", bigEndian, "s.mat: byte offset 126: ", "big-endian MAT-file"},
		{"bad version", badVersion, "s.mat: byte offset 124: ", "not a MATLAB v5 MAT-file"},
		{"no variables", matHeader(), "s.mat: byte offset 128: ", "end of file without a variable X"},
		{"no y", cat(matHeader(), x.element()), "s.mat: byte offset 6336: ", "end of file without a variable y"},
		{"truncated tag", good[:132], "s.mat: byte offset 128: ", "truncated: expected an 8-byte data element tag, got 4 bytes"},
		{"truncated in X", good[:1000], "s.mat: byte offset 1000: ", "truncated: expected a miMATRIX element of"},
		{"truncated in y", good[:len(good)-3], "s.mat: byte offset ", "truncated"},
		{"unknown element type", cat(matHeader(), unknown), "s.mat: byte offset 128: ", "unknown data type 99"},
		{"compressed truncated", compressed[:300], "s.mat: byte offset 128: ", "miCOMPRESSED element"},
		{"compressed corrupt", corruptZ, "s.mat: byte offset 128: ", "miCOMPRESSED element"},
		{"compressed not zlib", cat(matHeader(), []byte{15, 0, 0, 0, 4, 0, 0, 0, 1, 2, 3, 4}), "s.mat: byte offset 128: ", "invalid zlib stream"},
		{"X 2-D", cat(matHeader(), withDims(x, 32, 192).element(), y.element()), "s.mat: byte offset 128: ", "X has dimensions [32 192], expected [height width channels N]"},
		{"X size mismatch", cat(matHeader(), withDims(x, 32, 32, 3, 3).element(), y.element()), "s.mat: byte offset 128: ", `variable "X": dimensions [32 32 3 3] need 9216 bytes`},
		{"X complex", cat(matHeader(), cplx.element(), y.element()), "s.mat: byte offset 128: ", `variable "X" is complex`},
		{"X a cell array", cat(matHeader(), cellX.element(), y.element()), "s.mat: byte offset 128: ", `variable "X" has array class 1`},
		{"y too short", cat(matHeader(), x.element(), svhnYDouble(1).element()), "s.mat: byte offset ", "y has dimensions [1 1], expected [2 1]"},
		{"y label 11", cat(matHeader(), x.element(), svhnYDouble(1, 11).element()), "s.mat: byte offset ", "y[1] = 11, expected a label 1…10"},
		{"y label 0", cat(matHeader(), x.element(), svhnYDouble(0, 1).element()), "s.mat: byte offset ", "y[0] = 0"},
		{"y label NaN", cat(matHeader(), x.element(), svhnYDouble(math.NaN(), 1).element()), "s.mat: byte offset ", "y[0] = NaN"},
		{"y twice", cat(good, y.element()), "s.mat: byte offset ", `variable "y" appears twice`},
		{"small element at top level", cat(matHeader(), matSmall(miINT8, []byte("ab"))), "s.mat: byte offset 128: ", "small data element"},
		{"X no images", cat(matHeader(), withDims(x, 32, 32, 3, 0).elementWith(nil), svhnYDouble().element()), "s.mat: byte offset 128: ", "X has dimensions [32 32 3 0]: no images, expected at least one"},
		{"X double NaN", cat(matHeader(), svhnXDouble(2, 5, math.NaN()).element(), y.element()), "s.mat: byte offset 128: ", "X(6,1,1,1) = NaN, expected a pixel value 0…255"},
		{"X double 300", cat(matHeader(), svhnXDouble(2, 3072+40, 300).element(), y.element()), "s.mat: byte offset 128: ", "X(9,2,1,2) = 300, expected a pixel value 0…255"},
		{"X double negative", cat(matHeader(), svhnXDouble(2, 0, -1).element(), y.element()), "s.mat: byte offset 128: ", "X(1,1,1,1) = -1"},
		{"X double Inf", cat(matHeader(), svhnXDouble(2, 7, math.Inf(1)).element(), y.element()), "s.mat: byte offset 128: ", "= +Inf, expected a pixel value"},
		{"y label 2.5", cat(matHeader(), x.element(), svhnYDouble(1, 2.5).element()), "s.mat: byte offset 6336: ", "y[1] = 2.5, expected a label 1…10"},
		{"y label -1", cat(matHeader(), x.element(), svhnYDouble(-1, 2).element()), "s.mat: byte offset 6336: ", "y[0] = -1"},
		{"y wrong shape", cat(matHeader(), x.element(), withDims(svhnYDouble(1, 2), 2, 1, 1).element()), "s.mat: byte offset 6336: ", "y has dimensions [2 1 1], expected [2 1]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadSVHN(bytes.NewReader(c.in), "s.mat")
			expectParseError(t, err, c)
		})
	}
}

func TestReadSVHNCompressedErrors(t *testing.T) {
	x, y := svhnX(2), svhnYDouble(1, 2)
	cx, cy := matCompress(x.element()), matCompress(y.element())
	good := cat(matHeader(), cx, cy)
	yAt := int64(128 + len(cx))
	// withTag returns a compressed element whose tag announces size bytes.
	withTag := func(elem []byte, size uint32) []byte {
		e := slices.Clone(elem)
		binary.LittleEndian.PutUint32(e[4:], size)
		return e
	}
	// compressRaw compresses any bytes into a miCOMPRESSED element.
	compressRaw := func(raw []byte) []byte { return matCompress(raw) }
	badCRC := slices.Clone(cy)
	badCRC[len(badCRC)-1] ^= 0xff // the zlib Adler-32 checksum
	cases := []errCase{
		{"truncated in tag", good[:128+5], "s.mat: byte offset 128: ", "truncated: expected an 8-byte data element tag, got 5 bytes"},
		{"truncated in zlib header", good[:128+9], "s.mat: byte offset 128: ", "miCOMPRESSED element: invalid zlib stream"},
		{"truncated in X stream", good[:128+100], "s.mat: byte offset 128: ", "miCOMPRESSED element, decompressed offset "},
		{"truncated end of X stream", good[:128+len(cx)-1], "s.mat: byte offset 128: ", "miCOMPRESSED element"},
		{"truncated in y stream", good[:len(good)-10], "s.mat: byte offset " + strconv.FormatInt(yAt, 10) + ": ", "miCOMPRESSED element"},
		{"tag announces more", cat(matHeader(), cx, withTag(cy, uint32(len(cy)-8+100))), "s.mat: byte offset " + strconv.FormatInt(yAt+int64(len(cy)), 10) + ": ", "truncated: the miCOMPRESSED element at offset " + strconv.FormatInt(yAt, 10) + " announces"},
		{"tag announces less", cat(matHeader(), withTag(cx, 20), cy), "s.mat: byte offset 128: ", "miCOMPRESSED element"},
		{"bad checksum", cat(matHeader(), cx, badCRC), "s.mat: byte offset " + strconv.FormatInt(yAt, 10) + ": ", "miCOMPRESSED element"},
		{"holds a non-matrix", cat(matHeader(), compressRaw(matElement(miDOUBLE, make([]byte, 8)))), "s.mat: byte offset 128: ", "miCOMPRESSED element holds data type 9, expected miMATRIX (14)"},
		{"inner size too large", cat(matHeader(), compressRaw(withTag(x.element(), 1<<30))), "s.mat: byte offset 128: ", "miCOMPRESSED element, decompressed offset 6208: truncated: expected a miMATRIX element of 1073741824 bytes"},
		{"data after the matrix", cat(matHeader(), compressRaw(cat(y.element(), []byte{1, 2, 3}))), "s.mat: byte offset 128: ", "miCOMPRESSED element: 3 bytes after its miMATRIX element"},
		{"empty stream", cat(matHeader(), compressRaw(nil)), "s.mat: byte offset 128: ", "miCOMPRESSED element, decompressed offset 0: truncated: expected the tag of the compressed element"},
		{"only y", cat(matHeader(), cy), "s.mat: byte offset " + strconv.Itoa(128+len(cy)) + ": ", "end of file without a variable X"},
		{"X wrong shape", cat(matHeader(), matCompress(withDims(x, 64, 16, 3, 2).element()), matCompress(withDims(x, 32, 32, 3, 3).element())), "s.mat: byte offset ", `variable "X": dimensions [32 32 3 3] need 9216 bytes`},
		{"y label 11", cat(matHeader(), cx, matCompress(svhnYDouble(1, 11).element())), "s.mat: byte offset " + strconv.FormatInt(yAt, 10) + ": ", "y[1] = 11, expected a label 1…10"},
		{"y label NaN", cat(matHeader(), cx, matCompress(svhnYDouble(math.NaN(), 1).element())), "s.mat: byte offset " + strconv.FormatInt(yAt, 10) + ": ", "y[0] = NaN"},
		{"X NaN", cat(matHeader(), matCompress(svhnXDouble(2, 1, math.NaN()).element()), cy), "s.mat: byte offset 128: ", "X(2,1,1,1) = NaN, expected a pixel value 0…255"},
		{"y count mismatch", cat(matHeader(), cx, matCompress(svhnYDouble(1, 2, 3).element())), "s.mat: byte offset " + strconv.FormatInt(yAt, 10) + ": ", "y has dimensions [3 1], expected [2 1]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadSVHN(bytes.NewReader(c.in), "s.mat")
			expectParseError(t, err, c)
		})
	}
}
