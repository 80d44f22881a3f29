//go:build !amd64

package main

func fmaLoop(n int) {}

const fmaFlopsPerIter = 0

func haveFMA() bool { return false }
