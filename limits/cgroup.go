package limits

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Cgroup is the control group of one run: its memory, process and CPU
// limits, the figures read back, and the kill and removal at the end. One
// interface, two implementations: cgroup v1 (a hierarchy per controller) and
// cgroup v2 (one unified hierarchy).
type Cgroup interface {
	// Mechanism names what enforces the limits: "cgroup-v1" or "cgroup-v2".
	Mechanism() string
	// IntoFd is a directory descriptor for clone3's CLONE_INTO_CGROUP, so
	// that a child starts inside the cgroup (v2, Linux 5.7); -1 if none.
	IntoFd() int
	// TaskFiles are the cgroup's tasks files, one per v1 hierarchy, to
	// which a process writes "0", itself: a process moving itself (one
	// thread) takes no global lock, while moving another takes the
	// threadgroup lock, whose first writer waits for an RCU grace period
	// (5-30 ms measured here; Linux 5.19). Nil on v2: use IntoFd.
	TaskFiles() []string
	// KeepCounters opens the files the figures are read from, to be read
	// with one pread each (a figure read before opens its file for that
	// read): once the jail is released, off the way to it.
	KeepCounters()
	// CPU is the CPU time used so far by every process in the cgroup.
	CPU() (time.Duration, error)
	// Usage reads the figures of the finished run: CPU time and peak
	// memory, and with counters the OOM kills and the times the limit was
	// hit, which only the verdict of a failed run needs.
	Usage(counters bool) (Usage, error)
	// MemoryCap is the tightest memory limit over the run's cgroup and
	// those enclosing it, in bytes (0 if unknown): lower than the run's
	// own when the caller's cgroup allows less.
	MemoryCap() int64
	// Kill kills every process in the cgroup.
	Kill() error
	// Procs lists the processes in the cgroup.
	Procs() ([]int, error)
	// Remove kills what is left and removes the cgroup.
	Remove() error
	// Leave is Remove for a caller that leaves the removal to a process
	// of its own, to do after this one has exited: it gives up the
	// cgroup's descriptors, removes what runs killed earlier left (as
	// Remove does), and returns the cgroup's directories in the order to
	// remove them. The cgroup must hold no process.
	Leave() []string
	// Sweep starts the removal of what runs killed earlier left, which
	// Remove or Leave would otherwise make, in a goroutine; they wait for
	// it. Called while the jail's program runs, it is off the run's way
	// (26 µs a run here, 81 µs with another run beside it).
	Sweep()
}

// Spec is what a run's cgroup enforces.
type Spec struct {
	Memory int64   // bytes of memory (swap is off)
	Pids   int     // processes and threads
	CPUs   float64 // CPU quota in cores; 0 for none
	// TCP: the jail has a network (loopback or the host's), whose TCP
	// socket buffers v1 counts only when they have a limit of their own
	// (v2 counts them in the memory).
	TCP bool
	// Name and Made: the run's name and those of its directories already
	// made for it (EarlyDirs), which New takes as its own: it removes
	// those it does not use, and every one when it fails.
	Name string
	Made []string
	// Wrote: the results of EarlyWrites(spec), made by another process
	// into the directories Made, in order; New then writes none of them,
	// when it takes every directory from Made.
	Wrote []error
}

// A Write is one control file a run's cgroup is set up with: on v1 its
// hierarchy (Ctrl), its file and value, and what a missing file (ENOENT)
// means.
type Write struct {
	Ctrl    string
	File    string
	Value   string
	Missing Missing
}

// Missing says what a control file that is missing means.
type Missing uint8

const (
	MissingFails Missing = iota // an error, as any other
	MissingSkips                // nothing to write on this kernel
	// MissingElse: the next write is made instead; when this one is made,
	// the next is not.
	MissingElse
)

// apply makes the writes in order, each with do (which returns the file's
// path and the write's error), as their Missing says, and returns the
// first error, naming the file and the value. Another process's writes
// (EarlyWrite) follow the same order.
func apply(ws []Write, do func(i int) (string, error)) error {
	for i := 0; i < len(ws); i++ {
		path, err := do(i)
		switch {
		case err == nil:
			if ws[i].Missing == MissingElse {
				i++
			}
		case errors.Is(err, unix.ENOENT) && ws[i].Missing != MissingFails:
		default:
			return fmt.Errorf("write %q to %s: %w", ws[i].Value, path, err)
		}
	}
	return nil
}

