package limits

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A run's cgroup is removed with what it holds only when its supervisor, of
// this pid namespace, is gone. A run of another pid namespace sharing the
// hierarchy is never killed from here; once it is older than foreignAge a
// run here only tries rmdir, which removes an empty cgroup alone.
func TestJudge(t *testing.T) {
	ns := pidNamespace()
	if ns == "0" {
		t.Skip("no /proc/self/ns/pid: cannot name this pid namespace")
	}
	const gone = 4194305 // above the kernel's largest pid
	now := time.Now().UnixNano()
	old := time.Now().Add(-2 * foreignAge).UnixNano()
	for _, tc := range []struct {
		name string
		want int
	}{
		{fmt.Sprintf("%d-%s-%d", gone, ns, now), removeAll},
		{fmt.Sprintf("%d-%s-%d", os.Getpid(), ns, now), keepIt},
		{fmt.Sprintf("%d-%s-%d", os.Getppid(), ns, now), keepIt},
		{fmt.Sprintf("%d-%s1-%d", gone, ns, now), keepIt},     // another pid namespace, recent
		{fmt.Sprintf("%d-%s1-%d", 1, ns, old), removeIfEmpty}, // another pid namespace, old
		{fmt.Sprintf("%d-%s1-x", 1, ns), keepIt},              // no time to judge by
		{fmt.Sprintf("%d-1", gone), removeAll},                // the older two-part name
		{"notarun", keepIt},
		{"x-1", keepIt},
	} {
		if got := judge(tc.name); got != tc.want {
			t.Errorf("judge(%q) = %d, want %d", tc.name, got, tc.want)
		}
	}
	if name := runName(); judge(fmt.Sprintf("%d%s", gone, name[len(fmt.Sprint(os.Getpid())):])) != removeAll {
		t.Errorf("runName %q: a run of a gone supervisor with this format is not removed", name)
	}
}

