package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/jail"
)

// withCgroup tells whether a run's limits were enforced by a cgroup (root,
// or a delegated cgroup) or by the rlimit fallback (rootless without one).
func withCgroup(o outcome) bool { return strings.HasPrefix(o.res.Enforced["memory"], "cgroup-") }

func TestMemoryLimit(t *testing.T) {
	t.Run("a memory bomb under 64MiB", func(t *testing.T) {
		if cgroupAvailable(t) {
			o := hog(t, []string{"--memory", "64MiB"}, "bomb")
			o.want(t, jail.StatusMemoryLimit, 128+9)
			if o.res.MemoryPeakBytes < 60<<20 || o.res.MemoryPeakBytes > 65<<20 || !strings.Contains(o.res.Error, "OOM killer") {
				t.Fatalf("peak %d, error %q", o.res.MemoryPeakBytes, o.res.Error)
			}
			return
		}
		// Rootless fallback: the address-space rlimit refuses the allocation.
		if _, err := os.Stat("/usr/bin/python3"); err != nil {
			t.Skip("no cgroup, and no /usr/bin/python3 for the address-space rlimit's memory bomb")
		}
		o := py(t, "a = []\nwhile True: a.append(bytearray(1 << 20))", "--memory", "64MiB")
		o.want(t, jail.StatusMemoryLimit, 1)
		if !strings.HasPrefix(o.res.Enforced["memory"], "rlimit-as") || !strings.Contains(o.res.Error, "address-space rlimit") {
			t.Fatalf("enforced %q, error %q", o.res.Enforced["memory"], o.res.Error)
		}
	})
	// The allocation's failure said after a stderr cut at the output limit
	// (rootless, the verdict reads the program's last words: they were past
	// what was kept, and the run a runtime_error).
	t.Run("a memory bomb after a truncated stderr", func(t *testing.T) {
		if _, err := os.Stat("/usr/bin/python3"); err != nil {
			t.Skip("no /usr/bin/python3, whose MemoryError this reads")
		}
		o := py(t, "import sys\nsys.stderr.write('w' * 2000 + '\\n')\nx = bytearray(200 << 20)", "--memory", "64MiB", "--output-limit", "1KiB")
		if withCgroup(o) {
			o.want(t, jail.StatusMemoryLimit, 128+9)
		} else {
			o.want(t, jail.StatusMemoryLimit, 1)
		}
		if !o.res.StderrTruncated {
			t.Fatalf("stderr not truncated: %q", o.res.Stderr)
		}
	})
	t.Run("100MiB touched under 256MiB: peak within 5% of a bare run", func(t *testing.T) {
		bare := exec.Command(hogBin, "touch", "100")
		if out, err := bare.Output(); err != nil || string(out) != "done\n" {
			t.Fatalf("bare run: %v %q", err, out)
		}
		bareRSS := bare.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
		o := hog(t, []string{"--memory", "256MiB"}, "touch", "100")
		o.want(t, jail.StatusOK, 0)
		ratio := float64(o.res.MemoryPeakBytes) / float64(bareRSS)
		t.Logf("peak %d, bare %d, ratio %.3f (%s)", o.res.MemoryPeakBytes, bareRSS, ratio, o.res.Enforced["memory"])
		if ratio < 0.95 || ratio > 1.05 {
			t.Fatalf("peak %d is not within 5%% of the bare run's %d", o.res.MemoryPeakBytes, bareRSS)
		}
	})
	t.Run("node allocates 50MiB under 256MiB", func(t *testing.T) {
		if _, err := os.Stat("/usr/bin/node"); err != nil {
			t.Skip("node is not installed (/usr/bin/node): apt-get install nodejs")
		}
		o := gojail(t, "--policy", "node", "--memory", "256MiB", "-c", "const a = Buffer.alloc(50 << 20, 1); console.log(a.length)")
		o.want(t, jail.StatusOK, 0)
		if o.res.Stdout != "52428800\n" {
			t.Fatalf("stdout %q", o.res.Stdout)
		}
		if !withCgroup(o) && !strings.HasPrefix(o.res.Enforced["memory"], "none") {
			t.Fatalf("without a cgroup node's memory must be reported unenforced, got %q", o.res.Enforced["memory"])
		}
	})
}

// TCP socket buffers are the jail's memory too: v2 counts them in the
// memory, v1 only with a limit of their own, which gojail sets at the
// memory limit (120 connections of a 32 MiB jail held 447 MiB without).
// The sends then wait, or the jail ends at its memory limit.
func TestTCPBuffersBounded(t *testing.T) {
	if !cgroupAvailable(t) {
		t.Skip("no cgroup: the kernel's memory for the program is unbounded (README)")
	}
	o := gojail(t, "--net", "loopback", "--memory", "32MiB", "--timeout", "20s", "-c", `
import socket
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(128)
keep, queued, buf = [], 0, b"x" * 65536
for i in range(100):
    c = socket.create_connection(ls.getsockname())
    s, _ = ls.accept()
    c.setblocking(False)
    try:
        while True:
            queued += c.send(buf)
    except BlockingIOError:
        pass
    keep.append((c, s))
print(queued >> 20)`)
	if o.res.Status == jail.StatusMemoryLimit {
		return
	}
	o.want(t, jail.StatusOK, 0)
	if mib, err := strconv.Atoi(strings.TrimSpace(o.res.Stdout)); err != nil || mib > 64 {
		t.Fatalf("%q MiB queued in the sockets of a 32 MiB jail", o.res.Stdout)
	}
}

func TestCPULimitOfTheTree(t *testing.T) {
	o := hog(t, []string{"--cpu-time", "1s", "--timeout", "20s"}, "spin", "4")
	o.want(t, jail.StatusTimeLimit, 124)
	if !withCgroup(o) {
		// Each process has its own RLIMIT_CPU: the tree used about 4 s.
		if !strings.HasPrefix(o.res.Enforced["cpu_time"], "rlimit-per-process") {
			t.Fatalf("enforced %q", o.res.Enforced["cpu_time"])
		}
		return
	}
	if o.res.CPUMs < 1000 || o.res.CPUMs > 1300 || !strings.Contains(o.res.Error, "the whole tree") {
		t.Fatalf("cpu_ms %.1f, error %q", o.res.CPUMs, o.res.Error)
	}
}

// A program the process limit refused a thread fails by itself (Python:
// "can't start new thread"); the error says the limit did it, where the
// cgroup counts its refusals.
func TestPidsLimitNamed(t *testing.T) {
	o := py(t, "import threading, time\nts = [threading.Thread(target=time.sleep, args=(1,)) for _ in range(20)]\n[t.start() for t in ts]", "--pids", "8")
	o.want(t, jail.StatusRuntimeError, 1)
	if !withCgroup(o) {
		return // RLIMIT_NPROC's refusals are counted nowhere
	}
	if want := "the process limit of 8 (limits.pids) refused 1 new process(es) or thread(s)"; o.res.Error != want {
		t.Fatalf("error %q, want %q", o.res.Error, want)
	}
}

// --stack sets every process's stack limit (a judge's deep recursion).
func TestStackFlag(t *testing.T) {
	o := gojail(t, "--policy", "bash", "--stack", "64MiB", "-c", "ulimit -s")
	o.want(t, jail.StatusOK, 0)
	if o.res.Stdout != "65536\n" {
		t.Fatalf("ulimit -s: %q, want 65536 (KiB)", o.res.Stdout)
	}
}

// A process that ignores SIGXCPU is stopped all the same: by the cgroup's
// counter at the limit, or, without a cgroup, by RLIMIT_CPU's SIGKILL a
// second after the limit's next whole second (as enforced says).
func TestCPULimitSIGXCPUIgnored(t *testing.T) {
	o := py(t, "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True: pass", "--cpu-time", "200ms", "--timeout", "10s")
	o.want(t, jail.StatusTimeLimit, 124)
	most := 500.0
	if !withCgroup(o) {
		most = 2300
		if !strings.Contains(o.res.Enforced["cpu_time"], "SIGKILL a second later") {
			t.Errorf("enforced %q does not say so", o.res.Enforced["cpu_time"])
		}
	}
	if o.res.CPUMs > most {
		t.Fatalf("cpu_ms %.1f for a limit of 200 ms, want at most %.0f", o.res.CPUMs, most)
	}
}