// An EarlyWrite is a Write that another process makes before New, into
// the directory EarlyDirs names at index Dir, following apply's order:
// after a write made with MissingElse the next is not made, and the first
// error ends them.
type EarlyWrite struct {
	Write
	Dir int
}

// EarlyWrites are the writes New would make for spec into the directories
// EarlyDirs names, for another process to make before it (a jail's init,
// while it waits for its release): on v1 the memory and process limits.
// None on v2 (its controllers reach a directory only once New has enabled
// them in its parent), nor when a write goes to a hierarchy EarlyDirs
// leaves out (the cpu quota's).
func EarlyWrites(spec Spec) []EarlyWrite {
	if mount, err := unifiedMount(); err != nil || mount != "" {
		return nil
	}
	var ews []EarlyWrite
	for _, w := range v1Writes(spec) {
		dir := 0
		for _, ctrl := range v1Controllers {
			if ctrl == "cpu" {
				return nil // not among EarlyDirs
			}
			if ctrl == w.Ctrl {
				break
			}
			dir++
		}
		ews = append(ews, EarlyWrite{w, dir})
	}
	return ews
}

// Usage is what a cgroup measured.
type Usage struct {
	CPU        time.Duration // user + system time of every process
	MemoryPeak int64         // the highest memory use of the whole tree
	OOMKills   int64         // processes the OOM killer killed
	MemoryHit  int64         // times the limit refused memory (v1 failcnt, v2 oom events)
	PidsHit    int64         // forks and clones the pids limit refused (pids.events max)
}

// ErrNoCgroup says why no cgroup can be used; the run falls back to rlimits.
type ErrNoCgroup struct{ Reason string }

func (e *ErrNoCgroup) Error() string { return "no usable cgroup: " + e.Reason }

// mkdirFailed tells a cgroup directory that cannot be made here (no
// permission, no such hierarchy path: a container's cgroup mounted without
// its own cgroup namespace), which leaves the run to rlimits
// (*ErrNoCgroup), from the kernel running out of something (memory, a
// descendant limit), which fails the run: a limit is never dropped because
// something ran out. hint is added to the first.
func mkdirFailed(dir string, err error, hint string) error {
	if errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EAGAIN) {
		return fmt.Errorf("create the run's cgroup %s: %w", dir, errors.Unwrap(err))
	}
	return &ErrNoCgroup{fmt.Sprintf("cannot create %s: %v%s", dir, errors.Unwrap(err), hint)}
}

// New creates the cgroup of one run. Those that runs killed with SIGKILL
// left behind are removed too, while the run's program runs (Sweep) or as
// the run's own is removed (Remove, Leave), and on v2 at once when its
// directory cannot be made. It returns *ErrNoCgroup when the host has no
// cgroup this process may create (rootless without delegation): the caller
// falls back to rlimits and says so.
func New(spec Spec) (cg Cgroup, err error) {
	defer func() {
		for _, dir := range spec.Made {
			if !owns(cg, dir) {
				unlinkDir(dir)
			}
		}
	}()
	mount, err := unifiedMount()
	if err != nil {
		return nil, err
	}
	name := spec.Name
	if name == "" {
		name = runName()
	}
	// Read again, not taken from EarlyDirs: a process moved to another
	// cgroup since (while it waited for a FIFO given as stdin, say) has its
	// run's cgroup under the one it is in now, and the directories
	// EarlyDirs named are then not used.
	own, err := ownCgroups()
	if err != nil {
		return nil, &ErrNoCgroup{fmt.Sprintf("read /proc/self/cgroup: %v", err)}
	}
	if mount != "" {
		return newV2(mount, own, name, spec)
	}
	return newV1(own, name, spec)
}

// Takes counts the directories of dirs that are cg's own (cg nil: none):
// of those EarlyDirs named, those New took (Spec.Made).
func Takes(cg Cgroup, dirs []string) int {
	n := 0
	for _, dir := range dirs {
		if owns(cg, dir) {
			n++
		}
	}
	return n
}

// owns reports whether dir is one of cg's directories (cg nil: none).
func owns(cg Cgroup, dir string) bool {
	switch c := cg.(type) {
	case *v1:
		for _, d := range c.dirs {
			if d == dir {
				return true
			}
		}
	case *v2:
		return c.dir == dir
	}
	return false
}

