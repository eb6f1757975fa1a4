package jail

import (
	"fmt"
	"slices"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Early is a jail's init cloned before its run is known: it makes its
// namespaces (the network one alone takes some 0.5 ms) while the caller
// reads its command line and policy. Run adopts it (Input.Early) when the
// policy wants what it made: new user, pid, mount, ipc, uts and network
// namespaces, for a one-shot run. Its first plan covers only that and its
// descriptors; the run's plan is written into the same memory before its
// release (complete), and the program's stdin, opened once known, comes
// with the cgroup's descriptors (joinFirst).
type Early struct {
	pid   int
	pidfd int32
	mono  time.Duration // CLOCK_MONOTONIC before the clone, for --debug's marks
	mem   *childMem
	cp    *childPlan // the init's first plan, in mem

	// The supervisor's ends of the pipes, and the child's numbers for its
	// own (closed here after the clone).
	syncW, ctlW, reportR, stdoutR, stderrR, sockS int
	syncR, ctlR, reportW, stdoutW, stderrW, sockC int

	done bool // adopted or discarded
}

// earlyRoom is what an early init's memory keeps for the run's plan, which
// holds the submitted file; a larger plan is given a new init. The mapping
// is shared and not reserved: only the pages the plan fills are used.
const earlyRoom = 8 << 20

// planMargin covers what the plan gains between adopt and complete: the
// seccomp program (at most 4096 instructions) and the listener's message.
const planMargin = 64 << 10

// StartEarly clones an init for a run still to be read. Discard it if no
// Run adopts it.
func StartEarly() (*Early, error) {
	e := &Early{syncW: -1, ctlW: -1, reportR: -1, stdoutR: -1, stderrR: -1, sockS: -1, syncR: -1, ctlR: -1, reportW: -1, stdoutW: -1, stderrW: -1, sockC: -1}
	ok := false
	defer func() {
		if !ok {
			e.closeFds()
		}
	}()
	for _, p := range []struct {
		r, w *int
		what string
	}{{&e.syncR, &e.syncW, "release"}, {&e.ctlR, &e.ctlW, "control"}, {&e.reportR, &e.reportW, "report"}, {&e.stdoutR, &e.stdoutW, "stdout"}, {&e.stderrR, &e.stderrW, "stderr"}} {
		var fds [2]int
		if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
			return nil, fmt.Errorf("pipe for %s: %w", p.what, err)
		}
		*p.r, *p.w = above2(fds[0]), above2(fds[1])
	}
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	e.sockS, e.sockC = above2(sp[0]), above2(sp[1])

	c := &childPlan{
		cloneArgs: cloneArgs{
			flags:      syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | unix.CLONE_PIDFD,
			exitSignal: uint64(syscall.SIGCHLD),
			pidfd:      uint64(uintptr(unsafe.Pointer(&e.pidfd))),
		},
		unshareFlags: earlyNamespaces,
		syncR:        e.syncR,
		reportW:      e.reportW,
		ctlR:         e.ctlR,
		stdio:        [3]int{-1, e.stdoutW, e.stderrW},
		notifySock:   e.sockC,
		keepFds:      []uintptr{uintptr(e.syncR), uintptr(e.reportW), uintptr(e.ctlR), uintptr(e.stdoutW), uintptr(e.stderrW), uintptr(e.sockC)},
	}
	slices.Sort(c.keepFds)
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	e.mono = time.Duration(ts.Nano())
	pid, cp, mem, err := forkChild(c, earlyRoom)
	if err != nil {
		if errno, isErrno := err.(syscall.Errno); isErrno {
			return nil, fmt.Errorf("clone3: %w%s", errno, cloneHint(errno))
		}
		return nil, err
	}
	e.pid, e.cp, e.mem = pid, cp, mem
	for _, fd := range []*int{&e.syncR, &e.ctlR, &e.reportW, &e.stdoutW, &e.stderrW, &e.sockC} {
		syscall.Close(*fd) // the init's now; the numbers stay, for its plan
	}
	ok = true
	return e, nil
}

// earlyNamespaces are those an early init makes, besides its user and pid
// namespaces: a policy with the host's network cannot adopt it.
const earlyNamespaces = syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWNET

// fits reports whether c, the run's plan before its filter, fits the
// room left in the init's memory.
func (e *Early) fits(c *childPlan) bool {
	sizing := childMem{off: e.mem.off}
	c.into(&sizing)
	return sizing.off+planMargin <= len(e.mem.mem)
}

// complete writes the run's plan into the init's memory, where it follows
// it once released, and returns that copy for settle.
func (e *Early) complete(c *childPlan) *childPlan {
	cp := e.mem.plan(c)
	e.cp.next = cp
	return cp
}

// Discard ends an init no run adopted: EOF on its release pipe, and it
// exits by itself; it is reaped here. Safe on nil, and after adoption.
func (e *Early) Discard() {
	if e == nil || e.done {
		return
	}
	e.done = true
	e.closeFds() // EOF on the release pipe first
	if e.pidfd > 0 {
		pfd := []unix.PollFd{{Fd: e.pidfd, Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(pfd, -1); err != unix.EINTR {
				break
			}
		}
	}
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(e.pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	if e.pidfd > 0 {
		syscall.Close(int(e.pidfd))
	}
	e.mem.free()
}

// closeFds closes the supervisor's ends, and the child's too while there
// is no child (after the clone its numbers are the init's, closed here
// already and perhaps reused since).
func (e *Early) closeFds() {
	ends := []*int{&e.syncW, &e.ctlW, &e.reportR, &e.stdoutR, &e.stderrR, &e.sockS}
	if e.pid == 0 {
		ends = append(ends, &e.syncR, &e.ctlR, &e.reportW, &e.stdoutW, &e.stderrW, &e.sockC)
	}
	for _, fd := range ends {
		if *fd >= 0 {
			syscall.Close(*fd)
		}
		*fd = -1
	}
}

// above2 moves fd to 3 or above, so that the child's dup3 onto 0-2 is safe.
func above2(fd int) int {
	if fd < 3 {
		if nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3); err == nil {
			syscall.Close(fd)
			return nfd
		}
	}
	return fd
}

// adopt takes the run's early init when it made the namespaces the policy
// wants and has room for the run's plan; otherwise it is discarded, and
// the run clones its own.
func (s *supervisor) adopt() *Early {
	e := s.in.Early
	if e == nil || e.done {
		return nil
	}
	if s.prepared || s.plan.unshareFlags != earlyNamespaces || !e.fits(s.plan) {
		s.log("the init started early does not fit this run: a new one")
		e.Discard()
		return nil
	}
	// The run's from here, whatever happens next: its descriptors are
	// closed, and it is reaped, with the run's (closeAll).
	e.done = true
	s.pid, s.pidfd, s.monoFork = e.pid, e.pidfd, e.mono
	s.fds = append(s.fds, e.syncW, e.ctlW, e.reportR, e.stdoutR, e.stderrR, e.sockS)
	return e
}
