package stats_test

import (
	"fmt"

	"github.com/hyperflat/hyperflat/stats"
)

func ExampleMannWhitneyU() {
	males := []float64{19, 22, 16, 29, 24}
	females := []float64{20, 11, 17, 12}
	r, _ := stats.MannWhitneyU(males, females, stats.MannWhitneyOptions{})
	fmt.Printf("U=%v p=%.4f (%v)\n", r.U, r.P, r.Method)
	r, _ = stats.MannWhitneyU(males, females, stats.MannWhitneyOptions{Method: stats.Asymptotic})
	fmt.Printf("U=%v p=%.4f (%v)\n", r.U, r.P, r.Method)
	// Output:
	// U=17 p=0.1111 (exact)
	// U=17 p=0.1113 (asymptotic)
}

func ExampleCompare() {
	groups := []stats.Group{
		{Name: "random", Values: []float64{0.81, 0.84, 0.80, 0.83, 0.82, 0.79, 0.85, 0.80}},
		{Name: "tpe", Values: []float64{0.86, 0.88, 0.85, 0.87, 0.89, 0.86, 0.84, 0.88}},
		{Name: "ours", Values: []float64{0.87, 0.90, 0.86, 0.89, 0.91, 0.88, 0.85, 0.90}},
	}
	// The paper's protocol: the zero options.
	c, _ := stats.Compare(groups, stats.CompareOptions{})
	fmt.Printf("Kruskal-Wallis p=%.4f\n", c.KruskalP)
	fmt.Printf("top: %s, significantly better than all: %v\n", c.Names[c.Top], c.TopSignificant)
	for i, name := range c.Names {
		fmt.Printf("%-6s mean=%.4f p(vs top)=%.4f best=%v\n", name, c.Means[i], c.Adjusted[c.Top][i], c.Best[i])
	}
	// Adjusting only the distinct pairs gives larger adjusted p-values.
	c, _ = stats.Compare(groups, stats.CompareOptions{UniquePairs: true})
	fmt.Printf("unique pairs: tpe vs ours p=%.4f, best=%v\n", c.Adjusted[1][2], c.Best)
	// Output:
	// Kruskal-Wallis p=0.0004
	// top: ours, significantly better than all: true
	// random mean=0.8175 p(vs top)=0.0004 best=false
	// tpe    mean=0.8662 p(vs top)=0.0307 best=false
	// ours   mean=0.8825 p(vs top)=0.0000 best=true
	// unique pairs: tpe vs ours p=0.0460, best=[false false true]
}