// RemoveDir removes an empty cgroup directory, as a run's Remove does; for
// those EarlyDirs named that no run took.
func RemoveDir(dir string) error { return unlinkDir(dir) }

// EarlyDirs names a run's cgroup directories before the run is known, for
// another process to make (a jail's init, while it waits for its release):
// the run's name, and its directories, as paths relative to RootFd's
// directory and as New's: on v1 those of the hierarchies every run uses
// (not cpu, which a quota alone needs), on v2 its one. None when there is
// no cgroup to name. New takes those made (Spec.Name, Spec.Made).
func EarlyDirs() (name string, rel, abs []string) {
	mount, err := unifiedMount()
	if err != nil || RootFd() < 0 {
		return "", nil, nil
	}
	own, err := ownCgroups()
	if err != nil {
		return "", nil, nil
	}
	name = runName()
	if mount != "" {
		path, ok := own[""]
		if !ok {
			return "", nil, nil
		}
		abs = []string{filepath.Join(v2Base(mount, path), "gojail", name)}
	} else {
		for _, ctrl := range v1Controllers {
			if ctrl == "cpu" {
				continue
			}
			path, ok := own[ctrl]
			if !ok {
				return "", nil, nil
			}
			abs = append(abs, filepath.Join(cgroupMount, ctrl, path, "gojail", name))
		}
	}
	for _, dir := range abs {
		r, ok := strings.CutPrefix(dir, cgroupMount+"/")
		if !ok {
			return "", nil, nil
		}
		rel = append(rel, r)
	}
	return name, rel, abs
}

// V2 reports whether a run's cgroup would be a v2 one (false for v1, and
// when there is none).
func V2() bool {
	mount, err := unifiedMount()
	return err == nil && mount != ""
}

// unifiedMount is unified, looked up until it succeeds, then kept: the
// hierarchies are mounted before any run.
func unifiedMount() (string, error) {
	unifiedMu.Lock()
	defer unifiedMu.Unlock()
	if !unifiedOK {
		var err error
		if unifiedAt, err = unified(); err != nil {
			return "", err
		}
		unifiedOK = true
	}
	return unifiedAt, nil
}

var (
	unifiedMu sync.Mutex
	unifiedOK bool
	unifiedAt string
)

// unified is where cgroup v2 is mounted when it holds the controllers, ""
// for cgroup v1.
func unified() (string, error) {
	var st unix.Statfs_t
	fd, err := root()
	if err == nil {
		err = unix.Fstatfs(fd, &st)
	} else {
		err = unix.Statfs(cgroupMount, &st) // no descriptor to be had: the path
	}
	if err != nil {
		return "", &ErrNoCgroup{"/sys/fs/cgroup is not mounted"}
	}
	if st.Type == unix.CGROUP2_SUPER_MAGIC {
		return cgroupMount, nil
	}
	// v1, or hybrid: v2 at /sys/fs/cgroup/unified is used when it holds the
	// controllers (a v1 hierarchy that claims a controller takes it away).
	if hybrid := cgroupMount + "/unified"; hasControllers(hybrid, "memory", "pids") {
		return hybrid, nil
	}
	return "", nil
}

// runName names a run's cgroup after the supervisor's pid, so that a later
// run can tell a leftover (its supervisor is gone) from a live one.
func runName() string {
	return fmt.Sprintf("%d-%s-%d", os.Getpid(), pidNamespace(), time.Now().UnixNano())
}

// pidNamespace is the inode of this process's pid namespace: a run's name
// carries it, since its pid means nothing in another pid namespace that
// shares the cgroup hierarchy (a container without a cgroup namespace).
var pidNamespace = sync.OnceValue(func() string {
	var buf [64]byte
	n, err := unix.Readlink("/proc/self/ns/pid", buf[:])
	if err != nil {
		return "0"
	}
	link := string(buf[:n]) // pid:[4026531836]
	return strings.TrimSuffix(strings.TrimPrefix(link, "pid:["), "]")
})

// What a later run does with a run cgroup it finds (judge).
const (
	keepIt        = iota // a live run's, or this process's
	removeAll            // a dead supervisor's of this pid namespace: kill what is left, remove
	removeIfEmpty        // another pid namespace's, made over foreignAge ago: rmdir only
)

