package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/jail"
)

func TestPresetsHelloWorld(t *testing.T) {
	dir := tempDir(t)
	tests := []struct {
		file, text string
		flags      []string
		want       string
	}{
		{"hello.py", "print('hello from python')", nil, "hello from python\n"},
		{"hello.js", "console.log('hello from node')", nil, "hello from node\n"},
		{"hello.sh", "echo hello from $BASH_VERSION", nil, "hello from " + bashVersion(t) + "\n"},
		{"hello.sh", "echo hello from sh; echo ${BASH_VERSION:-no bash}", []string{"--policy", "sh"}, "hello from sh\nno bash\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.flags, " ")+tc.file, func(t *testing.T) {
			o := gojail(t, append(tc.flags, writeFile(t, dir, tc.file, tc.text, 0o644))...)
			o.want(t, jail.StatusOK, 0)
			if o.res.Stdout != tc.want {
				t.Fatalf("stdout %q, want %q", o.res.Stdout, tc.want)
			}
		})
	}
	t.Run("exec runs a compiled binary", func(t *testing.T) {
		bin := compile(t, `#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) { printf("hello from C, pid %d, %s\n", getpid(), argc > 1 ? argv[1] : "-"); return 0; }`)
		o := gojail(t, "--policy", "exec", bin, "arg1")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "hello from C, pid 2, arg1\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
	})
	t.Run("exec -- runs a program inside the jail", func(t *testing.T) {
		o := gojail(t, "--", "echo", "hello", "from", "echo")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "hello from echo\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
	})
}

func TestInputs(t *testing.T) {
	dir := tempDir(t)
	t.Run("arguments reach the program", func(t *testing.T) {
		o := gojail(t, writeFile(t, dir, "args.py", "import sys; print(sys.argv[1:])", 0o644), "a b", "--c")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "['a b', '--c']\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
	})
	t.Run("the file is a copy in the work directory", func(t *testing.T) {
		o := gojail(t, writeFile(t, dir, "where.py", "import os; print(os.path.abspath(__file__), os.getcwd(), os.stat(__file__).st_uid)", 0o644))
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "/work/main.py /work 1000\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
	})
	t.Run("stdin is empty by default", func(t *testing.T) {
		o := py(t, "import sys; print(repr(sys.stdin.read()))")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "''\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
	})
	t.Run("--stdin FILE", func(t *testing.T) {
		in := writeFile(t, dir, "input.txt", "3 4\n", 0o644)
		o := py(t, "a, b = map(int, input().split()); print(a * b)", "--stdin", in)
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "12\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
	})
	// The program gets a copy: the host's file, reopened for writing
	// through /proc/self/fd/0 or changed through fd 0, would be written
	// with the jail user's rights on the host (rootless: the caller's).
	t.Run("--stdin FILE cannot be written, chmod'ed or touched through the program's stdin", func(t *testing.T) {
		// Writable by all: as root, the jail's user is no owner of a file.
		in := writeFile(t, dir, "shared-input.txt", "3 4\n", 0o644)
		if err := os.Chmod(in, 0o666); err != nil {
			t.Fatal(err)
		}
		before, err := os.Stat(in)
		if err != nil {
			t.Fatal(err)
		}
		o := py(t, `import os, sys
def t(f):
    try:
        f()
        return 'done'
    except OSError as e:
        return 'refused'
print(sys.stdin.read().split(), os.fstat(0).st_size)
print(t(lambda: open('/proc/self/fd/0', 'w').write('X')), t(lambda: os.write(0, b'X')), t(lambda: os.ftruncate(0, 0)))
os.lseek(0, 0, 0)
print(sys.stdin.buffer.raw.read())
try:
    os.fchmod(0, 0o4777)
    os.utime(0, (0, 0))
except OSError:
    pass`, "--stdin", in)
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "['3', '4'] 4\nrefused refused refused\nb'3 4\\n'\n" {
			t.Fatalf("stdout %q\nstderr %s", o.res.Stdout, o.res.Stderr)
		}
		after, err := os.Stat(in)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(in); string(b) != "3 4\n" || after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) {
			t.Fatalf("the host's file changed: %q, mode %v -> %v, mtime %v -> %v", b, before.Mode(), after.Mode(), before.ModTime(), after.ModTime())
		}
	})
	t.Run("--stdin in /proc is refused", func(t *testing.T) {
		for _, p := range []string{"/proc/self/environ", "/proc/self/fd/1", "/proc/1/status"} {
			o := py(t, "print(1)", "--stdin", p)
			o.want(t, jail.StatusInvalidInput, 125)
		}
	})
	// --stdin - passes gojail's own stdin on: a pipe as itself, a file as
	// a sealed copy of what is left of it (seekable, its size known).
	t.Run("--stdin - is gojail's own stdin", func(t *testing.T) {
		o := gojailWith(t, runOpts{stdin: "3 4\n"}, "--stdin", "-", "-c", "import os, stat; a, b = map(int, input().split()); print(stat.S_ISFIFO(os.fstat(0).st_mode), a * b)")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "True 12\n" {
			t.Fatalf("a pipe: stdout %q, want True 12", o.res.Stdout)
		}
		f, err := os.Open(writeFile(t, tempDir(t), "in.txt", "skipped\n5 6\n", 0o644))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.Seek(8, io.SeekStart) // what is left of it
		o = gojailWith(t, runOpts{stdinFile: f}, "--stdin", "-", "-c", "import os, sys, stat; st = os.fstat(0); print(stat.S_ISREG(st.st_mode), st.st_size, sys.stdin.read().split())")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "True 4 ['5', '6']\n" {
			t.Fatalf("a file: stdout %q, want a sealed copy of its last 4 bytes", o.res.Stdout)
		}
		// A pipe is opened anew: the program shares no flags with the
		// caller's (it got the caller's own, O_NONBLOCK both ways).
		var pp [2]int
		if err := unix.Pipe2(pp[:], unix.O_CLOEXEC); err != nil { // blocking, as os.Pipe's are not
			t.Fatal(err)
		}
		pr := os.NewFile(uintptr(pp[0]), "pipe")
		defer pr.Close()
		unix.Write(pp[1], []byte("piped\n"))
		unix.Close(pp[1])
		o = gojailWith(t, runOpts{stdinFile: pr}, "--stdin", "-", "-c", "import os, sys; os.set_blocking(0, False); print(sys.stdin.read().strip())")
		o.want(t, jail.StatusOK, 0)
		fl, _ := unix.FcntlInt(uintptr(pp[0]), unix.F_GETFL, 0)
		if nb := fl&unix.O_NONBLOCK != 0; o.res.Stdout != "piped\n" || nb {
			t.Fatalf("a pipe: stdout %q; the caller's end non-blocking after the run: %v", o.res.Stdout, nb)
		}
		// A socket (what Node gives its children) as a sealed copy of what
		// it brings until its end.
		sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Write(sp[1], []byte("from a socket\n"))
		unix.Close(sp[1])
		sock := os.NewFile(uintptr(sp[0]), "socket")
		defer sock.Close()
		o = gojailWith(t, runOpts{stdinFile: sock}, "--stdin", "-", "-c", "import os, stat, sys; print(stat.S_ISREG(os.fstat(0).st_mode), sys.stdin.read().strip())")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "True from a socket\n" {
			t.Fatalf("a socket: stdout %q", o.res.Stdout)
		}
	})
	// A pipe of another user's (gojail run under setpriv, fed by its
	// root parent) cannot be opened anew (EACCES): it is passed as it is.
	t.Run("--stdin - of another user's pipe", func(t *testing.T) {
		if !isRoot() {
			t.Skip("needs root, to run gojail as another user than its stdin pipe's")
		}
		cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", gojailBin, "run", "--json", "--stdin", "-", "-c", "import sys; print(sys.stdin.read().strip())")
		cmd.Stdin = strings.NewReader("theirs\n")
		out, err := cmd.Output()
		var r jail.Result
		if json.Unmarshal(out, &r) != nil {
			t.Skipf("gojail as uid 65534: %v, %q (its binary out of that user's reach?)", err, out)
		}
		if err != nil || r.Status != jail.StatusOK || r.Stdout != "theirs\n" {
			t.Fatalf("%v: %s %q, stdout %q", err, r.Status, r.Error, r.Stdout)
		}
	})
	// A terminal (the caller's /dev/tty, say) would be shared with the
	// jail: its settings, its pending input. A pty's other end stands in.
	t.Run("--stdin terminal is refused", func(t *testing.T) {
		ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
		if err != nil {
			t.Skipf("no pseudo-terminals here: %v", err)
		}
		defer ptmx.Close()
		if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
			t.Skipf("unlockpt: %v", err)
		}
		n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
		if err != nil {
			t.Skipf("ptsname: %v", err)
		}
		pts := fmt.Sprintf("/dev/pts/%d", n)
		o := py(t, "print(1)", "--stdin", pts)
		o.want(t, jail.StatusInvalidInput, 125)
		if want := "--stdin " + pts + " is a terminal"; !strings.HasPrefix(o.res.Error, want) {
			t.Fatalf("error %q, want it to start %q", o.res.Error, want)
		}
		tty, err := os.OpenFile(pts, os.O_RDWR|syscall.O_NOCTTY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer tty.Close()
		o = gojailWith(t, runOpts{stdinFile: tty}, "--stdin", "-", "-c", "print(1)")
		o.want(t, jail.StatusInvalidInput, 125)
		if want := "--stdin -: gojail's own stdin is a terminal"; !strings.HasPrefix(o.res.Error, want) {
			t.Fatalf("error %q, want it to start %q", o.res.Error, want)
		}
	})
	// A FIFO is opened once, by the run: a second open (validation's) would
	// take the writer's data or its only open, and the run's would wait for
	// another writer. Ten times: the writer may close before or after.
	t.Run("--stdin FIFO", func(t *testing.T) {
		fifo := filepath.Join(dir, "fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ {
			go func() {
				if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					f.WriteString("from a fifo\n")
					f.Close()
				}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			out, err := exec.CommandContext(ctx, gojailBin, "run", "--stdin", fifo, "--", "/bin/cat").Output()
			cancel()
			if err != nil || string(out) != "from a fifo\n" {
				t.Fatalf("run %d: stdout %q, %v (want the writer's line, within 10s)", i, out, err)
			}
		}
	})
	// With no writer, the wait ends at the wall-clock limit, with a
	// refusal that names the FIFO: before, gojail waited for ever, whatever
	// its --timeout.
	t.Run("--stdin FIFO with no writer", func(t *testing.T) {
		fifo := filepath.Join(dir, "lonely")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		o := py(t, "print(1)", "--timeout", "300ms", "--stdin", fifo)
		took := time.Since(start)
		o.want(t, jail.StatusInvalidInput, 125)
		if want := "--stdin " + fifo + ": no writer wrote to the FIFO (or closed it) within the wall-clock limit (300ms)"; !strings.HasPrefix(o.res.Error, want) {
			t.Errorf("error %q, want it to start %q", o.res.Error, want)
		}
		if took < 300*time.Millisecond || took > 5*time.Second {
			t.Errorf("gojail took %v, want the 300ms limit and little more", took)
		}
	})
	// The FIFO and a device reach the program blocking, as a shell's < would
	// give them (the run opens the FIFO without waiting, and waits for its
	// writer's data).
	t.Run("--stdin FIFO and device are blocking", func(t *testing.T) {
		fifo := filepath.Join(dir, "slow")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		go func() {
			if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				time.Sleep(200 * time.Millisecond) // the run waits for this
				f.WriteString("late\n")
				f.Close()
			}
		}()
		code := "import os, sys; b = os.get_blocking(0); print(b, repr(sys.stdin.read()))"
		o := py(t, code, "--stdin", fifo)
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "True 'late\\n'\n" {
			t.Errorf("FIFO: stdout %q, want a blocking stdin and the writer's line", o.res.Stdout)
		}
		o = py(t, code, "--stdin", "/dev/null")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "True ''\n" {
			t.Errorf("/dev/null: stdout %q, want a blocking stdin at EOF", o.res.Stdout)
		}
	})
	// -c CODE -- ARGS: arguments that start with '-' (they were refused as
	// flags, and -- with -c as a program).
	t.Run("-c CODE -- ARGS", func(t *testing.T) {
		o := gojail(t, "-c", "import sys; print(sys.argv[1:])", "--", "-v", "--help", "x")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "['-v', '--help', 'x']\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
	})
	// One --env is one variable, verbatim: urfave/cli split a value at its
	// commas (X=a,B=c set B too) and trimmed its spaces.
	t.Run("--env values with commas and spaces", func(t *testing.T) {
		o := py(t, "import os; print(repr(os.environ.get('X')), repr(os.environ.get('Y')), 'B' in os.environ)", "--env", "X=-O2,-g,B=c", "--env", "Y= a ")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "'-O2,-g,B=c' ' a ' False\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
	})
	t.Run("the caller's stdin does not reach the jail", func(t *testing.T) {
		o := gojailWith(t, runOpts{stdin: "from the caller"}, "-c", "import sys; print(repr(sys.stdin.read()))")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "''\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
	})
	t.Run("binary output keeps the JSON valid", func(t *testing.T) {
		o := py(t, `import sys; sys.stdout.buffer.write(b'\xff\xfe\x00ok\n')`)
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "\ufffd\ufffd\x00ok\n" || o.res.StdoutBytes != 6 {
			t.Fatalf("stdout %q (%d bytes)", o.res.Stdout, o.res.StdoutBytes)
		}
	})
}

