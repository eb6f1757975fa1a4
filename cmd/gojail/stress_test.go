package main

import (
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

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/jail"
)

// envInt reads a count from the environment (make hostile and make soak
// raise them), else def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// Twice as many jails as cores at once, for GOJAIL_CONCURRENCY_SECONDS
// (make hostile: 60; make test: 5); each checks that it cannot see, signal
// or share anything with the others.
func TestConcurrentJails(t *testing.T) {
	probe, _ := filepath.Abs("../../testdata/hostile/isolation_probe.py")
	seconds := envInt("GOJAIL_CONCURRENCY_SECONDS", 5)
	before := countHost(t)
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	var wg sync.WaitGroup
	var mu sync.Mutex
	runs, failures := 0, []string{}
	for w := 0; w < 2*runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				o := gojail(t, "--timeout", "10s", probe)
				mu.Lock()
				runs++
				if o.res.Status != jail.StatusOK || o.res.Stdout != "isolated\n" {
					failures = append(failures, string(o.res.Status)+": "+o.res.Stdout+o.res.Stderr+o.res.Error)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d runs, %d at a time, in %ds", runs, 2*runtime.NumCPU(), seconds)
	if len(failures) > 0 {
		t.Fatalf("%d of %d runs saw another jail:\n%s", len(failures), runs, strings.Join(failures[:min(5, len(failures))], "\n"))
	}
	waitFor(t, func() bool { return countHost(t) == before })
	if left := ourCgroupsLeft(t); len(left) > 0 {
		t.Fatalf("run cgroups left: %v", left)
	}
}

// gojail killed with SIGKILL at random points of a run (before the clone,
// during the setup, while the program runs, during the teardown) leaves
// nothing behind once a later run has started.
func TestKilledAtAnyPoint(t *testing.T) {
	before := countHost(t)
	n := envInt("GOJAIL_FAULT_RUNS", 60)
	for i := 0; i < n; i++ {
		cmd := exec.Command(gojailBin, "run", "--policy", "bash", "-c", "sleep 0.02; sleep 1 "+marker)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		track(cmd)
		// 0 to 30 ms: from before the clone to well into the program.
		time.Sleep(time.Duration(i%31) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	py(t, "pass") // a later run removes the killed runs' cgroups
	waitFor(t, func() bool { return countHost(t) == before })
	if left := ourCgroupsLeft(t); len(left) > 0 {
		t.Fatalf("run cgroups left after %d killed runs and one more: %v", n, left)
	}
}

// Out of file descriptors, gojail refuses with internal_error naming what
// ran out, and leaves nothing behind.
func TestOutOfDescriptors(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", `ulimit -n 12; exec "$0" run --json -- /bin/true`, gojailBin)
	out, _ := cmd.Output()
	var o outcome
	o.exit = cmd.ProcessState.ExitCode()
	if err := jsonUnmarshal(out, &o.res); err != nil {
		t.Fatalf("not a JSON result: %q", out)
	}
	o.want(t, jail.StatusInternalError, 125)
	if !strings.Contains(o.res.Error, "too many open files") {
		t.Fatalf("error %q does not say what ran out", o.res.Error)
	}
	// Every limit from there up to one that leaves enough, with a policy
	// whose own descriptor limit is low (so that the listener's socket,
	// above it, fits): each run works, or fails saying what ran out,
	// wherever it ran out (the supervisor's last descriptors went to the
	// cgroup's counters, after the release, and the wait for the jail then
	// failed as a cancelled run); and with a file as stdin, whose copy
	// takes a descriptor (running short there was called the input's
	// fault).
	dir := tempDir(t)
	pol := writeFile(t, dir, "files.toml", "base = \"exec\"\n[limits]\nopen_files = 8\n", 0o644)
	in := writeFile(t, dir, "in.txt", "hi\n", 0o644)
	t.Run("no stdin", func(t *testing.T) { sweepDescriptors(t, pol, "") })
	t.Run("a file as stdin", func(t *testing.T) { sweepDescriptors(t, pol, in) })
}

// sweepDescriptors runs gojail under descriptor limits from 12 up (see
// TestOutOfDescriptors), with the file stdin as the program's stdin if
// not "".
func sweepDescriptors(t *testing.T, pol, stdin string) {
	t.Helper()
	worked := false
	for n := 12; n <= 26; n++ {
		cmd := exec.Command("/bin/sh", "-c", fmt.Sprintf(`ulimit -n %d; exec "$0" run --json --policy "$1" ${2:+--stdin "$2"} -- /bin/true`, n), gojailBin, pol, stdin)
		out, _ := cmd.Output()
		var r jail.Result
		if err := jsonUnmarshal(out, &r); err != nil {
			t.Fatalf("ulimit -n %d: not a JSON result: %q", n, out)
		}
		code := cmd.ProcessState.ExitCode()
		switch {
		case r.Status == jail.StatusOK && code == 0:
			worked = true
		case worked:
			t.Errorf("ulimit -n %d: %s (exit %d, error %q) after a lower limit worked", n, r.Status, code, r.Error)
		case r.Status != jail.StatusInternalError || code != 125 || !strings.Contains(r.Error, "too many open files") && !strings.Contains(r.Error, "RLIMIT_NOFILE"):
			t.Errorf("ulimit -n %d: %s (exit %d, error %q), want ok or internal_error naming the descriptors", n, r.Status, code, r.Error)
		}
	}
	if !worked {
		t.Errorf("no run worked up to ulimit -n 26")
	}
}

// gojail keeps no state on disk but the seccomp filter cache: with the cache
// on a full disk, a policy's filter is compiled again, and the run works.
func TestFullCacheDisk(t *testing.T) {
	if !isRoot() {
		t.Skip("needs root to mount a small tmpfs to fill")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	os.WriteFile(filepath.Join(dir, "fill"), make([]byte, 1<<20), 0o600) // fails when full, as meant
	pol := writeFile(t, tempDir(t), "kill.toml", "base = \"python\"\n[[seccomp.rules]]\nsyscalls = [\"kcmp\"]\naction = \"kill\"\n", 0o644)
	for i := 0; i < 2; i++ {
		o := gojailWith(t, runOpts{env: []string{"XDG_CACHE_HOME=" + dir}}, "--policy", pol, "-c", "print('ran')")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "ran\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
	}
}

// The kernel refusing the supervisor memory for a system call (ENOMEM,
// injected with a seccomp filter around gojail) gives internal_error, exit
// 125, a message that names the step and says memory ran out, and leaves
// nothing behind. The Go runtime's own allocations are not covered: a Go
// program that cannot map memory aborts (README: limits).
func TestOutOfMemoryInTheSupervisor(t *testing.T) {
	wrap := compileFile(t, "../../testdata/programs/enomem.c")
	for _, tc := range []struct {
		nr   int
		call string
		want []string // one in the error
		root bool     // the step is taken only with a cgroup to make
	}{
		{unix.SYS_CLONE3, "clone3", []string{"clone3: cannot allocate memory"}, false},
		{unix.SYS_UNSHARE, "unshare", []string{"unshare the mount, ipc, uts and network namespaces: cannot allocate memory"}, false},
		{unix.SYS_PIPE2, "pipe2", []string{"pipe for release: cannot allocate memory"}, false},
		// On v1 the cgroup is made while the init builds the root, whose
		// directories fail too: the first failure is named.
		{unix.SYS_MKDIRAT, "mkdirat", []string{"create the run's cgroup", "jail setup failed: mkdir /"}, true},
	} {
		if tc.root && !isRoot() {
			continue
		}
		before := countHost(t)
		cmd := exec.Command(wrap, strconv.Itoa(tc.nr), gojailBin, "run", "--json", "--", "/bin/true")
		done := make(chan struct{})
		var out []byte
		go func() { out, _ = cmd.Output(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("ENOMEM from %s: gojail hangs", tc.call)
		}
		var o outcome
		o.exit = cmd.ProcessState.ExitCode()
		if err := jsonUnmarshal(out, &o.res); err != nil {
			t.Fatalf("ENOMEM from %s: not a JSON result: %q", tc.call, out)
		}
		named := false
		for _, w := range tc.want {
			named = named || strings.Contains(o.res.Error, w)
		}
		if o.res.Status != jail.StatusInternalError || o.exit != 125 || !named || !strings.Contains(o.res.Error, "cannot allocate memory") {
			t.Errorf("ENOMEM from %s: %s, exit %d, error %q; want internal_error, 125, %q", tc.call, o.res.Status, o.exit, o.res.Error, tc.want)
		}
		if left := ourCgroupsLeft(t); len(left) != 0 {
			t.Errorf("ENOMEM from %s: run cgroups left: %v", tc.call, left)
		}
		if after := countHost(t); after != before {
			t.Errorf("ENOMEM from %s: host %+v, before %+v", tc.call, after, before)
		}
	}
}
