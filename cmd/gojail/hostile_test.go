package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gojail/gojail/jail"
)

// hostileCase is one attack of testdata/hostile: the program, the exact
// verdict it must get, what it must print, and what must hold on the host.
type hostileCase struct {
	name   string
	file   string   // in testdata/hostile
	flags  []string // before FILE
	status jail.Status
	exit   int
	stdout string                                            // exact, unless has is set
	has    string                                            // stdout or error contains this
	host   func(t *testing.T) ([]string, func(t *testing.T)) // before the run: more flags, and the check after it
	// cgroup: only with a cgroup (the rlimit fallback bounds no kernel memory)
	cgroup bool
}

// anyExit: the exit code depends on the mechanism that enforced the limit.
const anyExit = -1

func hostileCases() []hostileCase {
	return []hostileCase{
		{name: "fork bomb", file: "fork_bomb.py", flags: []string{"--pids", "16", "--timeout", "2s"}, status: jail.StatusTimeLimit, exit: 124, has: "wall-clock limit"},
		{name: "thread bomb", file: "thread_bomb.py", flags: []string{"--pids", "32"}, status: jail.StatusOK, stdout: "thread limit reached\n"},
		// 137 (the OOM killer) with a cgroup, 1 (MemoryError) under the rlimit fallback.
		{name: "memory bomb", file: "memory_bomb.py", flags: []string{"--memory", "64MiB"}, status: jail.StatusMemoryLimit, exit: anyExit, has: "memory limit of 64MiB"},
		{name: "filling /tmp", file: "fill_tmp.py", status: jail.StatusOK, stdout: "ENOSPC 8\n", host: diskUnchanged},
		{name: "inode exhaustion", file: "inode_exhaustion.py", status: jail.StatusOK, stdout: "ENOSPC True\n"},
		{name: "huge file write", file: "huge_file.sh", status: jail.StatusOutputLimit, exit: 128 + 25, has: "file size limit of 16MiB"},
		{name: "stdout flood", file: "stdout_flood.sh", flags: []string{"--output-limit", "64KiB", "--timeout", "60s"}, status: jail.StatusOK, has: ""},
		{name: "binary output", file: "binary_output.py", status: jail.StatusOK, has: "\x00\x01\x02"},
		{name: "CPU spin ignoring SIGTERM and SIGXCPU", file: "spin_ignore_signals.py", flags: []string{"--cpu-time", "1s", "--timeout", "10s"}, status: jail.StatusTimeLimit, exit: 124, has: "CPU-time limit of 1s"},
		{name: "sleep forever", file: "sleep_forever.sh", flags: []string{"--timeout", "500ms"}, status: jail.StatusTimeLimit, exit: 124, has: "wall-clock limit of 500ms"},
		{name: "stops itself", file: "stop_self.sh", flags: []string{"--timeout", "500ms"}, status: jail.StatusTimeLimit, exit: 124, has: "wall-clock limit of 500ms"},
		{name: "blocking read on stdin", file: "read_stdin.py", status: jail.StatusOK, stdout: "''\n"},
		{name: "double-fork daemon", file: "double_fork_daemon.sh", status: jail.StatusOK, stdout: "parent exits\n", host: markerEnv},
		{name: "network to the outside and DNS", file: "network_outside.py", status: jail.StatusOK,
			stdout: "tcp 1.1.1.1:53 OSError\ndns gaierror\nudp 8.8.8.8:53 OSError\n"},
		{name: "TCP to the host's 127.0.0.1", file: "network_host_loopback.py", flags: []string{"--net", "loopback"}, status: jail.StatusOK, stdout: "ConnectionRefusedError\n", host: hostListener},
		{name: "host unix sockets", file: "host_unix_sockets.py", status: jail.StatusOK, host: hostAbstractSocket,
			stdout: "'/run/systemd/private' FileNotFoundError\n'/var/run/docker.sock' FileNotFoundError\n'/run/dbus/system_bus_socket' FileNotFoundError\n'\\x00/tmp/.X11-unix/X0' ConnectionRefusedError\n'\\x00gojail-host-abstract' ConnectionRefusedError\n"},
		{name: "host secrets", file: "host_secrets.py", status: jail.StatusOK,
			stdout: "/etc/shadow FileNotFoundError\n/root/.ssh FileNotFoundError\n/home FileNotFoundError\n/proc/1/environ PermissionError\n/proc/1/root/etc/shadow PermissionError\n/proc/1/mem PermissionError\n/proc/1/cwd/x PermissionError\n/proc/1/fd PermissionError\nenv []\n"},
		{name: "kernel files: kcore, sysrq, /proc/sys, /sys, cgroups", file: "proc_sys_kernel.sh", status: jail.StatusOK,
			stdout: "/proc/kcore no\n/dev/kmsg no\n/dev/mem no\n/sys/fs/cgroup no\n/proc/sysrq-trigger no\n/proc/sys/kernel/hostname no\n/proc/sys/vm/drop_caches no\n/proc/sys/kernel/core_pattern no\ncgroup no\n", host: hostnameUnchanged},
		{name: "writes to /usr, /etc, /, /dev; remount; mknod", file: "write_system_dirs.sh", status: jail.StatusOK,
			stdout: "/usr/bin/evil no\n/etc/passwd no\n/evil no\n/dev/evil no\n/usr/lib/evil.so no\nchmod no\nremount no\nmknod no\n"},
		{name: "symlinks planted for the host", file: "symlink_plant.sh", status: jail.StatusOK, stdout: "links dangle\n", host: shadowUnchanged},
		{name: "setuid binaries", file: "setuid_binaries.sh", status: jail.StatusOK, stdout: "su no\npasswd no\nUid: 1000 1000 1000 1000\nNoNewPrivs: 1\n"},
		{name: "raising the hard limits", file: "raise_limits.py", status: jail.StatusOK,
			stdout: "RLIMIT_NOFILE ValueError\nRLIMIT_CPU ValueError\nRLIMIT_FSIZE ValueError\nRLIMIT_NPROC ValueError\n"},
		// Both end at once (it waited for the pipes' EOF, which came only
		// when another process's descriptor passing ran the kernel's
		// collector: 600 s against a 2 s limit, SIGTERM unanswered).
		{name: "output pipes held in flight, then exit", file: "output_in_flight.py", flags: []string{"--timeout", "2s"}, status: jail.StatusOK, stdout: "loop made\n", host: within(2 * time.Second)},
		{name: "output pipes held in flight, then spin", file: "output_in_flight.py", flags: []string{"--timeout", "1s", "--env", "SPIN=1"}, status: jail.StatusTimeLimit, exit: 124, has: "wall-clock limit of 1s", host: within(3 * time.Second)},
		{name: "kill(-1, SIGKILL) from inside", file: "kill_everything.sh", status: jail.StatusOK, stdout: "unreachable\n", host: hostProcessSurvives},
		{name: "kernel memory in socket buffers, OOM killer aimed at the program", file: "socket_memory.py", flags: []string{"--timeout", "20s", "--cpu-time", "10s"}, status: jail.StatusMemoryLimit, exit: 128 + 9, has: "OOM killer ended", cgroup: true},
		{name: "queued signals (charged to the host user too)", file: "signal_queue.py", status: jail.StatusOK, stdout: "queued 256\n"},
		{name: "the init's command line (the supervisor's)", file: "init_cmdline.py", status: jail.StatusOK, stdout: "b''\n"},
		{name: "forbidden system calls (the C probe)", file: "", status: jail.StatusOK, has: "clone3 ENOSYS"},
		{name: "the init's command line, read at once", file: "", flags: []string{"cmdline"}, status: jail.StatusOK, stdout: "blank\n"},
		{name: "the init's memory (a copy of the supervisor's)", file: "", flags: []string{"init"}, status: jail.StatusOK,
			stdout: "open /proc/1/mem: EACCES\npidfd_open(1): opened\npidfd_getfd: EPERM\n"},
		{name: "i386 int 0x80", file: "", flags: []string{"int80"}, status: jail.StatusSyscallBlocked, exit: 128 + 9, has: "i386 system call 20 (int 0x80)"},
		{name: "x32 system call", file: "", flags: []string{"x32"}, status: jail.StatusSyscallBlocked, exit: 128 + 9, has: "x32 system call getpid"},
	}
}