func TestStatuses(t *testing.T) {
	tests := []struct {
		name   string
		code   string
		flags  []string
		status jail.Status
		exit   int
		signal string
		errHas string
	}{
		{"ok", "print(1)", nil, jail.StatusOK, 0, "", ""},
		{"runtime error keeps the exit code", "import sys; sys.exit(3)", nil, jail.StatusRuntimeError, 3, "", ""},
		{"uncaught exception", "1/0", nil, jail.StatusRuntimeError, 1, "", ""},
		{"killed by SIGSEGV", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", nil, jail.StatusSignaled, 128 + 11, "SIGSEGV", "killed by SIGSEGV: an invalid memory access (a stack overflow past limits.stack, 8MiB, ends this way too)"},
		{"killed by SIGFPE", "import os, signal; os.kill(os.getpid(), signal.SIGFPE)", nil, jail.StatusSignaled, 128 + 8, "SIGFPE", "killed by SIGFPE: an arithmetic error"},
		// --output-action kill makes a flood output_limit without a policy file.
		{"output past the limit, killed", "import sys\nwhile True: sys.stdout.write('x' * 4096)", []string{"--output-limit", "1KiB", "--output-action", "kill"}, jail.StatusOutputLimit, 128 + 9, "SIGKILL", "output limit of 1KiB"},
		// A real-time signal is named by its number; gojail exits 128+N
		// all the same (it exited 125).
		{"killed by a real-time signal", "import os; os.kill(os.getpid(), 34)", nil, jail.StatusSignaled, 128 + 34, "SIG34", "killed by SIG34"},
		{"killed by the last real-time signal", "import os; os.kill(os.getpid(), 64)", nil, jail.StatusSignaled, 128 + 64, "SIG64", ""},
		{"wall-clock limit", "import time; time.sleep(60)", []string{"--timeout", "300ms"}, jail.StatusTimeLimit, 124, "SIGKILL", "wall-clock limit of 300ms"},
		{"blocking read on stdin ends at once", "import sys; sys.stdin.read(); print('eof')", []string{"--timeout", "2s"}, jail.StatusOK, 0, "", ""},
		// SIGXCPU from RLIMIT_CPU, or SIGKILL from the supervisor reading the
		// cgroup's figure first: both at 1 s of CPU time.
		{"CPU-time limit", "while True: pass", []string{"--cpu-time", "1s", "--timeout", "10s"}, jail.StatusTimeLimit, 124, "SIGXCPU|SIGKILL", "CPU-time limit of 1s"},
		// SIGXCPU from an RLIMIT_CPU the program lowered itself is no limit
		// of the policy's.
		{"its own RLIMIT_CPU", "import resource\nresource.setrlimit(resource.RLIMIT_CPU, (0, resource.getrlimit(resource.RLIMIT_CPU)[1]))\nwhile True: pass", []string{"--cpu-time", "1s", "--timeout", "10s"}, jail.StatusSignaled, 128 + 24, "SIGXCPU", "an RLIMIT_CPU the program set itself"},
		// Past the limit and failing: stopped by the supervisor (a cgroup),
		// or, without one, failing by itself before RLIMIT_CPU's next whole
		// second (a runtime_error).
		{"CPU past the limit, failing by itself", "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\nraise SystemExit(3)", []string{"--cpu-time", "200ms", "--timeout", "10s"}, jail.StatusTimeLimit, 124, "SIGKILL|", "CPU-time limit of 200ms exceeded"},
		{"CPU spin that ignores SIGXCPU", "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: pass", []string{"--cpu-time", "1s", "--timeout", "10s"}, jail.StatusTimeLimit, 124, "SIGKILL", "CPU-time limit of 1s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := py(t, tc.code, tc.flags...)
			o.want(t, tc.status, tc.exit)
			if o.res.Signal != tc.signal && !strings.Contains("|"+tc.signal+"|", "|"+o.res.Signal+"|") {
				t.Fatalf("signal %q, want %q", o.res.Signal, tc.signal)
			}
			if !strings.Contains(o.res.Error, tc.errHas) {
				t.Fatalf("error %q does not say %q", o.res.Error, tc.errHas)
			}
		})
	}
	t.Run("wall-clock limit is exact", func(t *testing.T) {
		o := py(t, "import time; time.sleep(60)", "--timeout", "500ms")
		o.want(t, jail.StatusTimeLimit, 124)
		if o.res.WallMs < 500 || o.res.WallMs > 1000 {
			t.Fatalf("wall_ms %.1f for a 500ms limit", o.res.WallMs)
		}
	})
	t.Run("CPU time of a tree killed by the wall limit is counted", func(t *testing.T) {
		o := gojail(t, "--policy", "bash", "--timeout", "1s", "--cpu-time", "10s", "-c", "while :; do :; done & while :; do :; done")
		o.want(t, jail.StatusTimeLimit, 124)
		if o.res.CPUMs < 500 {
			t.Fatalf("cpu_ms %.1f after a 1s spin of two processes", o.res.CPUMs)
		}
	})
	t.Run("CPU time of the spin is reported", func(t *testing.T) {
		o := py(t, "while True: pass", "--cpu-time", "1s", "--timeout", "10s")
		o.want(t, jail.StatusTimeLimit, 124)
		if withCgroup(o) {
			// The cgroup's counter is exact, and the supervisor ends the
			// tree when it reaches the limit: never before, little after
			// (RLIMIT_CPU, a backstop, would act at 2 s).
			if o.res.CPUMs < 1000 || o.res.CPUMs > 1200 || !strings.Contains(o.res.Error, "the whole tree") {
				t.Fatalf("cpu_ms %.1f, error %q, for a 1s limit", o.res.CPUMs, o.res.Error)
			}
			return
		}
		// RLIMIT_CPU is checked at the scheduler tick and rusage splits user
		// and system time by sampling: allow a few ticks either side.
		if o.res.CPUMs < 950 || o.res.CPUMs > 1500 {
			t.Fatalf("cpu_ms %.1f for a 1s limit", o.res.CPUMs)
		}
	})
	t.Run("without --json the program's output and exit code pass through", func(t *testing.T) {
		cmd := exec.Command(gojailBin, "run", "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(7)")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
			t.Fatalf("exit %v, want 7", err)
		}
		if stdout.String() != "out\n" || stderr.String() != "err\n" {
			t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
		}
	})
}

