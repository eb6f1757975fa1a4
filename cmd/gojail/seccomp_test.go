package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/jail"
)

// Every system call the default profile refuses answers EPERM inside the
// jail (clone3: ENOSYS, so that libc falls back to clone; preadv2's
// RWF_NOWAIT: EOPNOTSUPP, as for a file that cannot do it).
func TestDefaultProfileInTheJail(t *testing.T) {
	probe := compileFile(t, "../../testdata/programs/sysprobe.c")
	o := gojail(t, "--policy", "exec", probe)
	o.want(t, jail.StatusOK, 0)
	lines := strings.Split(strings.TrimSpace(o.res.Stdout), "\n")
	if len(lines) != 55 {
		t.Fatalf("%d probes ran, want 55:\n%s", len(lines), o.res.Stdout)
	}
	for _, line := range lines {
		name, got, _ := strings.Cut(line, " ")
		if want := probeAnswer(name); strings.TrimSpace(got) != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}

	for _, abi := range []struct{ arg, errHas string }{
		{"int80", "i386 system call 20 (int 0x80): foreign system-call ABIs are killed"},
		{"x32", "x32 system call getpid: foreign system-call ABIs are killed"},
		{"x32sendmsg", "blocked x32 system call 518: foreign system-call ABIs are killed"},
	} {
		t.Run(abi.arg, func(t *testing.T) {
			o := gojail(t, "--policy", "exec", probe, abi.arg)
			o.want(t, jail.StatusSyscallBlocked, 128+9)
			if o.res.Stdout != "" || !strings.Contains(o.res.Error, abi.errHas) {
				t.Fatalf("stdout %q, error %q", o.res.Stdout, o.res.Error)
			}
		})
	}
}

// probeAnswer is the errno the default profile gives sysprobe's call name.
func probeAnswer(name string) string {
	switch name {
	case "clone3":
		return "ENOSYS"
	case "preadv2(RWF_NOWAIT)":
		return "EOPNOTSUPP"
	}
	return "EPERM"
}

