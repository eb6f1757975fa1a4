package jail

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/gojail/gojail/policy"
)

// A prepared jail is ready to wait before its request: its output pipes
// are non-blocking, its filter's listener taken (the default profile is
// loaded early), and the poll set made with the three pipes and the
// listener. Its pid 2 reads the program to the command's own length: with
// the go pipe's write end still open, the program runs at once (it waited
// for the pipe's EOF before, here the wall-clock limit).
func TestPreparedArmedAndCommandLength(t *testing.T) {
	p, err := policy.Preset("exec")
	if err != nil {
		t.Fatal(err)
	}
	p.Limits.WallTime = policy.Duration(2 * time.Second)
	ctx := context.Background()
	pj, err := Prepare(ctx, &p, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := pj.s
	defer func() {
		s.closeCtl()
		s.reap()
		s.closeAll()
	}()
	pj.taken.Store(true) // this test runs the jail itself
	if !s.armed || !s.sockDone || s.listener < 0 || len(s.np.reg) != 4 {
		t.Errorf("armed %v, listener's message taken %v, listener %d, %d descriptors in the poll set; want true, true, a descriptor, 4", s.armed, s.sockDone, s.listener, len(s.np.reg))
	}
	for i, r := range []int{pj.fds.stdoutR, pj.fds.stderrR} {
		if fl, err := fcntlFlags(r); err != nil || fl&syscall.O_NONBLOCK == 0 {
			t.Errorf("output pipe %d's read end blocks (flags %#x, %v)", i+1, fl, err)
		}
	}

	cmd, err := pj.command(Input{Program: "/bin/echo", Args: []string{"hi"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	s.started = time.Now()
	if _, err := writeAll(s.goW, cmd); err != nil {
		t.Fatal(err)
	}
	r := s.watch(ctx, pj.fds) // the go pipe still open
	syscall.Close(s.takeFd(s.goW))
	if r.Status != StatusOK || r.Stdout != "hi\n" || r.WallMs > 1000 {
		t.Fatalf("%s %q, stdout %q, wall %.1f ms; want ok, \"hi\\n\", well under the 2 s limit", r.Status, r.Error, r.Stdout, r.WallMs)
	}
}

func fcntlFlags(fd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