// gojail pinned to one CPU (taskset, a grader's worker) still stops a tree
// that spreads over every CPU at its limit: the program may widen the
// affinity it inherits, so the supervisor's own is no bound on how fast the
// tree uses CPU time.
func TestCPULimitWithNarrowAffinity(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: a tree cannot outrun the supervisor's own affinity here")
	}
	if !cgroupAvailable(t) {
		t.Skip("no cgroup for this user: CPU time is limited per process (RLIMIT_CPU), see TestCPULimitOfTheTree")
	}
	// The child inherits the affinity of the thread that forks it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		t.Fatal(err)
	}
	one.Set(0)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetaffinity(0, &old)
	o := hog(t, []string{"--cpu-time", "1s", "--timeout", "20s"}, "spin", "2")
	o.want(t, jail.StatusTimeLimit, 124)
	if o.res.CPUMs < 1000 || o.res.CPUMs > 1300 || !strings.Contains(o.res.Error, "the whole tree") {
		t.Fatalf("cpu_ms %.1f (wall %.1f ms), error %q", o.res.CPUMs, o.res.WallMs, o.res.Error)
	}
}

func TestForkBomb(t *testing.T) {
	before := countHost(t)
	procs := hostProcs(t)
	o := hog(t, []string{"--pids", "16", "--timeout", "2s"}, "forkbomb")
	o.want(t, jail.StatusTimeLimit, 124)
	if o.res.Enforced["pids"] == "" {
		t.Fatal("pids limit not reported")
	}
	waitFor(t, func() bool { return countHost(t).procs == before.procs })
	if after := hostProcs(t); after > procs+5 {
		t.Fatalf("host processes %d before, %d after", procs, after)
	}
}

func hostProcs(t *testing.T) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			n++
		}
	}
	return n
}

// runCgroups lists the run cgroups on the host: directories in a "gojail"
// directory anywhere under /sys/fs/cgroup, by name (on cgroup v1 a run has
// one in each controller's hierarchy).
func runCgroups(t *testing.T) []string {
	seen := map[string]bool{}
	var dirs []string
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.Count(p, "/") > 9 {
			return fs.SkipDir
		}
		if filepath.Base(filepath.Dir(p)) == "gojail" {
			if !seen[d.Name()] {
				seen[d.Name()] = true
				dirs = append(dirs, p)
			}
			return fs.SkipDir
		}
		return nil
	})
	return dirs
}

func TestCgroupsLeftBehind(t *testing.T) {
	probe := hog(t, nil, "touch", "1")
	if !withCgroup(probe) {
		t.Skipf("no cgroup for this user (enforced memory: %s): nothing to leave behind", probe.res.Enforced["memory"])
	}
	cmd := exec.Command(gojailBin, "run", "--timeout", "60s", "--policy", "exec", hogBin, "spin", "1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	track(cmd)
	// Killed once the program runs in the cgroup: a gojail killed before
	// its init's release leaves nothing, the init removing the directories
	// it made as it sees the release pipe's EOF.
	waitFor(t, func() bool {
		dirs := ourCgroups(t)
		if len(dirs) != 1 {
			return false
		}
		b, _ := os.ReadFile(filepath.Join(dirs[0], "cgroup.procs"))
		return len(strings.TrimSpace(string(b))) > 0
	})
	cmd.Process.Kill()
	cmd.Wait()
	time.Sleep(50 * time.Millisecond)
	left := ourCgroups(t)
	if len(left) != 1 {
		t.Fatalf("after SIGKILL: run cgroups %v, want the killed run's", left)
	}
	// On v1, a run cut short while its directories were made or removed
	// leaves some hierarchies' and not others': here, all but memory's.
	name := filepath.Base(left[0])
	filepath.WalkDir("/sys/fs/cgroup/memory", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == name {
			if err := syscall.Rmdir(p); err != nil {
				t.Fatalf("rmdir %s: %v", p, err)
			}
			return fs.SkipDir
		}
		return nil
	})
	hog(t, nil, "touch", "1") // a later run removes what the killed one left
	if left := ourCgroupsLeft(t); len(left) != 0 {
		t.Fatalf("run cgroups left after a later run: %v", left)
	}
}

