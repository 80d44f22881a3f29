package main

import "golang.org/x/sys/cpu"

//go:noescape
func fmaLoop(n int)

// fmaFlopsPerIter is the float32 FLOPs of one fmaLoop iteration: 12 FMAs of 8 lanes, 2 each.
const fmaFlopsPerIter = 12 * 8 * 2

func haveFMA() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA }
