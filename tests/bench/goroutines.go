// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
//
// Goroutines burning CPU for the whole-stacks benchmark (tests/bench/walk.sh):
// each goroutine's stack ends at runtime.goexit. usage: goroutines SECONDS
package main

import (
	"os"
	"strconv"
	"sync"
	"time"
)

var sink uint64

//go:noinline
func spin(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func worker(end time.Time, wg *sync.WaitGroup) {
	defer wg.Done()
	x := uint64(1)
	for time.Now().Before(end) {
		x = spin(x, 100000)
	}
	sink += x
}

func main() {
	seconds, _ := strconv.ParseFloat(os.Args[1], 64)
	end := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go worker(end, &wg)
	}
	wg.Wait()
}