// SIGTERM, SIGINT or SIGHUP to gojail while its program runs stops the
// jail and still gives a result, and leaves nothing behind.
func TestInterrupted(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		cmd := exec.Command(gojailBin, "run", "--json", "--timeout", "60s", "--", "/bin/sleep", "60")
		var stdout strings.Builder
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		track(cmd)
		time.Sleep(300 * time.Millisecond) // the program runs
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var r jail.Result
		if jerr := json.Unmarshal([]byte(stdout.String()), &r); jerr != nil {
			t.Fatalf("%v: no result: %v (%v): %q", sig, jerr, err, stdout.String())
		}
		if r.Status != jail.StatusInternalError || r.Error != "the run was cancelled" || r.WallMs < 250 || r.WallMs > 5000 {
			t.Errorf("%v: status %s error %q wall %.0f ms, want internal_error, the run was cancelled", sig, r.Status, r.Error, r.WallMs)
		}
		if left := ourCgroupsLeft(t); len(left) != 0 {
			t.Errorf("%v: run cgroups left: %v", sig, left)
		}
	}
}

// A cgroup path that does not exist where /proc/self/cgroup says (a
// container's cgroup mounted without a cgroup namespace) is no cgroup to
// use: the run falls back to rlimits and says so; it is not an error.
func TestCgroupPathMissing(t *testing.T) {
	if !isRoot() {
		t.Skip("needs root for a mount namespace of its own")
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err != nil {
		t.Skip("no cgroup v1 memory hierarchy here to hide")
	}
	// An empty tmpfs over the memory hierarchy, in a mount namespace of the
	// test's own: this process's memory cgroup path is not there.
	cmd := exec.Command("unshare", "-m", "sh", "-c", `mount --make-rprivate / && mount -t tmpfs none /sys/fs/cgroup/memory && exec "$0" run --json -c 'print(1)'`, gojailBin)
	out, err := cmd.Output()
	var r jail.Result
	if jerr := json.Unmarshal(out, &r); jerr != nil {
		t.Fatalf("no result: %v (%v): %q", jerr, err, out)
	}
	if r.Status != jail.StatusOK || r.Stdout != "1\n" || !strings.HasPrefix(r.Enforced["memory"], "rlimit-as (no cgroup") {
		t.Errorf("status %s stdout %q memory %q (error %q), want ok, 1, the rlimit fallback", r.Status, r.Stdout, r.Enforced["memory"], r.Error)
	}
}

// gojail run inside a cgroup that allows less memory than the jail's limit
// (a grader in a small container): the OOM killer acts below the policy's
// limit, and the verdict says which cgroup held the jail.
func TestEnclosingCgroupCap(t *testing.T) {
	if !isRoot() {
		t.Skip("needs root to make the enclosing cgroup")
	}
	probe := hog(t, nil, "touch", "1")
	if !withCgroup(probe) {
		t.Skipf("no cgroup here (enforced memory: %s)", probe.res.Enforced["memory"])
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var enclosing, leaf string
	const limit = "104857600" // 100 MiB
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case probe.res.Enforced["memory"] == "cgroup-v1" && f[1] == "memory":
			enclosing = filepath.Join("/sys/fs/cgroup/memory", f[2], fmt.Sprintf("gojail-cap-%d", os.Getpid()))
			leaf = enclosing
		case probe.res.Enforced["memory"] == "cgroup-v2" && f[1] == "":
			// v2 puts a run beside the caller's own cgroup: the enclosing
			// cgroup holds the caller's in a leaf.
			root := "/sys/fs/cgroup"
			if _, err := os.Stat("/sys/fs/cgroup/unified/cgroup.controllers"); err == nil {
				root = "/sys/fs/cgroup/unified"
			}
			enclosing = filepath.Join(root, filepath.Dir(f[2]), fmt.Sprintf("gojail-cap-%d", os.Getpid()))
			leaf = filepath.Join(enclosing, "leaf")
		}
	}
	if enclosing == "" {
		t.Skip("cannot find this process's memory cgroup")
	}
	if err := os.MkdirAll(leaf, 0o755); err != nil {
		t.Skipf("cannot make an enclosing cgroup: %v", err)
	}
	// gojail's keeper and init, in the enclosing cgroup too, outlive it a
	// moment, and the keeper removes the run's cgroup then.
	defer func() {
		for _, d := range []string{filepath.Join(enclosing, "gojail"), leaf, enclosing} {
			err := syscall.Rmdir(d)
			for deadline := time.Now().Add(5 * time.Second); err == syscall.EBUSY && time.Now().Before(deadline); err = syscall.Rmdir(d) {
				time.Sleep(10 * time.Millisecond)
			}
			if err != nil && err != syscall.ENOENT {
				t.Errorf("remove the test's cgroup %s: %v", d, err)
			}
		}
	}()
	if leaf == enclosing { // v1
		must := func(file string) {
			if err := os.WriteFile(filepath.Join(enclosing, file), []byte(limit), 0); err != nil {
				t.Fatal(err)
			}
		}
		must("memory.limit_in_bytes")
		if _, err := os.Stat(filepath.Join(enclosing, "memory.memsw.limit_in_bytes")); err == nil {
			must("memory.memsw.limit_in_bytes")
		}
	} else {
		for file, v := range map[string]string{"cgroup.subtree_control": "+memory +pids", "memory.max": limit, "memory.swap.max": "0"} {
			os.WriteFile(filepath.Join(enclosing, file), []byte(v), 0)
		}
	}
	pol := writeFile(t, tempDir(t), "hog.toml", "base = \"exec\"\n[limits]\nrlimit_as = false\n", 0o644)
	cmd := exec.Command("sh", "-c", `echo $$ > "$1/cgroup.procs" && exec "$0" run --json --memory 256MiB --policy "$2" "$3" touch 200`, gojailBin, leaf, pol, hogBin)
	out, _ := cmd.Output()
	var r jail.Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("no result: %v: %q", err, out)
	}
	if r.Status != jail.StatusMemoryLimit || !strings.Contains(r.Error, "a cgroup enclosing the jail's allows only 100MiB") {
		t.Errorf("status %s error %q, want memory_limit naming the enclosing cgroup's 100MiB", r.Status, r.Error)
	}
}