// A policy can turn any refusal into a kill; the verdict names the call.
func TestKillRule(t *testing.T) {
	dir := tempDir(t)
	pol := writeFile(t, dir, "kill.toml", `base = "python"
[[seccomp.rules]]
syscalls = ["mount", "ptrace"]
action = "kill"

[[seccomp.rules]]
syscalls = ["getppid"]
action = "errno"
errno = "EACCES"
`, 0o644)
	t.Run("a killed call", func(t *testing.T) {
		o := gojail(t, "--policy", pol, "-c", "import ctypes\nprint('before', flush=True)\nctypes.CDLL(None).mount(b'x', b'/tmp', b'tmpfs', 0, None)\nprint('after')")
		o.want(t, jail.StatusSyscallBlocked, 128+9)
		if o.res.Stdout != "before\n" || o.res.Error != "blocked mount: the seccomp policy kills it" {
			t.Fatalf("stdout %q, error %q", o.res.Stdout, o.res.Error)
		}
	})
	t.Run("an errno rule", func(t *testing.T) {
		o := gojail(t, "--policy", pol, "-c", "import os\ntry:\n    os.getppid()\nexcept OSError as e:\n    print(e.errno)\nelse:\n    print(os.getppid())")
		o.want(t, jail.StatusOK, 0)
		// getppid cannot fail in C; Python returns the -1 as is.
		if o.res.Stdout != "-13\n" && o.res.Stdout != "13\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
	})
	t.Run("the profile's other refusals stay", func(t *testing.T) {
		o := gojail(t, "--policy", pol, "-c", "import ctypes, ctypes.util\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.chroot(b'/tmp'), ctypes.get_errno())")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "-1 1\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
	})
	// The filter is loaded before execve: a rule that traps execve itself
	// raises SIGSYS in pid 2, whose handler is the default one there, not
	// the Go runtime's it inherited (which would fault: signaled SIGSEGV).
	t.Run("a trapped execve", func(t *testing.T) {
		trap := writeFile(t, dir, "trap.toml", "base = \"python\"\n[[seccomp.rules]]\nsyscalls = [\"execve\"]\naction = \"trap\"\n", 0o644)
		o := gojail(t, "--policy", trap, "-c", "print(1)")
		o.want(t, jail.StatusSyscallBlocked, 128+31)
		if o.res.Signal != "SIGSYS" || o.res.Stdout != "" {
			t.Fatalf("signal %q, stdout %q, error %q: want SIGSYS before the program", o.res.Signal, o.res.Stdout, o.res.Error)
		}
	})
	// A rule on a call the jail's own last steps make, not the program:
	// the filter, loaded before them when it allows them, must not see it.
	t.Run("a killed rt_sigaction, which /bin/true never calls", func(t *testing.T) {
		rts := writeFile(t, dir, "rts.toml", "base = \"sh\"\n[[seccomp.rules]]\nsyscalls = [\"rt_sigaction\"]\naction = \"kill\"\n", 0o644)
		gojail(t, "--policy", rts, "--", "/bin/true").want(t, jail.StatusOK, 0)
	})
	// The jail sends the filter's listener with sendmsg, under the filter:
	// a rule that refuses sendmsg refused that too, and every run with it
	// (a kill rule's run ended time_limit, the program never started). The
	// program's own sendmsg is still refused.
	t.Run("a killed sendmsg", func(t *testing.T) {
		sm := writeFile(t, dir, "sendmsg.toml", "base = \"python\"\n[limits]\nwall_time = \"3s\"\n[[seccomp.rules]]\nsyscalls = [\"sendmsg\"]\naction = \"kill\"\n", 0o644)
		o := gojail(t, "--policy", sm, "-c", "import socket\nprint('before', flush=True)\na, b = socket.socketpair()\na.sendmsg([b'x'])\nprint('after')")
		o.want(t, jail.StatusSyscallBlocked, 128+9)
		if o.res.Stdout != "before\n" || o.res.Error != "blocked sendmsg: the seccomp policy kills it" {
			t.Fatalf("stdout %q, error %q", o.res.Stdout, o.res.Error)
		}
		cmd := exec.Command(gojailBin, "batch", "--policy", sm)
		cmd.Stdin = strings.NewReader(`{"code": "print(1)"}` + "\n")
		out, err := cmd.Output()
		var r jail.Result
		json.Unmarshal(out, &r)
		if err != nil || r.Status != jail.StatusOK || r.Stdout != "1\n" {
			t.Fatalf("batch: %v, %s %q, stdout %q", err, r.Status, r.Error, r.Stdout)
		}
	})
	// A rule on socket replaces the profile's, which refuse families other
	// than unix, inet and inet6: policy check says so, and it is so.
	t.Run("a rule that replaces the profile's argument checks", func(t *testing.T) {
		v6 := writeFile(t, dir, "v6.toml", "base = \"python\"\n[[seccomp.rules]]\nsyscalls = [\"socket\"]\naction = \"errno\"\nargs = [{index = 0, op = \"==\", value = 10}]\n", 0o644)
		out, err := exec.Command(gojailBin, "policy", "check", v6).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "note: seccomp rule 1 replaces the default profile's rules for socket") {
			t.Fatalf("policy check: %v\n%s", err, out)
		}
		o := gojail(t, "--policy", v6, "-c", "import socket\nfor f in (10, 16):\n    try:\n        socket.socket(f, socket.SOCK_DGRAM, 0)\n        print(f, 'made')\n    except OSError as e:\n        print(f, e.errno)")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "10 1\n16 made\n" {
			t.Fatalf("stdout %q: the rule replaced the profile's refusal of netlink (16)", o.res.Stdout)
		}
		out, err = exec.Command(gojailBin, "policy", "check", pol).CombinedOutput()
		if err != nil || strings.Contains(string(out), "note:") {
			t.Fatalf("policy check of rules the profile checks no argument of: %v\n%s", err, out)
		}
	})
	t.Run("policy check names an unknown system call and its rule", func(t *testing.T) {
		bad := writeFile(t, dir, "bad.toml", "base = \"python\"\n[[seccomp.rules]]\nsyscalls = [\"getpid\", \"frobnicate\"]\naction = \"kill\"\n", 0o644)
		out, err := exec.Command(gojailBin, "policy", "check", bad).CombinedOutput()
		if err == nil || !strings.Contains(string(out), `seccomp rule 1: unknown system call "frobnicate" on x86_64`) {
			t.Fatalf("policy check: %v\n%s", err, out)
		}
		o := gojail(t, "--policy", bad, "-c", "print(1)")
		o.want(t, jail.StatusInvalidInput, 125)
		// Named too when another problem keeps the filter from being
		// compiled (it was left out).
		both := writeFile(t, dir, "both.toml", "base = \"python\"\n[run]\nuid = 0\n[[seccomp.rules]]\nsyscalls = [\"frobnicate\"]\naction = \"kill\"\n", 0o644)
		out, err = exec.Command(gojailBin, "policy", "check", both).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "run.uid 0") || !strings.Contains(string(out), `seccomp rule 1: unknown system call "frobnicate"`) {
			t.Fatalf("policy check: %v\n%s", err, out)
		}
	})
}

