package jail

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/limits"
)

// An early init's cgroup writes (cgroupWrites) follow the order New's
// would (limits: apply): a write made with MissingElse leaves out the one
// after it, and a missing file is that one's turn; a missing file is no
// error where the write may be missing; the first error ends them. Each
// made directory's tasks file is opened for pid 2. Checked on plain files
// in a directory standing in for /sys/fs/cgroup.
func TestCgroupWritesInOrder(t *testing.T) {
	ews := []limits.EarlyWrite{
		{Write: limits.Write{Ctrl: "memory", File: "memory.limit_in_bytes", Value: "1048576", Missing: limits.MissingFails}, Dir: 0},
		{Write: limits.Write{Ctrl: "memory", File: "memory.memsw.limit_in_bytes", Value: "1048576", Missing: limits.MissingElse}, Dir: 0},
		{Write: limits.Write{Ctrl: "memory", File: "memory.swappiness", Value: "0", Missing: limits.MissingFails}, Dir: 0},
		{Write: limits.Write{Ctrl: "memory", File: "memory.kmem.tcp.limit_in_bytes", Value: "1048576", Missing: limits.MissingSkips}, Dir: 0},
		{Write: limits.Write{Ctrl: "pids", File: "pids.max", Value: "64", Missing: limits.MissingFails}, Dir: 1},
	}
	// The files are plain files: a write does not truncate one, as it need
	// not a control file.
	const none = "-" // a file left out of the directory
	for _, tc := range []struct {
		name    string
		files   map[string]string // before: the control files, none for a missing one, "/" for a directory
		errs    []syscall.Errno   // cgWriteErr, in order
		want    map[string]string // after
		mkdirOK [3]bool           // which of the three directories the init made
	}{{
		name:    "every file there",
		files:   map[string]string{"memory.limit_in_bytes": "", "memory.memsw.limit_in_bytes": "", "memory.swappiness": "60", "memory.kmem.tcp.limit_in_bytes": "", "pids.max": ""},
		errs:    []syscall.Errno{0, 0, 0, 0, 0},
		want:    map[string]string{"memory.limit_in_bytes": "1048576", "memory.memsw.limit_in_bytes": "1048576", "memory.swappiness": "60", "memory.kmem.tcp.limit_in_bytes": "1048576", "pids.max": "64"},
		mkdirOK: [3]bool{true, true, true},
	}, {
		name:    "no swap accounting, no tcp limit",
		files:   map[string]string{"memory.limit_in_bytes": "", "memory.memsw.limit_in_bytes": none, "memory.swappiness": "", "memory.kmem.tcp.limit_in_bytes": none, "pids.max": ""},
		errs:    []syscall.Errno{0, syscall.ENOENT, 0, syscall.ENOENT, 0},
		want:    map[string]string{"memory.limit_in_bytes": "1048576", "memory.swappiness": "0", "pids.max": "64"},
		mkdirOK: [3]bool{true, true, false},
	}, {
		name:    "the first write fails",
		files:   map[string]string{"memory.limit_in_bytes": "/", "memory.memsw.limit_in_bytes": "", "memory.swappiness": "60", "memory.kmem.tcp.limit_in_bytes": "", "pids.max": ""},
		errs:    []syscall.Errno{syscall.EISDIR, 0, 0, 0, 0},
		want:    map[string]string{"memory.memsw.limit_in_bytes": "", "memory.swappiness": "60", "memory.kmem.tcp.limit_in_bytes": "", "pids.max": ""},
		mkdirOK: [3]bool{true, true, true},
	}, {
		name:    "a limit that may not be missing is",
		files:   map[string]string{"memory.limit_in_bytes": "", "memory.memsw.limit_in_bytes": "", "memory.swappiness": "60", "memory.kmem.tcp.limit_in_bytes": "", "pids.max": none},
		errs:    []syscall.Errno{0, 0, 0, 0, syscall.ENOENT},
		want:    map[string]string{"memory.limit_in_bytes": "1048576", "memory.memsw.limit_in_bytes": "1048576", "memory.swappiness": "60", "memory.kmem.tcp.limit_in_bytes": "1048576"},
		mkdirOK: [3]bool{true, true, true},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dirs := []string{"memory/gojail/run", "pids/gojail/run", "cpuacct/gojail/run"}
			c := new(childPlan)
			for i, d := range dirs {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, d, "tasks"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				copy(c.cgPath[i][:], d)
				if !tc.mkdirOK[i] {
					c.cgErr[i] = int32(syscall.EEXIST)
				}
			}
			c.cgCount = len(dirs)
			for f, v := range tc.files {
				p := filepath.Join(root, dirFor(ews, f, dirs), f)
				switch v {
				case none:
				case "/":
					if err := os.Mkdir(p, 0o755); err != nil {
						t.Fatal(err)
					}
				default:
					if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			c.cgRoot = fd + 1
			if !c.setWrites(ews) {
				t.Fatal("the writes do not fit the plan")
			}
			cgroupWrites(c)
			if c.cgWrote != 1 {
				t.Errorf("cgWrote %d, want 1", c.cgWrote)
			}
			for i, want := range tc.errs {
				if got := syscall.Errno(c.cgWriteErr[i]); got != want {
					t.Errorf("write %d (%s): errno %v, want %v", i, ews[i].File, got, want)
				}
			}
			for f, v := range tc.files {
				if v == "/" {
					continue
				}
				b, err := os.ReadFile(filepath.Join(root, dirFor(ews, f, dirs), f))
				want, ok := tc.want[f]
				switch {
				case !ok && err == nil:
					t.Errorf("%s: %q, want no such file", f, b)
				case ok && (err != nil || string(b) != want):
					t.Errorf("%s: %q (%v), want %q", f, b, err, want)
				}
			}
			if c.taskN != len(dirs) {
				t.Fatalf("taskN %d, want %d", c.taskN, len(dirs))
			}
			for i := range dirs {
				fd := c.cgTasks[i]
				if !tc.mkdirOK[i] {
					if fd != -int32(syscall.ENOENT) {
						t.Errorf("tasks file %d of a directory the init did not make: %d, want -ENOENT", i, fd)
					}
					continue
				}
				if fd < 0 {
					t.Errorf("tasks file %d: errno %v", i, syscall.Errno(-fd))
					continue
				}
				if _, err := unix.Write(int(fd), []byte("0")); err != nil {
					t.Errorf("tasks file %d: write: %v", i, err)
				}
				unix.Close(int(fd))
				if b, _ := os.ReadFile(filepath.Join(root, dirs[i], "tasks")); string(b) != "0" {
					t.Errorf("tasks file %d: %q written through the init's descriptor, want \"0\"", i, b)
				}
			}
		})
	}
}

// dirFor is the directory a control file of ews is written in.
func dirFor(ews []limits.EarlyWrite, file string, dirs []string) string {
	for _, w := range ews {
		if w.File == file {
			return dirs[w.Dir]
		}
	}
	return dirs[0]
}
