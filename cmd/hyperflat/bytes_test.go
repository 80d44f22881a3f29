package main

import "testing"

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"512MiB": 512 << 20, "2G": 2 << 30, "1.5GiB": 3 << 29, "800MB": 800e6, "1048576": 1 << 20, " 4 k ": 4096} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1G", "0", "NaN", "1e400", "3 apples", "Inf"} {
		if _, err := parseBytes(bad); err == nil {
			t.Errorf("parseBytes(%q) accepted", bad)
		}
	}
}
