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

// v1 is a run's cgroup on cgroup v1: one directory in each controller's
// hierarchy, nested under this process's own cgroup there so that limits
// set on the caller still apply.
type v1 struct {
	dirs map[string]string // controller -> the run's directory
	k    counters
	own  map[string]string // this process's cgroups, for the sweep
	sw   sweeper           // of what dead runs left (sweepV1)
}

// v1Controllers are the hierarchies a run uses; cpu is optional (quota).
// The pid namespace's end kills every process of a run, and Kill needs no
// freezer (each directory costs a run some 50 µs to make, join and
// remove).
var v1Controllers = []string{"memory", "pids", "cpuacct", "cpu"}

// v1Swept are the hierarchies swept for leftovers: those a run uses, and
// the freezer, which runs of earlier versions used too.
var v1Swept = []string{"memory", "pids", "cpuacct", "freezer", "cpu"}

func newV1(own map[string]string, name string, spec Spec) (Cgroup, error) {
	cg := &v1{dirs: map[string]string{}, own: own}
	// Directories made for the run already are its own from the start, so
	// that a failure below removes them too.
	for ctrl, path := range own {
		if dir := filepath.Join(cgroupMount, ctrl, path, "gojail", name); slices.Contains(spec.Made, dir) {
			cg.dirs[ctrl] = dir
		}
	}
	for _, ctrl := range v1Controllers {
		if ctrl == "cpu" && spec.CPUs == 0 {
			continue
		}
		if _, made := cg.dirs[ctrl]; made {
			continue
		}
		path, ok := own[ctrl]
		if !ok {
			cg.Remove()
			return nil, &ErrNoCgroup{fmt.Sprintf("cgroup v1 has no %s hierarchy in /proc/self/cgroup", ctrl)}
		}
		parent := filepath.Join(cgroupMount, ctrl, path, "gojail")
		dir := filepath.Join(parent, name)
		err := mkdir(dir)
		if err == unix.ENOENT { // the first run under this cgroup
			if err := mkdir(parent); err != nil && err != unix.EEXIST {
				cg.Remove()
				return nil, mkdirFailed(parent, &os.PathError{Op: "mkdir", Path: parent, Err: err}, "")
			}
			err = mkdir(dir)
		}
		if err != nil {
			if err == unix.EEXIST && cg.made(dir) {
				// Controllers mounted together (cpu,cpuacct on many
				// hosts): one directory serves both.
				cg.dirs[ctrl] = dir
				continue
			}
			cg.Remove()
			return nil, mkdirFailed(dir, &os.PathError{Op: "mkdir", Path: dir, Err: err}, "")
		}
		cg.dirs[ctrl] = dir
	}
	cg.sw.pending = true
	// The writes made early went into the directories Made: taken only
	// when every directory is one of those (a process moved to another
	// cgroup since has them made here).
	for _, dir := range cg.dirs {
		if !slices.Contains(spec.Made, dir) {
			spec.Wrote = nil
		}
	}
	if err := cg.set(spec); err != nil {
		cg.Remove()
		return nil, err
	}
	return cg, nil
}

func (c *v1) KeepCounters() {
	c.k.keep(c.dirs["cpuacct"], "cpuacct.usage")
	c.k.keep(c.dirs["memory"], "memory.max_usage_in_bytes", "memory.failcnt", "memory.oom_control")
}

// made reports whether dir is one of the run's directories already made,
// under another controller's name.
func (c *v1) made(dir string) bool {
	var st, other unix.Stat_t
	if stat(dir, &st) != nil {
		return false
	}
	for _, d := range c.dirs {
		if stat(d, &other) == nil && st.Dev == other.Dev && st.Ino == other.Ino {
			return true
		}
	}
	return false
}

// v1Dirs finds the directories of a leftover run named name, in every
// hierarchy this process shares with it.
func v1Dirs(own map[string]string, name string) map[string]string {
	dirs := map[string]string{}
	for _, ctrl := range v1Swept {
		if path, ok := own[ctrl]; ok {
			dirs[ctrl] = filepath.Join(cgroupMount, ctrl, path, "gojail", name)
		}
	}
	return dirs
}

