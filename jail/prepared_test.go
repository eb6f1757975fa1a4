package jail_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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

// A prepared jail's Input.Stdin is opened as a one-shot run's: nothing in
// /proc (this process's own environment, here), and a regular file's bytes
// reach the program. It was opened with os.Open, unchecked.
func TestPreparedStdin(t *testing.T) {
	p, before := baseline(t, 1)
	file := t.TempDir() + "/in.txt"
	if err := os.WriteFile(file, []byte("from a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(file), 0o755)
	for _, tc := range []struct {
		stdin, stdout string
		status        jail.Status
		error         string
	}{
		{"/proc/self/environ", "", jail.StatusInvalidInput, "--stdin /proc/self/environ is in /proc or /sys"},
		{file, "from a file\n", jail.StatusOK, ""},
	} {
		pj, err := jail.Prepare(context.Background(), &p, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := pj.Run(context.Background(), jail.Input{Program: "/bin/cat", Stdin: tc.stdin})
		pj.Wait()
		if r.Status != tc.status || r.Stdout != tc.stdout || !strings.HasPrefix(r.Error, tc.error) {
			t.Errorf("stdin %s: %s, stdout %q, error %q; want %s, %q, %q", tc.stdin, r.Status, r.Stdout, r.Error, tc.status, tc.stdout, tc.error)
		}
	}
	sameHost(t, before)
}

// A FIFO as a prepared jail's stdin whose writer never closes it: the copy
// into the jail ends with the run (it held the FIFO, the stdin pipe and a
// thread until the writer closed).
func TestPreparedStdinFIFOHeldOpen(t *testing.T) {
	p, _ := baseline(t, 1)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	fifo := dir + "/in"
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	fds := func() int {
		ents, _ := os.ReadDir("/proc/self/fd")
		return len(ents)
	}
	before := fds()
	opened := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			w.WriteString("x\n")
		}
		opened <- w
	}()
	pj, err := jail.Prepare(context.Background(), &p, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := pj.Run(context.Background(), jail.Input{Program: "/usr/bin/head", Args: []string{"-c", "2"}, Stdin: fifo})
	pj.Wait()
	w := <-opened
	defer w.Close()
	if r.Status != jail.StatusOK || r.Stdout != "x\n" {
		t.Fatalf("%s %q, stdout %q", r.Status, r.Error, r.Stdout)
	}
	deadline := time.Now().Add(2 * time.Second)
	for fds() > before+1 && time.Now().Before(deadline) { // +1: the writer's
		time.Sleep(10 * time.Millisecond)
	}
	if n := fds(); n > before+1 {
		t.Fatalf("%d descriptors open after the run, %d before it and the writer's: the copy still holds the FIFO", n, before+1)
	}
}

// A prepared jail's run ignores Input.Exiting: its caller serves more runs,
// and Wait returns with the jail torn down, as after any run (the keeper,
// had it been started, would have held the control pipe, and the init
// would never have seen its EOF).
func TestPreparedIgnoresExiting(t *testing.T) {
	p, before := baseline(t, 1)
	pj, err := jail.Prepare(context.Background(), &p, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := pj.Run(context.Background(), jail.Input{Program: "/bin/echo", Args: []string{"hi"}, Exiting: true})
	if r.Status != jail.StatusOK || r.Stdout != "hi\n" {
		t.Fatalf("run: %s %q %q", r.Status, r.Error, r.Stdout)
	}
	done := make(chan struct{})
	go func() { pj.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return within 5s of a run with Exiting")
	}
	sameHost(t, before)
	var ws syscall.WaitStatus
	if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG|unix.WALL, nil); err != syscall.ECHILD {
		t.Fatalf("a child is left: wait4 gave %d, %v", pid, err)
	}
}
