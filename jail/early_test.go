package jail_test

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/jail"
	"github.com/gojail/gojail/policy"
)

// An init started early serves the run that adopts it: its stdin comes
// with the cgroup's descriptors, and its plan is the run's, written after
// the clone (the program, its arguments and its stdin are not known at the
// clone). Nothing is left: no descriptor, child, mount or cgroup, nor the
// memory the init ran in; and a run with an init of its own follows.
func TestEarlyAdopted(t *testing.T) {
	p, before := baseline(t, 1)
	shared := sharedMappings(t)
	in := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(in, []byte("early stdin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		e, err := jail.StartEarly()
		if err != nil {
			t.Fatal(err)
		}
		var log strings.Builder
		r := jail.Run(context.Background(), &p, jail.Input{
			Program: "/bin/sh", Args: []string{"-c", "cat; echo $0 $1", "arg0", "arg1"}, Stdin: in, Early: e,
			Log: func(f string, a ...any) { log.WriteString(f + "\n") },
		})
		if r.Status != jail.StatusOK || r.Stdout != "early stdin\narg0 arg1\n" {
			t.Fatalf("run %d: %s %q, stdout %q", i, r.Status, r.Error, r.Stdout)
		}
		if !strings.Contains(log.String(), "made by an init started early") {
			t.Fatalf("run %d: the early init was not adopted:\n%s", i, log.String())
		}
		if n := sharedMappings(t); n != shared {
			t.Fatalf("run %d: %d shared mappings after the run, %d before: the init's memory is left", i, n, shared)
		}
		if r := jail.Run(context.Background(), &p, jail.Input{Program: "/bin/true"}); r.Status != jail.StatusOK {
			t.Fatalf("run %d: a copied init's run after it: %s %q", i, r.Status, r.Error)
		}
	}
	sameHost(t, before)
}

// sharedMappings counts this process's shared anonymous mappings, which
// is what an init's memory is.
func sharedMappings(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "/dev/zero (deleted)")
}

// A run whose policy wants other namespaces (the host's network) discards
// the early init and clones its own; so does Discard, for a run that never
// comes. Either way the early init is reaped.
func TestEarlyDiscarded(t *testing.T) {
	p, before := baseline(t, 1)
	host := p
	host.Net.Mode = policy.NetHost
	e, err := jail.StartEarly()
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	r := jail.Run(context.Background(), &host, jail.Input{Program: "/bin/true", Early: e,
		Log: func(f string, a ...any) { log.WriteString(f + "\n") }})
	if r.Status != jail.StatusOK {
		t.Fatalf("run: %s %q", r.Status, r.Error)
	}
	if !strings.Contains(log.String(), "does not fit this run") || strings.Contains(log.String(), "made by an init started early") {
		t.Fatalf("the early init was adopted by a run on the host's network:\n%s", log.String())
	}
	sameHost(t, before)

	e, err = jail.StartEarly()
	if err != nil {
		t.Fatal(err)
	}
	e.Discard()
	e.Discard() // a second time does nothing
	sameHost(t, before)
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); err != syscall.ECHILD {
		t.Fatalf("a child is left after Discard: %v", err)
	}
}

// A run that adopts the early init and then fails before its release
// (here its stdin cannot be opened) still ends and reaps it, and closes
// its descriptors.
func TestEarlyAdoptedThenFailed(t *testing.T) {
	p, before := baseline(t, 1)
	e, err := jail.StartEarly()
	if err != nil {
		t.Fatal(err)
	}
	r := jail.Run(context.Background(), &p, jail.Input{Program: "/bin/true", Stdin: "/nonexistent/stdin", Early: e})
	if r.Status != jail.StatusInvalidInput || !strings.Contains(r.Error, "/nonexistent/stdin") {
		t.Fatalf("run: %s %q, want invalid_input naming the stdin", r.Status, r.Error)
	}
	var ws syscall.WaitStatus
	if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); err != syscall.ECHILD {
		t.Fatalf("a child is left: wait4 gave %d, %v", pid, err)
	}
	sameHost(t, before)
}

