package jail

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The keeper removes the directories it was given once the process that
// cloned it has exited, and not before: in order (x/y before x), going on
// past one it cannot remove (z, which holds a file). Also when it cannot
// open a pidfd of that process (pidfd_open refused by a filter here), when
// it looks at its parent every millisecond instead.
func TestKeeperRemovesDirs(t *testing.T) {
	if dir := os.Getenv("GOJAIL_KEEPER_DIR"); dir != "" {
		runtime.LockOSThread() // the filter is this thread's, and the keeper's clone
		if os.Getenv("GOJAIL_KEEPER_NOPIDFD") != "" {
			refusePidfdOpen(t)
		}
		startKeeper() // holding no descriptor
		exitMu.Lock()
		running := keeperRunning
		if running {
			keeperRemovesDirs([]string{filepath.Join(dir, "x", "y"), filepath.Join(dir, "x"), filepath.Join(dir, "z"), filepath.Join(dir, "w")})
		}
		exitMu.Unlock()
		if !running {
			t.Fatal("no keeper")
		}
		time.Sleep(50 * time.Millisecond) // the keeper waits meanwhile
		if _, err := os.Stat(filepath.Join(dir, "w")); err != nil {
			t.Fatalf("removed while this process runs: %v", err)
		}
		os.Exit(0)
	}
	for _, pidfd := range []bool{true, false} {
		dir := t.TempDir()
		for _, d := range []string{"x", "x/y", "z", "z/keep", "w"} {
			if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestKeeperRemovesDirs$", "-test.count=1")
		cmd.Env = append(os.Environ(), "GOJAIL_KEEPER_DIR="+dir)
		if !pidfd {
			cmd.Env = append(cmd.Env, "GOJAIL_KEEPER_NOPIDFD=1")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
			_, errX := os.Stat(filepath.Join(dir, "x"))
			_, errW := os.Stat(filepath.Join(dir, "w"))
			if os.IsNotExist(errX) && os.IsNotExist(errW) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pidfd %v: x (%v) and w (%v) are still there a second after the process exited", pidfd, errX, errW)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "z", "keep")); err != nil {
			t.Fatalf("pidfd %v: a directory that is not empty lost its content: %v", pidfd, err)
		}
	}
}

// refusePidfdOpen loads a filter on this thread under which pidfd_open
// fails with ENOMEM.
func refusePidfdOpen(t *testing.T) {
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_PIDFD_OPEN},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(syscall.ENOMEM)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		t.Fatal(e)
	}
	if _, err := unix.PidfdOpen(os.Getpid(), 0); err != unix.ENOMEM {
		t.Fatalf("pidfd_open under the filter: %v", err)
	}
}
