package search

import (
	"strings"
	"sync"
	"testing"
)

// TestStudyConcurrentAskTell drives one study from several goroutines; run under -race (CI
// does) it fails if ask, tell and the trial list are not synchronized.
func TestStudyConcurrentAskTell(t *testing.T) {
	space := Space{FloatParam("x", -1, 1, false), IntParam("n", 1, 8, false)}
	st, err := NewStudy(space, TPE{NStartup: 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 6
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				tr, err := st.Ask()
				if err != nil {
					errs <- err
					return
				}
				x := tr.Config.Float("x")
				if err := st.Tell(tr.ID, x*x+float64(tr.Config.Int("n")), nil); err != nil {
					errs <- err
				}
				_ = st.Trials()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	trials := st.Trials()
	if len(trials) != workers*each {
		t.Fatalf("%d trials, want %d", len(trials), workers*each)
	}
	for i, tr := range trials {
		if tr.ID != i || tr.State != Complete {
			t.Errorf("trial %d: %+v", i, tr)
		}
	}
}

func TestIntOnAFloatDimensionPanics(t *testing.T) {
	c := Config{Space: Space{FloatParam("lr", 1e-4, 1, true), IntParam("n", 1, 8, false)}, Values: []float64{0.6, 3}}
	if c.Int("n") != 3 {
		t.Errorf("Int(n) = %d", c.Int("n"))
	}
	defer func() {
		p := recover()
		if s, _ := p.(string); !strings.Contains(s, "integer dimension") {
			t.Errorf("Int on a float dimension: recovered %v, want a panic naming it", p)
		}
	}()
	_ = c.Int("lr")
	t.Error("Int on a float dimension returned")
}
