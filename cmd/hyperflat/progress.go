package main

import (
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// bars draws a run's progress on a terminal: one bar for the cells (done/total, rate, ETA,
// the best cell so far) and one line per worker slot (its cell and how long it has run).
// Lines written to it print above the bars.
type bars struct {
	p       *mpb.Progress
	workers int

	mu     sync.Mutex
	total  *mpb.Bar
	slots  []*mpb.Bar
	cell   []string
	since  []time.Time
	metric string
	higher bool
	best   float64
	bestAt string
	failed int
	ran    int // cells finished by this process since start
	start  time.Time
}

var _ experiments.Monitor = (*bars)(nil)

func newBars(w io.Writer, workers int) *bars {
	return &bars{p: mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithRefreshRate(200*time.Millisecond)),
		workers: max(1, workers), best: math.NaN()}
}

// Write prints lines above the bars.
func (b *bars) Write(p []byte) (int, error) { return b.p.Write(p) }

func (b *bars) Begin(total, done int, best string, higher bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.metric, b.higher = best, higher
	b.start = time.Now()
	b.total = b.p.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name("cells "), decor.CountersNoUnit("%d/%d", decor.WCSyncWidth)),
		mpb.AppendDecorators(
			decor.Percentage(decor.WC{W: 5}),
			decor.Name(" "), decor.EwmaETA(decor.ET_STYLE_GO, 30, decor.WCSyncWidth),
			decor.Any(func(decor.Statistics) string { return b.status() }),
		))
	b.total.SetCurrent(int64(done))
	b.cell = make([]string, b.workers)
	b.since = make([]time.Time, b.workers)
	for i := range b.workers {
		slot := i
		b.slots = append(b.slots, b.p.New(0, mpb.NopStyle(),
			mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return b.slotLine(slot) }))))
	}
}

func (b *bars) status() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := ""
	if min := time.Since(b.start).Minutes(); b.ran > 0 && min > 0 {
		s = fmt.Sprintf("  %.1f cells/min", float64(b.ran)/min)
	}
	if b.metric != "" && !math.IsNaN(b.best) {
		s = fmt.Sprintf("  best %s %.4g (%s)", b.metric, b.best, b.bestAt)
	}
	if b.failed > 0 {
		s += fmt.Sprintf("  %d failed", b.failed)
	}
	return s
}

func (b *bars) slotLine(slot int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cell[slot] == "" {
		return fmt.Sprintf("  worker %d: idle", slot+1)
	}
	return fmt.Sprintf("  worker %d: %s (%s)", slot+1, b.cell[slot], time.Since(b.since[slot]).Round(time.Second))
}

func (b *bars) Started(slot int, key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if slot < len(b.cell) {
		b.cell[slot], b.since[slot] = key, time.Now()
	}
}

func (b *bars) Finished(slot int, key string, r experiments.CellResult, seconds float64, err error) {
	b.mu.Lock()
	if slot < len(b.cell) {
		b.cell[slot] = ""
	}
	b.ran++
	if err != nil {
		b.failed++
	} else if v, ok := r.Metrics[b.metric]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
		if math.IsNaN(b.best) || (b.higher && v > b.best) || (!b.higher && v < b.best) {
			b.best, b.bestAt = v, key
		}
	}
	total := b.total
	b.mu.Unlock()
	if total != nil {
		total.EwmaIncrement(time.Duration(seconds * float64(time.Second)))
	}
	switch {
	case err != nil:
		fmt.Fprintf(b, "%s failed: %v\n", key, err)
	case r.Summary != "":
		fmt.Fprintln(b, r.Summary)
	}
}

// Stop ends the bars and waits for the last frame.
func (b *bars) Stop() {
	b.mu.Lock()
	slots, total := b.slots, b.total
	b.mu.Unlock()
	for _, s := range slots {
		s.Abort(true)
	}
	if total != nil && !total.Completed() {
		total.Abort(false)
	}
	b.p.Wait()
}