// A caller that exits once Run returns (Input.Exiting) is not made to wait
// for the init's exit, the teardown of the jail's namespaces: Run returns
// with every process of the jail ended, and the init, a child of the
// caller, waiting for the caller's exit (or its keeper's, Exit) to close
// the control pipe. Run leaves the run's descriptors, and its cgroup's
// removal, to that exit: the test runs in a process of its own, and looks
// for the cgroup once that has exited. (The command line's exit, and the
// init's status 0 then, TestNothingLeftBehind.) Without Exiting, Run
// reaps it (TestEarlyDiscarded).
func TestExitingLeavesOnlyTheInit(t *testing.T) {
	if os.Getenv("GOJAIL_EXITING_TEST") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestExitingLeavesOnlyTheInit$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "GOJAIL_EXITING_TEST=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		// The run's cgroup, left to the keeper, goes once the process has
		// exited.
		for _, line := range strings.Split(string(out), "\n") {
			_, dir, ok := strings.Cut(line, "cgroup left to the keeper: ")
			if !ok {
				continue
			}
			for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
				if _, err := os.Stat(dir); os.IsNotExist(err) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s is still there a second after the process exited", dir)
				}
			}
		}
		return
	}
	// No collection: the first run's poller set, left for the exit, stays
	// open, and a descriptor the second run leaked could not take its
	// number (see below).
	debug.SetGCPercent(-1)
	p, _ := baseline(t, 1)
	r := jail.Run(context.Background(), &p, jail.Input{Program: "/bin/sh", Args: []string{"-c", "sleep 29.25 & echo started"}, Exiting: true})
	if r.Status != jail.StatusOK || r.Stdout != "started\n" {
		t.Fatalf("run: %s %q %q", r.Status, r.Error, r.Stdout)
	}
	// Its cgroup is there still: the keeper removes it once this process
	// has exited (the parent test checks that).
	cgroups := runCgroupDirs(os.Getpid())
	for _, dir := range cgroups {
		t.Logf("cgroup left to the keeper: %s", dir)
	}
	if strings.HasPrefix(r.Enforced["memory"], "cgroup") && len(cgroups) == 0 {
		t.Fatalf("the run's cgroup (%s) is gone before the keeper could remove it", r.Enforced["memory"])
	}
	// The program's background child has been killed and reaped.
	if out, _ := exec.Command("pgrep", "-f", "^sleep 29.25$").Output(); len(out) > 0 {
		t.Fatalf("the program's background sleep outlived the run: %s", out)
	}
	// Each thread lists the children it cloned: the init, pid 1 of its
	// own pid namespace, and the keeper (Exit), started by the run with
	// the control pipe and the seccomp listener, and its pidfd of this
	// process, as its only descriptors.
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		kids = append(kids, strings.Fields(string(b))...)
	}
	if len(kids) != 2 {
		t.Fatalf("children of this process after the run: %q, want the init and the keeper", kids)
	}
	pid, keeper := 0, 0
	for _, k := range kids {
		n, _ := strconv.Atoi(k)
		b, err := os.ReadFile("/proc/" + k + "/status")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\nNSpid:\t"+k+"\t1\n") {
			pid = n
		} else {
			keeper = n
		}
	}
	if pid == 0 {
		t.Fatalf("no init among the children %q", kids)
	}
	for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", keeper))
		if err == nil && len(fds) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the keeper holds %d descriptors (%v), want 3", len(fds), err)
		}
	}
	var ws syscall.WaitStatus
	if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG|unix.WALL, nil); got != 0 || err != nil {
		t.Fatalf("the init did not wait for the caller's exit: wait4 gave %d, %v, %v", got, err, ws)
	}
	// A second run with Exiting, in a process that does not exit, is run
	// as any other: its init reaped, its descriptors closed. (The first
	// run's poller set may be closed meanwhile, by the collector: no
	// descriptor may be there after that was not before.)
	before := openFds()
	r = jail.Run(context.Background(), &p, jail.Input{Program: "/bin/true", Exiting: true})
	if r.Status != jail.StatusOK {
		t.Fatalf("second run: %s %q", r.Status, r.Error)
	}
	for fd, what := range openFds() {
		if before[fd] != what {
			t.Fatalf("the second run left descriptor %s (%s): before it, %v", fd, what, before)
		}
	}
	if pid2, err := syscall.Wait4(-1, &ws, syscall.WNOHANG|unix.WALL, nil); pid2 != 0 || err != nil {
		t.Fatalf("after the second run: wait4 gave %d, %v; want the two children alive, nothing to reap", pid2, err)
	}
	// The keeper is left to remove the cgroup as this process exits, and
	// is then reaped by the host's init.
	syscall.Kill(pid, syscall.SIGKILL)
	if _, err := syscall.Wait4(pid, &ws, unix.WALL, nil); err != nil || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the init: %v, %v", err, ws)
	}
}