// The supervisor's own peak memory (VmHWM, which --debug prints): at most
// 15 MB for a plain run and for a flood at the default output cap, even of
// bytes that JSON escapes six to one, and flat however long the flood goes
// on.
func TestSupervisorMemory(t *testing.T) {
	peak := func(t *testing.T, args ...string) int64 {
		t.Helper()
		// A 2 GiB flood takes about a second of CPU here: no CPU limit
		// near it, on a busy machine.
		cmd := exec.Command(gojailBin, append([]string{"run", "--json", "--debug", "--timeout", "60s", "--cpu-time", "60s"}, args...)...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("gojail %v: %v\n%s", args, err, stderr.String())
		}
		if o := decode(t, stdout.String()); o.Status != jail.StatusOK {
			t.Fatalf("gojail %v: status %s: %s", args, o.Status, o.Error)
		}
		const prefix = "gojail: the supervisor's own peak resident memory: "
		for _, line := range strings.Split(stderr.String(), "\n") {
			if v, ok := strings.CutPrefix(line, prefix); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
				if err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				return kb << 10
			}
		}
		t.Fatalf("gojail %v: no line %q on stderr", args, prefix)
		return 0
	}
	const most = 15 << 20
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"a plain run", []string{"--", "/bin/true"}},
		{"1 GiB of zero bytes at the default 1 MiB cap", []string{"--", "/usr/bin/head", "-c", "1073741824", "/dev/zero"}},
	} {
		if rss := peak(t, tc.args...); rss > most {
			t.Errorf("%s: peak %.1f MB, over 15 MB", tc.name, float64(rss)/(1<<20))
		} else {
			t.Logf("%s: peak %.1f MB", tc.name, float64(rss)/(1<<20))
		}
	}
	short := peak(t, "--output-limit", "64KiB", "--", "/usr/bin/head", "-c", "268435456", "/dev/zero")
	long := peak(t, "--output-limit", "64KiB", "--", "/usr/bin/head", "-c", "2147483648", "/dev/zero")
	t.Logf("a 256 MiB flood: peak %.1f MB; 2 GiB: %.1f MB", float64(short)/(1<<20), float64(long)/(1<<20))
	if long-short > 2<<20 {
		t.Errorf("the peak grew by %.1f MB from a 256 MiB flood to a 2 GiB one: not flat", float64(long-short)/(1<<20))
	}
	// A large cap holds what it keeps, and not much more: its buffer grows
	// to the cap and no further, the smaller ones it grew from are
	// collected (as the next is made: 106-162 MB here), and the result
	// shares its bytes (64 MiB kept held 298-305 MB).
	big := peak(t, "--output-limit", "64MiB", "--", "/usr/bin/head", "-c", "134217728", "/dev/zero")
	t.Logf("64 MiB kept of 128 MiB: peak %.1f MB", float64(big)/(1<<20))
	if big > 192<<20 {
		t.Errorf("64 MiB kept of 128 MiB: peak %.1f MB, over three times what is kept", float64(big)/(1<<20))
	}
}