func TestHostile(t *testing.T) {
	dir, _ := filepath.Abs("../../testdata/hostile")
	probe := compileFile(t, "../../testdata/programs/sysprobe.c")
	var table []string
	before := countHost(t)
	withCg := cgroupAvailable(t)
	for _, tc := range hostileCases() {
		ok := t.Run(tc.name, func(t *testing.T) {
			if tc.cgroup && !withCg {
				table = append(table, fmt.Sprintf("| %s | %s | skipped: no cgroup |", tc.name, tc.status))
				t.Skip("no cgroup for this user: without one, kernel memory (socket buffers) is not bounded (README: limits)")
			}
			var after func(*testing.T)
			flags := tc.flags
			if tc.host != nil {
				var more []string
				more, after = tc.host(t)
				flags = append(append([]string{}, more...), flags...)
			}
			var o outcome
			if tc.file == "" {
				o = gojail(t, append([]string{"--policy", "exec", probe}, flags...)...)
			} else {
				o = gojail(t, append(flags, filepath.Join(dir, tc.file))...)
			}
			expected := fmt.Sprintf("%s (exit %d)", tc.status, tc.exit)
			if tc.exit == anyExit {
				expected = fmt.Sprintf("%s (any exit)", tc.status)
				tc.exit = o.exit
			}
			table = append(table, fmt.Sprintf("| %s | %s | %s (exit %d) |", tc.name, expected, o.res.Status, o.exit))
			o.want(t, tc.status, tc.exit)
			switch {
			case tc.has != "":
				if !strings.Contains(o.res.Stdout+o.res.Error, tc.has) {
					t.Fatalf("stdout %q and error %q do not hold %q", o.res.Stdout, o.res.Error, tc.has)
				}
			case tc.stdout != "" || tc.status == jail.StatusOK && tc.file != "stdout_flood.sh":
				if o.res.Stdout != tc.stdout {
					t.Fatalf("stdout %q, want %q", o.res.Stdout, tc.stdout)
				}
			}
			if tc.file == "" && len(tc.flags) == 0 {
				for _, line := range strings.Split(strings.TrimSpace(o.res.Stdout), "\n") {
					if name, got, _ := strings.Cut(line, " "); got != probeAnswer(name) {
						t.Errorf("probe: %s", line)
					}
				}
			}
			if after != nil {
				after(t)
			}
			// After every outcome: no process, mount, temp entry or cgroup left.
			waitFor(t, func() bool { return countHost(t) == before })
			if left := ourCgroupsLeft(t); len(left) > 0 {
				t.Fatalf("run cgroups left: %v", left)
			}
		})
		if !ok {
			table[len(table)-1] += " FAILED"
		}
	}
	if os.Getenv("GOJAIL_HOSTILE_TABLE") != "" {
		fmt.Println("| attack | expected | observed |\n|---|---|---|")
		fmt.Println(strings.Join(table, "\n"))
	}
}