// openFds maps this process's descriptors to what they are (the ones that
// can be read: not ReadDir's own).
func openFds() map[string]string {
	fds := map[string]string{}
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		if what, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil {
			fds[e.Name()] = what
		}
	}
	return fds
}

// A run that leaves its end to the exit and is stopped (its wall clock)
// with more output than a pipe surely holds sends its init no second
// byte: the stop request told it to exit after its report, and a byte on
// the pipe it no longer reads would raise SIGPIPE in a caller that asked
// for the signal (os/signal.Notify), as a library caller may.
func TestNoSIGPIPEAfterAStop(t *testing.T) {
	if os.Getenv("GOJAIL_SIGPIPE_TEST") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNoSIGPIPEAfterAStop$", "-test.count=1")
		cmd.Env = append(os.Environ(), "GOJAIL_SIGPIPE_TEST=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	p, _ := baseline(t, 0)
	p.Limits.WallTime = policy.Duration(300 * time.Millisecond)
	// The log of the verdict, which comes after the init's report, waits:
	// the init, told to stop, has exited (closing its end of the control
	// pipe) by the time the run's end is left to the exit.
	slow := func(format string, _ ...any) {
		if strings.HasPrefix(format, "verdict") {
			time.Sleep(100 * time.Millisecond)
		}
	}
	r := jail.Run(context.Background(), &p, jail.Input{Program: "/bin/sh", Args: []string{"-c", "head -c 20000 /dev/zero; exec sleep 5"}, Exiting: true, Log: slow})
	if r.Status != jail.StatusTimeLimit || r.StdoutBytes != 20000 {
		t.Fatalf("run: %s %q, %d bytes of output", r.Status, r.Error, r.StdoutBytes)
	}
	select {
	case <-pipes:
		t.Fatal("SIGPIPE after the run")
	case <-time.After(100 * time.Millisecond):
	}
}

// runCgroupDirs lists the run cgroups of the supervisor pid: directories
// named after it under a "gojail" directory, at any depth of the cgroup
// file systems.
func runCgroupDirs(pid int) []string {
	var dirs []string
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if filepath.Base(filepath.Dir(p)) == "gojail" {
			if strings.HasPrefix(d.Name(), strconv.Itoa(pid)+"-") {
				dirs = append(dirs, p)
			}
			return fs.SkipDir
		}
		return nil
	})
	return dirs
}

// A kill of the whole process group of a caller that left its end to the
// exit, while the caller still runs (writing its output, say), leaves the
// keeper, in a group of its own, to remove the run's cgroup.
func TestKeeperOutlivesAGroupKill(t *testing.T) {
	if os.Getenv("GOJAIL_GROUPKILL_TEST") != "" {
		p, _ := baseline(t, 0)
		r := jail.Run(context.Background(), &p, jail.Input{Program: "/bin/true", Exiting: true})
		if r.Status != jail.StatusOK {
			t.Fatalf("run: %s %q", r.Status, r.Error)
		}
		for _, dir := range runCgroupDirs(os.Getpid()) {
			fmt.Println("cgroup:", dir)
		}
		fmt.Println("ready")
		time.Sleep(time.Minute)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKeeperOutlivesAGroupKill$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GOJAIL_GROUPKILL_TEST=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "ready" {
		if dir, ok := strings.CutPrefix(sc.Text(), "cgroup: "); ok {
			dirs = append(dirs, dir)
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	if len(dirs) == 0 {
		t.Skip("no cgroup for this user: nothing for the keeper to remove")
	}
	for _, dir := range dirs {
		for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(dir); os.IsNotExist(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s is still there a second after the kill of the caller's group", dir)
			}
		}
	}
}
