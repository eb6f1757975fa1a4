package jail

import (
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// netPoll waits on the jail's descriptors through Go's own poller: an epoll
// set of ours, which the runtime's poller watches. A goroutine parked there
// leaves its P idle at once, where a thread blocked in ppoll holds it until
// the runtime's monitor takes it back, waking on a timer every 20 µs and
// starting a spare thread to hand it to, and is woken again when the call
// returns: on this 2-CPU machine that is CPU taken from the jail.
type netPoll struct {
	ep     int
	f      *os.File
	rc     syscall.RawConn
	reg    []int32 // the descriptors in the set
	ev     [8]unix.EpollEvent
	n      int                // events of the last epoll_wait
	wait   func(uintptr) bool // rc.Read's function, made once: a poll allocates nothing
	closed bool
}

// close closes the set; poll fails from then on.
func (np *netPoll) close() {
	if np.f != nil {
		np.f.Close()
	}
	np.closed = true
}

// poll is ppoll(pfd, timeout) (nil: none): it fills each entry's Revents,
// and returns with none set when timeout passes. Entries with a negative
// descriptor are ignored.
func (np *netPoll) poll(pfd []unix.PollFd, timeout *unix.Timespec) error {
	if err := np.watch(pfd); err != nil {
		return err
	}
	var deadline time.Time
	if timeout != nil {
		deadline = time.Now().Add(time.Duration(timeout.Nano()))
	}
	np.n = 0
	if timeout != nil && timeout.Nano() <= 0 {
		// A deadline already passed ends Read before it looks at all.
		np.wait(0)
	} else {
		// The thread that parks here waits for the deadline in the
		// runtime's poller: with the caller's slack, not the entry's
		// StartSlack, which a thread the runtime started may have (only
		// in a process whose entry set it: a library caller's threads
		// keep theirs).
		if timeout != nil && entrySlack != 0 {
			syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_SET_TIMERSLACK, entrySlack, 0)
		}
		np.f.SetReadDeadline(deadline)
		err := np.rc.Read(np.wait)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	for _, e := range np.ev[:max(np.n, 0)] {
		for i := range pfd {
			if pfd[i].Fd == e.Fd {
				pfd[i].Revents = int16(e.Events)
			}
		}
	}
	return nil
}

// watch makes the set hold pfd's descriptors, and only those (a pipe at EOF
// would otherwise report its hang-up on every call), making the set on its
// first call; it clears each entry's Revents. poll calls it; a caller may
// too ahead of time, so that the first poll has nothing to register.
func (np *netPoll) watch(pfd []unix.PollFd) error {
	if np.closed {
		return os.ErrClosed
	}
	if np.f == nil {
		ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return err
		}
		unix.SetNonblock(ep, true)
		np.ep, np.f = ep, os.NewFile(uintptr(ep), "epoll")
		if np.rc, err = np.f.SyscallConn(); err != nil {
			return err
		}
		np.wait = func(uintptr) bool {
			r, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(np.ep), uintptr(unsafe.Pointer(&np.ev[0])), uintptr(len(np.ev)), 0, 0, 0)
			np.n = int(r)
			if e != 0 {
				np.n = 0
			}
			return np.n > 0
		}
	}
	kept := np.reg[:0]
	for _, fd := range np.reg {
		if hasFd(pfd, fd) {
			kept = append(kept, fd)
		} else {
			unix.EpollCtl(np.ep, unix.EPOLL_CTL_DEL, int(fd), nil)
		}
	}
	np.reg = kept
	for i := range pfd {
		pfd[i].Revents = 0
		if fd := pfd[i].Fd; fd >= 0 && !hasFdIn(np.reg, fd) {
			if err := unix.EpollCtl(np.ep, unix.EPOLL_CTL_ADD, int(fd), &unix.EpollEvent{Events: uint32(pfd[i].Events), Fd: fd}); err != nil {
				return err
			}
			np.reg = append(np.reg, fd)
		}
	}
	return nil
}

func hasFd(pfd []unix.PollFd, fd int32) bool {
	for i := range pfd {
		if pfd[i].Fd == fd {
			return true
		}
	}
	return false
}

func hasFdIn(fds []int32, fd int32) bool {
	for _, f := range fds {
		if f == fd {
			return true
		}
	}
	return false
}