// In a pid namespace of its own with the parent's /proc still mounted, the
// child's pid names another process there: gojail refuses to run rather
// than write that process's maps.
func TestForeignProc(t *testing.T) {
	if !isRoot() {
		t.Skip("needs root for a pid namespace without a user namespace")
	}
	cmd := exec.Command("unshare", "--pid", "--fork", gojailBin, "run", "--json", "--", "/bin/true")
	out, _ := cmd.Output()
	var r jail.Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("no result: %v: %q", err, out)
	}
	if r.Status != jail.StatusInternalError || cmd.ProcessState.ExitCode() != 125 || !strings.Contains(r.Error, "is not of gojail's pid namespace") {
		t.Errorf("status %s exit %d error %q, want internal_error, 125, a /proc of another pid namespace", r.Status, cmd.ProcessState.ExitCode(), r.Error)
	}
}

// A run cgroup of another pid namespace (a gojail in a container sharing
// the hierarchy) is never killed from here, and is removed once it has
// been empty for a while (the container's gojail was killed, its pid
// namespace is gone): nothing is left for good, nothing live is touched.
func TestForeignLeftovers(t *testing.T) {
	if !isRoot() {
		t.Skip("needs root to make cgroups")
	}
	probe := hog(t, nil, "touch", "1")
	if probe.res.Enforced["memory"] != "cgroup-v1" {
		t.Skipf("a cgroup v1 test (enforced memory: %s)", probe.res.Enforced["memory"])
	}
	b, _ := os.ReadFile("/proc/self/cgroup")
	old := time.Now().Add(-2 * time.Minute).UnixNano()
	dead := fmt.Sprintf("1-4000000001-%d", old)                    // another pid namespace's, empty
	live := fmt.Sprintf("1-4000000002-%d", old)                    // another pid namespace's, holding a process
	young := fmt.Sprintf("1-4000000003-%d", time.Now().UnixNano()) // empty, but just made
	var dirs []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && (f[1] == "memory" || f[1] == "pids" || f[1] == "cpuacct" || f[1] == "freezer") {
			dirs = append(dirs, filepath.Join("/sys/fs/cgroup", f[1], f[2], "gojail"))
		}
	}
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Wait()
	defer sleeper.Process.Kill()
	for _, d := range dirs {
		for _, n := range []string{dead, live, young} {
			if err := os.MkdirAll(filepath.Join(d, n), 0o755); err != nil {
				t.Fatal(err)
			}
			defer syscall.Rmdir(filepath.Join(d, n))
		}
		if strings.Contains(d, "/pids/") {
			if err := os.WriteFile(filepath.Join(d, live, "cgroup.procs"), []byte(strconv.Itoa(sleeper.Process.Pid)), 0); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(filepath.Join(filepath.Dir(d), "cgroup.procs"), []byte(strconv.Itoa(sleeper.Process.Pid)), 0)
		}
	}
	hog(t, nil, "touch", "1")
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, dead)); err == nil {
			t.Errorf("%s: an old empty cgroup of another pid namespace was left", filepath.Join(d, dead))
		}
		if _, err := os.Stat(filepath.Join(d, young)); err != nil {
			t.Errorf("%s: a cgroup just made by another pid namespace's run was removed", filepath.Join(d, young))
		}
		if strings.Contains(d, "/pids/") {
			if _, err := os.Stat(filepath.Join(d, live)); err != nil {
				t.Errorf("%s: a live cgroup of another pid namespace was removed", filepath.Join(d, live))
			}
		}
	}
	if err := sleeper.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process in another pid namespace's cgroup was killed: %v", err)
	}
}

