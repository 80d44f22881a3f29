package ahsc

import (
	"encoding/json"
	"os/exec"
	"slices"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
)

// TestNumpyPermutation checks RandomState(0).permutation against NumPy's values:
// permutation(10), and iris's train_test_split(random_state=0), whose first test row is
// iris[114] and whose test labels begin as the well-known y_test of test_size=0.25 (the same
// permutation's first rows; the early positions are fixed by the last draws, so they check
// the whole stream).
func TestNumpyPermutation(t *testing.T) {
	if got, want := npPermutation(0, 10), []int{2, 8, 4, 9, 1, 6, 7, 3, 0, 5}; !slices.Equal(got, want) {
		t.Errorf("permutation(10) = %v, want %v", got, want)
	}
	p := npPermutation(0, 150)
	yTest := []int{2, 1, 0, 2, 0, 2, 0, 1, 1, 1, 2, 1, 1, 1, 1, 0, 1, 1, 0, 0, 2, 1, 0, 0, 2, 0, 0, 1, 1, 0, 2, 1, 0, 2, 2, 1, 0}
	for i, y := range yTest {
		if p[i]/50 != y {
			t.Fatalf("iris permutation %v…: row %d has class %d, want %d", p[:10], p[i], p[i]/50, y)
		}
	}
	if p[0] != 114 {
		t.Errorf("first test row %d, want 114", p[0])
	}
	tr, te := sklearnTrainTest(150, 0)
	if len(te) != 30 || len(tr) != 120 || !slices.Equal(te, p[:30]) {
		t.Errorf("train_test_split: %d train, %d test", len(tr), len(te))
	}
}

// TestStratifiedFolds checks StratifiedKFold(shuffle=False) on scikit-learn's documented
// example and on unequal classes.
func TestStratifiedFolds(t *testing.T) {
	if got := sklearnStratifiedFolds([]int{0, 0, 1, 1}, 2); !slices.Equal(got[0], []int{0, 2}) || !slices.Equal(got[1], []int{1, 3}) {
		t.Errorf("folds %v, want [[0 2] [1 3]]", got)
	}
	// y = 1 1 1 0 0 0 0 1 (classes by first appearance: 1 → 0, 0 → 1), 3 folds: the sorted
	// codes 0 0 0 0 1 1 1 1 dealt round-robin give fold shares (2,1), (1,2), (1,1).
	got := sklearnStratifiedFolds([]int{1, 1, 1, 0, 0, 0, 0, 1}, 3)
	want := [][]int{{0, 1, 3}, {2, 4, 5}, {6, 7}}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("fold %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestAgainstScikitLearn compares the split and folds with scikit-learn where python3 has it.
func TestAgainstScikitLearn(t *testing.T) {
	script := `import json
from sklearn.datasets import load_iris
from sklearn.model_selection import train_test_split, StratifiedKFold
import numpy as np
X, y = load_iris(return_X_y=True)
tr, te = train_test_split(np.arange(len(y)), test_size=0.2, random_state=0, shuffle=True)
folds = [t.tolist() for _, t in StratifiedKFold(5).split(tr, y[tr])]
print(json.dumps({"train": tr.tolist(), "test": te.tolist(), "folds": folds}))`
	out, err := exec.Command("python3", "-c", script).Output()
	if err != nil {
		t.Skipf("python3 with scikit-learn is not available: %v", err)
	}
	var sk struct {
		Train, Test []int
		Folds       [][]int
	}
	if err := json.Unmarshal(out, &sk); err != nil {
		t.Fatal(err)
	}
	tr, te := sklearnTrainTest(150, 0)
	if !slices.Equal(tr, sk.Train) || !slices.Equal(te, sk.Test) {
		t.Errorf("train_test_split differs from scikit-learn's")
	}
	y := make([]int, len(tr))
	for i, r := range tr {
		y[i] = r / 50
	}
	for i, f := range sklearnStratifiedFolds(y, 5) {
		if !slices.Equal(f, sk.Folds[i]) {
			t.Errorf("fold %d = %v, scikit-learn's %v", i, f, sk.Folds[i])
		}
	}
}

// TestOneHotAll checks the authors' OpenML encoding: every column one-hot with the training
// categories (an unseen value → zeros), rows at unit L2 norm.
func TestOneHotAll(t *testing.T) {
	tr := &datasets.Dataset{Name: "t", X: []float64{1, 5, 2, 5, 1, 7}, N: 3, D: 2, Shape: []int{2}, Y: []int{0, 1, 0}, Classes: []string{"a", "b"}}
	te := &datasets.Dataset{Name: "t", X: []float64{2, 9}, N: 1, D: 2, Shape: []int{2}, Y: []int{1}, Classes: []string{"a", "b"}}
	out, err := oneHotAll(tr, te)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].D != 4 {
		t.Fatalf("width %d, want 4 (two categories per column)", out[0].D)
	}
	s := 1 / 1.4142135623730951
	if want := []float64{s, 0, s, 0}; !almost(out[0].X[:4], want) {
		t.Errorf("row 0 %v, want %v", out[0].X[:4], want)
	}
	if want := []float64{0, 1, 0, 0}; !almost(out[1].X, want) {
		t.Errorf("test row %v, want %v (9 unseen: zeros)", out[1].X, want)
	}
}

func almost(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if d := a[i] - b[i]; d > 1e-12 || d < -1e-12 {
			return false
		}
	}
	return true
}