// foreignAge is how old a run cgroup of another pid namespace must be
// before a run here tries to remove it: a live run has had its processes in
// it long before, and rmdir removes an empty cgroup only.
const foreignAge = time.Minute

// judge says what to do with the run cgroup name. A run of another pid
// namespace is never killed from here: its supervisor's pid cannot be
// checked, and its processes are not ours; but once it has been empty for a
// while (its namespace gone, say) its directories are removed, or a killed
// supervisor in a container would leave them for good.
func judge(name string) int {
	f := strings.Split(name, "-")
	n, err := strconv.Atoi(f[0])
	if len(f) < 2 || err != nil || n == os.Getpid() {
		return keepIt
	}
	if len(f) == 3 && f[1] != pidNamespace() {
		made, err := strconv.ParseInt(f[2], 10, 64)
		if err == nil && time.Since(time.Unix(0, made)) > foreignAge {
			return removeIfEmpty
		}
		return keepIt
	}
	if syscall.Kill(n, 0) == syscall.ESRCH {
		return removeAll
	}
	return keepIt
}

// ownCgroups maps each controller of this process's cgroups to its path
// ("" is the v2 unified hierarchy), from /proc/self/cgroup.
func ownCgroups() (map[string]string, error) {
	b, err := ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	own := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	return own, nil
}

// ReadFile reads a small kernel file with plain system calls: os.ReadFile
// would try to register it with the poller, and the first such call makes
// the poller (an epoll instance and an eventfd).
func ReadFile(path string) ([]byte, error) {
	fd, err := Open(path, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if n > 0 {
			buf = buf[:len(buf)+n]
			continue
		}
		if err == unix.EINTR {
			continue
		}
		return buf, err
	}
}

func hasControllers(dir string, want ...string) bool {
	b, err := ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return false
	}
	have := strings.Fields(string(b))
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// write writes one cgroup control file.
func write(dir, file, value string) error {
	if err := WriteFile(filepath.Join(dir, file), value); err != nil {
		return fmt.Errorf("write %q to %s: %w", value, filepath.Join(dir, file), err)
	}
	return nil
}

// WriteFile writes value to an existing kernel file in one write(2), with
// plain system calls (see ReadFile). A pending signal interrupts some
// controllers' writes (v1 memory.memsw.limit_in_bytes): the write is then
// simply made again.
func WriteFile(path, value string) error {
	fd, err := Open(path, unix.O_WRONLY)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	for {
		_, err := unix.Write(fd, []byte(value))
		if err != unix.EINTR {
			return err
		}
	}
}

// counters keeps the control files a run's figures come from open from
// KeepCounters to the cgroup's removal, so that each reading is one pread
// rather than an open, a read and a close; for a prepared jail the opening
// is done before the request. A file not kept open is opened for the one
// reading.
type counters struct {
	mu  sync.Mutex
	fds map[string]int // path -> descriptor
}

// keep opens dir's files now; one that cannot be opened (memory.peak before
// Linux 5.19) is left to be tried when read.
func (k *counters) keep(dir string, files ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.fds == nil {
		k.fds = map[string]int{}
	}
	for _, f := range files {
		path := filepath.Join(dir, f)
		if fd, err := Open(path, unix.O_RDONLY); err == nil {
			k.fds[path] = fd
		}
	}
}

func (k *counters) read(path string) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	fd, ok := k.fds[path]
	if !ok {
		b, err := ReadFile(path)
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		return b, nil
	}
	// A read from offset 0 shows the current figures afresh. The files kept
	// here are each shown in one piece of a few hundred bytes at most, so a
	// read that does not fill the buffer has had all; a file of many records
	// (cgroup.procs) may come back short before its end and is not kept.
	buf := make([]byte, 512)
	for off := 0; ; {
		n, err := rawPread(fd, buf[off:], int64(off))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if off += n; n == 0 || off < len(buf) {
			return buf[:off], nil
		}
		buf = append(buf, make([]byte, len(buf))...)
	}
}

// close closes every kept file; a later read opens the file again.
func (k *counters) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for path, fd := range k.fds {
		rawClose(fd)
		delete(k.fds, path)
	}
}

