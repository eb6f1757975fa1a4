package jail_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gojail/gojail/jail"
)

// A prepared jail serves one run. Close after Run (a deferred Close) does
// nothing: Run's teardown has the jail, and a second teardown would close
// descriptor numbers the caller has opened since. A second Run is refused.
func TestPreparedOnce(t *testing.T) {
	p, before := baseline(t, 1)
	for i := 0; i < 10; i++ {
		pj, err := jail.Prepare(context.Background(), &p, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := pj.Run(context.Background(), jail.Input{Program: "/bin/true"})
		if r.Status != jail.StatusOK {
			t.Fatalf("run: %s %s", r.Status, r.Error)
		}
		pj.Close()
		// Descriptors the caller opens now, perhaps with the numbers the
		// jail's teardown is about to close: they must stay open.
		var mine [8]int
		for j := range mine {
			var p [2]int
			if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
				t.Fatal(err)
			}
			syscall.Close(p[1])
			mine[j] = p[0]
		}
		pj.Wait()
		time.Sleep(20 * time.Millisecond)
		for _, fd := range mine {
			if _, err := fcntlGetfd(fd); err != nil {
				t.Fatalf("run %d: the caller's descriptor %d was closed by the jail's teardown", i, fd)
			}
			syscall.Close(fd)
		}
		again := pj.Run(context.Background(), jail.Input{Program: "/bin/true"})
		if again.Status != jail.StatusInternalError || !strings.Contains(again.Error, "serves one run") {
			t.Fatalf("second run: %s %q, want internal_error, serves one run", again.Status, again.Error)
		}
	}
	sameHost(t, before)
}

func fcntlGetfd(fd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// Preparing gives up when its context is done (a batch told to stop): an
// error, and the half-made jail torn down.
func TestPrepareCancelled(t *testing.T) {
	p, before := baseline(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	pj, err := jail.Prepare(ctx, &p, nil)
	if err == nil || !strings.Contains(err.Error(), "cancelled") {
		if pj != nil {
			pj.Close()
		}
		t.Fatalf("Prepare with a cancelled context: %v, want the setup cancelled", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("Prepare took %v to give up", took)
	}
	sameHost(t, before)
}
