package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/jail"
)

// The binaries under test: gojail itself ($GOJAIL_BIN) and hog, the static
// workload of the limit tests ($GOJAIL_HOG); built for the run when unset.
var gojailBin, hogBin string

func TestMain(m *testing.M) {
	if args := os.Getenv("GOJAIL_TEST_REFUSE"); args != "" {
		execRefusing(strings.Split(args, "\x1f"))
	}
	gojailBin, hogBin = os.Getenv("GOJAIL_BIN"), os.Getenv("GOJAIL_HOG")
	dir, err := os.MkdirTemp("", "gojail-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Chmod(dir, 0o755)
	build := func(dst *string, name string, flagsAndPkg ...string) {
		if *dst != "" {
			return
		}
		*dst = filepath.Join(dir, name)
		cmd := exec.Command("go", append([]string{"build", "-o", *dst}, flagsAndPkg...)...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", name, err, out)
			os.Exit(2)
		}
	}
	if gojailBin == "" {
		// gojail-seccomp, the filter compiler, goes next to gojail.
		helper := filepath.Join(dir, "gojail-seccomp")
		cmd := exec.Command("go", "build", "-o", helper, "../gojail-seccomp")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build gojail-seccomp: %v\n%s", err, out)
			os.Exit(2)
		}
	}
	build(&gojailBin, "gojail", "-ldflags=-E "+jail.EntrySymbol, ".")
	build(&hogBin, "hog", "../../testdata/programs/hog")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// hog runs the hog workload in the exec preset plus flags. Go's runtime
// reserves more address space than any memory limit at start, so without a
// cgroup (where the fallback would be an address-space rlimit) the policy
// turns that rlimit off, as node's preset does.
func hog(t *testing.T, flags []string, args ...string) outcome {
	t.Helper()
	pol := writeFile(t, tempDir(t), "hog.toml", "base = \"exec\"\n[limits]\nrlimit_as = false\n", 0o644)
	return gojail(t, append(append(flags, "--policy", pol, hogBin), args...)...)
}

// cgroupAvailable tells whether this user's runs get a cgroup.
func cgroupAvailable(t *testing.T) bool {
	t.Helper()
	o := gojail(t, "--", "/bin/true")
	return strings.HasPrefix(o.res.Enforced["memory"], "cgroup-")
}

// outcome is one finished gojail invocation.
type outcome struct {
	res    jail.Result
	exit   int
	stdout string // raw stdout (the JSON when --json)
	stderr string
}

// runOpts adjusts one invocation.
type runOpts struct {
	stdin      string
	stdinFile  *os.File // gojail's own stdin, instead of stdin
	env        []string
	extraFiles []*os.File
}

// gojail runs the binary with args (and --json unless told otherwise) and
// decodes the result.
func gojail(t *testing.T, args ...string) outcome {
	t.Helper()
	return gojailWith(t, runOpts{}, args...)
}

func gojailWith(t *testing.T, o runOpts, args ...string) outcome {
	t.Helper()
	full := append([]string{"run", "--json"}, args...)
	cmd := exec.Command(gojailBin, full...)
	cmd.Env = append(os.Environ(), o.env...)
	cmd.ExtraFiles = o.extraFiles
	if o.stdin != "" {
		cmd.Stdin = strings.NewReader(o.stdin)
	}
	if o.stdinFile != nil {
		cmd.Stdin = o.stdinFile
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Start()
	if err == nil {
		track(cmd)
		err = cmd.Wait()
	}
	out := outcome{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		out.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("gojail %q: %v", full, err)
	}
	if err := json.Unmarshal(stdout.Bytes(), &out.res); err != nil {
		t.Fatalf("gojail %q: stdout is not one JSON result: %v\nstdout: %q\nstderr: %s", full, err, stdout.String(), stderr.String())
	}
	return out
}

// want asserts the status and gojail's exit code.
func (o outcome) want(t *testing.T, status jail.Status, exit int) {
	t.Helper()
	if o.res.Status != status || o.exit != exit {
		t.Fatalf("got status %q exit %d, want %q exit %d\nerror: %s\nstdout: %q\nstderr: %q\ngojail stderr: %s",
			o.res.Status, o.exit, status, exit, o.res.Error, o.res.Stdout, o.res.Stderr, o.stderr)
	}
}

// py runs Python code in the default python preset plus flags.
func py(t *testing.T, code string, flags ...string) outcome {
	t.Helper()
	return gojail(t, append(flags, "-c", code)...)
}

// writeFile writes a file in a directory the jail's host user can read.
func writeFile(t *testing.T, dir, name, text string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// tempDir is a t.TempDir readable by others (the jail runs as nobody when
// the tests run as root).
func tempDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	os.Chmod(d, 0o755)
	return d
}

func isRoot() bool { return os.Geteuid() == 0 }

// marker tags the jails' processes this test process starts, so that
// counting them is not disturbed by other runs on the host.
var marker = fmt.Sprintf("gojail-marker-%d", os.Getpid())

// started holds the pids of the gojail processes this test process ran:
// their run cgroups are named after them.
var started = struct {
	sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

// track records a started gojail.
func track(cmd *exec.Cmd) {
	started.Lock()
	started.pids[cmd.Process.Pid] = true
	started.Unlock()
}

// ourCgroups lists the run cgroups left by gojails this test process ran.
func ourCgroups(t *testing.T) []string {
	var ours []string
	started.Lock()
	defer started.Unlock()
	for _, dir := range runCgroups(t) {
		pid, _, _ := strings.Cut(filepath.Base(dir), "-")
		if n, err := strconv.Atoi(pid); err == nil && started.pids[n] {
			ours = append(ours, dir)
		}
	}
	return ours
}

// ourCgroupsLeft lists the run cgroups of gojails this test process ran
// that are still there a second after: a run leaves their removal to its
// keeper, which does it once gojail has exited (jail.Exit).
func ourCgroupsLeft(t *testing.T) []string {
	deadline := time.Now().Add(time.Second)
	for {
		left := ourCgroups(t)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// hostCounts is what a run must leave as it found: processes of the jail's
// host users, mounts, and entries in the host's temp directory.
type hostCounts struct {
	procs, mounts, tmp int
}

func countHost(t *testing.T) hostCounts {
	t.Helper()
	var c hostCounts
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(b, []byte(marker)) {
			c.procs++
		}
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	c.mounts = bytes.Count(mi, []byte("\n"))
	tmp, _ := os.ReadDir(os.TempDir())
	for _, e := range tmp {
		if strings.HasPrefix(e.Name(), "gojail") {
			c.tmp++
		}
	}
	return c
}

// compile builds a C program for the exec preset, statically so that it
// needs nothing from the jail.
func compile(t *testing.T, src string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed: cannot compile the C test program (apt-get install gcc)")
	}
	dir := tempDir(t)
	c := writeFile(t, dir, "prog.c", src, 0o644)
	bin := filepath.Join(dir, "prog")
	if out, err := exec.Command("gcc", "-O1", "-o", bin, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// gojailDebug runs gojail run --debug --json with args and returns its
// result and its --debug log (stderr).
func gojailDebug(t *testing.T, args ...string) (jail.Result, string) {
	t.Helper()
	cmd := exec.Command(gojailBin, append([]string{"run", "--debug", "--json"}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	track(cmd)
	cmd.Wait()
	var r jail.Result
	if err := jsonUnmarshal([]byte(stdout.String()), &r); err != nil {
		t.Fatalf("gojail %q: %v: %q\n%s", args, err, stdout.String(), stderr.String())
	}
	return r, stderr.String()
}

// refusing is the environment that makes the test binary exec args under
// a seccomp filter refusing the system call nr with errno (execRefusing).
func refusing(nr uintptr, errno syscall.Errno, args ...string) string {
	return "GOJAIL_TEST_REFUSE=" + strings.Join(append([]string{strconv.Itoa(int(nr)), strconv.Itoa(int(errno))}, args...), "\x1f")
}

// execRefusing execs fields[2:] under a seccomp filter that refuses the
// system call numbered fields[0] with the errno fields[1] (clone3 with
// EPERM, say, as a host that allows no user namespace does: the Go
// runtime's threads are cloned with clone). The filter is inherited by
// the jail. It does not return.
func execRefusing(fields []string) {
	nr, err1 := strconv.Atoi(fields[0])
	errno, err2 := strconv.Atoi(fields[1])
	if err := errors.Join(err1, err2); err != nil || len(fields) < 3 {
		fmt.Fprintln(os.Stderr, "GOJAIL_TEST_REFUSE: want NR, ERRNO and a command:", fields, err)
		os.Exit(3)
	}
	runtime.LockOSThread() // the filter is this thread's, which execs
	filter := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: uint32(nr), Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(errno)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	if err == nil {
		if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
			err = e
		}
	}
	if err == nil {
		err = syscall.Exec(fields[2], fields[2:], os.Environ())
	}
	fmt.Fprintln(os.Stderr, "exec under a filter refusing system call", nr, ":", err)
	os.Exit(3)
}

// kernelAtLeast reports whether the running kernel is major.minor or later.
func kernelAtLeast(t *testing.T, major, minor int) bool {
	t.Helper()
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var ma, mi int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &ma, &mi); err != nil {
		t.Fatalf("kernel release %q: %v", unix.ByteSliceToString(u.Release[:]), err)
	}
	return ma > major || ma == major && mi >= minor
}