// int reads a control file holding one number.
func (k *counters) int(dir, file string) (int64, error) {
	b, err := k.read(filepath.Join(dir, file))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// keys reads "key value" lines from a flat-keyed control file such as
// memory.events or cpu.stat, one value per key asked for.
func (k *counters) keys(dir, file string, keys ...string) ([]int64, error) {
	path := filepath.Join(dir, file)
	b, err := k.read(path)
	if err != nil {
		return make([]int64, len(keys)), err
	}
	vals := make([]int64, len(keys))
	var errs []error
	for i, key := range keys {
		found := false
		for _, line := range strings.Split(string(b), "\n") {
			if name, v, ok := strings.Cut(line, " "); ok && name == key {
				vals[i], err = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				errs, found = append(errs, err), true
				break
			}
		}
		if !found {
			errs = append(errs, fmt.Errorf("%s has no %q", path, key))
		}
	}
	return vals, errors.Join(errs...)
}

// rmdir removes a cgroup directory, waiting briefly for exiting processes
// to leave it (rmdir says EBUSY until they have).
func rmdir(dir string) error {
	var err error
	for i := 0; i < 200; i++ {
		if err = unlinkDir(dir); err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("remove cgroup %s: %w", dir, err)
}

// killProcs sends SIGKILL to every pid listed in dir/cgroup.procs; an
// empty dir (no such directory was made) has none.
func killProcs(dir string) (int, error) {
	pids, err := procs(dir)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	return len(pids), err
}

// procs lists the processes in the cgroup dir (none without a dir).
func procs(dir string) ([]int, error) {
	if dir == "" {
		return nil, nil
	}
	b, err := ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// sweepEvery is how often at most a process looks for the run cgroups that
// dead runs left (removeStale): a one-shot run looks once; a process that
// runs jail after jail (a batch, a library caller) would otherwise read
// each hierarchy's run directories for every run, since its own prepared
// jails' directories are there too (0.11 ms of CPU a request of a batch on
// cgroup v1, profiled).
const sweepEvery = time.Second

var (
	sweepClock = time.Now()
	sweptAt    atomic.Int64 // sweepClock's monotonic time of the last sweep, +1; 0: never
)

// sweepDue reports whether this process is to sweep now, and if so counts
// it done.
func sweepDue() bool {
	now := int64(time.Since(sweepClock)) + 1
	last := sweptAt.Load()
	if last != 0 && now-last < int64(sweepEvery) {
		return false
	}
	return sweptAt.CompareAndSwap(last, now)
}

// sweeper makes a cgroup's sweep (removeStale's) once: in a goroutine
// from Sweep, or else in Remove or Leave.
type sweeper struct {
	pending bool          // not swept yet
	done    chan struct{} // closed at the end of the goroutine's sweep
}

// due takes the pending sweep, and reports whether this process is due
// one (sweepDue).
func (s *sweeper) due() bool {
	if !s.pending {
		return false
	}
	s.pending = false
	return sweepDue()
}

// start makes sweep in a goroutine, if it is pending and due.
func (s *sweeper) start(sweep func()) {
	if !s.due() {
		return
	}
	done := make(chan struct{})
	s.done = done
	go func() {
		defer close(done)
		sweep()
	}()
}

// wait waits for the goroutine's sweep, if one was started: Remove waits
// before it removes the run's directories, which that sweep counts as there.
func (s *sweeper) wait() {
	if s.done != nil {
		<-s.done
		s.done = nil
	}
}

// finish waits for the goroutine's sweep, or makes sweep now if it is
// pending and due.
func (s *sweeper) finish(sweep func()) {
	s.wait()
	if s.due() {
		sweep()
	}
}

// removeStale removes the run cgroups under parent whose supervisor is gone;
// mine is how many of parent's directories are this process's own.
func removeStale(parent string, mine int, remove func(name string), removeEmpty func(name string)) {
	// A directory's link count is 2 plus its subdirectories (kernfs): with
	// no other run's directory in it, one stat says so. Exactly that: a file
	// system that does not count (1, as btrfs and some FUSE ones report) is
	// read.
	var st unix.Stat_t
	if stat(parent, &st) == nil && st.Nlink == uint64(2+mine) {
		return
	}
	fd, err := Open(parent, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return
	}
	dir := os.NewFile(uintptr(fd), parent)
	ents, err := dir.ReadDir(-1)
	dir.Close()
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		switch judge(e.Name()) {
		case removeAll:
			remove(e.Name())
		case removeIfEmpty:
			removeEmpty(e.Name())
		}
	}
}