func TestOutputLimit(t *testing.T) {
	// The supervisor's own memory under a flood: TestSupervisorMemory (the
	// peak getrusage gives here would count this test's own process, which
	// the child was until its execve).
	t.Run("a 1 GiB flood under a 64 KiB cap is truncated", func(t *testing.T) {
		cmd := exec.Command(gojailBin, "run", "--json", "--output-limit", "64KiB", "--timeout", "60s", "--policy", "bash", "-c", "head -c 1073741824 /dev/zero; echo done >&2")
		var stdout strings.Builder
		cmd.Stdout = &stdout
		if err := cmd.Run(); err != nil {
			t.Fatalf("gojail: %v", err)
		}
		o := decode(t, stdout.String())
		if o.Status != jail.StatusOK || !o.StdoutTruncated || o.StderrTruncated || len(o.Stdout) != 64<<10 || o.StdoutBytes != 1<<30 || o.Stderr != "done\n" {
			t.Fatalf("status %s truncated %v/%v kept %d of %d bytes, stderr %q", o.Status, o.StdoutTruncated, o.StderrTruncated, len(o.Stdout), o.StdoutBytes, o.Stderr)
		}
	})
	t.Run("output_action kill stops the program", func(t *testing.T) {
		pol := writeFile(t, tempDir(t), "kill.toml", "base = \"python\"\n[limits]\noutput = \"4KiB\"\noutput_action = \"kill\"\n", 0o644)
		o := gojail(t, "--policy", pol, "-c", "while True: print('x' * 1000)")
		o.want(t, jail.StatusOutputLimit, 128+9)
		if len(o.res.Stdout) != 4096 || !o.res.StdoutTruncated || !strings.Contains(o.res.Error, "output limit of 4KiB") {
			t.Fatalf("kept %d bytes, truncated %v, error %q", len(o.res.Stdout), o.res.StdoutTruncated, o.res.Error)
		}
	})
	// Output still in the pipe when the init reports is all read: the
	// program makes its pipe hold 1 MiB and exits as soon as it is written
	// (a build that ended at the report with a look that did not look lost
	// most of it in half of the runs).
	t.Run("a burst in a 1 MiB pipe, then exit", func(t *testing.T) {
		code := "import fcntl, os\nfcntl.fcntl(1, 1031, 1 << 20)\nb = memoryview(b'x' * (1 << 20))\nwhile b:\n    b = b[os.write(1, b):]\nos._exit(0)"
		for i := 0; i < 10; i++ {
			o := py(t, code, "--output-limit", "2MiB")
			o.want(t, jail.StatusOK, 0)
			if o.res.StdoutBytes != 1<<20 || len(o.res.Stdout) != 1<<20 || o.res.StdoutTruncated {
				t.Fatalf("run %d: %d bytes written, %d kept (truncated %v), want 1048576", i, o.res.StdoutBytes, len(o.res.Stdout), o.res.StdoutTruncated)
			}
		}
	})
	// A character the limit cuts is left out of what is kept: it showed as
	// U+FFFD, two for an emoji, making stdout longer than the limit.
	t.Run("a cut character is left out", func(t *testing.T) {
		o := py(t, "import sys; sys.stdout.write('a' * 98 + '\U0001F600')", "--output-limit", "100")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != strings.Repeat("a", 98) || !o.res.StdoutTruncated || o.res.StdoutBytes != 102 {
			t.Fatalf("stdout %q (truncated %v, %d bytes written), want 98 a's, truncated, 102", o.res.Stdout, o.res.StdoutTruncated, o.res.StdoutBytes)
		}
	})
	// Past the limit with output_action kill is output_limit even when the
	// program has exited before the supervisor reads the excess (1 of 6
	// runs said ok).
	t.Run("output_action kill, the program gone before the excess is read", func(t *testing.T) {
		pol := writeFile(t, tempDir(t), "kill.toml", "base = \"python\"\n[limits]\noutput = \"4KiB\"\noutput_action = \"kill\"\n", 0o644)
		for i := 0; i < 10; i++ {
			o := gojail(t, "--policy", pol, "-c", "import os; os.write(1, b'x' * 8192)")
			if o.res.Status != jail.StatusOutputLimit || len(o.res.Stdout) != 4096 || !o.res.StdoutTruncated {
				t.Fatalf("run %d: %s (%s), kept %d bytes, truncated %v", i, o.res.Status, o.res.Error, len(o.res.Stdout), o.res.StdoutTruncated)
			}
		}
	})
	t.Run("file size limit", func(t *testing.T) {
		o := gojail(t, "--policy", "bash", "-c", "exec head -c 20000000 /dev/zero > /tmp/big")
		o.want(t, jail.StatusOutputLimit, 128+25)
		if o.res.Signal != "SIGXFSZ" || !strings.Contains(o.res.Error, "file size limit of 16MiB") {
			t.Fatalf("signal %q error %q", o.res.Signal, o.res.Error)
		}
	})
}

func TestBadInput(t *testing.T) {
	dir := tempDir(t)
	big := writeFile(t, dir, "big.py", "#"+strings.Repeat("x", 2<<20)+"\n", 0o644)
	nul := writeFile(t, dir, "nul.py", "print(1)\x00\n", 0o644)
	missingBind := writeFile(t, dir, "missing-bind.toml", "base = \"python\"\n[fs]\nro = [\"/usr\", \"/nonexistent/gojail\"]\n", 0o644)
	badKey := writeFile(t, dir, "bad-key.toml", "base = \"python\"\n\n[limits]\nmemroy = \"1GiB\"\n", 0o644)
	ok := writeFile(t, dir, "ok.py", "print(1)\n", 0o644)
	fifo := filepath.Join(dir, "fifo.py")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	procWork := writeFile(t, dir, "proc-work.toml", "base = \"python\"\n[run]\nworkdir = \"/proc/w\"\n", 0o644)
	zeroWall := writeFile(t, dir, "zero-wall.toml", "base = \"python\"\n[limits]\nwall_time = \"0s\"\n", 0o644)
	bigPolicy := writeFile(t, dir, "big.toml", "base = \"python\"\n"+strings.Repeat("# a comment\n", 100000), 0o644)
	tests := []struct {
		name   string
		args   []string
		errHas string
	}{
		{"missing file", []string{filepath.Join(dir, "nope.py")}, "no such file or directory"},
		{"a directory as file", []string{"--policy", "python", dir}, "is a directory, not a regular file"},
		{"a directory as file, no policy", []string{dir}, "is a directory, not a regular file"},
		{"a script without #! under exec", []string{"--policy", "exec", ok}, "exec format error (a script needs a #! line naming its interpreter"},
		{"a file of /proc as file", []string{"--policy", "python", "/proc/self/maps"}, "/proc/self/maps is a file of the host kernel's (proc)"},
		{"a FIFO as file (no writer: its open must not wait)", []string{fifo}, "fifo.py is a FIFO, not a regular file"},
		{"file over code_size", []string{big}, "larger than limits.code_size (1MiB)"},
		{"NUL bytes in code", []string{nul}, "holds a NUL byte at offset 8"},
		{"other control bytes are fine", []string{"-c", "print(len('\x01'))"}, ""}, // the control: not everything is refused
		{"unknown preset", []string{"--policy", "cobol", ok}, `policy "cobol" is neither a built-in preset`},
		{"unknown extension", []string{filepath.Join(dir, "x.rb")}, "cannot tell how to run"},
		{"bind source that does not exist", []string{"--policy", missingBind, ok}, "fs.ro entry /nonexistent/gojail: no such file or directory"},
		{"unknown policy key", []string{"--policy", badKey, ok}, `bad-key.toml:4: "limits.memroy": unknown key`},
		// A policy file is a small regular one, or a pipe (a shell's <(...)):
		// /dev/zero grew gojail without end, a FIFO waited for ever.
		{"a device as policy", []string{"--policy", "/dev/zero", ok}, "/dev/zero is a device, not a regular file: give a TOML file"},
		{"a FIFO with no writer as policy", []string{"--policy", fifo, ok}, "fifo.py is a pipe that gave nothing (no writer): give a TOML file"},
		{"a policy over 1 MiB", []string{"--policy", bigPolicy, ok}, "big.toml is over 1024 KiB: a policy is a small TOML file"},
		{"bad --timeout", []string{"--timeout", "5", ok}, `--timeout: bad duration "5"`},
		{"bad --memory", []string{"--memory", "12XB", ok}, `--memory: bad size "12XB"`},
		{"bad --pids", []string{"--pids", "-1", ok}, `--pids: "-1" is not a whole number`},
		{"bad --net", []string{"--net", "wifi", ok}, `--net: "wifi": want none, loopback or host`},
		{"bad --output-action", []string{"--output-action", "stop", ok}, `--output-action: "stop": want truncate or kill`},
		{"--stack out of range", []string{"--stack", "2GiB", ok}, "--stack (limits.stack) is 2GiB: it must be between"},
		{"bad --env", []string{"--env", "NOEQUALS", ok}, `--env: "NOEQUALS" is not KEY=VALUE`},
		{"limit out of range", []string{"--cpu-time", "0s", ok}, "--cpu-time (limits.cpu_time) is 0s: it must be between"},
		{"work directory in /proc (its mount failed as internal_error)", []string{"--policy", procWork, ok}, `run.workdir "/proc/w" is inside /proc`},
		{"limit out of range in the policy, not a flag", []string{"--policy", zeroWall, ok}, "limits.wall_time is 0s: it must be between"},
		{"unknown flag", []string{"--frobnicate", ok}, "flag provided but not defined: -frobnicate"},
		{"missing --stdin file", []string{"--stdin", filepath.Join(dir, "none.txt"), ok}, "--stdin"},
		{"program not in the jail", []string{"--", "/root/nothing"}, "is not inside the jail"},
		{"nothing to run", nil, "nothing to run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := gojail(t, tc.args...)
			if tc.errHas == "" {
				o.want(t, jail.StatusOK, 0)
				if o.res.Stdout != "1\n" {
					t.Fatalf("stdout %q", o.res.Stdout)
				}
				return
			}
			o.want(t, jail.StatusInvalidInput, 125)
			if !strings.Contains(o.res.Error, tc.errHas) {
				t.Fatalf("error %q does not say %q", o.res.Error, tc.errHas)
			}
		})
	}
}

