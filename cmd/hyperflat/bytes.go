package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// parseBytes reads a size such as 512MiB, 2G, 1.5GiB, 800MB or 1048576: K, M, G, T and KiB…TiB
// are powers of 1024, KB…TB powers of 1000.
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRightFunc(t, func(r rune) bool { return r >= 'A' && r <= 'z' })
	unit := strings.ToUpper(strings.TrimSpace(t[len(num):]))
	mult := map[string]float64{"": 1, "B": 1, "K": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GIB": 1 << 30,
		"T": 1 << 40, "TIB": 1 << 40, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}[unit]
	x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if mult == 0 || err != nil || !(x > 0) || math.IsInf(x, 0) || x*mult > math.MaxInt64 {
		return 0, fmt.Errorf("%q: want a positive size such as 512MiB, 2GiB or 800MB", s)
	}
	return int64(x * mult), nil
}
