package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func gzipped(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// TestImportBounds: an export whose line or decompressed size passes its bound is refused at
// the bound, while it is read, not after it was held whole (a 1 GiB line inside a 1 MB gzip
// was read whole: 25 s, 4.2 GB); a header naming a run with path characters is refused; and
// nothing of a refused export is written.
func TestImportBounds(t *testing.T) {
	ctx := context.Background()
	dst := openStore(t, filepath.Join(t.TempDir(), "dst.db"))
	header := `{"format":"hyperflat-run/1","identity":"exp-id","experiment":"exp","created":1,"cells":1}` + "\n"

	// One line of 48 MiB (48 kB of gzip): refused within about MaxExportLineBytes.
	long := append([]byte(header+`{"index":0,"key":"`), bytes.Repeat([]byte("a"), 48<<20)...)
	data := gzipped(t, long)
	long = nil
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := dst.ImportRun(ctx, bytes.NewReader(data))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "line 2 is longer than") {
		t.Errorf("a 48 MiB line: %v; want it refused as longer than MaxExportLineBytes", err)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 8*MaxExportLineBytes {
		t.Errorf("reading a 48 MiB line allocated %d MiB; want it stopped near the %d MiB bound", grown>>20, MaxExportLineBytes>>20)
	}
	t.Logf("48 MiB line refused in %v", time.Since(start))

	// Many short lines past the total bound (lowered here to 1 MiB).
	defer func(old int64) { maxExportBytes = old }(maxExportBytes)
	maxExportBytes = 1 << 20
	var many bytes.Buffer
	fmt.Fprintf(&many, `{"format":"hyperflat-run/1","identity":"exp-id","experiment":"exp","created":1,"cells":%d}`+"\n", 40000)
	for i := range 40000 {
		fmt.Fprintf(&many, `{"index":%d,"key":"k%d","seed":"1","status":"pending"}`+"\n", i, i)
	}
	if _, err := dst.ImportRun(ctx, bytes.NewReader(gzipped(t, many.Bytes()))); err == nil || !strings.Contains(err.Error(), "MaxExportBytes") {
		t.Errorf("an export past the size bound: %v", err)
	}
	maxExportBytes = MaxExportBytes

	for _, bad := range []string{"../../../../elsewhere/EVIL", "a/b", ".hidden", "x\x00y", `c:\x`} {
		h := strings.Replace(header, `"experiment":"exp"`, `"experiment":`+jsonString(bad), 1)
		in := h + `{"index":0,"key":"a","seed":"1","status":"pending"}` + "\n"
		if _, err := dst.ImportRun(ctx, strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "header: experiment") {
			t.Errorf("experiment %q: %v; want it refused", bad, err)
		}
		in = strings.Replace(header, `"identity":"exp-id"`, `"identity":`+jsonString(bad), 1) + `{"index":0,"key":"a","seed":"1","status":"pending"}` + "\n"
		if _, err := dst.ImportRun(ctx, strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "header: identity") {
			t.Errorf("identity %q: %v; want it refused", bad, err)
		}
	}
	// Seeds in another form than the exporter's: a merge compares them as text.
	for _, bad := range []string{"00", "07", "+7", "-1", "7.0", " 7", "18446744073709551616"} {
		in := header + `{"index":0,"key":"a","seed":` + jsonString(bad) + `,"status":"pending"}` + "\n"
		if _, err := dst.ImportRun(ctx, strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "seed") {
			t.Errorf("seed %q: %v; want it refused", bad, err)
		}
	}
	if runs, err := dst.Runs(ctx); err != nil || len(runs) != 0 {
		t.Errorf("refused imports left runs %v (%v)", runs, err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestImportMergeNeedsSameOptions: an export with a stored run's identity but other options
// ("budget=9" into a budget-8 run) is refused, not merged, and changes nothing.
func TestImportMergeNeedsSameOptions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openStore(t, dsn)
		sp := spec("exp-id", 2)
		sp.Options = json.RawMessage(`{"budget":8}`)
		run, err := s.CreateRun(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		var export bytes.Buffer
		if err := s.ExportRun(ctx, run.ID, &export); err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(export.String(), "\n", 2)
		changed := strings.Replace(lines[0], `"options":{"budget":8}`, `"options":{"budget":9}`, 1)
		if changed == lines[0] {
			t.Fatalf("no options in the header %s", lines[0])
		}
		cell0 := strings.SplitN(lines[1], "\n", 2)[0]
		done := strings.Replace(cell0, `"status":"pending"`, `"status":"done","metrics":{"acc":1}`, 1)
		in := changed + "\n" + strings.Replace(lines[1], cell0, done, 1)
		if _, err := s.ImportRun(ctx, strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "other options") {
			t.Errorf("merging other options: %v; want it refused", err)
		}
		if r := getRun(t, s, run.ID); r.Done != 0 {
			t.Errorf("the refused merge filled %d cells", r.Done)
		}
	})
}

// FuzzReadExport: the export reader never panics, and what it accepts is consistent: the
// header's count of cells in index order, plain names, decimal seeds, known states.
func FuzzReadExport(f *testing.F) {
	s, err := Open(context.Background(), ":memory:")
	if err != nil {
		f.Fatal(err)
	}
	sp := spec("exp-id", 3)
	sp.Options = json.RawMessage(`{"preset":"quick"}`)
	run, err := s.CreateRun(context.Background(), sp)
	if err != nil {
		f.Fatal(err)
	}
	var export bytes.Buffer
	if err := s.ExportRun(context.Background(), run.ID, &export); err != nil {
		f.Fatal(err)
	}
	s.Close()
	f.Add(export.Bytes())
	f.Add(gzipped(f, export.Bytes()))
	f.Add([]byte(`{"format":"hyperflat-run/1","identity":"../x","experiment":"e","cells":0}`))
	f.Add([]byte("\x1f\x8b"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, cells, spec, err := readChecked(bytes.NewReader(b), func(RunSpec) error { return nil })
		if err != nil {
			return
		}
		if len(cells) != h.Cells || len(spec.Cells) != len(cells) {
			t.Fatalf("%d cells, header %d, spec %d", len(cells), h.Cells, len(spec.Cells))
		}
		if !plainName(h.Experiment) || !plainName(h.Identity) {
			t.Fatalf("accepted names %q %q", h.Experiment, h.Identity)
		}
		for i, c := range cells {
			if c.Index != i || spec.Cells[i].Key != c.Key || fmt.Sprint(spec.Cells[i].Seed) != c.Seed {
				t.Fatalf("cell %d: %+v / %+v", i, c, spec.Cells[i])
			}
			switch c.Status {
			case Pending, Done, Failed, Retired:
			default:
				t.Fatalf("cell %d: status %q", i, c.Status)
			}
		}
	})
}