// v1Writes are the control files a run's v1 cgroup is set up with, in
// order.
func v1Writes(spec Spec) []Write {
	limit := strconv.FormatInt(spec.Memory, 10)
	ws := []Write{
		{"memory", "memory.limit_in_bytes", limit, MissingFails},
		// Swap off: memory+swap capped at the memory limit where the
		// kernel accounts swap, else no swapping for this cgroup at all.
		{"memory", "memory.memsw.limit_in_bytes", limit, MissingElse},
		{"memory", "memory.swappiness", "0", MissingFails},
	}
	// TCP socket buffers, which v1 leaves out of the memory counter, capped
	// at the memory limit too: without it 120 connections of a 32 MiB jail
	// held 447 MiB. The write turns their counting on (the kernel logs once
	// that this file is deprecated).
	if spec.TCP {
		ws = append(ws, Write{"memory", "memory.kmem.tcp.limit_in_bytes", limit, MissingSkips})
	}
	ws = append(ws, Write{"pids", "pids.max", strconv.Itoa(spec.Pids), MissingFails})
	if spec.CPUs > 0 {
		const period = 100000
		ws = append(ws, Write{"cpu", "cpu.cfs_period_us", strconv.Itoa(period), MissingFails},
			Write{"cpu", "cpu.cfs_quota_us", strconv.Itoa(int(spec.CPUs * period)), MissingFails})
	}
	return ws
}

// set writes the limits, or takes the results of another process's
// writes of them (Spec.Wrote).
func (c *v1) set(spec Spec) error {
	ws := v1Writes(spec)
	if spec.Wrote != nil && len(spec.Wrote) != len(ws) {
		return fmt.Errorf("BUG(gojail): %d cgroup writes made early, %d to make", len(spec.Wrote), len(ws))
	}
	return apply(ws, func(i int) (string, error) {
		path := filepath.Join(c.dirs[ws[i].Ctrl], ws[i].File)
		if spec.Wrote != nil {
			return path, spec.Wrote[i]
		}
		return path, WriteFile(path, ws[i].Value)
	})
}

// TaskFiles are each hierarchy's tasks file. The kernel checks a write
// against the credentials of the file's opener: the child, as the root of
// its user namespace, which is this process's user on the host.
func (c *v1) TaskFiles() []string {
	var paths []string
	for _, ctrl := range v1Controllers {
		if dir, ok := c.dirs[ctrl]; ok {
			paths = append(paths, filepath.Join(dir, "tasks"))
		}
	}
	return paths
}

// MemoryCap reads hierarchical_memory_limit, the least limit of the
// cgroup and its ancestors.
func (c *v1) MemoryCap() int64 {
	v, err := c.k.keys(c.dirs["memory"], "memory.stat", "hierarchical_memory_limit")
	if err != nil {
		return 0
	}
	return v[0]
}

func (c *v1) Mechanism() string { return "cgroup-v1" }

func (c *v1) Procs() ([]int, error) { return procs(c.dirs["pids"]) }
func (c *v1) IntoFd() int           { return -1 }

func (c *v1) CPU() (time.Duration, error) {
	ns, err := c.k.int(c.dirs["cpuacct"], "cpuacct.usage")
	return time.Duration(ns), err
}

func (c *v1) Usage(counters bool) (Usage, error) {
	var u Usage
	var errs []error
	var err error
	u.CPU, err = c.CPU()
	errs = append(errs, err)
	mem := c.dirs["memory"]
	u.MemoryPeak, err = c.k.int(mem, "memory.max_usage_in_bytes")
	errs = append(errs, err)
	if !counters {
		return u, errors.Join(errs...)
	}
	u.MemoryHit, err = c.k.int(mem, "memory.failcnt")
	errs = append(errs, err)
	// oom_kill in memory.oom_control: Linux 4.13.
	oom, err := c.k.keys(mem, "memory.oom_control", "oom_kill")
	u.OOMKills = oom[0]
	errs = append(errs, err)
	// pids.events: Linux 4.12; without it, nothing to say.
	hit, _ := c.k.keys(c.dirs["pids"], "pids.events", "max")
	u.PidsHit = hit[0]
	return u, errors.Join(errs...)
}