// Ordinary programs keep working under the default profile.
func TestOrdinaryPrograms(t *testing.T) {
	tests := []struct {
		name, policy, code, want string
	}{
		{"python threads, subprocess, multiprocessing, sqlite", "python", `
import threading, subprocess, multiprocessing, sqlite3
out = []
ts = [threading.Thread(target=out.append, args=(i,)) for i in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print(sorted(out))
print(subprocess.run(["echo", "sub"], capture_output=True, text=True).stdout.strip())
def sq(x): return x * x
if __name__ == "__main__":
    with multiprocessing.Pool(2) as p: print(p.map(sq, [1, 2, 3]))
db = sqlite3.connect(":memory:"); db.execute("create table t(x)"); db.execute("insert into t values (42)")
print(db.execute("select x from t").fetchone()[0])
`, "[0, 1, 2, 3]\nsub\n[1, 4, 9]\n42\n"},
		// 1GiB: without a cgroup memory is an address-space rlimit, and
		// OpenBLAS reserves address space for a thread per CPU.
		{"numpy and pandas", "python --memory 1GiB", "import numpy, pandas\nprint(numpy.arange(10).sum(), pandas.DataFrame({'a': [1, 2, 3]}).a.sum())", "45 6\n"},
		{"node with child_process", "node", `const cp = require("child_process"); console.log(cp.execSync("echo child").toString().trim())`, "child\n"},
		{"a bash pipeline", "bash", "seq 1 100 | sort -rn | head -1 | tr 0 x; echo $(( $(seq 10 | paste -sd+) ))", "1xx\n55\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			policy, more, _ := strings.Cut(tc.policy, " ")
			flags := append([]string{"--policy", policy, "--timeout", "20s"}, strings.Fields(more)...)
			o := gojail(t, append(flags, "-c", tc.code)...)
			o.want(t, jail.StatusOK, 0)
			if o.res.Stdout != tc.want {
				t.Fatalf("stdout %q, want %q\nstderr %s", o.res.Stdout, tc.want, o.res.Stderr)
			}
		})
	}
	t.Run("a C program compiled with gcc", func(t *testing.T) {
		bin := compile(t, "#include <stdio.h>\n#include <pthread.h>\nstatic void *f(void *a) { return a; }\nint main(void) { pthread_t t; pthread_create(&t, 0, f, 0); pthread_join(t, 0); puts(\"threads ok\"); return 0; }")
		o := gojail(t, "--policy", "exec", bin)
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "threads ok\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
	})
}

// compileFile compiles a C file of testdata.
func compileFile(t *testing.T, path string) string {
	t.Helper()
	src, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return compile(t, "#include \""+src+"\"\n")
}

