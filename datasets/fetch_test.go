package datasets

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// server serves iris.csv (the embedded copy, byte-identical to the registry's file) with
// http.ServeContent, which honours Range requests, and records what was asked and sent.
type server struct {
	*httptest.Server
	mu      sync.Mutex
	body    []byte
	ranges  []string
	sent    int64
	refuses bool // answer every request with 500
}

func newServer(t *testing.T, body []byte) *server {
	s := &server{body: body}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.ranges = append(s.ranges, r.Header.Get("Range"))
		refuses := s.refuses
		s.mu.Unlock()
		if refuses {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		cw := &countingWriter{ResponseWriter: w, s: s}
		http.ServeContent(cw, r, "iris.csv", time.Time{}, bytes.NewReader(s.body))
	}))
	t.Cleanup(s.Close)
	return s
}

type countingWriter struct {
	http.ResponseWriter
	s *server
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.s.mu.Lock()
	c.s.sent += int64(len(p))
	c.s.mu.Unlock()
	return c.ResponseWriter.Write(p)
}

// seen returns the Range headers received and the body bytes sent so far.
func (s *server) seen() ([]string, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ranges...), s.sent
}

func irisBytes(t *testing.T) []byte {
	b, err := fs.ReadFile(embedded, "embedded/iris.csv")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (s *server) options(progress func(File, int64, int64)) FetchOptions {
	return FetchOptions{URLs: func(Info, File) []string { return []string{s.URL + "/iris.csv"} }, Client: s.Client(), Progress: progress}
}

func TestFetchDownloadsAndVerifies(t *testing.T) {
	body := irisBytes(t)
	srv := newServer(t, body)
	dir := t.TempDir()
	var last int64
	got, err := Fetch(context.Background(), "iris", dir, srv.options(func(_ File, done, total int64) { last = done }))
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "sklearn", "data", "iris.csv")
	if len(got) != 1 || got[0] != target || last != int64(len(body)) {
		t.Errorf("fetched %v, progress ended at %d of %d", got, last, len(body))
	}
	st, err := Check(context.Background(), "iris", dir)
	if err != nil || st[0].State != Present {
		t.Fatalf("after the fetch: %+v, %v", st, err)
	}
	if _, err := os.Stat(target + ".part"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the .part file is left: %v", err)
	}
	// Present and intact: nothing is downloaded again.
	got, err = Fetch(context.Background(), "iris", dir, srv.options(nil))
	if ranges, _ := srv.seen(); err != nil || len(got) != 0 || len(ranges) != 1 {
		t.Errorf("second fetch: %v, %v, %d requests", got, err, len(ranges))
	}
}

func TestFetchRejectsACorruptDownload(t *testing.T) {
	body := irisBytes(t)
	bad := bytes.Clone(body)
	bad[100] ^= 1 // same size, another sha256
	srv := newServer(t, bad)
	dir := t.TempDir()
	_, err := Fetch(context.Background(), "iris", dir, srv.options(nil))
	var ce *ChecksumError
	if !errors.As(err, &ce) || ce.Kind != "sha256" {
		t.Fatalf("error %v, want a sha256 mismatch", err)
	}
	target := filepath.Join(dir, "sklearn", "data", "iris.csv")
	for _, p := range []string{target, target + ".part"} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists after a corrupt download", p)
		}
	}
	// A present file that differs is reported as such.
	if err := os.WriteFile(target, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := Check(context.Background(), "iris", dir)
	if err != nil || st[0].State != Mismatch || st[0].State.String() != "checksum mismatch" {
		t.Errorf("status of a corrupt file: %+v, %v", st, err)
	}
}

func TestFetchResumesAPartialDownload(t *testing.T) {
	body := irisBytes(t)
	srv := newServer(t, body)
	dir := t.TempDir()
	target := filepath.Join(dir, "sklearn", "data", "iris.csv")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	const have = 1000
	if err := os.WriteFile(target+".part", body[:have], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Fetch(context.Background(), "iris", dir, srv.options(nil)); err != nil {
		t.Fatal(err)
	}
	ranges, sent := srv.seen()
	if len(ranges) != 1 || ranges[0] != "bytes=1000-" {
		t.Errorf("requests' Range headers %q, want one bytes=1000-", ranges)
	}
	if sent != int64(len(body)-have) {
		t.Errorf("the server sent %d bytes, want only the missing %d", sent, len(body)-have)
	}
	if b, err := os.ReadFile(target); err != nil || !bytes.Equal(b, body) {
		t.Errorf("resumed file differs: %v", err)
	}
}

func TestFetchErrors(t *testing.T) {
	srv := newServer(t, irisBytes(t))
	srv.mu.Lock()
	srv.refuses = true
	srv.mu.Unlock()
	dir := t.TempDir()
	if _, err := Fetch(context.Background(), "iris", dir, srv.options(nil)); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("server error: %v", err)
	}
	if _, err := Fetch(context.Background(), "nosuch", dir, FetchOptions{}); err == nil {
		t.Error("unknown dataset: no error")
	}
	// credit-g comes with Weka: no URL to download it from.
	if _, err := Fetch(context.Background(), "credit-g", dir, FetchOptions{}); !errors.Is(err, ErrNotDownloadable) {
		t.Errorf("credit-g: %v", err)
	}
}

func TestFileURLs(t *testing.T) {
	for name, want := range map[string]string{
		"iris":     "https://github.com/scikit-learn/scikit-learn/raw/1.2.1/sklearn/datasets/data/iris.csv",
		"mnist":    "http://yann.lecun.com/exdb/mnist/train-images-idx3-ubyte.gz https://ossci-datasets.s3.amazonaws.com/mnist/train-images-idx3-ubyte.gz",
		"svhn":     "http://ufldl.stanford.edu/housenumbers/train_32x32.mat",
		"kc1":      "http://promise.site.uottawa.ca/SERepository/datasets/kc1.arff",
		"phoneme":  "https://github.com/EpistasisLab/pmlb/raw/master/datasets/phoneme/phoneme.tsv.gz",
		"diabetes": "https://github.com/scikit-learn/scikit-learn/raw/1.2.1/sklearn/datasets/data/diabetes_data_raw.csv.gz",
		"credit-g": "", "cifar10": "", "fashion-mnist": "",
	} {
		in, _ := Lookup(name)
		if got := strings.Join(FileURLs(in, in.Files[0]), " "); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
