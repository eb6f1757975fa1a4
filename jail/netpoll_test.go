package jail

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// netPoll keeps ppoll's meaning: a timeout returns with nothing set, data
// and hang-up are reported, a descriptor dropped from the list is no longer
// watched (a pipe at EOF would otherwise wake every call), and a closed
// set fails.
func TestNetPoll(t *testing.T) {
	var a, b [2]int
	if err := syscall.Pipe2(a[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Pipe2(b[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(a[0])
	defer syscall.Close(b[0])
	defer syscall.Close(b[1])
	var np netPoll
	pfd := []unix.PollFd{{Fd: int32(a[0]), Events: unix.POLLIN}, {Fd: int32(b[0]), Events: unix.POLLIN}}
	wait := func(d time.Duration) (time.Duration, error) {
		ts := unix.NsecToTimespec(d.Nanoseconds())
		start := time.Now()
		err := np.poll(pfd, &ts)
		return time.Since(start), err
	}

	if took, err := wait(20 * time.Millisecond); err != nil || took < 20*time.Millisecond || pfd[0].Revents|pfd[1].Revents != 0 {
		t.Fatalf("nothing ready: took %v, err %v, revents %#x %#x", took, err, pfd[0].Revents, pfd[1].Revents)
	}
	syscall.Write(a[1], []byte("x"))
	if _, err := wait(time.Second); err != nil || pfd[0].Revents&unix.POLLIN == 0 || pfd[1].Revents != 0 {
		t.Fatalf("data on a: err %v, revents %#x %#x", err, pfd[0].Revents, pfd[1].Revents)
	}
	// A zero timeout looks without waiting: it returned nothing, its
	// deadline passed before the look.
	if _, err := wait(0); err != nil || pfd[0].Revents&unix.POLLIN == 0 || pfd[1].Revents != 0 {
		t.Fatalf("data on a, no wait: err %v, revents %#x %#x", err, pfd[0].Revents, pfd[1].Revents)
	}
	syscall.Read(a[0], make([]byte, 1))
	if took, err := wait(0); err != nil || took > 10*time.Millisecond || pfd[0].Revents|pfd[1].Revents != 0 {
		t.Fatalf("nothing ready, no wait: took %v, err %v, revents %#x %#x", took, err, pfd[0].Revents, pfd[1].Revents)
	}
	syscall.Close(a[1])
	if _, err := wait(time.Second); err != nil || pfd[0].Revents&unix.POLLHUP == 0 {
		t.Fatalf("a's writer closed: err %v, revents %#x", err, pfd[0].Revents)
	}
	pfd[0].Fd = -1 // at EOF: no longer watched
	if took, err := wait(20 * time.Millisecond); err != nil || took < 20*time.Millisecond || pfd[1].Revents != 0 {
		t.Fatalf("a dropped: took %v, err %v, revents %#x", took, err, pfd[1].Revents)
	}
	np.close()
	if _, err := wait(time.Millisecond); err == nil {
		t.Fatal("poll after close: no error")
	}
}

// A thread that waits in poll for a deadline does so with the caller's
// timer slack, whatever it had: a thread the runtime started from the
// entry's main thread has StartSlack. (The test binary has no entry: its
// slack is taken as the caller's.)
func TestNetPollSlack(t *testing.T) {
	if callerSlack == 0 || callerSlack == StartSlack {
		t.Skipf("the main thread's slack (%d) cannot tell the two apart", callerSlack)
	}
	entrySlack = callerSlack
	defer func() { entrySlack = 0 }()
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_SET_TIMERSLACK, callerSlack, 0)
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_SET_TIMERSLACK, StartSlack, 0); e != 0 {
		t.Fatal(e)
	}
	var np netPoll
	defer np.close()
	ts := unix.NsecToTimespec(time.Millisecond.Nanoseconds())
	if err := np.poll([]unix.PollFd{{Fd: int32(p[0]), Events: unix.POLLIN}}, &ts); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_GET_TIMERSLACK, 0, 0); got != callerSlack {
		t.Fatalf("the thread waited with a timer slack of %d ns, want the caller's, %d", got, callerSlack)
	}
}
