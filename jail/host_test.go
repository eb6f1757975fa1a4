package jail

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCountCPUs(t *testing.T) {
	for list, want := range map[string]int{
		"0": 1, "0-1": 2, "0-3,8,10-11": 7, "0,2,4": 3,
		"": 0, "x": 0, "3-1": 0, "0-": 0, "-1": 0, "0,,1": 0,
	} {
		if got := countCPUs(list); got != want {
			t.Errorf("countCPUs(%q) = %d, want %d", list, got, want)
		}
	}
}

// jailCPUs counts the CPUs this process could widen its affinity to, not
// those it has, and leaves its affinity as it was. (countJailCPUs itself:
// jailCPUs keeps the first count, which another test's run may have taken
// with every CPU.)
func TestJailCPUs(t *testing.T) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Skip(err)
	}
	online := countCPUs(strings.TrimSpace(string(b)))
	if online < 2 {
		t.Skip("one CPU online: nothing to narrow")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var own, one, after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &own); err != nil {
		t.Fatal(err)
	}
	one.Set(0)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetaffinity(0, &own)
	if n := countJailCPUs(); n < 2 || n > online {
		t.Errorf("countJailCPUs() = %d from a thread on CPU 0 alone, want 2 to %d (online)", n, online)
	}
	if unix.SchedGetaffinity(0, &after); after != one {
		t.Errorf("affinity after jailCPUs: %v, want it left at CPU 0 alone", after)
	}
}

// The first CPU check is timed with cpuBound, which must be at least the
// jail's CPUs: a check timed with fewer could come after the tree had used
// its limit. It is the possible CPUs where the kernel lists them, and
// maskBound, its fallback, is a whole number of mask words.
func TestCPUBound(t *testing.T) {
	b, m, n := cpuBound(), maskBound(), countJailCPUs()
	if b < n || m < n || m%64 != 0 {
		t.Fatalf("cpuBound() = %d, maskBound() = %d: want both at least countJailCPUs() = %d, and maskBound a multiple of 64", b, m, n)
	}
	possible, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		t.Skipf("cpuBound is maskBound here: %v", err)
	}
	if want := max(countCPUs(strings.TrimSpace(string(possible))), runtime.NumCPU()); b != want {
		t.Errorf("cpuBound() = %d, want %d, the CPUs of /sys/devices/system/cpu/possible (%q)", b, want, strings.TrimSpace(string(possible)))
	}
}
