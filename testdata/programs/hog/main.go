// Command hog is the workload of the limit tests: a static binary that
// needs nothing inside the jail, so the same tests run on any host and in
// the cgroup v2 test VM.
//
//	hog touch MiB     allocate MiB and touch every page, print "done"
//	hog bomb          allocate without end
//	hog spin N        spin on N processes (itself and N-1 copies), each
//	                  allowed every CPU, whatever affinity it inherited
//	hog forkbomb      start copies of itself without end
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: hog touch MiB | bomb | spin N | forkbomb")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "touch":
		n, _ := strconv.Atoi(os.Args[2])
		b := make([]byte, n<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println("done")
	case "bomb":
		var keep [][]byte
		for {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
		}
	case "spin":
		var all unix.CPUSet
		for i := 0; i < len(all)*64; i++ {
			all.Set(i)
		}
		unix.SchedSetaffinity(0, &all) // the kernel keeps the CPUs there are
		n, _ := strconv.Atoi(os.Args[2])
		for i := 1; i < n; i++ {
			if err := exec.Command("/proc/self/exe", "spin", "1").Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		for {
		}
	case "forkbomb":
		for {
			if _, err := syscall.ForkExec("/proc/self/exe", []string{"hog", "forkbomb"}, nil); err != nil {
				time.Sleep(10 * time.Millisecond)
			}
		}
	default:
		fmt.Fprintln(os.Stderr, "hog: unknown command", os.Args[1])
		os.Exit(2)
	}
}