// Kill kills every process in the cgroup, again while any is left (a
// process may fork between the listing and its kill), at most 100 times.
// A leftover of an earlier version with a freezer directory is frozen
// first, so that nothing in it can fork meanwhile, and thawed after, so
// that the kills are delivered.
func (c *v1) Kill() error {
	fz := c.dirs["freezer"]
	if fz == "" {
		for i := 0; i < 100; i++ {
			if n, err := killProcs(c.dirs["pids"]); n == 0 || err != nil {
				return err
			}
		}
		return nil
	}
	if err := write(fz, "freezer.state", "FROZEN"); err != nil {
		return err
	}
	for i := 0; i < 1000; i++ {
		b, err := ReadFile(filepath.Join(fz, "freezer.state"))
		if err != nil || strings.TrimSpace(string(b)) == "FROZEN" {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	_, err := killProcs(fz)
	return errors.Join(err, write(fz, "freezer.state", "THAWED"))
}

func (c *v1) Remove() error {
	c.k.close()
	c.sw.wait()
	var errs []error
	// In the reverse of the order of making: memory last, as it is made
	// first, so that a run cut short leaves its memory directory whenever
	// it leaves any.
	// A jail that has ended leaves its cgroup empty, and every hierarchy
	// holds the same processes: when one directory goes, so do the
	// others, and there is no process list to read. (A leftover may lack
	// some: ENOENT looks at the next.)
	empty, gone := len(c.dirs) == 0, ""
	for _, ctrl := range slices.Backward(v1Swept) {
		if dir, ok := c.dirs[ctrl]; ok {
			err := unlinkDir(dir)
			if err == unix.ENOENT {
				continue
			}
			if empty = err == nil; empty {
				gone = dir
			}
			break
		}
	}
	if !empty {
		if n, _ := killProcs(c.dirs["pids"]); n > 0 {
			errs = append(errs, c.Kill())
		}
	}
	for _, ctrl := range slices.Backward(v1Swept) {
		if dir, ok := c.dirs[ctrl]; ok && dir != gone {
			errs = append(errs, rmdir(dir)) // gone already: nil
		}
	}
	c.sw.finish(func() { sweepV1(c.own, nil) })
	return errors.Join(errs...)
}

func (c *v1) Sweep() { c.sw.start(func() { sweepV1(c.own, c.dirs) }) }

// Leave returns the run's directories in Remove's order, memory's last.
func (c *v1) Leave() []string {
	c.k.close()
	var dirs []string
	for _, ctrl := range slices.Backward(v1Swept) {
		if dir, ok := c.dirs[ctrl]; ok && !slices.Contains(dirs, dir) { // cpu,cpuacct: one
			dirs = append(dirs, dir)
		}
	}
	c.sw.finish(func() { sweepV1(c.own, c.dirs) })
	return dirs
}

// sweepV1 removes the run cgroups that runs killed with SIGKILL left
// behind, in every hierarchy: a run cut short while its directories were
// made or removed may have left some and not others. A run does it while
// its program runs (Sweep), or else as it removes its own (left: its
// directories still there); in a process that runs many, at most once a
// second (sweepDue).
func sweepV1(own map[string]string, left map[string]string) {
	for _, ctrl := range v1Swept {
		path, ok := own[ctrl]
		if !ok {
			continue
		}
		parent := filepath.Join(cgroupMount, ctrl, path, "gojail")
		mine := 0
		if _, ok := left[ctrl]; ok {
			mine = 1
		}
		removeStale(parent, mine, func(n string) { (&v1{dirs: v1Dirs(own, n)}).Remove() }, func(n string) {
			dirs := v1Dirs(own, n)
			for _, ctrl := range slices.Backward(v1Swept) {
				if dir, ok := dirs[ctrl]; ok {
					unlinkDir(dir) // EBUSY while it holds processes
				}
			}
		})
	}
}
