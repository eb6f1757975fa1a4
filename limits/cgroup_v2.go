package limits

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// v2 is a run's cgroup on the unified hierarchy.
type v2 struct {
	dir string
	fd  int // O_PATH descriptor of dir, for CLONE_INTO_CGROUP
	k   counters
	sw  sweeper // of what dead runs left in dir's parent
}

// newV2 creates mount/BASE/gojail/NAME, where BASE is the parent of this
// process's own cgroup (a cgroup holding processes cannot give controllers
// to children; its parent is where a delegated subtree lets us create
// siblings), or the root when this process is in the root.
func newV2(mount string, owns map[string]string, name string, spec Spec) (Cgroup, error) {
	own, ok := owns[""]
	if !ok {
		return nil, &ErrNoCgroup{"no cgroup v2 line in /proc/self/cgroup"}
	}
	base := v2Base(mount, own)
	if own == "/" {
		// The root may give controllers to children while holding processes.
		write(base, "cgroup.subtree_control", "+memory +pids +cpu")
	}
	// The child is cloned into a cgroup under base: that moves it from our
	// cgroup, which the kernel allows only to a writer of the common
	// ancestor's cgroup.procs (a delegated subtree grants it).
	dirfd, rel := at(filepath.Join(base, "cgroup.procs"))
	if err := unix.Faccessat(dirfd, rel, unix.W_OK, 0); err != nil {
		return nil, &ErrNoCgroup{fmt.Sprintf("%s/cgroup.procs is not writable (%v): the subtree is not delegated to this user", base, err)}
	}
	parent := filepath.Join(base, "gojail")
	if err := mkdir(parent); err != nil && err != unix.EEXIST {
		return nil, mkdirFailed(parent, &os.PathError{Op: "mkdir", Path: parent, Err: err}, " (cgroup v2 needs root or a delegated subtree)")
	}
	if !hasControllers(parent, "memory", "pids") {
		return nil, &ErrNoCgroup{fmt.Sprintf("%s lacks the memory and pids controllers: enable them in %s/cgroup.subtree_control", parent, base)}
	}
	ctrls := "+memory +pids"
	if spec.CPUs > 0 {
		ctrls += " +cpu"
	}
	if err := write(parent, "cgroup.subtree_control", ctrls); err != nil {
		return nil, &ErrNoCgroup{err.Error()}
	}
	dir := filepath.Join(parent, name)
	if slices.Contains(spec.Made, dir) {
		// Made before the controllers were given above: they reach it.
	} else if err := mkdir(dir); err != nil {
		// What killed runs left may be what refuses it (the parent's
		// cgroup.max.descendants): swept now, and made once more.
		sweepV2(parent, 0)
		if err = mkdir(dir); err != nil {
			return nil, mkdirFailed(dir, &os.PathError{Op: "mkdir", Path: dir, Err: err}, "")
		}
	}
	cg := &v2{dir: dir, fd: -1, sw: sweeper{pending: true}}
	if err := cg.set(spec); err != nil {
		cg.Remove()
		return nil, err
	}
	fd, err := Open(dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		cg.Remove()
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	cg.fd = fd
	return cg, nil
}

func (c *v2) KeepCounters() { c.k.keep(c.dir, "cpu.stat", "memory.peak", "memory.events") }

// v2Base is where a run's gojail directory goes: beside this process's
// own cgroup (own, its path in mount), or in the root when it is there.
func v2Base(mount, own string) string {
	if own == "/" {
		return mount
	}
	return filepath.Join(mount, filepath.Dir(own))
}

func (c *v2) set(spec Spec) error {
	if err := write(c.dir, "memory.max", strconv.FormatInt(spec.Memory, 10)); err != nil {
		return err
	}
	// memory.swap.max exists only with swap accounting.
	if exists(filepath.Join(c.dir, "memory.swap.max")) {
		if err := write(c.dir, "memory.swap.max", "0"); err != nil {
			return err
		}
	}
	if err := write(c.dir, "pids.max", strconv.Itoa(spec.Pids)); err != nil {
		return err
	}
	if spec.CPUs > 0 {
		const period = 100000
		return write(c.dir, "cpu.max", fmt.Sprintf("%d %d", int(spec.CPUs*period), period))
	}
	return nil
}

// TaskFiles are not needed on v2: the child is cloned into the cgroup.
func (c *v2) TaskFiles() []string { return nil }

func (c *v2) Mechanism() string { return "cgroup-v2" }

func (c *v2) Procs() ([]int, error) { return procs(c.dir) }
func (c *v2) IntoFd() int           { return c.fd }

func (c *v2) CPU() (time.Duration, error) {
	us, err := c.k.keys(c.dir, "cpu.stat", "usage_usec")
	return time.Duration(us[0]) * time.Microsecond, err
}

func (c *v2) Usage(counters bool) (Usage, error) {
	var u Usage
	var errs []error
	var err error
	u.CPU, err = c.CPU()
	errs = append(errs, err)
	// memory.peak: Linux 5.19. Without it the caller keeps rusage's figure.
	if u.MemoryPeak, err = c.k.int(c.dir, "memory.peak"); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if !counters {
		return u, errors.Join(errs...)
	}
	// "oom", not "max": max counts every time the usage met the limit, and
	// reclaiming page cache there is no failure (a program that read large
	// files and then failed would have been a memory_limit).
	ev, err := c.k.keys(c.dir, "memory.events", "oom_kill", "oom")
	u.OOMKills, u.MemoryHit = ev[0], ev[1]
	errs = append(errs, err)
	hit, _ := c.k.keys(c.dir, "pids.events", "max") // as on v1
	u.PidsHit = hit[0]
	return u, errors.Join(errs...)
}

// MemoryCap walks memory.max from the run's cgroup up; the root has none.
func (c *v2) MemoryCap() int64 {
	var least int64
	for dir := c.dir; ; dir = filepath.Dir(dir) {
		b, err := ReadFile(filepath.Join(dir, "memory.max"))
		if err != nil {
			return least
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && (least == 0 || v < least) {
			least = v
		}
		if dir == "/" || dir == "." {
			return least
		}
	}
}

// Kill uses cgroup.kill (Linux 5.14), else freezes, kills and thaws.
func (c *v2) Kill() error {
	if err := write(c.dir, "cgroup.kill", "1"); err == nil {
		return nil
	}
	if err := write(c.dir, "cgroup.freeze", "1"); err != nil {
		return err
	}
	_, err := killProcs(c.dir)
	return errors.Join(err, write(c.dir, "cgroup.freeze", "0"))
}

func (c *v2) Leave() []string {
	c.k.close()
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
	c.sw.finish(func() { sweepV2(filepath.Dir(c.dir), 1) })
	return []string{c.dir}
}

func (c *v2) Sweep() { c.sw.start(func() { sweepV2(filepath.Dir(c.dir), 1) }) }

// sweepV2 removes what dead runs left in parent; mine is how many of its
// directories are this process's run's (1 while its own is there).
func sweepV2(parent string, mine int) {
	removeStale(parent, mine, func(n string) { (&v2{dir: filepath.Join(parent, n), fd: -1}).Remove() },
		func(n string) { unlinkDir(filepath.Join(parent, n)) }) // EBUSY while it holds processes
}

func (c *v2) Remove() error {
	c.k.close()
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
	c.sw.wait()
	defer c.sw.finish(func() { sweepV2(filepath.Dir(c.dir), 0) })
	if unlinkDir(c.dir) == nil { // the usual end: nothing left in it
		return nil
	}
	var errs []error
	if b, err := ReadFile(filepath.Join(c.dir, "cgroup.procs")); err == nil && strings.TrimSpace(string(b)) != "" {
		errs = append(errs, c.Kill())
	}
	return errors.Join(append(errs, rmdir(c.dir))...)
}
