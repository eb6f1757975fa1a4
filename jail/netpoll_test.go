package jail

import (
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
