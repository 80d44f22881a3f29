package datasets

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	paper := []string{"mnist", "svhn", "breast", "digits", "iris", "wine", "vehicle", "blood-transfusion",
		"australian", "car", "phoneme", "segment", "credit-g", "kc1"}
	names := Names()
	var gotPaper []string
	for _, name := range names {
		in, ok := Lookup(name)
		if !ok {
			t.Fatalf("Lookup(%q) failed", name)
		}
		if in.Paper {
			gotPaper = append(gotPaper, name)
		}
		switch {
		case in.Task == Binary && in.Classes != 2,
			in.Task == Multiclass && in.Classes <= 2,
			in.Task == Regression && in.Classes != 0:
			t.Errorf("%s: task %v with %d classes", name, in.Task, in.Classes)
		}
		p := 1
		for _, s := range in.Shape {
			p *= s
		}
		if p != in.Features || in.TrainRows <= 0 || in.Source == "" || in.Provenance == "" || in.Licence == "" || len(in.Files) == 0 {
			t.Errorf("%s: incomplete description %+v", name, in)
		}
		for _, f := range in.Files {
			if f.Size <= 0 || (len(f.SHA256) != 64 && len(f.MD5) != 32) || strings.Contains(f.Path, `\`) {
				t.Errorf("%s: file %+v lacks a size or a checksum", name, f)
			}
		}
	}
	if !slices.Equal(gotPaper, paper) {
		t.Errorf("paper datasets %v, want %v", gotPaper, paper)
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup of an unknown name succeeded")
	}
	in, _ := Lookup("mnist")
	in.Files[0].Path = "changed"
	if again, _ := Lookup("mnist"); again.Files[0].Path == "changed" {
		t.Error("Lookup returns shared state")
	}
	if _, _, err := Load(context.Background(), "nope", t.TempDir()); err == nil || !strings.Contains(err.Error(), "kc1") {
		t.Errorf("unknown dataset: %v", err)
	}
}

func TestLoadMissing(t *testing.T) {
	dir := t.TempDir()
	_, _, err := Load(context.Background(), "mnist", dir)
	var me *MissingError
	if !errors.As(err, &me) || !errors.Is(err, fs.ErrNotExist) || len(me.Paths) != 4 {
		t.Fatalf("got %v, want one *MissingError for 4 files", err)
	}
	msg := err.Error()
	for _, want := range []string{"mnist: ", filepath.Join(dir, "mnist", "train-images-idx3-ubyte.gz"),
		"train-images-idx3-ubyte.gz (9,912,422 bytes, md5 f68b3c2dcbeaaa9fbdd348bbdeb94873)", "http://yann.lecun.com/exdb/mnist/", "HYPERFLAT_DATA"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	// One of several files missing: only it is named.
	if err := os.MkdirAll(filepath.Join(dir, "svhn"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "svhn", "train_32x32.mat"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load(context.Background(), "svhn", dir)
	want := "svhn: " + filepath.Join(dir, "svhn", "test_32x32.mat") + " not found; download test_32x32.mat (64,275,384 bytes, md5 eb5a983be6a315427106f1b164d9cef3) from http://ufldl.stanford.edu/housenumbers/ and place it there, or set --data-dir / HYPERFLAT_DATA to a directory that has it"
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	// The empty train file is then found wanting.
	if err := os.WriteFile(filepath.Join(dir, "svhn", "test_32x32.mat"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load(context.Background(), "svhn", dir)
	var ce *ChecksumError
	if !errors.As(err, &ce) || ce.Kind != "size" {
		t.Fatalf("empty svhn file: %v", err)
	}
}

func TestEmbedded(t *testing.T) {
	want := map[string][3]int{"breast": {569, 30, 2}, "digits": {1797, 64, 10}, "iris": {150, 4, 3}, "wine": {178, 13, 3}}
	for _, name := range EmbeddedNames() {
		d, err := LoadEmbedded(name)
		if err != nil {
			t.Fatal(err)
		}
		if w := want[name]; d.N != w[0] || d.D != w[1] || len(d.Classes) != w[2] || d.Name != name {
			t.Errorf("%s: %d×%d, %d classes", name, d.N, d.D, len(d.Classes))
		}
		// Without a data directory, Load falls back to the embedded copy.
		train, test, err := Load(context.Background(), name, t.TempDir())
		if err != nil || test != nil || train.N != d.N || !slices.Equal(train.X, d.X) {
			t.Errorf("%s: Load without files: %v", name, err)
		}
	}
	if _, err := LoadEmbedded("mnist"); err == nil {
		t.Error("LoadEmbedded(mnist) succeeded")
	}
	iris, _ := LoadEmbedded("iris")
	if iris.Features[2].Name != "petal length (cm)" || iris.X[0] != 5.1 || iris.Classes[2] != "virginica" {
		t.Errorf("iris: %+v %v %v", iris.Features[2], iris.X[:4], iris.Classes)
	}
}

func TestResolveDir(t *testing.T) {
	t.Setenv(EnvDataDir, "/from/env")
	if got := ResolveDir("/from/flag"); got != "/from/flag" {
		t.Errorf("flag: %q", got)
	}
	if got := ResolveDir(""); got != "/from/env" {
		t.Errorf("env: %q", got)
	}
	t.Setenv(EnvDataDir, "")
	got := ResolveDir("")
	if shared, err := SharedDataDir(); err == nil && got != shared || err != nil && got != DefaultDataDir {
		t.Errorf("default: %q (shared: %q, %v)", got, shared, err)
	}
	t.Chdir(t.TempDir())
	if _, err := SharedDataDir(); err == nil {
		t.Error("SharedDataDir found a repository above a temporary directory")
	}
	if got := ResolveDir(""); got != DefaultDataDir {
		t.Errorf("default outside the repository: %q", got)
	}
}
