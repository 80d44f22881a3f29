//go:build !amd64

package main

func fmaLoop(n int) {}

const fmaFlopsPerIter = 0

func haveFMA() bool { return false }

func peakLoop() (func(int), float64, string) { return fmaLoop, fmaFlopsPerIter, "none" }

func cpuFeatures() string { return "not amd64" }
