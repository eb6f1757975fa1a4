package limits

import (
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Every path below /sys/fs/cgroup is walked from a descriptor of that
// directory, opened once (OpenRoot), never from /. A walk from / crosses
// sysfs (/sys/fs), whose directory lock the creation and the teardown of
// every network namespace take for writing (the loopback device's files),
// and a run's twenty-odd walks (its directories, limits, counters, tasks
// files and their removal) come while its own jail's network namespace is
// being made. Measured here over 60 runs: 14 waits of the walks behind
// that lock (39 µs at the median) and 7 waits of the namespace's creation,
// on the jail's path to its release, behind the walks (388 µs at the
// median); none with the descriptor.
const cgroupMount = "/sys/fs/cgroup"

var (
	rootMu sync.Mutex
	rootFd = -1
)

// root is the descriptor of /sys/fs/cgroup, opened on the first call that
// can: a failure (out of descriptors, say) is not kept, and the next call
// tries again. Once opened it is kept for the life of the process, so a
// file system mounted on /sys/fs/cgroup later is not seen (the v1-or-v2
// answer was kept before it too).
func root() (int, error) {
	rootMu.Lock()
	defer rootMu.Unlock()
	if rootFd < 0 {
		fd, err := unix.Open(cgroupMount, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		rootFd = fd
	}
	return rootFd, nil
}

// OpenRoot opens /sys/fs/cgroup for every later walk, if not yet done: a
// caller about to make a network namespace calls it first.
func OpenRoot() { root() }

// RootFd is the descriptor of /sys/fs/cgroup, opened if not yet; -1 if it
// cannot be.
func RootFd() int {
	fd, err := root()
	if err != nil {
		return -1
	}
	return fd
}

// UseRoot gives the descriptor of /sys/fs/cgroup opened before this
// package could (an O_PATH directory): kept if none is yet, else closed.
func UseRoot(fd int) {
	rootMu.Lock()
	defer rootMu.Unlock()
	if rootFd < 0 {
		rootFd = fd
	} else {
		unix.Close(fd)
	}
}

// at is path for an *at system call: the descriptor of /sys/fs/cgroup and
// the rest of the path, for a path below it; AT_FDCWD and path itself
// otherwise, or when /sys/fs/cgroup cannot be opened.
func at(path string) (int, string) {
	rest, ok := strings.CutPrefix(path, cgroupMount)
	if !ok || rest != "" && rest[0] != '/' {
		return unix.AT_FDCWD, path
	}
	fd, err := root()
	if err != nil {
		return unix.AT_FDCWD, path
	}
	if rest = strings.TrimLeft(rest, "/"); rest == "" {
		rest = "."
	}
	return fd, rest
}

// Open opens path (close-on-exec), walked as at says.
func Open(path string, flags int) (int, error) {
	dir, rel := at(path)
	return unix.Openat(dir, rel, flags|unix.O_CLOEXEC, 0)
}

func mkdir(path string) error {
	dir, rel := at(path)
	return unix.Mkdirat(dir, rel, 0o755)
}

func unlinkDir(path string) error {
	dir, rel := at(path)
	return rawUnlinkat(dir, rel, unix.AT_REMOVEDIR)
}

func stat(path string, st *unix.Stat_t) error {
	dir, rel := at(path)
	return rawFstatat(dir, rel, st, 0)
}

func exists(path string) bool {
	var st unix.Stat_t
	return stat(path, &st) == nil
}