func TestNothingLeftBehind(t *testing.T) {
	before := countHost(t)
	t.Run("a daemon left running by the program is killed", func(t *testing.T) {
		start := time.Now()
		o := gojail(t, "--policy", "bash", "-c", "(setsid sleep 30 "+marker+" &) ; echo started")
		o.want(t, jail.StatusOK, 0)
		if time.Since(start) > 5*time.Second {
			t.Fatalf("the run waited for its daemon: %s", time.Since(start))
		}
	})
	t.Run("gojail killed with SIGKILL takes the jail with it", func(t *testing.T) {
		cmd := exec.Command(gojailBin, "run", "--timeout", "60s", "--policy", "bash", "-c", "sleep 30 "+marker+"; sleep 31 "+marker)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		track(cmd)
		waitFor(t, func() bool { return countHost(t).procs > before.procs })
		cmd.Process.Kill()
		cmd.Wait()
		waitFor(t, func() bool { return countHost(t).procs == before.procs })
	})
	t.Run("an init started early and taken by no run is reaped before gojail exits", func(t *testing.T) {
		// As a subreaper, this process inherits whatever a gojail leaves
		// when it exits: an early init it had not reaped would be here.
		// What may be here, and ends by itself, after a run that left its
		// end to the exit (jail.Input.Exiting): the keeper of its memory
		// (jail.Exit), and the run's init, which had reported every
		// process of its jail reaped and exits after the keeper. Nothing
		// after GOJAIL_REAP=1, which a subreaper that reaps only its own
		// children sets.
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
		defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
		for _, tc := range []struct {
			args    []string
			reap    bool
			orphans int
		}{
			{[]string{"run", "--bogus", "--", "/bin/echo", "hi"}, false, 0},
			{[]string{"run", "--help"}, false, 0},
			{[]string{"run", "--policy", "/nonexistent/policy.toml", "--", "/bin/true"}, false, 0},
			{[]string{"run", "--net", "host", "--", "/bin/echo", "hi"}, false, 2},
			{[]string{"run", "--", "/bin/echo", "hi"}, false, 2},
			{[]string{"run", "--", "/bin/echo", "hi"}, true, 0},
			{[]string{"run", "--timeout", "100ms", "--", "/bin/sleep", "5"}, true, 0},
		} {
			cmd := exec.Command(gojailBin, tc.args...)
			if tc.reap {
				cmd.Env = append(os.Environ(), "GOJAIL_REAP=1")
			}
			cmd.Run()
			// Each was reparented to this process as gojail exited.
			for i := 0; i < tc.orphans; i++ {
				var ws syscall.WaitStatus
				pid, err := wait4Within(&ws, time.Second)
				if err != nil {
					t.Fatalf("gojail %q: orphan %d of %d: %v", tc.args, i+1, tc.orphans, err)
				}
				if !ws.Exited() || ws.ExitStatus() != 0 {
					t.Fatalf("gojail %q: orphan %d ended with %v", tc.args, pid, ws)
				}
			}
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG|unix.WALL, nil); err != syscall.ECHILD {
				t.Fatalf("gojail %q left a process behind: wait4 gave pid %d, %v", tc.args, pid, err)
			}
		}
	})
	t.Run("in a pid namespace of its own, gojail leaves no process to reap", func(t *testing.T) {
		// A container's init may never reap what is orphaned to it: there
		// gojail waits for its init and frees its own memory (jail.Exit).
		if os.Geteuid() != 0 {
			t.Skip("unshare --pid takes root here")
		}
		// The namespace's init waits for gojail alone, as a program that
		// does not know of orphans would, then lists the namespace's
		// processes.
		prog := `import os, subprocess, sys, time
subprocess.run([sys.argv[1], "run", "--", "/bin/true"], check=True)
time.sleep(0.2)
print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))`
		out, err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "/usr/bin/python3", "-c", prog, gojailBin).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != "[1]" {
			t.Fatalf("processes in the namespace after gojail exited: %s, want [1] (its init alone)", got)
		}
	})
	t.Run("an output the caller reads slowly does not keep the jail's namespaces", func(t *testing.T) {
		// More than a pipe takes: the init exits before gojail writes it,
		// rather than after (its tmpfs files would wait on the reader).
		cmd := exec.Command(gojailBin, "run", "--policy", "bash", "-c", "head -c 300000 /dev/zero | tr '\\0' a")
		r, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		track(cmd)
		// The run ends while the output waits in gojail: then the keeper
		// is left among gojail's children, and the init (pid 1 of its own
		// namespace) has exited: gone, or a zombie, which holds no
		// namespace.
		waitFor(t, func() bool {
			tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", cmd.Process.Pid))
			keeper, init := false, false
			for _, f := range tasks {
				b, _ := os.ReadFile(f)
				for _, k := range strings.Fields(string(b)) {
					st, _ := os.ReadFile("/proc/" + k + "/status")
					if strings.Contains(string(st), "\nNSpid:\t"+k+"\t1\n") {
						init = init || !strings.Contains(string(st), "\nState:\tZ")
					} else {
						keeper = true
					}
				}
			}
			return keeper && !init
		})
		n, _ := io.Copy(io.Discard, r)
		if err := cmd.Wait(); err != nil || n != 300000 {
			t.Fatalf("gojail: %v, %d bytes of output, want 300000", err, n)
		}
	})
	t.Run("after every outcome the host is as it was", func(t *testing.T) {
		py(t, "print(1)")
		py(t, "import time; time.sleep(9)", "--timeout", "100ms")
		py(t, "1/0")
		gojail(t, "--", "/nonexistent")
		after := countHost(t)
		if after != before {
			t.Fatalf("host before %+v, after %+v", before, after)
		}
	})
}

// wait4Within reaps a child of this process, of any kind, that ends
// within d.
func wait4Within(ws *syscall.WaitStatus, d time.Duration) (int, error) {
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Microsecond) {
		pid, err := syscall.Wait4(-1, ws, syscall.WNOHANG|unix.WALL, nil)
		if err != nil || pid > 0 {
			return pid, err
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("none ended within %s", d)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("condition not met within 5s")
}

func decode(t *testing.T, s string) jail.Result {
	t.Helper()
	var r jail.Result
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("not a JSON result: %v: %q", err, s)
	}
	return r
}

