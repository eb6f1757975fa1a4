package jail

import (
	"os"
	"slices"
	"sync"
	"syscall"
	"unsafe"

	"github.com/gojail/gojail/limits"
)

// Exit ends the calling process with code, for a caller that ran its jails
// with Input.Exiting, without making its own caller wait for what is left
// to undo.
//
// A process's exit frees its memory and closes its descriptors before its
// parent is told. For a supervisor, a Go program with its runtime's threads
// and heap, the memory alone is some 80 µs (a static C program takes a
// third of it); the last run's seccomp listener frees the filter, whose
// compiled program's memory is given back on every CPU (hundreds of
// microseconds, in a virtual machine); and its control pipe lets the jail's
// init exit, which tears down the jail's namespaces. The run's cgroup,
// empty by then, takes some tens of microseconds to remove. Exit first
// clones a keeper (if a run has not cloned it already, startKeeper): a
// process that shares this one's memory and holds those two descriptors
// and no other: its copy of every other descriptor, the caller's pipes
// among them, is closed at once. The supervisor's exit then drops its hold
// on them, its parent is told at once, and the keeper, which waits on a
// pidfd for this whole process to be gone, removes the run's cgroup
// (keeperRemoves) and undoes the rest as it exits in turn. It runs
// only the instructions in exit_amd64.s, with every signal blocked, and
// exits with status 0. Its parent is then the host's init (or the caller,
// if it is a subreaper), which reaps it as it does the jail's init. Only
// after a run that left its end to it (claimExit); if it cannot be cloned
// (a process limit), the exit is as usual.
func Exit(code int) {
	exitMu.Lock()
	claimed := exitClaimed
	exitMu.Unlock()
	if claimed {
		startKeeper()
	}
	os.Exit(code)
}

// claimExit reports whether a run may leave its end to Exit (Input.Exiting):
// the first run of the process that asks, and only in the host's pid
// namespace, whose init reaps the keeper and the run's init once they are
// orphaned to it (a container's init, or a caller that is a subreaper, may
// not).
func claimExit() bool {
	exitMu.Lock()
	defer exitMu.Unlock()
	if exitClaimed || keeperStarted || !hostPidNS() {
		return false
	}
	exitClaimed = true
	return true
}

// hostPidNS: this process is in the initial pid namespace, whose number
// the kernel fixes (PROC_PID_INIT_INO).
var hostPidNS = sync.OnceValue(func() bool {
	var buf [32]byte
	n, err := syscall.Readlink("/proc/self/ns/pid", buf[:])
	return err == nil && string(buf[:n]) == "pid:[4026531836]"
})

// startKeeper clones the keeper, once, holding the descriptors keep (a
// negative one is none). A run
// whose caller exits after it (Input.Exiting) starts it as soon as it
// holds what the keeper keeps, while the jail's program starts, rather
// than on the way to the exit (the clone is some 40 µs).
func startKeeper(keep ...int) {
	exitMu.Lock()
	defer exitMu.Unlock()
	if keeperStarted {
		return
	}
	keeperStarted = true
	slices.Sort(keep)
	// What the keeper closes: every range between the kept descriptors.
	n, lo := 0, 0
	for _, fd := range keep {
		if fd < lo || n == len(keeperClose)-1 {
			// A duplicate or none, or too many to keep: closed.
			continue
		}
		if fd > lo {
			keeperClose[n] = [2]uintptr{uintptr(lo), uintptr(fd - 1)}
			n++
		}
		lo = fd + 1
	}
	keeperClose[n] = [2]uintptr{uintptr(lo), ^uintptr(0)}
	runtime_BeforeFork() // every signal blocked, as the keeper then has them
	pid, _ := keeper(uintptr(syscall.Getpid()), &keeperPoll, &keeperClose[0], uintptr(n+1))
	runtime_AfterFork()
	keeperRunning = pid != 0
}

// keeperRemoves leaves the removal of cg, which holds no process, to the
// keeper, which removes its directories once this process is gone; false
// (the caller removes it) when no keeper runs, or it has some already.
func keeperRemoves(cg limits.Cgroup) bool {
	exitMu.Lock()
	defer exitMu.Unlock()
	if !keeperRunning || keeperRmdir[0] != 0 {
		return false
	}
	keeperRemovesDirs(cg.Leave())
	return true
}

// keeperRemovesDirs gives the keeper dirs to remove (as many as it has
// room for, seven, more than a run has: any other would be left to a later
// run's sweep). exitMu is held.
func keeperRemovesDirs(dirs []string) {
	for i, d := range dirs[:min(len(dirs), len(keeperRmdir)-1)] {
		b := append([]byte(d), 0)
		keeperPaths = append(keeperPaths, b)
		keeperRmdir[i] = uintptr(unsafe.Pointer(&b[0]))
	}
}

var (
	exitMu        sync.Mutex
	exitClaimed   bool // a run leaves its end to Exit (claimExit)
	keeperStarted bool
	keeperRunning bool     // cloned: it will remove keeperRmdir's directories
	keeperPaths   [][]byte // keeperRmdir's strings, kept from the collector
)

// keeper clones the keeper, which closes the n ranges of descriptors at
// ranges, polls pfd for process ppid's end, then removes the directories
// of keeperRmdir; in exit_amd64.s.
func keeper(ppid uintptr, pfd *pollFd, ranges *[2]uintptr, n uintptr) (pid uintptr, errno syscall.Errno)

// pollFd is struct pollfd.
type pollFd struct {
	fd              int32
	events, revents int16
}

// The keeper's variables. It shares this process's memory and uses
// nothing else of it: it needs no stack.
var (
	keeperPoll  = pollFd{events: 1} // POLLIN
	keeperClose [9][2]uintptr       // first and last descriptor of each range it closes
	keeperRmdir [8]uintptr          // the directories it removes (NUL-terminated paths), up to a 0
	keeperNap   = [2]int64{0, 1e6}  // struct timespec: 1 ms, between looks at its parent without a pidfd
)