// diskUnchanged: the host's free space on the temp directory's file system
// does not drop by what the jail wrote.
func diskUnchanged(t *testing.T) ([]string, func(*testing.T)) {
	free := func() int64 {
		var st syscall.Statfs_t
		syscall.Statfs(os.TempDir(), &st)
		return int64(st.Bavail) * st.Bsize
	}
	was := free()
	return nil, func(t *testing.T) {
		if now := free(); was-now > 32<<20 {
			t.Fatalf("the host lost %d MB of disk", (was-now)>>20)
		}
	}
}

// within: gojail itself ends within d of its start.
func within(d time.Duration) func(t *testing.T) ([]string, func(*testing.T)) {
	return func(t *testing.T) ([]string, func(*testing.T)) {
		start := time.Now()
		return nil, func(t *testing.T) {
			if took := time.Since(start); took > d {
				t.Fatalf("gojail took %v, want at most %v", took, d)
			}
		}
	}
}

// hostListener listens on the host's loopback; the jail gets the port and
// must not connect.
func hostListener(t *testing.T) ([]string, func(*testing.T)) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan bool, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
			accepted <- true
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	return []string{"--env", "PORT=" + port}, func(t *testing.T) {
		ln.Close()
		select {
		case <-accepted:
			t.Fatal("the host listener accepted a connection from the jail")
		default:
		}
	}
}

// hostAbstractSocket listens on an abstract unix socket of the host.
func hostAbstractSocket(t *testing.T) ([]string, func(*testing.T)) {
	ln, err := net.Listen("unix", "@gojail-host-abstract")
	if err != nil {
		t.Fatal(err)
	}
	return nil, func(t *testing.T) { ln.Close() }
}

func hostnameUnchanged(t *testing.T) ([]string, func(*testing.T)) {
	was, _ := os.Hostname()
	return nil, func(t *testing.T) {
		if now, _ := os.Hostname(); now != was {
			t.Fatalf("host name changed from %q to %q", was, now)
		}
	}
}

func shadowUnchanged(t *testing.T) ([]string, func(*testing.T)) {
	st, err := os.Stat("/etc/shadow")
	if err != nil {
		return nil, func(*testing.T) {}
	}
	return nil, func(t *testing.T) {
		now, err := os.Stat("/etc/shadow")
		if err != nil || now.ModTime() != st.ModTime() || now.Mode() != st.Mode() {
			t.Fatal("/etc/shadow changed")
		}
	}
}

// hostProcessSurvives starts a host process that the jail's kill(-1) must
// not reach: rootless, of the tests' own user, which is the jail's host
// user; as root, of an id in the range the jails' host ids are drawn from
// (jail/userns.go), each jail its own.
func hostProcessSurvives(t *testing.T) ([]string, func(*testing.T)) {
	cmd := exec.Command("sleep", "30")
	if isRoot() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 2_000_001_000, Gid: 2_000_001_000}}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return nil, func(t *testing.T) {
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		time.Sleep(50 * time.Millisecond)
		if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
			t.Fatalf("a host process of the jail's user died: %v", err)
		}
	}
}

// markerEnv passes this test process's marker to the jail, which tags its
// processes with it.
func markerEnv(t *testing.T) ([]string, func(*testing.T)) {
	return []string{"--env", "MARKER=" + marker}, nil
}
