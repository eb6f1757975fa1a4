// Command pair measures two commands run in turn, one run of each at a
// time (A then B, then B then A, ...), and prints each one's median wall
// time and the median of the paired differences B - A, in milliseconds. A
// drift of the machine during the measurement falls on both alike, where a
// run of hyperfine measures one command's runs after the other's.
//
//	go run ./testdata/bench/pair N A [ARGS...] :: B [ARGS...]
package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) < 5 {
		fail("usage: pair N A [ARGS...] :: B [ARGS...]")
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || n < 1 {
		fail("pair: N must be a whole number of at least 1, not %q", os.Args[1])
	}
	sep := slices.Index(os.Args, "::")
	if sep < 3 || sep == len(os.Args)-1 {
		fail("pair: want A [ARGS...] :: B [ARGS...]")
	}
	a, b := os.Args[2:sep], os.Args[sep+1:]
	for i := 0; i < min(n, 10); i++ { // warm-up
		run(a)
		run(b)
	}
	var ta, tb, d []float64
	for i := 0; i < n; i++ {
		var x, y float64
		if i%2 == 0 {
			x = run(a)
			y = run(b)
		} else {
			y = run(b)
			x = run(a)
		}
		ta, tb, d = append(ta, x), append(tb, y), append(d, y-x)
	}
	fmt.Printf("%.3f %.3f %.3f\n", median(ta), median(tb), median(d))
}

// run runs a command once and returns its wall time in milliseconds.
func run(argv []string) float64 {
	cmd := exec.Command(argv[0], argv[1:]...)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		if _, exited := err.(*exec.ExitError); !exited {
			fail("pair: %q: %v", argv, err)
		}
	}
	return float64(time.Since(start).Microseconds()) / 1000
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
	os.Exit(2)
}