// bashVersion is the host's bash version, which the jail's bash must report.
func bashVersion(t *testing.T) string {
	out, err := exec.Command("/bin/bash", "-c", "echo -n $BASH_VERSION").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// gojail built as a position-independent executable (as distributions
// build Go programs) runs jails: the executable is mapped high, inside the
// range the jail's init does not inherit, and is left out of it; its entry
// clones the init as the command's does.
func TestPositionIndependentBuild(t *testing.T) {
	bin := buildGojail(t, "-buildmode=pie", "-ldflags=-E "+jail.EntrySymbol)
	wantEarlyInit(t, bin, "an init cloned at the process's entry")
}

// The supervisor's runtime reads neither its cgroup's CPU limit nor the
// mount table as it starts (the Makefile's runtime overlay, with the
// binary's containermaxprocs=0): those reads took 0.16-0.33 ms of every
// run. The trace must show the runtime's start (its first open, of the
// huge page size), so that an empty trace cannot pass.
func TestStartReadsNoCgroupLimit(t *testing.T) {
	if os.Getenv("GOJAIL_BIN") == "" {
		t.Skip("gojail was built by the test, without the Makefile's runtime overlay: make test builds it with it")
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed (make deps installs it)")
	}
	trace := filepath.Join(tempDir(t), "trace")
	// Only the supervisor's first thread, where the runtime starts.
	if out, err := exec.Command(strace, "-o", trace, "-e", "trace=open,openat", gojailBin, "run", "--", "/bin/true").CombinedOutput(); err != nil {
		t.Fatalf("strace gojail run: %v\n%s", err, out)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size") {
		t.Fatalf("the trace does not show the runtime's start:\n%s", b)
	}
	for _, f := range []string{"/proc/self/mountinfo", "cpu.cfs_quota_us", "cpu.max"} {
		if strings.Contains(string(b), f) {
			t.Errorf("gojail opened %s as it started:\n%s", f, b)
		}
	}
}

// gojail built without its entry point (a plain go build) starts its init
// from its first package initialisation instead.
func TestBuildWithoutEntry(t *testing.T) {
	bin := buildGojail(t)
	wantEarlyInit(t, bin, "an init started early")
}

// Where no user namespace may be made, the entry's clone fails, the run
// tries its own, and reports why, naming the setting to check: no crash,
// no wait, nothing left behind.
func TestEntryCloneRefused(t *testing.T) {
	before := countHost(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), refusing(unix.SYS_CLONE3, unix.EPERM, gojailBin, "run", "--json", "--", "/bin/echo", "hi"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 125 {
		t.Fatalf("exit %v, want 125\n%s%s", err, out, stderr.String())
	}
	var r jail.Result
	if err := jsonUnmarshal(out, &r); err != nil {
		t.Fatalf("%v: %q\n%s", err, out, stderr.String())
	}
	if r.Status != jail.StatusInternalError || !strings.Contains(r.Error, "clone3: operation not permitted (creating a user namespace was refused: check sysctl user.max_user_namespaces") {
		t.Fatalf("%s %q, want internal_error naming the refused clone3 and the sysctl", r.Status, r.Error)
	}
	waitFor(t, func() bool { return countHost(t).procs == before.procs })
}

// A failure in the init's steps before its release names the step: the
// jail's /proc, made there (the init's first fsopen).
func TestEarlySetupFailureNamed(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), refusing(unix.SYS_FSOPEN, unix.ENOMEM, gojailBin, "run", "--json", "--", "/bin/echo", "hi"))
	out, _ := cmd.Output()
	var r jail.Result
	if err := jsonUnmarshal(out, &r); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if r.Status != jail.StatusInternalError || r.Error != "jail setup failed: make the jail's /proc: cannot allocate memory" {
		t.Fatalf("%s %q, want internal_error naming the /proc step", r.Status, r.Error)
	}
}

// Where open_tree_attr is missing (before Linux 6.15: ENOSYS) or refused
// (EPERM, as by a container's filter older than the call), the binds take
// their attributes from mount_setattr: the run is the same, /usr
// read-only.
func TestBindAttributesWithoutOpenTreeAttr(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, errno := range []syscall.Errno{unix.ENOSYS, unix.EPERM} {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), refusing(unix.SYS_OPEN_TREE_ATTR, errno, gojailBin, "run", "--json", "--", "/bin/sh", "-c",
			"grep -q ' /usr ro,nosuid,nodev' /proc/self/mountinfo && echo ro"))
		out, _ := cmd.Output()
		var r jail.Result
		if err := jsonUnmarshal(out, &r); err != nil {
			t.Fatalf("%v: %v: %q", errno, err, out)
		}
		if r.Status != jail.StatusOK || r.Stdout != "ro\n" {
			t.Errorf("open_tree_attr refused with %v: %s %q (%q), want ok \"ro\"", errno, r.Status, r.Stdout, r.Error)
		}
	}
}

// The init cloned at the entry has the descriptor limit the runtime gives
// itself (the hard one), not the caller's soft one, which a policy's
// limits.open_files may exceed: pid 2 places the listener's socket at that
// number.
func TestLowSoftNofile(t *testing.T) {
	out, _ := exec.Command("/bin/bash", "-c", `ulimit -Sn 64 && exec "$0" run --json -c 'print(1)'`, gojailBin).Output()
	var r jail.Result
	if err := jsonUnmarshal(out, &r); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if r.Status != jail.StatusOK || r.Stdout != "1\n" {
		t.Fatalf("%s %q (error %q), want ok \"1\\n\"", r.Status, r.Stdout, r.Error)
	}
}

// gojail started with its stdin, stdout or stderr closed: the runtime
// gives each /dev/null, and no descriptor the entry opened takes its place.
func TestClosedStdio(t *testing.T) {
	out, _ := exec.Command("/bin/bash", "-c", `exec 2>&-; exec "$0" run --json --stdin - -c 'import sys; print(repr(sys.stdin.read()))' <&-`, gojailBin).Output()
	var r jail.Result
	if err := jsonUnmarshal(out, &r); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if r.Status != jail.StatusOK || r.Stdout != "''\n" {
		t.Fatalf("stdin closed: %s %q (error %q), want ok with an empty stdin", r.Status, r.Stdout, r.Error)
	}
	out, _ = exec.Command("/bin/bash", "-c", `"$0" run -- /bin/true >&-; echo $?`, gojailBin).Output()
	if string(out) != "0\n" {
		t.Fatalf("stdout closed: exit %q, want 0", out)
	}
}

// The entry puts GOMAXPROCS=1 at the end of the runtime's environment,
// moving the stack's argument and environment words down one: gojail runs
// with no environment at all, with a GOMAXPROCS of the caller's (left as
// it is), and with more arguments than the entry reads for a run.
func TestEntryEnvironment(t *testing.T) {
	many := make([]string, 70000)
	for i := range many {
		many[i] = strconv.Itoa(i)
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no environment", []string{}, []string{"/bin/echo", "hi"}, "hi\n"},
		{"the caller's GOMAXPROCS", []string{"GOMAXPROCS=2", "GOJAIL_REAP=1"}, []string{"/bin/echo", "hi"}, "hi\n"},
		{"70,000 arguments", nil, append([]string{"/bin/sh", "-c", `echo $#`}, many...), "69999\n"},
	} {
		cmd := exec.Command(gojailBin, append([]string{"run", "--json", "--"}, tc.args...)...)
		cmd.Env = tc.env
		out, _ := cmd.Output()
		var r jail.Result
		if err := jsonUnmarshal(out, &r); err != nil {
			t.Fatalf("%s: %v: %q", tc.name, err, out)
		}
		if r.Status != jail.StatusOK || r.Stdout != tc.want {
			t.Errorf("%s: %s %q (error %q), want ok %q", tc.name, r.Status, r.Stdout, r.Error, tc.want)
		}
	}
}

// buildGojail builds the command with flags, skipping the test where
// there is no toolchain to build it.
func buildGojail(t *testing.T, flags ...string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH to build gojail")
	}
	bin := filepath.Join(tempDir(t), "gojail-built")
	build := exec.Command(goBin, append(append([]string{"build"}, flags...), "-o", bin, ".")...)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %q: %v\n%s", flags, err, out)
	}
	return bin
}

// wantEarlyInit runs /bin/echo with bin and wants it to succeed with the
// jail's namespaces made by the init that by names.
func wantEarlyInit(t *testing.T, bin, by string) {
	t.Helper()
	cmd := exec.Command(bin, "run", "--debug", "--json", "--", "/bin/echo", "hi")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	var r jail.Result
	if err := jsonUnmarshal(out, &r); err != nil {
		t.Fatalf("%v: %q\n%s", err, out, stderr.String())
	}
	if r.Status != jail.StatusOK || r.Stdout != "hi\n" {
		t.Fatalf("%s %q (error %q), want ok \"hi\\n\"", r.Status, r.Stdout, r.Error)
	}
	if !strings.Contains(stderr.String(), "made by "+by+";") {
		t.Fatalf("the namespaces were not made by %s:\n%s", by, stderr.String())
	}
}

// gojail run clones the jail's init at its entry, and the run adopts it
// when the policy wants the namespaces it made; a run on the host's
// network clones its own.
func TestEarlyInit(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		early bool
	}{{nil, true}, {[]string{"--net", "loopback"}, true}, {[]string{"--net", "host"}, false}} {
		r, debug := gojailDebug(t, append(tc.flags, "--", "/bin/echo", "hi")...)
		if r.Status != jail.StatusOK || r.Stdout != "hi\n" {
			t.Errorf("%q: %s %q (error %q), want ok \"hi\\n\"", tc.flags, r.Status, r.Stdout, r.Error)
		}
		if got := strings.Contains(debug, "made by an init cloned at the process's entry"); got != tc.early {
			t.Errorf("%q: early init adopted %v, want %v\n%s", tc.flags, got, tc.early, debug)
		}
		// From Linux 6.15 (binds cloned from a detached tree), every init
		// detaches the host's tree before its release.
		if kernelAtLeast(t, 6, 15) && !strings.Contains(debug, "child: the host's tree detached before the release") {
			t.Errorf("%q: the host's tree was not detached before the release\n%s", tc.flags, debug)
		}
	}
}

