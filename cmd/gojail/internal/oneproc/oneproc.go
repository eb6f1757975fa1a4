// Package oneproc gives the Go scheduler one P, from the first package
// initialisation on: the supervisor coordinates and mostly waits in system
// calls. With a second P idle, the runtime's monitor thread keeps waking
// (every 20 µs at first) through the first 10 ms of each blocking call
// before it hands the P off; with one, it hands it off at once and sleeps.
// Set here rather than in main, the change finds little to stop and undo
// (a P that has cached memory, threads started for the packages'
// goroutines), and costs 0.1-0.15 ms less.
//
// The monitor thread (sysmon) still polls every 20 µs while the
// supervisor is busy, each time a timer, a wake-up and two context
// switches, most often on the CPU the supervisor is using: a third of a
// run's context switches. Given a timer slack of 250 µs (monitorSlack) it
// polls less often and, in its sleeps' slack, with other timers. The
// runtime gives the monitor no name: it is the thread it starts first, the
// first id after the main thread's (ids are handed out in turn, and wrap
// around). Setting another thread's slack takes CAP_SYS_NICE: root's runs
// only. A thread the monitor starts inherits the slack, and so would a
// process cloned from it: a jail's init sets its own back to the main
// thread's (jail.callerSlack). A run's process does without it: its entry
// gives the main thread a slack of 10 ms while the runtime starts the
// monitor (jail.StartSlack), root or not, and the monitor keeps it.
package oneproc

import (
	"runtime"
	"syscall"
	"unsafe"
)

// monitorSlack is the monitor thread's timer slack: it lets the runtime take
// a P back from a blocked system call up to that much later, and a thread
// the monitor starts inherits it (a wall-clock limit's timer on that thread
// may come that much later).
const monitorSlack = "250000"

// entryStartSlack is jail.StartSlack, which this package cannot import
// (TestMonitorSlack checks both ways), and prGetTimerslack PR_GET_TIMERSLACK.
const (
	entryStartSlack = 10_000_000
	prGetTimerslack = 30
)

func init() {
	runtime.GOMAXPROCS(1)
	// A run's process whose entry gave the main thread jail.StartSlack
	// started the monitor with it.
	if slack, _, _ := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerslack, 0, 0); slack == entryStartSlack {
		return
	}
	if syscall.Geteuid() == 0 {
		if tid := monitorThread(); tid != "" {
			slackOf(tid, monitorSlack)
		}
	}
}

// monitorThread is the first thread id of this process after its pid, in
// the order ids are handed out (wrapping around), as a decimal string; ""
// if there is none.
func monitorThread() string {
	fd, err := syscall.Open("/proc/self/task", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer syscall.Close(fd)
	var buf [2048]byte
	pid := syscall.Getpid()
	low, lowName := 0, ""
	for {
		n, err := syscall.ReadDirent(fd, buf[:])
		if err != nil || n <= 0 {
			break
		}
		_, _, names := syscall.ParseDirent(buf[:n], -1, nil)
		for _, name := range names {
			id := 0
			for _, c := range name {
				if c < '0' || c > '9' {
					id = -1
					break
				}
				id = id*10 + int(c-'0')
			}
			if id > 0 && id != pid && (low == 0 || after(id, pid) < after(low, pid)) {
				low, lowName = id, name
			}
		}
	}
	return lowName
}

// after is how far id comes after pid in the order ids are handed out.
func after(id, pid int) int {
	if id > pid {
		return id - pid
	}
	return id - pid + 1<<31 // wrapped around: after every id above pid
}

// slackOf sets thread tid's timer slack, in nanoseconds (the file is the
// thread's own under /proc/TID, not under /proc/self/task/TID).
func slackOf(tid, ns string) {
	const atFDCWD = ^uintptr(99) // -100
	path := "/proc/" + tid + "/timerslack_ns\x00"
	fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(unsafe.StringData(path))), syscall.O_WRONLY|syscall.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return
	}
	syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.StringData(ns))), uintptr(len(ns)))
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
}
