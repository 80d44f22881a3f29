package datasets

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

const (
	cifarSide   = 32
	cifarPixels = 3 * cifarSide * cifarSide
	cifarRecord = 1 + cifarPixels
)

// cifar10Classes returns CIFAR-10's class names in label order.
func cifar10Classes() []string {
	return []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}
}

// ReadCIFAR10 parses a CIFAR-10 binary batch: records of one label byte followed by 3072
// pixel bytes, the red plane, then green, then blue, each 32×32 row-major. Pixels are scaled
// to [0, 1]; the per-example shape is [3 32 32]. classes names the labels; nil means the
// standard CIFAR-10 names. Every label must index classes, and the input must be a whole
// number of records.
func ReadCIFAR10(r io.Reader, name string, classes []string) (*Dataset, error) {
	if err := nilInput(r, name); err != nil {
		return nil, err
	}
	if classes == nil {
		classes = cifar10Classes()
	}
	zr, gz, err := gunzipIfGzip(r, name)
	if err != nil {
		return nil, err
	}
	b := &binReader{r: zr, name: name, decompressed: gz}
	bud := newBudget(r)
	var (
		x   []float64
		y   []int
		rec = make([]byte, cifarRecord)
	)
	for {
		start := b.off
		n, err := io.ReadFull(b.r, rec)
		b.off += int64(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, b.errAt(start, "truncated record %d: expected %d bytes (1 label + 3072 pixels), got %d",
				len(y), cifarRecord, n)
		}
		if err != nil {
			e := b.errAt(start, "read error in record %d", len(y))
			e.Err = err
			return nil, e
		}
		if int(rec[0]) >= len(classes) {
			return nil, b.errAt(start, "record %d: label %d, expected a class index below %d", len(y), rec[0], len(classes))
		}
		if err := bud.row(8 * cifarRecord); err != nil {
			return nil, b.errAt(start, "record %d: %v", len(y), err)
		}
		y = append(y, int(rec[0]))
		for _, p := range rec[1:] {
			x = append(x, float64(p)/255)
		}
	}
	if len(y) == 0 {
		return nil, b.errAt(0, "empty: expected records of %d bytes (1 label + 3072 pixels)", cifarRecord)
	}
	return &Dataset{
		Name: name, X: x, N: len(y), D: cifarPixels, Shape: []int{3, cifarSide, cifarSide},
		Y: y, Classes: slices.Clone(classes),
	}, nil
}

// readClassNames reads one class name per line; blank lines at the end are ignored.
func readClassNames(r io.Reader, name string) ([]string, error) {
	lr, err := newLineReader(r, name)
	if err != nil {
		return nil, err
	}
	var names []string
	blank := 0
	seen := map[string]int{}
	bud := newBudget(r)
	for {
		s, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		s = strings.TrimSpace(s)
		if s == "" {
			blank = lr.line
			continue
		}
		if blank > 0 {
			return nil, lineErr(name, blank, "blank line among class names, expected one class name per line")
		}
		if prev, dup := seen[s]; dup {
			return nil, lineErr(name, lr.line, "class name %q repeats line %d", clip(s), prev)
		}
		if err := bud.row(int64(len(s)) + 64); err != nil { // the name, in the slice and the map
			return nil, budgetErr(name, lr.line, err)
		}
		seen[s] = lr.line
		names = append(names, s)
	}
	if len(names) == 0 {
		return nil, lineErr(name, 1, "no class names, expected one per line")
	}
	return names, nil
}

// LoadCIFAR10 reads a CIFAR-10 binary batch (see [ReadCIFAR10]). The class names come from
// class_names.txt or batches.meta.txt (one name per line) in the same directory when either
// is present, and are the standard CIFAR-10 names otherwise.
func LoadCIFAR10(ctx context.Context, path string) (*Dataset, error) {
	var classes []string
	for _, meta := range []string{"class_names.txt", "batches.meta.txt"} {
		p := filepath.Join(filepath.Dir(path), meta)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		c, err := loadFile(ctx, p, readClassNames)
		if err != nil {
			return nil, err
		}
		classes = c
		break
	}
	f, err := openFile(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadCIFAR10(f, path, classes)
}