// The runtime's monitor thread (the first it starts, the first thread id
// after the main thread's) sleeps with a timer slack of its own: in a run,
// the 10 ms the entry gives the main thread while the runtime starts it
// (jail.StartSlack), root or not; in another command, as root, 250 µs
// (package oneproc; rootless, another thread's slack cannot be set). The
// main thread has the caller's again. Root only: another process's slack
// cannot be read without CAP_SYS_NICE.
func TestMonitorSlack(t *testing.T) {
	if !isRoot() {
		t.Skip("rootless: another process's timer slack cannot be read (that takes CAP_SYS_NICE)")
	}
	const own = 123457 // the caller's: that of the thread that starts gojail
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"run", "--policy", "exec", "--", "/bin/sleep", "0.5"}, jail.StartSlack},
		{[]string{"batch", "--policy", "exec"}, 250000},
	} {
		main, mon, all := threadSlacks(t, own, tc.args)
		if mon != strconv.Itoa(tc.want) {
			t.Errorf("%s: the monitor thread's timer slack %s, want %d (all: %s)", tc.args[0], mon, tc.want, all)
		}
		if main != strconv.Itoa(own) {
			t.Errorf("%s: the main thread's timer slack %s, want the caller's, %d (all: %s)", tc.args[0], main, own, all)
		}
	}
}

// threadSlacks starts gojail with args from a thread with the timer slack
// ns, waits until its runtime has started the monitor and more (a run's
// init is there too), and returns the main thread's and the monitor's
// timer slack, and every thread's.
func threadSlacks(t *testing.T, ns uintptr, args []string) (main, mon, all string) {
	t.Helper()
	cmd := exec.Command(gojailBin, args...)
	stdin, err := cmd.StdinPipe() // batch waits on it; closed at the end
	if err != nil {
		t.Fatal(err)
	}
	if err := onOwnThread(setSlack(ns), cmd.Start); err != nil {
		t.Fatal(err)
	}
	track(cmd)
	defer cmd.Wait()
	defer stdin.Close()
	pid := cmd.Process.Pid
	var tids []int
	waitFor(t, func() bool {
		ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		tids = tids[:0]
		for _, e := range ents {
			if n, err := strconv.Atoi(e.Name()); err == nil {
				tids = append(tids, n)
			}
		}
		return len(tids) > 2
	})
	time.Sleep(100 * time.Millisecond) // past the packages' initialisation
	// The first id after the main thread's, in the order ids are handed
	// out (wrapping around at pid_max).
	slices.SortFunc(tids, func(a, b int) int {
		key := func(id int) int {
			if id > pid {
				return id - pid
			}
			return id - pid + 1<<31
		}
		return key(a) - key(b)
	})
	monitor := tids[0]
	if monitor == pid {
		monitor = tids[1]
	}
	slack := func(tid int) string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/timerslack_ns", tid))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	for _, tid := range tids {
		all += fmt.Sprintf(" %d:%s", tid, slack(tid))
	}
	return slack(pid), slack(monitor), all
}

// A run's program has its caller's timer slack (that of the thread that
// started gojail), not the entry's StartSlack, which the main thread has
// while the runtime starts: root or not, with the entry and without.
func TestRunProgramTimerSlack(t *testing.T) {
	const slack = 123457
	check := func(t *testing.T, bin string) {
		out := fromThread(t, setSlack(slack), bin, "run", "--", "/bin/cat", "/proc/self/timerslack_ns")
		if strings.TrimSpace(out) != strconv.Itoa(slack) {
			t.Errorf("the program's timer slack %q, want the caller's, %d", strings.TrimSpace(out), slack)
		}
	}
	t.Run("entry", func(t *testing.T) { check(t, gojailBin) })
	t.Run("without-entry", func(t *testing.T) { check(t, buildGojail(t)) })
}

// setSlack sets the calling thread's timer slack to ns.
func setSlack(ns uintptr) func() error {
	return func() error {
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_SET_TIMERSLACK, ns, 0); e != 0 {
			return e
		}
		return nil
	}
}

// fromThread runs a command from a thread that setup prepared (the command
// inherits what it set: its affinity, its timer slack), and returns its
// output.
func fromThread(t *testing.T, setup func() error, name string, args ...string) string {
	t.Helper()
	var out []byte
	err := onOwnThread(setup, func() (err error) {
		out, err = exec.Command(name, args...).Output()
		return err
	})
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// onOwnThread calls setup, then do, on a thread of their own. The thread
// is left locked, and so ends with the goroutine: what setup changed is
// not given back to the runtime's other goroutines.
func onOwnThread(setup, do func() error) error {
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		if err := setup(); err != nil {
			done <- err
			return
		}
		done <- do()
	}()
	return <-done
}

// gojail initialises package utc (which keeps BurntSushi/toml from reading
// /etc/localtime as gojail starts) before package time.
func TestUTCBeforeTime(t *testing.T) {
	cmd := exec.Command(gojailBin, "--help")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	utcAt, timeAt := -1, -1
	for i, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "init github.com/gojail/gojail/cmd/gojail/internal/utc "):
			utcAt = i
		case strings.HasPrefix(line, "init time "):
			timeAt = i
		}
	}
	if utcAt < 0 || timeAt < 0 || utcAt > timeAt {
		t.Fatalf("package utc initialised at line %d, time at %d (-1: not at all), want utc first:\n%s", utcAt, timeAt, out)
	}
}

// The program runs on the CPUs its caller may use, no fewer: the init is
// moved off the caller's CPU until its release (jail.spread) and takes the
// caller's set back before pid 2 is cloned. Checked for a caller on every
// CPU and for one held to each single CPU, with the entry's init and with
// the one a build without the entry starts.
func TestCPUAffinityKept(t *testing.T) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	if all.Count() < 2 {
		t.Skip("one CPU to run on: the init has no other to be moved to")
	}
	sets := []unix.CPUSet{all}
	for cpu := 0; cpu < 1024 && len(sets) < 3; cpu++ {
		if all.IsSet(cpu) {
			var one unix.CPUSet
			one.Set(cpu)
			sets = append(sets, one)
		}
	}
	check := func(t *testing.T, bin string) {
		for _, set := range sets {
			onCPUs := func() error { return unix.SchedSetaffinity(0, &set) }
			host := fromThread(t, onCPUs, "/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status")
			out := fromThread(t, onCPUs, bin, "run", "--", "/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status")
			if !strings.HasPrefix(host, "Cpus_allowed_list:") || out != host {
				t.Errorf("caller on %q: the program's %q, want %q", strings.TrimSpace(host), strings.TrimSpace(out), strings.TrimSpace(host))
			}
		}
	}
	t.Run("entry", func(t *testing.T) { check(t, gojailBin) })
	t.Run("without-entry", func(t *testing.T) { check(t, buildGojail(t)) })
}

// On cgroup v1 the init cloned at the entry writes the run's limits into
// the directories it made, and opens their tasks files, by which pid 2
// joins the cgroup (Early.askLimits): each hierarchy holds the program,
// with the limits asked for.
func TestEarlyCgroupLimits(t *testing.T) {
	probe := gojail(t, "--", "/bin/true")
	if probe.res.Enforced["memory"] != "cgroup-v1" {
		t.Skipf("the limits are written early on cgroup v1 only (enforced memory: %q)", probe.res.Enforced["memory"])
	}
	var stderr strings.Builder
	cmd := startLimited(t, &stderr, "--debug")
	defer func() {
		if !strings.Contains(stderr.String(), "cgroup: 3 of its directories made by the init before its release, and its limits written there") {
			t.Errorf("the limits were not written by the init:\n%s", stderr.String())
		}
	}()
	defer waitLimited(t, cmd)
	checkLimited(t, v1Dirs(t, "gojail"))
}

