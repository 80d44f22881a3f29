package datasets

import (
	"context"
	"embed"
	"fmt"
	"slices"
)

// embedded holds scikit-learn's bundled iris, wine, breast cancer and digits files
// (BSD-3-Clause; the notice is embedded/LICENSE), byte-identical to the registry's files.
//
//go:embed embedded/iris.csv embedded/wine_data.csv embedded/breast_cancer.csv embedded/digits.csv.gz embedded/LICENSE
var embedded embed.FS

// EmbeddedNames returns the registry datasets compiled into the package: breast, digits,
// iris and wine.
func EmbeddedNames() []string {
	return []string{"breast", "digits", "iris", "wine"}
}

func isEmbedded(name string) bool { return slices.Contains(EmbeddedNames(), name) }

// LoadEmbedded returns one of the datasets compiled into the package (see [EmbeddedNames]),
// exactly as [Load] reads it from a data directory, but with no data directory. These
// datasets have no official test split.
func LoadEmbedded(name string) (*Dataset, error) {
	in, ok := Lookup(name)
	if !ok || !isEmbedded(name) {
		return nil, fmt.Errorf("datasets: no embedded dataset %q (embedded: %v)", name, EmbeddedNames())
	}
	o := &opener{ctx: context.Background(), fsys: embedded, files: in.Files}
	train, test, err := in.load(o)
	if err != nil {
		return nil, err
	}
	if err := in.check(train, test); err != nil {
		return nil, err
	}
	return train, nil
}