// --seccomp-log records every refusal with its rule, and answers it as the
// policy would: the program sees the same errors.
func TestSeccompLog(t *testing.T) {
	o := gojail(t, "--seccomp-log", "-c", `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(libc.mount(b"x", b"/tmp", b"tmpfs", 0, None), ctypes.get_errno())
for _ in range(2):
    print(libc.chroot(b"/tmp"), ctypes.get_errno())
`)
	o.want(t, jail.StatusOK, 0)
	if o.res.Stdout != "-1 1\n-1 1\n-1 1\n" {
		t.Fatalf("stdout %q", o.res.Stdout)
	}
	want := []jail.SeccompEvent{
		{Syscall: "mount", Action: "errno EPERM", Rule: "rule 1 of the default profile", Count: 1},
		{Syscall: "chroot", Action: "errno EPERM", Rule: "rule 1 of the default profile", Count: 2},
	}
	var got []jail.SeccompEvent
	for _, e := range o.res.SeccompLog {
		if e.Syscall != "clone3" { // python may start a thread; clone3 answers ENOSYS
			got = append(got, e)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("seccomp_log %+v, want %+v", o.res.SeccompLog, want)
	}
	t.Run("a kill rule still kills", func(t *testing.T) {
		pol := writeFile(t, tempDir(t), "kill.toml", "base = \"python\"\n[[seccomp.rules]]\nsyscalls = [\"mount\"]\naction = \"kill\"\n", 0o644)
		o := gojail(t, "--seccomp-log", "--policy", pol, "-c", "import ctypes\nctypes.CDLL(None).mount(b'x', b'/tmp', b'tmpfs', 0, None)\nprint('after')")
		o.want(t, jail.StatusSyscallBlocked, 128+9)
		if o.res.Stdout != "" || len(o.res.SeccompLog) == 0 || o.res.SeccompLog[len(o.res.SeccompLog)-1] != (jail.SeccompEvent{Syscall: "mount", Action: "kill", Rule: "seccomp rule 1", Count: 1}) {
			t.Fatalf("stdout %q, log %+v", o.res.Stdout, o.res.SeccompLog)
		}
	})
	// A trap refuses the call and raises SIGSYS in the calling thread, as
	// without the log: the call must not run (ptrace, say, would).
	t.Run("a trap rule traps", func(t *testing.T) {
		needThreadPidfd(t)
		pol := writeFile(t, tempDir(t), "trap.toml", "base = \"python\"\n[[seccomp.rules]]\nsyscalls = [\"getppid\"]\naction = \"trap\"\n", 0o644)
		code := "import os, signal, threading\nprint('before', flush=True)\nt = threading.Thread(target=lambda: print(os.getppid(), flush=True))\nt.start(); t.join()\nprint('after')"
		o := gojail(t, "--seccomp-log", "--policy", pol, "-c", code)
		o.want(t, jail.StatusSyscallBlocked, 128+31)
		if o.res.Signal != "SIGSYS" || o.res.Stdout != "before\n" || len(o.res.SeccompLog) == 0 || o.res.SeccompLog[len(o.res.SeccompLog)-1] != (jail.SeccompEvent{Syscall: "getppid", Action: "trap", Rule: "seccomp rule 1", Count: 1}) {
			t.Fatalf("signal %q, stdout %q, log %+v", o.res.Signal, o.res.Stdout, o.res.SeccompLog)
		}
		// Without the log, the same.
		o = gojail(t, "--policy", pol, "-c", code)
		o.want(t, jail.StatusSyscallBlocked, 128+31)
		if o.res.Stdout != "before\n" {
			t.Fatalf("without the log: stdout %q", o.res.Stdout)
		}
	})
	// A program's own SIGSYS handler runs once per trapped call, as without
	// the log, and the call fails with ENOSYS (the filter's own trap leaves
	// the call's number as what it returns: no error). Python retries a
	// call that fails with EINTR: were the signal to end the wait for the
	// supervisor's answer, the call would be trapped again and again.
	t.Run("a handler of SIGSYS runs once per trapped call", func(t *testing.T) {
		needThreadPidfd(t)
		pol := writeFile(t, tempDir(t), "trap.toml", "base = \"python\"\n[[seccomp.rules]]\nsyscalls = [\"fstatfs\"]\naction = \"trap\"\n", 0o644)
		code := "import os, signal\nn = [0]\nsignal.signal(signal.SIGSYS, lambda s, f: n.__setitem__(0, n[0] + 1))\nerrs = set()\nfor _ in range(50):\n    try:\n        os.fstatvfs(0)\n    except OSError as e:\n        errs.add(e.errno)\nprint(n[0], sorted(errs))"
		for _, tc := range []struct {
			flags []string
			want  string
		}{{[]string{"--seccomp-log"}, "50 [38]\n"}, {nil, "50 []\n"}} {
			o := gojail(t, append(tc.flags, "--policy", pol, "-c", code)...)
			o.want(t, jail.StatusOK, 0)
			if o.res.Stdout != tc.want {
				t.Fatalf("%v: stdout %q, want %q (the handler run 50 times)", tc.flags, o.res.Stdout, tc.want)
			}
		}
	})
}

// needThreadPidfd skips a test of log mode's trap where the kernel has no
// pidfd of a thread (PIDFD_THREAD, Linux 6.9): the call is then refused
// without the signal.
func needThreadPidfd(t *testing.T) {
	t.Helper()
	fd, err := unix.PidfdOpen(unix.Gettid(), unix.O_EXCL)
	if err != nil {
		t.Skipf("no PIDFD_THREAD (Linux 6.9): %v; log mode answers a trap with ENOSYS alone", err)
	}
	unix.Close(fd)
}

// pid 2 loads its filter while the init builds the root when the filter
// allows every call of pid 2's steps after it (the wait for the root, its
// working directory and stdio, execve), and last when it does not: a
// policy refusing dup3 would refuse pid 2's own stdio.
func TestFilterLoadedEarly(t *testing.T) {
	pol := writeFile(t, tempDir(t), "nodup3.toml", "base = \"exec\"\n[[seccomp.rules]]\nsyscalls = [\"dup3\"]\naction = \"errno\"\nerrno = \"EPERM\"\n", 0o644)
	// Refusing the clock, it refuses --debug's marks after it: they come
	// without a time (they once showed the time since the clone from zero,
	// a large negative number).
	noClock := writeFile(t, tempDir(t), "noclock.toml", "base = \"exec\"\n[[seccomp.rules]]\nsyscalls = [\"clock_gettime\"]\naction = \"errno\"\n", 0o644)
	for _, tc := range []struct {
		policy string
		early  bool
	}{{"exec", true}, {pol, false}, {noClock, false}} {
		r, debug := gojailDebug(t, "--policy", tc.policy, "--", "/bin/echo", "hi")
		if r.Status != jail.StatusOK || r.Stdout != "hi\n" {
			t.Errorf("%s: %s %q (error %q), want ok \"hi\\n\"", tc.policy, r.Status, r.Stdout, r.Error)
		}
		if got := strings.Contains(debug, "seccomp: loaded early"); got != tc.early {
			t.Errorf("%s: filter loaded early %v, want %v", tc.policy, got, tc.early)
		}
		untimed := strings.Contains(debug, "execve next (no time: the seccomp filter refuses clock_gettime)")
		if untimed != (tc.policy == noClock) || strings.Contains(debug, ", -") {
			t.Errorf("%s: the marks after the filter:\n%s", tc.policy, debug)
		}
	}
}

// pid 2's failure after a filter loaded last is reported even when the
// filter refuses, or kills, pid 2's write of its report (a rule on write's
// descriptor): an execve that fails (E2BIG, its arguments past a small
// stack's quarter) is invalid input, the reason given, as under the
// default profile. It was a runtime error, exit 127 and no reason, or a
// blocked write of a program that never ran. A filter refusing exit_group
// does not keep pid 2 from ending at once (it spun until the CPU limit).
func TestExecFailureUnderWriteRule(t *testing.T) {
	dir := tempDir(t)
	rule := "base = \"exec\"\n[[seccomp.rules]]\nsyscalls = [\"write\"]\n%s\nargs = [{index = 0, op = \">\", value = 2}]\n"
	refuse := writeFile(t, dir, "refuse.toml", fmt.Sprintf(rule, "action = \"errno\"\nerrno = \"EPERM\""), 0o644)
	kill := writeFile(t, dir, "kill.toml", fmt.Sprintf(rule, "action = \"kill\""), 0o644)
	noExit := writeFile(t, dir, "noexit.toml", "base = \"exec\"\n[[seccomp.rules]]\nsyscalls = [\"exit_group\"]\naction = \"errno\"\nerrno = \"EPERM\"\n", 0o644)
	big := strings.Repeat("x", 100_000)
	for _, pol := range []string{"exec", refuse, kill, noExit} {
		o := gojail(t, "--policy", pol, "--stack", "256KiB", "--", "/bin/echo", big, big)
		// The same in a prepared jail.
		b := batchOne(t, fmt.Sprintf("{\"program\": \"/bin/echo\", \"args\": [%q, %q]}", big, big), "--policy", pol, "--stack", "256KiB")
		for how, r := range map[string]jail.Result{"run": o.res, "batch": b} {
			if r.Status != jail.StatusInvalidInput || !strings.Contains(r.Error, "argument list too long") || r.WallMs > 1000 {
				t.Errorf("%s, %s: %s exit %d signal %q (%q) in %.1f ms, want invalid_input, argument list too long, at once", filepath.Base(pol), how, r.Status, r.ExitCode, r.Signal, r.Error, r.WallMs)
			}
		}
	}
}