// A gojail moved to another cgroup after its entry, before its run's
// cgroup is made (here while it waits for a FIFO given as stdin), has that
// cgroup under the one it is in then, with the limits written there and
// the program in it: not in the directories its init made at the entry,
// nor through the init's descriptors of their tasks files.
func TestEarlyCgroupCallerMoved(t *testing.T) {
	probe := gojail(t, "--", "/bin/true")
	if probe.res.Enforced["memory"] != "cgroup-v1" || !isRoot() {
		t.Skipf("needs root on cgroup v1, to make the cgroup to move gojail to (enforced memory: %q)", probe.res.Enforced["memory"])
	}
	moved := v1Dirs(t, fmt.Sprintf("gojail-test-moved-%d", os.Getpid()))
	for _, dir := range moved {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { // after the run's own are removed (waitLimited)
		for _, dir := range moved {
			if err := os.Remove(filepath.Join(dir, "gojail")); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("remove %s/gojail: %v", dir, err)
			}
			if err := os.Remove(dir); err != nil {
				t.Errorf("remove %s: %v", dir, err)
			}
		}
	}()
	fifo := filepath.Join(tempDir(t), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd := startLimited(t, &stderr, "--debug", "--stdin", fifo)
	defer func() {
		if want := "cgroup: the directories the init made are not taken (this process is in another cgroup since): made here"; !strings.Contains(stderr.String(), want) {
			t.Errorf("--debug does not say %q:\n%s", want, stderr.String())
		}
	}()
	defer waitLimited(t, cmd)
	waitFor(t, func() bool { return len(ourCgroups(t)) > 0 }) // the init's directories
	for _, dir := range moved {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(fifo, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var parents []string
	for _, dir := range moved {
		parents = append(parents, filepath.Join(dir, "gojail"))
	}
	checkLimited(t, parents)
}

// v1Dirs are the directories name in this process's memory, pids and
// cpuacct hierarchies (cgroup v1).
func v1Dirs(t *testing.T, name string) []string {
	t.Helper()
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, ctrl := range []string{"memory", "pids", "cpuacct"} {
		for _, line := range strings.Split(string(own), "\n") {
			if f := strings.SplitN(line, ":", 3); len(f) == 3 && slices.Contains(strings.Split(f[1], ","), ctrl) {
				dirs = append(dirs, filepath.Join("/sys/fs/cgroup", ctrl, f[2], name))
			}
		}
	}
	if len(dirs) != 3 {
		t.Fatalf("the memory, pids and cpuacct hierarchies in /proc/self/cgroup: %q", own)
	}
	return dirs
}

// startLimited starts gojail on a second's sleep with a memory and a
// process limit (checkLimited), its stderr to stderr if not nil.
func startLimited(t *testing.T, stderr io.Writer, args ...string) *exec.Cmd {
	t.Helper()
	args = append(append([]string{"run", "--memory", "100MiB", "--pids", "7", "--timeout", "20s"}, args...), "--", "/bin/sleep", "1")
	cmd := exec.Command(gojailBin, args...)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	track(cmd)
	return cmd
}

// waitLimited waits for startLimited's gojail, which must succeed and leave
// no cgroup directory (its keeper removes them once it has exited).
func waitLimited(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Wait(); err != nil {
		t.Errorf("gojail: %v", err)
	}
	if left := ourCgroupsLeft(t); len(left) != 0 {
		t.Errorf("cgroup directories left behind: %q", left)
	}
}

// checkLimited finds startLimited's run under parents (the memory, pids
// and cpuacct hierarchies' gojail directories, v1Dirs' order), and checks
// that each holds the program, and the memory and pids hierarchies its
// limits.
func checkLimited(t *testing.T, parents []string) {
	t.Helper()
	var run, tasks string
	waitFor(t, func() bool {
		runs, _ := filepath.Glob(filepath.Join(parents[0], "[0-9]*")) // a run's name, not a control file
		if len(runs) != 1 {
			return false
		}
		run = filepath.Base(runs[0])
		b, _ := os.ReadFile(filepath.Join(runs[0], "tasks"))
		tasks = strings.TrimSpace(string(b))
		return tasks != ""
	})
	limit := [][2]string{{"memory.limit_in_bytes", "104857600"}, {"pids.max", "7"}} // the memory and pids hierarchies'
	for i, parent := range parents {
		dir := filepath.Join(parent, run)
		if b, err := os.ReadFile(filepath.Join(dir, "tasks")); err != nil || strings.TrimSpace(string(b)) != tasks {
			t.Errorf("%s: tasks %q (%v), want %q, as the memory hierarchy's", dir, b, err, tasks)
		}
		if i >= len(limit) {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, limit[i][0])); err != nil || strings.TrimSpace(string(b)) != limit[i][1] {
			t.Errorf("%s/%s: %q (%v), want %s", dir, limit[i][0], b, err, limit[i][1])
		}
	}
}

// The init cloned at the entry makes the run's cgroup directories while it
// waits for its release (three on v1, one on v2), and the run takes them;
// a run that discards the init (its policy file wants the host's
// network), or that never starts (invalid input), leaves none of them
// behind: the init removes what it made when its release pipe reads EOF.
func TestEarlyCgroupDirs(t *testing.T) {
	probe := gojail(t, "--", "/bin/true")
	dirs := map[string]int{"cgroup-v1": 3, "cgroup-v2": 1}[probe.res.Enforced["memory"]]
	if dirs == 0 {
		t.Skipf("no cgroup for this user (enforced memory: %q): no directories to make", probe.res.Enforced["memory"])
	}
	r, debug := gojailDebug(t, "--", "/bin/echo", "hi")
	if r.Status != jail.StatusOK || r.Stdout != "hi\n" {
		t.Fatalf("%s %q (error %q), want ok \"hi\\n\"", r.Status, r.Stdout, r.Error)
	}
	if want := fmt.Sprintf("cgroup: %d of its directories made by the init before its release", dirs); !strings.Contains(debug, want) {
		t.Errorf("the init did not make the run's %d cgroup directories:\n%s", dirs, debug)
	}
	// On v1 it writes the limits there too (Early.askLimits).
	if wrote := strings.Contains(debug, ", and its limits written there"); wrote != (dirs == 3) {
		t.Errorf("the init wrote the limits: %v, want %v (v1 only):\n%s", wrote, dirs == 3, debug)
	}
	host := writeFile(t, tempDir(t), "host.toml", "base = \"exec\"\n[net]\nmode = \"host\"\n", 0o644)
	if o := gojail(t, "--policy", host, "--", "/bin/true"); o.res.Status != jail.StatusOK {
		t.Errorf("a policy on the host's network: %s (error %q), want ok", o.res.Status, o.res.Error)
	}
	if o := gojail(t, "--memory", "1B", "--", "/bin/true"); o.exit != 125 {
		t.Errorf("--memory 1B: exit %d, want 125", o.exit)
	}
	if left := ourCgroupsLeft(t); len(left) != 0 {
		t.Fatalf("cgroup directories left behind: %q", left)
	}

	// An init killed before its release (here while gojail waits for the
	// writer of a FIFO given as stdin) cannot remove what it made: the
	// run does, once it has reaped it.
	fifo := filepath.Join(tempDir(t), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gojailBin, "run", "--json", "--stdin", fifo, "--", "/bin/cat")
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	track(cmd)
	waitFor(t, func() bool { return len(ourCgroups(t)) > 0 })
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
	init, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || init <= 0 {
		t.Fatalf("the jail's init, a child of gojail: %q, %v", b, err)
	}
	syscall.Kill(init, syscall.SIGKILL)
	if err := os.WriteFile(fifo, []byte("hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	var killed jail.Result
	if err := jsonUnmarshal([]byte(stdout.String()), &killed); err != nil || killed.Status != jail.StatusInternalError {
		t.Errorf("the init killed before its release: %s (error %q, %v), want internal_error", killed.Status, killed.Error, err)
	}
	if left := ourCgroupsLeft(t); len(left) != 0 {
		t.Fatalf("cgroup directories left behind by a run whose init was killed: %q", left)
	}

	// gojail itself killed before the release: its init, whose death
	// signal is held until then, sees the release pipe's EOF and removes
	// them.
	cmd = exec.Command(gojailBin, "run", "--json", "--stdin", fifo, "--", "/bin/cat")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	track(cmd)
	waitFor(t, func() bool { return len(ourCgroups(t)) > 0 })
	cmd.Process.Kill()
	cmd.Wait()
	if left := ourCgroupsLeft(t); len(left) != 0 {
		t.Fatalf("cgroup directories left behind by a gojail killed before its release: %q", left)
	}
}
