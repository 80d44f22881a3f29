package stats

import (
	"math"
	"testing"
)

// TestStdDev checks the sample standard deviation against hand-computed values.
func TestStdDev(t *testing.T) {
	// Mean 5, squared deviations 9+1+1+9 = 20, over n − 1 = 3.
	if got, want := StdDev([]float64{2, 4, 6, 8}), math.Sqrt(20.0/3); math.Abs(got-want) > 1e-15 {
		t.Errorf("StdDev = %v, want %v", got, want)
	}
	if got := StdDev([]float64{3}); !math.IsNaN(got) {
		t.Errorf("StdDev of one value = %v, want NaN", got)
	}
}
