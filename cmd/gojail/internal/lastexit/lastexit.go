// Package lastexit ends the process without making its caller wait for
// the teardown of its address space.
//
// A process's exit frees its memory before its parent is told: for the
// supervisor, a Go program with its runtime's threads and heap, that is
// some 80 µs of every run's latency (a static C program takes a third of
// it). Exit first clones a keeper, a process that shares this one's memory
// and nothing else: the supervisor's exit then only drops its hold on the
// memory, its parent learns of it at once, and the keeper, which waits on
// a pidfd for the whole thread group to be gone, frees it as it exits in
// turn. The keeper runs only the few instructions in keeper_amd64.s: it
// closes its copy of every descriptor at once (the caller's pipes close
// with the supervisor's own exit, not with the keeper's), and it exits,
// without a signal to anyone, as soon as the supervisor has, or at once if
// the supervisor is gone already. Its parent then is the host's reaper
// (or the caller, if it is a subreaper), which reaps it as it would the
// jail's init (jail.Input.Exiting).
package lastexit

import (
	"os"
	"syscall"
	_ "unsafe" // go:linkname
)

//go:linkname runtime_BeforeFork syscall.runtime_BeforeFork
func runtime_BeforeFork()

//go:linkname runtime_AfterFork syscall.runtime_AfterFork
func runtime_AfterFork()

// keeper clones the keeper, which polls pfd for process ppid's end; in
// keeper_amd64.s.
func keeper(ppid uintptr, pfd *pollFd) (pid uintptr, errno syscall.Errno)

// pollFd is struct pollfd.
type pollFd struct {
	fd              int32
	events, revents int16
}

// keeperPoll is the keeper's pollfd. The keeper shares this process's
// memory and uses nothing else of it: it needs no stack.
var keeperPoll = pollFd{events: 1} // POLLIN

// Exit exits with code; see the package's comment. If the keeper cannot
// be cloned (a process limit), the exit is as usual.
func Exit(code int) {
	runtime_BeforeFork() // every signal blocked, as the keeper then has them
	keeper(uintptr(syscall.Getpid()), &keeperPoll)
	runtime_AfterFork()
	os.Exit(code)
}
