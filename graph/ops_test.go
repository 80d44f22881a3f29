package graph

import (
	"context"
	"testing"
)

func TestOpsFirstAndSecondOrder(t *testing.T) {
	res, err := CheckOps(context.Background(), OpCases(), CheckOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		t.Logf("%-24s 1st %.2e  2nd %.2e", r.Name, r.First.MaxRelErr, r.Second.MaxRelErr)
		if !r.First.Passed {
			t.Errorf("%s first order: %v", r.Name, r.First)
		}
		if !r.Second.Passed {
			t.Errorf("%s second order: %v", r.Name, r.Second)
		}
	}
}
