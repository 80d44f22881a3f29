package datasets

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strconv"
)

const (
	idxImagesMagic = 0x00000803 // uint8, 3 dimensions
	idxLabelsMagic = 0x00000801 // uint8, 1 dimension
	// maxIDXImage bounds rows×cols so a corrupt header cannot claim absurd images.
	maxIDXImage = 1 << 20
)

// ReadIDX parses an IDX image file (magic 0x00000803: n×rows×cols uint8 pixels) and the
// matching IDX label file (magic 0x00000801: n uint8 labels), the format of MNIST and
// Fashion-MNIST. Either may be gzip-compressed. The names are used in error messages.
//
// Pixels are scaled to [0, 1] (divided by 255); the per-example shape is [1 rows cols].
// Classes are "0" … the largest label. The counts in both headers must agree, be positive,
// and each file must hold exactly the data its header announces.
func ReadIDX(images io.Reader, imagesName string, labels io.Reader, labelsName string) (*Dataset, error) {
	if err := errors.Join(nilInput(images, imagesName), nilInput(labels, labelsName)); err != nil {
		return nil, err
	}
	return readIDX(images, imagesName, labels, labelsName, 0)
}

// readIDX is [ReadIDX]; when classes > 0, every label must be below it and there are that
// many classes.
func readIDX(images io.Reader, imagesName string, labels io.Reader, labelsName string, classes int) (*Dataset, error) {
	y, err := readIDXLabels(labels, labelsName, classes)
	if err != nil {
		return nil, err
	}
	zr, gz, err := gunzipIfGzip(images, imagesName)
	if err != nil {
		return nil, err
	}
	b := &binReader{r: zr, name: imagesName, decompressed: gz}
	bud := newBudget(images)
	bud.hold(9 * int64(len(y))) // the labels, read and as ints
	var hdr [16]byte
	if err := b.full(hdr[:4], "the IDX magic number"); err != nil {
		return nil, err
	}
	if m := binary.BigEndian.Uint32(hdr[:4]); m != idxImagesMagic {
		return nil, b.errAt(0, "magic number 0x%08x, expected 0x%08x (IDX images: uint8, 3 dimensions)", m, idxImagesMagic)
	}
	if err := b.full(hdr[4:16], "the image count, rows and columns"); err != nil {
		return nil, err
	}
	n := int64(binary.BigEndian.Uint32(hdr[4:8]))
	rows := int64(binary.BigEndian.Uint32(hdr[8:12]))
	cols := int64(binary.BigEndian.Uint32(hdr[12:16]))
	if rows == 0 || cols == 0 || rows > maxIDXImage || cols > maxIDXImage || rows*cols > maxIDXImage {
		return nil, b.errAt(8, "image size %d×%d, expected positive rows and columns with at most %d pixels", rows, cols, maxIDXImage)
	}
	if n != int64(len(y)) {
		return nil, b.errAt(4, "%d images, but %s has %d labels", n, labelsName, len(y))
	}
	d := rows * cols
	// The pixels take a byte as read and 8 as float64: refused from the header when they
	// cannot fit, before a byte of them is decompressed.
	if err := bud.announce(n, 9*n*d); err != nil {
		return nil, b.errAt(4, "header: %d images of %d×%d pixels: %v", n, rows, cols, err)
	}
	pix, err := b.readN(n*d, strconv.FormatInt(n, 10)+" images of "+strconv.FormatInt(rows, 10)+"×"+strconv.FormatInt(cols, 10)+" pixels")
	if err != nil {
		return nil, err
	}
	if err := b.expectEOF("the last image"); err != nil {
		return nil, err
	}
	x := make([]float64, len(pix))
	for i, p := range pix {
		x[i] = float64(p) / 255
	}
	k := classes
	for _, v := range y {
		k = max(k, v+1)
	}
	return &Dataset{
		Name: imagesName, X: x, N: int(n), D: int(d),
		Shape: []int{1, int(rows), int(cols)}, Y: y, Classes: numberedNames("", k),
	}, nil
}

func readIDXLabels(r io.Reader, name string, classes int) ([]int, error) {
	zr, gz, err := gunzipIfGzip(r, name)
	if err != nil {
		return nil, err
	}
	b := &binReader{r: zr, name: name, decompressed: gz}
	bud := newBudget(r)
	var hdr [8]byte
	if err := b.full(hdr[:4], "the IDX magic number"); err != nil {
		return nil, err
	}
	if m := binary.BigEndian.Uint32(hdr[:4]); m != idxLabelsMagic {
		return nil, b.errAt(0, "magic number 0x%08x, expected 0x%08x (IDX labels: uint8, 1 dimension)", m, idxLabelsMagic)
	}
	if err := b.full(hdr[4:8], "the label count"); err != nil {
		return nil, err
	}
	n := int64(binary.BigEndian.Uint32(hdr[4:8]))
	if n == 0 {
		return nil, b.errAt(4, "label count 0, expected at least one label")
	}
	if err := bud.announce(n, 9*n); err != nil {
		return nil, b.errAt(4, "header: %d labels: %v", n, err)
	}
	raw, err := b.readN(n, strconv.FormatInt(n, 10)+" labels")
	if err != nil {
		return nil, err
	}
	if err := b.expectEOF("the last label"); err != nil {
		return nil, err
	}
	y := make([]int, len(raw))
	for i, v := range raw {
		if classes > 0 && int(v) >= classes {
			return nil, b.errAt(8+int64(i), "label %d of %d is %d, expected a class index below %d", i, n, v, classes)
		}
		y[i] = int(v)
	}
	return y, nil
}

// LoadIDX reads an IDX image file and its label file (see [ReadIDX]).
func LoadIDX(ctx context.Context, imagesPath, labelsPath string) (*Dataset, error) {
	lf, err := openFile(ctx, labelsPath)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	imf, err := openFile(ctx, imagesPath)
	if err != nil {
		return nil, err
	}
	defer imf.Close()
	return ReadIDX(imf, imagesPath, lf, labelsPath)
}
