package datasets

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// repeatReader yields n copies of c.
type repeatReader struct {
	c byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), r.n))
	for i := range p[:k] {
		p[i] = r.c
	}
	r.n -= int64(k)
	return k, nil
}

// Issue 16 item 5: a line of one huge field used to be buffered whole (a 4.6 MB gzip with a
// 1 GiB field took 7.2 GB) before the parse error; every text reader now stops at
// MaxLineBytes with an error naming the file, the line and the limit.
func TestLineLengthLimit(t *testing.T) {
	const field = 64 << 20 // 16 × MaxLineBytes
	readers := []struct {
		name   string
		header string
		read   func(io.Reader, string) (*Dataset, error)
	}{
		{"table.csv", "a,b\n1,", func(r io.Reader, n string) (*Dataset, error) { return ReadTable(r, n, TableOptions{Header: true}) }},
		{"pmlb.tsv", "a\ttarget\n1\t", ReadPMLB},
		{"uci.data", "x,y,z\n2 ,", func(r io.Reader, n string) (*Dataset, error) { return ReadTable(r, n, TableOptions{Header: true}) }},
		{"sk.csv", "3,1,a,b\n", ReadSklearnCSV},
		{"w.arff", "@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\n1,", func(r io.Reader, n string) (*Dataset, error) { return ReadARFF(r, n, "") }},
		{"quoted.csv", "a,b\n\"", func(r io.Reader, n string) (*Dataset, error) { return ReadTable(r, n, TableOptions{Header: true}) }},
	}
	for _, rd := range readers {
		for _, gz := range []bool{false, true} {
			var in io.Reader = io.MultiReader(strings.NewReader(rd.header), &repeatReader{'7', field})
			if gz {
				pr, pw := io.Pipe()
				go func(src io.Reader) {
					zw := gzip.NewWriter(pw)
					_, err := io.Copy(zw, src)
					if err == nil {
						err = zw.Close()
					}
					pw.CloseWithError(err)
				}(in)
				in = pr
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := rd.read(in, rd.name)
			runtime.ReadMemStats(&after)
			if c, ok := in.(io.Closer); ok {
				c.Close()
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != rd.name || pe.Line < 1 || !strings.Contains(err.Error(), "MaxLineBytes") {
				t.Errorf("%s (gzip %v): got %v, want a *ParseError naming the line and MaxLineBytes", rd.name, gz, err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*MaxLineBytes {
				t.Errorf("%s (gzip %v): allocated %d MiB reading a %d MiB line, want a few times MaxLineBytes", rd.name, gz, alloc>>20, field>>20)
			}
		}
	}
	// Lines up to the limit are read.
	long := "a,b\n" + strings.Repeat("0", MaxLineBytes-2) + ",0\n"
	if d, err := ReadTable(strings.NewReader(long), "long.csv", TableOptions{Header: true}); err != nil || d.N != 1 {
		t.Errorf("a line of exactly MaxLineBytes: %v", err)
	}
}

// Issue 16 item 5: a registry file that is a symlink to /dev/urandom used to be read for ever.
func TestRegistryFileLimits(t *testing.T) {
	if _, err := os.Stat("/dev/urandom"); err != nil {
		t.Skip("no /dev/urandom")
	}
	src, err := embedded.ReadFile("embedded/iris.csv")
	if err != nil {
		t.Fatal(err)
	}
	in, _ := Lookup("iris")
	for _, tc := range []struct {
		name string
		make func(p string) error
		want string
	}{
		{"device", func(p string) error { return os.Symlink("/dev/urandom", p) }, "not a regular file"},
		{"longer", func(p string) error {
			return os.WriteFile(p, append(bytes.Clone(src), bytes.Repeat([]byte("5.0,3.0,1.0,0.2,0\n"), 1<<16)...), 0o644)
		}, "size mismatch: expected 2,734 bytes, got 1,182,382 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, filepath.FromSlash(in.Files[0].Path))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(p); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, _, err := Load(context.Background(), "iris", dir)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("got %v, want an error naming %s and saying %q", err, p, tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Load did not finish in 20 s")
			}
		})
	}
}
