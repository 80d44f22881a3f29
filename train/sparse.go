package train

import "github.com/hyperflat/hyperflat/datasets"

// Batches of mostly-zero rows. One-hot encoding every column of an OpenML table (the AHSC
// authors' preprocessing) gives rows of a few nonzeros among thousands of columns; copying
// them into a batch densely would read and convert every zero of every row at every step, as
// much work as the sparse first-layer product (graph's sparse path) that follows. A Trainer
// instead compresses such a dataset once and, at each step, clears the entries the previous
// batch set and writes the new nonzeros.

// sparseMaxFill: a dataset is compressed when at most 1 in sparseMaxFill of its features is
// nonzero (graph takes its sparse path at the same fill), and it is at least sparseMinWidth
// wide (narrower rows copy as fast as they compress).
const (
	sparseMaxFill  = 16
	sparseMinWidth = 64
)

// sparseRows is a dataset's features compressed by rows: row i's nonzeros are
// val[ptr[i]:ptr[i+1]] in columns col[ptr[i]:ptr[i+1]].
type sparseRows struct {
	ptr []int
	col []int32
	val []float64
}

// sparseCache remembers, per dataset a Trainer has seen, its compressed rows or that it is
// dense. A dataset is identified by its pointer and its feature array, which must not change
// while the Trainer uses it (as everywhere in this package).
type sparseCache map[sparseKey]*sparseRows

type sparseKey struct {
	ds *datasets.Dataset
	x  *float64
	n  int
}

// rows returns ds compressed, or nil when ds is not sparse enough.
func (c *sparseCache) rows(ds *datasets.Dataset) *sparseRows {
	if ds.D < sparseMinWidth || len(ds.X) == 0 {
		return nil
	}
	key := sparseKey{ds, &ds.X[0], len(ds.X)}
	if sp, ok := (*c)[key]; ok {
		return sp
	}
	if *c == nil {
		*c = sparseCache{}
	}
	sp := compressRows(ds)
	(*c)[key] = sp
	return sp
}

// compressRows compresses ds's features, or returns nil once they prove too dense.
func compressRows(ds *datasets.Dataset) *sparseRows {
	limit := len(ds.X) / sparseMaxFill
	sp := &sparseRows{ptr: make([]int, ds.N+1)}
	for i := 0; i < ds.N; i++ {
		for j, v := range ds.Row(i) {
			if v != 0 {
				if len(sp.col) == limit {
					return nil
				}
				sp.col = append(sp.col, int32(j))
				sp.val = append(sp.val, v)
			}
		}
		sp.ptr[i+1] = len(sp.col)
	}
	return sp
}
