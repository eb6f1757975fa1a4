package validate

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A policy's bind is checked where the mount would reach: through the
// links of its directories, with what is mounted below it.
func TestHostBind(t *testing.T) {
	dir := t.TempDir()
	os.Symlink("/sys", filepath.Join(dir, "s"))
	os.MkdirAll(filepath.Join(dir, "data", "sub"), 0o755)
	os.Symlink(filepath.Join(dir, "data"), filepath.Join(dir, "link"))
	syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600)
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct{ src, want, err string }{
		{src: filepath.Join(dir, "s", "kernel"), err: "is /sys/kernel through a symbolic link"},
		{src: filepath.Join(dir, "s", "fs", "cgroup"), err: "is /sys/fs/cgroup through a symbolic link"},
		{src: filepath.Join(dir, "fifo"), err: "is a unix socket or a FIFO"},
		{src: filepath.Join(dir, "sock"), err: "is a unix socket or a FIFO"},
		{src: "/proc/1", err: "on a proc file system"},
		{src: filepath.Join(dir, "link", "sub"), want: filepath.Join(dir, "data", "sub")},
		{src: filepath.Join(dir, "data"), want: filepath.Join(dir, "data")},
		{src: filepath.Join(dir, "link"), want: filepath.Join(dir, "link")}, // the link itself, made again in the jail
	} {
		got, err := HostBind(tc.src)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("HostBind(%s) = %q, %v; want an error saying %q", tc.src, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("HostBind(%s) = %q, %v; want %q", tc.src, got, err, tc.want)
		}
	}
	if os.Geteuid() != 0 {
		t.Log("not root: the mount below a bind is not tried")
		return
	}
	proc := filepath.Join(dir, "chroot", "proc")
	os.MkdirAll(proc, 0o755)
	if err := syscall.Mount("proc", proc, "proc", 0, ""); err != nil {
		t.Fatalf("mount proc: %v", err)
	}
	defer syscall.Unmount(proc, syscall.MNT_DETACH)
	if _, err := HostBind(filepath.Join(dir, "chroot")); err == nil || !strings.Contains(err.Error(), "holds "+proc+" (proc)") {
		t.Errorf("a directory with a proc below it: %v", err)
	}
	// A kernel interface mounted at the path itself, which statfs does not
	// tell (mqueue; devtmpfs says it is tmpfs), and the host's root under
	// another name.
	mq := filepath.Join(dir, "mq")
	os.MkdirAll(mq, 0o755)
	if err := syscall.Mount("mqueue", mq, "mqueue", 0, ""); err != nil {
		t.Fatalf("mount mqueue: %v", err)
	}
	defer syscall.Unmount(mq, syscall.MNT_DETACH)
	if _, err := HostBind(mq); err == nil || !strings.Contains(err.Error(), "holds "+mq+" (mqueue)") {
		t.Errorf("an mqueue mounted at the bind's path: %v", err)
	}
	hostRoot := filepath.Join(dir, "hostroot")
	os.MkdirAll(hostRoot, 0o755)
	if err := syscall.Mount("/", hostRoot, "", syscall.MS_BIND, ""); err != nil {
		t.Fatalf("bind /: %v", err)
	}
	defer syscall.Unmount(hostRoot, syscall.MNT_DETACH)
	if _, err := HostBind(hostRoot); err == nil || !strings.Contains(err.Error(), "is the host's root directory") {
		t.Errorf("the host's root bound elsewhere: %v", err)
	}
}

// A policy's binds share one reading of the mount table: each bind costs
// its own path, not the table again (500 binds took 76 µs each when every
// one read it, twice).
func TestBindsReadMountsOnce(t *testing.T) {
	reads := 0
	defer func(f func() ([]hostMount, error)) { readMounts = f }(readMounts)
	readMounts = func() ([]hostMount, error) { reads++; return hostMounts() }
	dir := t.TempDir()
	var b Binds
	for i := 0; i < 50; i++ {
		d := filepath.Join(dir, "d", strconv.Itoa(i))
		os.MkdirAll(d, 0o755)
		if got, err := b.HostBind(d); err != nil || got != d {
			t.Fatalf("HostBind(%s) = %q, %v", d, got, err)
		}
	}
	if reads != 1 {
		t.Fatalf("the mount table read %d times for 50 binds, want once", reads)
	}
	if os.Geteuid() != 0 {
		t.Log("not root: a mount below a later bind is not tried")
		return
	}
	// The table read once still refuses a directory with a kernel mount
	// below it, bound after the others (it was mounted before the reading).
	var later Binds
	proc := filepath.Join(dir, "chroot", "proc")
	os.MkdirAll(proc, 0o755)
	if err := syscall.Mount("proc", proc, "proc", 0, ""); err != nil {
		t.Fatalf("mount proc: %v", err)
	}
	defer syscall.Unmount(proc, syscall.MNT_DETACH)
	for i := 0; i < 3; i++ {
		if _, err := later.HostBind(filepath.Join(dir, "d", strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := later.HostBind(filepath.Join(dir, "chroot")); err == nil || !strings.Contains(err.Error(), "holds "+proc+" (proc)") {
		t.Errorf("a directory with a proc below it, after three binds: %v", err)
	}
}

func TestStrictlyBelow(t *testing.T) {
	for _, tc := range []struct {
		p, dir string
		want   bool
	}{
		{"/a/b", "/a", true}, {"/a", "/a", false}, {"/ab", "/a", false}, {"/a/b/c", "/a/b", true},
		{"/a", "/", true}, {"/", "/", false}, {"/b", "/a", false},
	} {
		if got := strictlyBelow(tc.p, tc.dir); got != tc.want {
			t.Errorf("strictlyBelow(%q, %q) = %v, want %v", tc.p, tc.dir, got, tc.want)
		}
	}
}
