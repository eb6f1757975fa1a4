// Command prepared measures gojail's prepared jails against the bare
// program run the same way: one request, or one bare run, every GAP, the
// two alternated, so that each finds the machine as idle as the other (a
// bare /bin/true run 20 ms after the last takes about twice as long here
// as one run back to back, as hyperfine runs it). It prints, in
// milliseconds, the medians of: the bare run (fork, exec and wait), the
// request's round trip as its client sees it (from writing the request to
// reading its result), gojail's own latency_ms (from reading the request
// to the result), and the paired difference round trip - bare.
//
//	go run ./testdata/bench/prepared N GAP GOJAIL [BATCH FLAGS...] -- PROGRAM
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"
)

func main() {
	sep := slices.Index(os.Args, "--")
	if len(os.Args) < 6 || sep < 4 || sep != len(os.Args)-2 {
		fail("usage: prepared N GAP GOJAIL [BATCH FLAGS...] -- PROGRAM")
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || n < 1 {
		fail("prepared: N must be a whole number of at least 1, not %q", os.Args[1])
	}
	gap, err := time.ParseDuration(os.Args[2])
	if err != nil {
		fail("prepared: GAP: %v", err)
	}
	program := os.Args[sep+1]
	batch := exec.Command(os.Args[3], append([]string{"batch"}, os.Args[4:sep]...)...)
	batch.Stderr = os.Stderr
	in, err := batch.StdinPipe()
	if err != nil {
		fail("prepared: %v", err)
	}
	outPipe, err := batch.StdoutPipe()
	if err != nil {
		fail("prepared: %v", err)
	}
	if err := batch.Start(); err != nil {
		fail("prepared: %v", err)
	}
	out := bufio.NewReader(outPipe)
	request, _ := json.Marshal(map[string]string{"program": program})
	request = append(request, '\n')

	var bare, trip, latency, diff []float64
	for i := 0; i < n+5; i++ { // the first five warm up
		var b, t, l float64
		for k := 0; k < 2; k++ {
			time.Sleep(gap)
			if (i+k)%2 == 0 {
				start := time.Now()
				if err := exec.Command(program).Run(); err != nil {
					fail("prepared: %s: %v", program, err)
				}
				b = ms(time.Since(start))
				continue
			}
			start := time.Now()
			if _, err := in.Write(request); err != nil {
				fail("prepared: write the request: %v", err)
			}
			line, err := out.ReadBytes('\n')
			t = ms(time.Since(start))
			if err != nil {
				fail("prepared: read the result: %v", err)
			}
			var r struct {
				Status    string  `json:"status"`
				LatencyMs float64 `json:"latency_ms"`
			}
			if err := json.Unmarshal(line, &r); err != nil || r.Status != "ok" {
				fail("prepared: result %q (%v)", line, err)
			}
			l = r.LatencyMs
		}
		if i >= 5 {
			bare, trip, latency, diff = append(bare, b), append(trip, t), append(latency, l), append(diff, t-b)
		}
	}
	in.Close()
	batch.Wait()
	fmt.Printf("%.3f %.3f %.3f %.3f\n", median(bare), median(trip), median(latency), median(diff))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
	os.Exit(2)
}
