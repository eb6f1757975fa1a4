package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/jail"
)

// Each test runs a real jail and asserts the exact status and the fact
// observed inside it.

func TestIsolation(t *testing.T) {
	secret := writeFile(t, os.TempDir(), fmt.Sprintf("gojail-host-secret-%d", os.Getpid()), "host secret", 0o644)
	defer os.Remove(secret)

	tests := []struct {
		name  string
		code  string
		flags []string
		want  string // exact stdout
	}{
		{"program is pid 2 under an init", `import os; print(os.getpid(), os.getppid())`, nil, "2 1\n"},
		{"uid and gid are not root", `import os; print(os.getuid(), os.geteuid(), os.getgid(), os.getgroups())`, nil, "1000 1000 1000 []\n"},
		{"no capabilities, bounding set empty, no new privileges",
			`print(*[l for l in open('/proc/self/status').read().splitlines() if l.split(':')[0] in ('CapInh','CapPrm','CapEff','CapBnd','CapAmb','NoNewPrivs')], sep='\n')`, nil,
			"CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\n"},
		{"own hostname", `import socket; print(socket.gethostname())`, nil, "gojail\n"},
		{"only lo is visible", `print([l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:]])`, nil, "['lo']\n"},
		{"host 127.0.0.1 unreachable", "", nil, ""}, // filled below
		{"host files absent", fmt.Sprintf(`import os; print(os.path.exists('/root'), os.path.exists(%q), os.path.exists('/etc/shadow'), os.path.exists('/home'))`, secret), nil, "False False False False\n"},
		{"/usr is not writable", `
try:
    open('/usr/gojail-test', 'w')
except OSError as e:
    print(e.errno)`, nil, "30\n"},
		{"the root is not writable", `
try:
    open('/gojail-test', 'w')
except OSError as e:
    print(e.errno)`, nil, "30\n"},
		{"work dir and /tmp are writable", `open('/work/a','w').write('x'); open('/tmp/b','w').write('y'); print(open('/work/a').read()+open('/tmp/b').read())`, nil, "xy\n"},
		// Its pages are charged outside the jail's cgroup (the init writes
		// it): writable, they would be memory the limit does not count.
		{"the submitted file cannot be written, changed or removed", `
import os, errno
def t(f):
    try:
        f()
        return 'done'
    except OSError as e:
        return errno.errorcode[e.errno]
f = '/work/main.py'
print(t(lambda: open(f, 'r+b')), t(lambda: os.truncate(f, 0)), t(lambda: os.chmod(f, 0o666)), t(lambda: os.remove(f)), t(lambda: os.rename(f, '/work/x.py')), open(f).read().count('errno'))`, nil, "EROFS EROFS EROFS EBUSY EBUSY 4\n"},
		{"no /dev/tty, own session", `import os; print(os.path.exists('/dev/tty'), os.getsid(0) == os.getpid())`, nil, "False True\n"},
		{"minimal /dev", `import os; print(sorted(os.listdir('/dev')))`, nil, "['fd', 'full', 'null', 'random', 'shm', 'stderr', 'stdin', 'stdout', 'urandom', 'zero']\n"},
		{"/proc is nosuid,nodev,noexec", `print([l.split()[5] for l in open('/proc/self/mountinfo') if l.split()[4] == '/proc'])`, nil, "['rw,nosuid,nodev,noexec,relatime']\n"},
		{"every mount is nosuid", `print(all('nosuid' in l.split()[5] for l in open('/proc/self/mountinfo')))`, nil, "True\n"},
		{"no /sys", `import os; print(os.path.exists('/sys'))`, nil, "False\n"},
		// The root is mounted over an empty file system, the namespace's
		// root: ".." from it and from every mount leads back into the jail.
		{"the root's and each mount's parent are the root", `import os; r = os.stat('/'); print([os.stat(d + '/..') == r for d in ('', '/usr', '/proc', '/tmp', '/work', '/dev')])`, nil, "[True, True, True, True, True, True]\n"},
		{"exactly the policy's environment", `import os; print(sorted(os.environ.items()))`, nil,
			"[('HOME', '/work'), ('LANG', 'C.UTF-8'), ('PATH', '/usr/local/bin:/usr/bin:/bin'), ('PYTHONDONTWRITEBYTECODE', '1'), ('PYTHONIOENCODING', 'utf-8'), ('TERM', 'dumb')]\n"},
		{"init's environment (a copy of the supervisor's) is unreadable", `
try:
    open('/proc/1/environ').read()
except OSError as e:
    print(e.errno)`, nil, "13\n"},
		// The program's own tree is all in its /proc: a process of it that
		// made itself not dumpable too (a /proc mounted hidepid=ptraceable,
		// which would hide the init, hides those as well).
		{"a not-dumpable process of the program's own is in /proc", `
import ctypes, os, time
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    ctypes.CDLL(None).prctl(4, 0)  # PR_SET_DUMPABLE
    os.write(w, b'x')
    time.sleep(5)
    os._exit(0)
os.read(r, 1)
print(os.path.exists(f'/proc/{pid}'), str(pid) in os.listdir('/proc'))
os.kill(pid, 9)`, nil, "True True\n"},
		{"--env adds a variable", `import os; print(os.environ['GREETING'])`, []string{"--env", "GREETING=hi there"}, "hi there\n"},
		{"--net loopback gives a private lo", `
import socket
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); c = socket.create_connection(s.getsockname()); print('ok')`, []string{"--net", "loopback"}, "ok\n"},
	}

	// A listener on the host's loopback that the jail must not reach.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf(`
import socket
try:
    socket.create_connection(('127.0.0.1', %d), timeout=2); print('connected')
except OSError as e:
    print(type(e).__name__)`, port)
	for i := range tests {
		if tests[i].name == "host 127.0.0.1 unreachable" {
			tests[i].code, tests[i].want = connect, "OSError\n"
		}
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := py(t, strings.TrimSpace(tc.code)+"\n", tc.flags...)
			o.want(t, jail.StatusOK, 0)
			if o.res.Stdout != tc.want {
				t.Fatalf("stdout %q, want %q (stderr %q)", o.res.Stdout, tc.want, o.res.Stderr)
			}
		})
	}

	// The same probe reaches the listener with --net host, and is refused by
	// the jail's own loopback with --net loopback: the check above can fail.
	t.Run("net host reaches the host listener", func(t *testing.T) {
		o := py(t, connect, "--net", "host")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "connected\n" {
			t.Fatalf("stdout %q, want connected", o.res.Stdout)
		}
	})
	t.Run("net loopback does not reach the host listener", func(t *testing.T) {
		o := py(t, connect, "--net", "loopback")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "ConnectionRefusedError\n" {
			t.Fatalf("stdout %q, want ConnectionRefusedError", o.res.Stdout)
		}
	})
}

func TestLeakedFdsAreClosed(t *testing.T) {
	f, err := os.Open("/etc/hostname")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// ExtraFiles become fds 3 and 4 of gojail, without close-on-exec.
	o := gojailWith(t, runOpts{extraFiles: []*os.File{f, f}}, "-c", `
import os
# The listing's own descriptor is closed by the time exists() looks.
print(sorted(int(x) for x in os.listdir('/proc/self/fd') if os.path.exists('/proc/self/fd/' + x)))`)
	o.want(t, jail.StatusOK, 0)
	if o.res.Stdout != "[0, 1, 2]\n" {
		t.Fatalf("open fds %q, want [0, 1, 2]", o.res.Stdout)
	}
}

// The filter's listener comes back on a socket at the program's
// RLIMIT_NOFILE (open_files, 256 here): a number the program can never
// have. A caller with that many files open gives the jail higher numbers,
// and the socket then goes above them: one of these runs has a jail's
// descriptor at 256 itself.
func TestListenerSocketNumber(t *testing.T) {
	f, err := os.Open("/etc/hostname")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for n := 236; n <= 256; n += 2 {
		extra := make([]*os.File, n)
		for i := range extra {
			extra[i] = f
		}
		o := gojailWith(t, runOpts{extraFiles: extra}, "-c", `
import os, fcntl
print(sorted(int(x) for x in os.listdir('/proc/self/fd') if os.path.exists('/proc/self/fd/' + x)))
for fd in (255, 256, 1 << 16):
    try:
        os.dup2(0, fd)
        print(fd, 'ok')
    except OSError as e:
        print(fd, e.strerror)
try:
    fcntl.fcntl(0, fcntl.F_DUPFD, 256)
except OSError as e:
    print('F_DUPFD 256', e.strerror)`)
		o.want(t, jail.StatusOK, 0)
		want := "[0, 1, 2]\n255 ok\n256 Bad file descriptor\n65536 Bad file descriptor\nF_DUPFD 256 Invalid argument\n"
		if o.res.Stdout != want {
			t.Fatalf("with %d files open: stdout %q, want %q", n, o.res.Stdout, want)
		}
	}
}

func TestCallerEnvironmentInvisible(t *testing.T) {
	o := gojailWith(t, runOpts{env: []string{"GOJAIL_TEST_SECRET=s3cr3t"}}, "-c", `
import os
print('GOJAIL_TEST_SECRET' in os.environ, b's3cr3t' in open('/proc/self/environ','rb').read())`)
	o.want(t, jail.StatusOK, 0)
	if o.res.Stdout != "False False\n" {
		t.Fatalf("stdout %q", o.res.Stdout)
	}
}

// The caller's kernel keys are not listed in the jail's /proc/keys:
// rootless, the jail's processes are the caller's host user, who may view
// them (as root, each jail is a user of its own).
func TestCallerKeysInvisible(t *testing.T) {
	desc := fmt.Sprintf("gojail-test-key-%d", os.Getpid())
	id, err := unix.AddKey("user", desc, []byte("secret"), unix.KEY_SPEC_PROCESS_KEYRING)
	if err != nil {
		t.Skipf("add_key: %v (no keyring here)", err)
	}
	defer unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
	if host, _ := os.ReadFile("/proc/keys"); !bytes.Contains(host, []byte(desc)) {
		t.Fatalf("the key is not in the caller's own /proc/keys:\n%s", host)
	}
	o := py(t, `print(repr(open('/proc/keys').read()), repr(open('/proc/key-users').read()))`)
	o.want(t, jail.StatusOK, 0)
	if o.res.Stdout != "'' ''\n" {
		t.Fatalf("the jail's /proc/keys and /proc/key-users: %q, want both empty", o.res.Stdout)
	}
}

// Signals the caller ignored (nohup, a shell's background job) are at their
// default in the jail; so is the signal mask. SIGCHLD among them: the
// jail's init, cloned before the runtime replaced its disposition, still
// reads the program's exit status.
func TestSignalDispositionsReset(t *testing.T) {
	// The host's network from the policy file: the init cloned at the
	// entry is not the run's, which clones its own from the supervisor.
	dir := tempDir(t)
	host := writeFile(t, dir, "host.toml", "base = \"bash\"\n[net]\nmode = \"host\"\n", 0o644)
	for _, pol := range []string{"bash", host} {
		cmd := exec.Command("/bin/bash", "-c", `trap "" HUP INT QUIT PIPE TERM CHLD; exec "$0" run --json --policy "$1" -c 'grep -E "^Sig(Ign|Blk)" /proc/self/status; exit 3'`, gojailBin, pol)
		out, _ := cmd.Output()
		var r jail.Result
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("--policy %s: %v: %q", pol, err, out)
		}
		if r.Status != jail.StatusRuntimeError || r.ExitCode != 3 || r.Stdout != "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n" {
			t.Fatalf("--policy %s: status %s, exit code %d, stdout %q; want runtime_error, 3, nothing blocked or ignored", pol, r.Status, r.ExitCode, r.Stdout)
		}
	}
}

// Started by root, the jail's processes belong to host ids no host account
// uses, drawn for each jail: a host process of nobody (or of any user but
// root) cannot signal them, so it cannot stop the program and change its
// verdict, and two jails at once are two host users (the kernel's per-user
// quotas are not shared).
func TestHostUsersCannotSignalTheJail(t *testing.T) {
	if !isRoot() {
		t.Skip("rootless, the jail's processes are the caller's own, as the caller's other processes are")
	}
	var uids [2]int
	var cmds [2]*exec.Cmd
	var outs [2]strings.Builder
	for i := range cmds {
		cmds[i] = exec.Command(gojailBin, "run", "--json", "--timeout", "10s", "--", "/bin/sleep", "1")
		cmds[i].Stdout = &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
		track(cmds[i])
	}
	for i, cmd := range cmds {
		pid := jailedSleep(t, cmd)
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		u, g := strings.Fields(grepLine(string(st), "Uid:")), strings.Fields(grepLine(string(st), "Gid:"))
		uids[i], _ = strconv.Atoi(u[1])
		if len(u) != 5 || len(g) != 5 || uids[i] < 2_000_000_000 || uids[i] >= 2_000_000_000+1<<31 ||
			u[2] != u[1] || u[3] != u[1] || u[4] != u[1] || g[1] != u[1] || g[2] != u[1] || g[3] != u[1] || g[4] != u[1] {
			t.Errorf("the jail's program on the host: %q %q, want one id from 2,000,000,000 to 4,147,483,647", u, g)
		}
		kill := exec.Command("kill", "-STOP", strconv.Itoa(pid))
		kill.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if out, err := kill.CombinedOutput(); err == nil {
			t.Errorf("nobody on the host stopped the jail's program: %s", out)
		}
	}
	if uids[0] == uids[1] {
		t.Errorf("two jails at once are both host uid %d", uids[0])
	}
	for i, cmd := range cmds {
		cmd.Wait()
		if r := decode(t, outs[i].String()); r.Status != jail.StatusOK {
			t.Errorf("status %s (%s), want ok", r.Status, r.Error)
		}
	}
}

// jailedSleep finds the jail's sleep, seen from the host: a grandchild of
// gojail, through whichever of gojail's threads cloned the init.
func jailedSleep(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	var pid int
	waitFor(t, func() bool {
		var b []byte
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", cmd.Process.Pid))
		for _, f := range tasks {
			c, _ := os.ReadFile(f)
			b = append(append(b, c...), ' ')
		}
		for _, init := range strings.Fields(string(b)) {
			c, _ := os.ReadFile("/proc/" + init + "/task/" + init + "/children")
			if f := strings.Fields(string(c)); len(f) > 0 {
				exe, _ := os.Readlink("/proc/" + f[0] + "/exe")
				if strings.HasSuffix(exe, "sleep") {
					pid, _ = strconv.Atoi(f[0])
					return true
				}
			}
		}
		return false
	})
	return pid
}

func grepLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// The OOM killer's first choice is the program (oom_score_adj 1000, for it
// and all it starts), not the jail's init, which shares the program's
// memory until its execve and takes its own adjustment back after; unless
// gojail runs as root with CAP_SYS_RESOURCE, which sets the floor
// (oomFloor) that keeps the program from lowering its own, and the init
// then keeps 1000 too.
func TestOOMScoreAdjustments(t *testing.T) {
	own, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Fatal(err)
	}
	o := py(t, "import os, time\ntime.sleep(0.1)\nprint(open('/proc/self/oom_score_adj').read().strip(), open('/proc/1/oom_score_adj').read().strip())")
	o.want(t, jail.StatusOK, 0)
	want := "1000 " + strings.TrimSpace(string(own)) + "\n"
	if oomFloor(t) {
		want = "1000 1000\n"
	}
	if o.res.Stdout != want {
		t.Fatalf("program and init oom_score_adj %q, want %q", o.res.Stdout, want)
	}
}

// oomFloor reports whether gojail, run by this test, sets the OOM floor:
// as root with CAP_SYS_RESOURCE in its effective set (this project's
// machine's root lacks it; the cgroup v2 VM's has it).
func oomFloor(t *testing.T) bool {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	eff, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(grepLine(string(st), "CapEff:"), "CapEff:")), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return isRoot() && eff&(1<<unix.CAP_SYS_RESOURCE) != 0
}

// A program cannot lower its own oom_score_adj (a host under memory
// pressure would then kill others first) where gojail can set the floor;
// the jail's init, whose floor it is too, keeps 1000.
func TestOOMScoreFloor(t *testing.T) {
	if !oomFloor(t) {
		t.Skip("gojail can set no OOM floor here: it takes root with CAP_SYS_RESOURCE (the floor's write), and this process has not both")
	}
	o := gojail(t, "--policy", "exec", "--", "/bin/sh", "-c", "echo 0 > /proc/self/oom_score_adj; cat /proc/self/oom_score_adj /proc/1/oom_score_adj")
	o.want(t, jail.StatusOK, 0) // cat's status
	if o.res.Stdout != "1000\n1000\n" || !strings.Contains(o.res.Stderr, "Permission denied") {
		t.Fatalf("stdout %q (the program's, the init's), stderr %q: the program lowered its oom_score_adj", o.res.Stdout, o.res.Stderr)
	}
}

// The host's root, which pivot_root stacks on the jail's and the init
// unmounts, is gone before the program starts: the first thing cat does,
// many times over, shows only the jail's mounts.
func TestOldRootGone(t *testing.T) {
	for i := 0; i < 20; i++ {
		o := gojail(t, "--", "/bin/cat", "/proc/self/mountinfo")
		o.want(t, jail.StatusOK, 0)
		var points []string
		for _, line := range strings.Split(strings.TrimSpace(o.res.Stdout), "\n") {
			if f := strings.Fields(line); len(f) > 4 {
				points = append(points, f[4])
			}
		}
		roots := 0
		for _, p := range points {
			if p == "/" {
				roots++
			}
			if p == "/sys" || strings.HasPrefix(p, "/sys/") || p == "/mnt" {
				t.Fatalf("run %d: a host mount point %s in the jail:\n%s", i, p, o.res.Stdout)
			}
		}
		if roots != 1 || len(points) < 5 {
			t.Fatalf("run %d: %d mounts at /, %d in all, want the jail's root alone at /:\n%s", i, roots, len(points), o.res.Stdout)
		}
	}
}

// mntDataPolicy skips a test that needs root and unshare(1), for a mount
// namespace with a tmpfs on /mnt (binds from /tmp are refused), and writes
// a policy on base that binds /mnt/x/data there.
func mntDataPolicy(t *testing.T, base string) string {
	t.Helper()
	if !isRoot() {
		t.Skip("needs root for a mount namespace with a tmpfs on /mnt")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare(1)")
	}
	return writeFile(t, tempDir(t), "mnt.toml", "base = \""+base+"\"\n[fs]\nro = [\"/usr\", \"/bin\", \"/lib\", \"/lib64\", \"/etc/ld.so.cache\", \"/mnt/x/data\"]\n", 0o644)
}

// A policy's bind is mounted from its path opened following no link: a
// directory of it swapped for a link to /sys/fs/cgroup (RENAME_EXCHANGE,
// over and over) between the check and the mount fails the run or binds
// the real directory, never the link's target. In a mount namespace of
// its own, with a tmpfs on /mnt: binds from /tmp are refused.
func TestBindSwappedForALink(t *testing.T) {
	pol := mntDataPolicy(t, "python")
	script := `set -e
mount -t tmpfs swap /mnt
mkdir -p /mnt/x/data; echo benign > /mnt/x/data/README
ln -s /sys/fs/cgroup /mnt/x/evil
/usr/bin/python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
while True:
    libc.renameat2(-100, b"/mnt/x/data", -100, b"/mnt/x/evil", 2)' &
flip=$!
for i in $(seq 40); do "$GOJAIL" run --json --policy "$POLICY" -c "
import os
try:
    print(sorted(os.listdir('/mnt/x/data')))
except OSError as e:
    print(type(e).__name__)" || true; echo; done
kill $flip`
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "GOJAIL="+gojailBin, "POLICY="+pol)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		var r jail.Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not a result: %q", line)
		}
		switch {
		case r.Status == jail.StatusOK && (r.Stdout == "['README']\n" || r.Stdout == "FileNotFoundError\n"):
			counts["the real directory, or the link made again in the jail"]++
		case r.Status == jail.StatusInternalError && strings.Contains(r.Error, "too many levels of symbolic links"),
			r.Status == jail.StatusInvalidInput && strings.Contains(r.Error, "/mnt/x/data"):
			counts["refused"]++
		default:
			t.Errorf("a run saw something else: %s %q %q", r.Status, r.Stdout, r.Error)
		}
	}
	t.Logf("40 runs: %v", counts)
}

// A policy's bind is checked on the host, and the jail binds it only if
// what it opens there is what was checked: a directory renamed into its
// place meanwhile (here while gojail waits for its stdin's writer, after
// the check) fails the run, where it was bound (one holding a mount of a
// kernel interface, which the check refuses, was reached so). In a mount
// namespace of its own, with a tmpfs on /mnt: binds from /tmp are refused.
func TestBindSourceRenamedAfterCheck(t *testing.T) {
	pol := mntDataPolicy(t, "sh")
	script := `set -e
mount -t tmpfs renamed /mnt
mkdir -p /mnt/x/data /mnt/x/other; echo checked > /mnt/x/data/marker; echo renamed > /mnt/x/other/marker
mkfifo /mnt/x/in
"$GOJAIL" run --json --policy "$POLICY" --stdin /mnt/x/in -c 'cat /mnt/x/data/marker' > /mnt/x/out &
exec 3>/mnt/x/in # once gojail has opened it: after its check
mv /mnt/x/data /mnt/x/checked; mv /mnt/x/other /mnt/x/data
echo go >&3; exec 3>&-
wait
cat /mnt/x/out`
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "GOJAIL="+gojailBin, "POLICY="+pol)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var r jail.Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("not a result: %q", out)
	}
	want := "jail setup failed: bind /mnt/x/data (read-only): its source is not what was checked: it was renamed or replaced on the host meanwhile"
	if r.Status != jail.StatusInternalError || r.Error != want || r.Stdout != "" {
		t.Fatalf("%s %q, stdout %q; want internal_error %q", r.Status, r.Error, r.Stdout, want)
	}
}

// Descriptors in flight in unix sockets are counted per host user, and
// rootless every jail runs as the caller: a jail holding more of them than
// another's open_files must not make that one's pid 2 fail to send its
// filter's listener (ETOOMANYREFS), one-shot or prepared, with the filter
// loaded early (the default profile) or last (a rule on chdir, one of pid
// 2's last calls).
func TestInflightDescriptorsOfAnotherJail(t *testing.T) {
	dir := tempDir(t)
	late := writeFile(t, dir, "late.toml", "base = \"python\"\n[[seccomp.rules]]\nsyscalls = [\"chdir\"]\naction = \"errno\"\nerrno = \"EPERM\"\n", 0o644)
	holder := exec.Command(gojailBin, "run", "--json", "--timeout", "10s", "-c", `
import os, socket, time
a, b = socket.socketpair()
for _ in range(2):
    fds = [os.open('/dev/null', os.O_RDONLY) for _ in range(200)]
    socket.send_fds(a, [b'x'], fds)
    for f in fds:
        os.close(f)
print('400 in flight', flush=True)
time.sleep(2.5)`)
	var held bytes.Buffer
	holder.Stdout = &held
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	track(holder)
	time.Sleep(time.Second) // the holder's python sends its 400 within some 50 ms
	py(t, "print(1)").want(t, jail.StatusOK, 0)
	py(t, "print(2)", "--policy", late).want(t, jail.StatusOK, 0)
	// A filter that refuses prlimit64 has the limits set before the
	// listener is sent: as root the two jails are two host users, and the
	// holder's count is not this jail's.
	noLimits := writeFile(t, dir, "nolimits.toml", "base = \"python\"\n[[seccomp.rules]]\nsyscalls = [\"prlimit64\"]\naction = \"errno\"\n", 0o644)
	if isRoot() {
		py(t, "print(4)", "--policy", noLimits).want(t, jail.StatusOK, 0)
	} else if o := py(t, "print(4)", "--policy", noLimits); o.res.Status != jail.StatusInternalError || !strings.Contains(o.res.Error, "this policy's filter refuses prlimit64") {
		t.Errorf("rootless, a filter refusing prlimit64: %s %q", o.res.Status, o.res.Error)
	}
	for _, policy := range []string{"python", late} {
		cmd, stdin, out := startBatch(t, "--policy", policy)
		io.WriteString(stdin, `{"code": "print(3)"}`+"\n")
		stdin.Close()
		if !out.Scan() || !strings.HasPrefix(out.Text(), `{"status":"ok","exit_code":0,"signal":"","stdout":"3\n"`) {
			t.Errorf("batch --policy %s: %s", policy, out.Text())
		}
		cmd.Wait()
	}
	if err := holder.Wait(); err != nil || !strings.Contains(held.String(), `"stdout":"400 in flight\n"`) {
		t.Fatalf("the holder: %v\n%s", err, held.String())
	}
}

// A policy's proc = "pid" gives the jail a /proc of its processes only
// (subset=pid): no system-wide file, and its parent is the root.
func TestProcPidOnly(t *testing.T) {
	pol := writeFile(t, tempDir(t), "pid.toml", "base = \"python\"\n[fs]\nproc = \"pid\"\n", 0o644)
	o := gojail(t, "--policy", pol, "-c", `import os
print(sorted(n for n in os.listdir('/proc') if not n.isdigit()), os.path.exists('/proc/meminfo'), os.stat('/proc/..') == os.stat('/'))`)
	o.want(t, jail.StatusOK, 0)
	if o.res.Stdout != "['self', 'thread-self'] False True\n" {
		t.Fatalf("stdout %q, want only the processes in /proc", o.res.Stdout)
	}
}

// The root's isolation with a shell alone, which the cgroup v2 VM runs too
// (testdata/vm: no python there, and an older kernel, on which the init
// cannot clone binds from a detached tree and enters the root with
// pivot_root once it is built, nor make a bind's clone with its mount
// attributes, open_tree_attr, which it sets after): ".." of the root and of
// each mount is the root, none of the host's own files is there, every
// mount is nosuid, and /usr and /dev/null's binds are read-only and
// noexec.
func TestRootIsolationShell(t *testing.T) {
	o := gojail(t, "--policy", "sh", "-c", `r=$(stat -c %d:%i /)
for d in / /usr /proc /tmp /dev; do [ "$(stat -c %d:%i $d/..)" = "$r" ] || echo "$d/.. is not /"; done
for f in /root /home /etc/shadow /sys /boot; do [ -e $f ] && echo "$f is there"; done
while read -r _ _ _ _ m o _; do case ",$o," in *,nosuid,*) ;; *) echo "$m is not nosuid" ;; esac; done </proc/self/mountinfo
grep -q ' /usr ro,' /proc/self/mountinfo || echo "/usr is not read-only"
grep -q ' /dev/null rw,nosuid,noexec' /proc/self/mountinfo || echo "/dev/null is not noexec"
echo done`)
	o.want(t, jail.StatusOK, 0)
	if o.res.Stdout != "done\n" {
		t.Fatalf("stdout %q, want only \"done\"", o.res.Stdout)
	}
}
