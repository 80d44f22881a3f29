package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sync"
	"testing"
)

// num is a float64 read from fixtures.json, where non-finite values are
// spelled "nan", "inf" and "-inf".
type num float64

func (f *num) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		switch s {
		case "nan":
			*f = num(math.NaN())
		case "inf":
			*f = num(math.Inf(1))
		case "-inf":
			*f = num(math.Inf(-1))
		default:
			return fmt.Errorf("bad float %q", s)
		}
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = num(v)
	return nil
}

func floats(v []num) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

type fixtures struct {
	SciPy        string `json:"scipy"`
	Statsmodels  string `json:"statsmodels"`
	MannWhitneyU []struct {
		Name    string `json:"name"`
		X       []num  `json:"x"`
		Y       []num  `json:"y"`
		Ties    bool   `json:"ties"`
		Results []struct {
			Alternative string `json:"alternative"`
			Method      string `json:"method"`
			Continuity  bool   `json:"continuity"`
			U           num    `json:"u"`
			PSciPy      num    `json:"p_scipy"`
			Used        string `json:"used"`
			ExactNum    *num   `json:"exact_num"`
			ExactTotal  *num   `json:"exact_total"`
			PExact      *num   `json:"p_exact"`
		} `json:"results"`
	} `json:"mannwhitneyu"`
	Kruskal []struct {
		Name   string  `json:"name"`
		Groups [][]num `json:"groups"`
		H      num     `json:"h"`
		P      num     `json:"p"`
	} `json:"kruskal"`
	Spearman []struct {
		Name string `json:"name"`
		X    []num  `json:"x"`
		Y    []num  `json:"y"`
		Rho  num    `json:"rho"`
		P    num    `json:"p"`
	} `json:"spearman"`
	MultipleTests []struct {
		Name    string `json:"name"`
		P       []num  `json:"p"`
		Results []struct {
			Alpha    float64 `json:"alpha"`
			Method   string  `json:"method"`
			Reject   []bool  `json:"reject"`
			Adjusted []num   `json:"adjusted"`
		} `json:"results"`
	} `json:"multipletests"`
	Compare []struct {
		Name    string `json:"name"`
		Options struct {
			LowerIsBetter bool    `json:"lower_is_better"`
			UseMedian     bool    `json:"use_median"`
			UniquePairs   bool    `json:"unique_pairs"`
			Correction    string  `json:"correction"`
			Alpha         float64 `json:"alpha"`
		} `json:"options"`
		Names  []string `json:"names"`
		Groups [][]num  `json:"groups"`
		Result struct {
			KruskalH       num     `json:"kruskal_h"`
			KruskalP       num     `json:"kruskal_p"`
			Loc            []num   `json:"loc"`
			Top            int     `json:"top"`
			TopSignificant bool    `json:"top_significant"`
			Best           []bool  `json:"best"`
			P              [][]num `json:"p"`
			Adjusted       [][]num `json:"adjusted"`
		} `json:"result"`
	} `json:"compare"`
}

var (
	fixtureOnce sync.Once
	fixtureData fixtures
	fixtureErr  error
)

func loadFixtures(t *testing.T) *fixtures {
	t.Helper()
	fixtureOnce.Do(func() {
		b, err := os.ReadFile("testdata/fixtures.json")
		if err != nil {
			fixtureErr = err
			return
		}
		fixtureErr = json.Unmarshal(b, &fixtureData)
	})
	if fixtureErr != nil {
		t.Fatalf("loading fixtures: %v", fixtureErr)
	}
	return &fixtureData
}

// close reports whether got matches want to relative tolerance rel (or
// absolute tolerance rel near zero); NaN matches NaN and infinities must be
// equal.
func closeTo(got, want, rel float64) bool {
	switch {
	case math.IsNaN(want) || math.IsNaN(got):
		return math.IsNaN(want) && math.IsNaN(got)
	case math.IsInf(want, 0) || math.IsInf(got, 0):
		return got == want
	}
	return math.Abs(got-want) <= rel*math.Max(math.Abs(want), 1e-300) || math.Abs(got-want) <= 1e-300
}

func parseAlternative(t *testing.T, s string) Alternative {
	for _, a := range []Alternative{TwoSided, Less, Greater} {
		if a.String() == s {
			return a
		}
	}
	t.Fatalf("unknown alternative %q", s)
	return 0
}

func parseMethod(t *testing.T, s string) Method {
	for _, m := range []Method{Auto, Exact, Asymptotic} {
		if m.String() == s {
			return m
		}
	}
	t.Fatalf("unknown method %q", s)
	return 0
}

func parseCorrection(t *testing.T, s string) Correction {
	for _, c := range []Correction{TwoStageBH, BH, TwoStageBKY} {
		if c.String() == s {
			return c
		}
	}
	t.Fatalf("unknown correction %q", s)
	return 0
}

func TestFixtureVersions(t *testing.T) {
	f := loadFixtures(t)
	t.Logf("fixtures from SciPy %s, statsmodels %s", f.SciPy, f.Statsmodels)
	if f.SciPy == "" || f.Statsmodels == "" || len(f.MannWhitneyU) == 0 || len(f.Kruskal) == 0 ||
		len(f.Spearman) == 0 || len(f.MultipleTests) == 0 || len(f.Compare) == 0 {
		t.Fatal("fixtures incomplete")
	}
}