// A CPU quota (limits.cpus) holds the tree to that share of a CPU: a
// program that spins for half a second of wall time gets about half of
// that as CPU time under 0.5 CPUs. (On cgroup v1 the quota adds a fifth
// hierarchy, cpu, whose tasks file the jail writes itself into.)
func TestCPUQuota(t *testing.T) {
	pol := writeFile(t, tempDir(t), "quota.toml", "base = \"python\"\n[limits]\ncpus = 0.5\n", 0o644)
	o := py(t, "import time\nt = time.time()\nwhile time.time() - t < 0.6:\n    pass\nprint('spun')", "--policy", pol)
	o.want(t, jail.StatusOK, 0)
	if !withCgroup(o) {
		if o.res.Enforced["cpus"] != "none (no cgroup)" {
			t.Fatalf("no cgroup, enforced cpus %q, want it said", o.res.Enforced["cpus"])
		}
		t.Skip("no cgroup for this user: the quota is not enforced, and enforced says so")
	}
	if got, want := o.res.Enforced["cpus"], strings.TrimSuffix(o.res.Enforced["memory"], "+rlimit"); got != want {
		t.Errorf("enforced cpus %q, want %q", got, want)
	}
	if share := o.res.CPUMs / o.res.WallMs; share < 0.35 || share > 0.65 {
		t.Fatalf("cpu %.0f ms over wall %.0f ms (%.2f of a CPU), want about 0.5", o.res.CPUMs, o.res.WallMs, share)
	}
	t.Logf("cpu %.0f ms over wall %.0f ms", o.res.CPUMs, o.res.WallMs)
}
