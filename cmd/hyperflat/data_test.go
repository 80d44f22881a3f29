package main

import (
	"io"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/vbauerster/mpb/v8"
)

// TestDownloadBarsStop checks that the bars of a finished and of an interrupted download
// both let the progress end (mpb waits for every bar otherwise).
func TestDownloadBarsStop(t *testing.T) {
	d := &downloads{p: mpb.New(mpb.WithOutput(io.Discard)), bars: map[string]*mpb.Bar{}}
	done, cut := datasets.File{Path: "a/done.csv", Size: 100}, datasets.File{Path: "a/cut.csv", Size: 100}
	for _, n := range []int64{10, 60, 100} {
		d.progress(done, n, done.Size)
	}
	d.progress(cut, 30, cut.Size)
	stopped := make(chan struct{})
	go func() { d.stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the bars did not stop")
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{512: "512 B", 2734: "2.7 kB", 182040794: "182.0 MB"} {
		if got := byteSize(n).String(); got != want {
			t.Errorf("%d bytes read %q, want %q", n, got, want)
		}
	}
}