// A run whose cgroup was never made (its first mkdir refused) has no
// directories: removing or killing it reads no process list, least of all
// a cgroup.procs in the working directory, relative to "".
func TestRemoveWithoutDirectories(t *testing.T) {
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(fmt.Sprintf("%d\n", sleeper.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	cg := &v1{dirs: map[string]string{}}
	cg.Remove()
	cg.Kill()
	time.Sleep(20 * time.Millisecond)
	var ws syscall.WaitStatus
	if pid, _ := syscall.Wait4(sleeper.Process.Pid, &ws, syscall.WNOHANG, nil); pid != 0 {
		t.Fatalf("a process listed in ./cgroup.procs was killed: %v", ws)
	}
}

// Paths below /sys/fs/cgroup are walked from its descriptor, never from /
// (which crosses sysfs); every other path is left as it is.
func TestAt(t *testing.T) {
	fd, err := root()
	if err != nil {
		t.Skipf("cannot open /sys/fs/cgroup here: %v", err)
	}
	for _, tc := range []struct {
		path, rel string
		dir       int
	}{
		{"/sys/fs/cgroup/memory/gojail/run/tasks", "memory/gojail/run/tasks", fd},
		{"/sys/fs/cgroup/unified", "unified", fd},
		{"/sys/fs/cgroup", ".", fd},
		{"/sys/fs/cgroup/", ".", fd},
		{"/sys/fs/cgroupfoo/x", "/sys/fs/cgroupfoo/x", unix.AT_FDCWD},
		{"/proc/self/uid_map", "/proc/self/uid_map", unix.AT_FDCWD},
	} {
		if dir, rel := at(tc.path); dir != tc.dir || rel != tc.rel {
			t.Errorf("at(%q) = %d, %q; want %d, %q", tc.path, dir, rel, tc.dir, tc.rel)
		}
	}
	// The descriptor itself is the directory (".").
	var st unix.Stat_t
	if err := stat("/sys/fs/cgroup", &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		t.Errorf("stat of /sys/fs/cgroup through its descriptor: %v, mode %o", err, st.Mode)
	}
}

// A failed open of /sys/fs/cgroup (out of descriptors) is not kept: once
// descriptors are free again the next walk has its descriptor, and the
// v1-or-v2 probe meanwhile reads the path rather than saying "not mounted".
func TestRootRetried(t *testing.T) {
	if _, err := os.Stat(cgroupMount); err != nil {
		t.Skipf("no %s here: %v", cgroupMount, err)
	}
	rootMu.Lock()
	if rootFd >= 0 {
		unix.Close(rootFd)
		rootFd = -1
	}
	rootMu.Unlock()

	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = 256
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	var fds []int
	for {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		fds = append(fds, fd)
	}
	_, errFull := root()
	_, errProbe := unified()
	for _, fd := range fds {
		unix.Close(fd)
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if errFull == nil {
		t.Fatal("root() had a descriptor with none free")
	}
	if errProbe != nil {
		t.Errorf("unified() with no descriptor free: %v", errProbe)
	}
	if fd, err := root(); err != nil || fd < 0 {
		t.Fatalf("root() once descriptors were free: %d, %v", fd, err)
	}
}

// apply asks for the writes in order, leaves out the one after a write
// made with MissingElse, takes a missing file as that one's turn or, with
// MissingSkips, as nothing, and stops at the first error, which names the
// file and the value: the order an early init follows (EarlyWrite).
func TestApplyOrder(t *testing.T) {
	ws := []Write{
		{"memory", "memory.limit_in_bytes", "1", MissingFails},
		{"memory", "memory.memsw.limit_in_bytes", "1", MissingElse},
		{"memory", "memory.swappiness", "0", MissingFails},
		{"memory", "memory.kmem.tcp.limit_in_bytes", "1", MissingSkips},
		{"pids", "pids.max", "2", MissingFails},
	}
	for _, tc := range []struct {
		results map[int]error
		asked   []int
		err     string
	}{
		{map[int]error{}, []int{0, 1, 3, 4}, ""},
		{map[int]error{1: unix.ENOENT, 3: unix.ENOENT}, []int{0, 1, 2, 3, 4}, ""},
		{map[int]error{1: unix.EBUSY}, []int{0, 1}, `write "1" to /x/memory.memsw.limit_in_bytes: device or resource busy`},
		{map[int]error{1: unix.ENOENT, 2: unix.ENOENT}, []int{0, 1, 2}, `write "0" to /x/memory.swappiness: no such file or directory`},
		{map[int]error{4: unix.ENOENT}, []int{0, 1, 3, 4}, `write "2" to /x/pids.max: no such file or directory`},
	} {
		var asked []int
		err := apply(ws, func(i int) (string, error) {
			asked = append(asked, i)
			return "/x/" + ws[i].File, tc.results[i]
		})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if fmt.Sprint(asked) != fmt.Sprint(tc.asked) || got != tc.err {
			t.Errorf("results %v: asked %v, error %q; want %v, %q", tc.results, asked, got, tc.asked, tc.err)
		}
	}
}

// A process sweeps for dead runs' cgroups on its first run, and then at
// most once every sweepEvery: a batch's runs do not each read the
// hierarchies again.
func TestSweepDue(t *testing.T) {
	saved := sweptAt.Load()
	defer sweptAt.Store(saved)
	sweptAt.Store(0)
	if !sweepDue() {
		t.Fatal("the first sweep of a process is not due")
	}
	if sweepDue() {
		t.Fatal("a second sweep at once is due")
	}
	sweptAt.Store(int64(time.Since(sweepClock)) + 1 - int64(sweepEvery) + int64(50*time.Millisecond))
	if sweepDue() {
		t.Fatal("a sweep 50 ms short of sweepEvery after the last is due")
	}
	sweptAt.Store(int64(time.Since(sweepClock)) + 1 - int64(sweepEvery))
	if !sweepDue() {
		t.Fatal("a sweep sweepEvery after the last is not due")
	}
	if sweepDue() {
		t.Fatal("a sweep right after a due one is due")
	}
}
