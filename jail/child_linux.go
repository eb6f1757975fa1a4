package jail

import (
	"fmt"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/limits"
)

// The child is a copy of this process without its Go heap or runtime (see
// childmem_linux.go): it may not allocate, take a lock, call into the
// runtime or write a pointer the collector watches (the rules at the top of
// Go's syscall/exec_linux.go, and more). So everything it needs is prepared
// by the supervisor as C strings and plain numbers in a childPlan, copied
// into the child's own memory, and the setup is one function of raw system
// calls, in order, each step named for errors.

//go:linkname runtime_BeforeFork syscall.runtime_BeforeFork
func runtime_BeforeFork()

//go:linkname runtime_AfterFork syscall.runtime_AfterFork
func runtime_AfterFork()

// childPlan is everything the child does, prepared before the fork.
type childPlan struct {
	cloneArgs cloneArgs // clone3: the namespaces to create, the pidfd, the cgroup
	keepFds   []uintptr // the child's own descriptors, sorted: it closes all others first
	// The jail's cgroup holds pid 2 and all it starts, not the init. The
	// supervisor makes it after the clone and sends its descriptors on the
	// listener's socket (notifySock): on v2 the directory (joinInto), which
	// the init clones pid 2 into; on v1 the tasks files, which pid 2 writes
	// itself into. Set by the supervisor after the clone, in the init's
	// copy, which it shares until the release (settle): how many
	// descriptors come (the message below), and the rlimits, which depend
	// on whether a cgroup could be made.
	joinCount int
	joinInto  bool
	joinFirst int // 1 when the message brings the program's stdin first (an early init's)
	// lateJoin (an early init on v1 that did not write the limits itself,
	// askLimits and joinTasks below): the message comes after the release,
	// once the cgroup is made, while the init builds the root, and pid 2
	// receives it itself (recvJoin); joinCount and the rlimits are written
	// before it is sent.
	lateJoin bool
	joinMsg  unix.Msghdr
	joinIov  unix.Iovec
	joinByte [1]byte
	joinCmsg [joinCmsgSize]byte

	syncR   int    // read end of the release pipe: the child waits here
	reportW int    // write end of the report pipe (close-on-exec)
	ctlR    int    // read end of the control pipe: a byte or EOF means stop
	ctlW    int    // its write end, the supervisor's
	stdio   [3]int // the program's stdin, stdout, stderr

	uid, gid    uintptr // the program's user and group inside the jail
	timerSlack  uintptr // the program's timer slack, in ns (callerSlack)
	exiting     bool    // the supervisor exits after the run (Input.Exiting)
	clearGroups bool    // drop supplementary groups (possible when started as root)

	ops          []mountOp // building the root, in order
	rootOpts     []fsOpt   // options of the root tmpfs
	hostname     []byte    // sethostname
	unshareFlags uintptr   // the namespaces the child makes itself (see the child)
	loUp         bool      // bring up the loopback interface
	ifreq        [40]byte  // struct ifreq naming "lo" with IFF_UP
	rlimits      []rlimit  // set by pid 2, for the program and all it starts
	workdir      *byte     // the program's working directory
	path         *byte     // the program, as a path inside the jail
	argv         []*byte   // NULL-terminated
	envv         []*byte   // NULL-terminated
	ignored      []uintptr // signals the supervisor's caller left ignored
	scrub        [][]byte  // the argv and environment areas, blanked in the init

	// A prepared jail's program comes later, on the go pipe (readCommand):
	// the file's length (8 bytes, little endian) and bytes, then the length
	// of the rest (4 bytes), the counts of argv and the environment (4
	// bytes each; argc's top bit, stdinSent: a stdin comes on the
	// listener's socket) and their NUL-terminated strings. It is parsed
	// into blob and the two arrays.
	debug    bool // report the child's steps with their times (--debug)
	prepared bool
	// earlyFilter: pid 2 loads its filter while the init builds the root
	// (prepared: before its program is known), the filter allowing every
	// call of its steps after it.
	earlyFilter bool
	// limitsLate: a filter loaded last allows the limits, which follow it
	// (filterOrder: the listener goes out before RLIMIT_NOFILE is lowered).
	limitsLate bool
	goR        int
	stdinSent  bool
	fileName   *byte // the submitted file, relative to the work directory
	fileMode   uintptr
	// A prepared jail's submitted file is opened by pid 2 before its
	// program is known (codeFd), then bound read-only onto itself by the
	// init, which pid 2 asks with a byte on the exec pipe; codeBound (a
	// futex) says it is done: 1, or 2 with the bind's errno in codeErr.
	codeFd    uintptr
	codeBound uint32
	codeErr   uint32
	// The prepared jail's room for its command (command's layout) and for
	// its argv's and environment's pointers: made in the child's memory by
	// into, blobLen and rawLen long (the plan itself holds no room).
	blob    []byte
	argvRaw []uintptr
	envvRaw []uintptr
	blobLen int
	rawLen  int
	filter  *sockFprog // seccomp filter, nil for none
	// SECCOMP_FILTER_FLAG_*: a listener, and in log mode waits that only
	// a fatal signal ends (see logged).
	filterFlags uintptr
	nofile      rlimit // RLIMIT_NOFILE, set by the program's process itself (see notifyFd)

	// The filter's listener (SECCOMP_FILTER_FLAG_NEW_LISTENER) goes to the
	// supervisor over a socket, with SCM_RIGHTS: the supervisor then names
	// and kills what a kill rule or a foreign ABI stopped. The socket is
	// moved to notifyFd, above RLIMIT_NOFILE, so that a filter's rule that
	// allows this one sendmsg allows nothing the program could use.
	notifySock int
	notifyFd   uintptr
	msg        unix.Msghdr
	iov        unix.Iovec
	iobuf      [1]byte
	cmsg       []byte // one SCM_RIGHTS message; the child writes the fd at cmsgFd
	cmsgFd     int

	vars initVars // the init's own variables (childInit)

	// An early init makes the run's cgroup directories while it waits
	// for its release, when the supervisor asks with a 'c' on the release
	// pipe (Early.askCgroup): cgRoot is its descriptor of /sys/fs/cgroup
	// plus one (0: none), cgPath the directories below it, NUL-terminated,
	// cgErr each mkdirat's errno, and cgDone (a futex, the mapping shared
	// with the supervisor) 1 once they are made. Released, it leaves them
	// to the supervisor (Spec.Made); at EOF it removes them.
	cgRoot  int
	cgCount int
	cgPath  [3][cgPathMax]byte
	cgErr   [3]int32
	cgDone  uint32
	// Asked with an 'l' (Early.askLimits, on v1), it also writes the
	// run's limits into them (limits.EarlyWrites: cgWrites, each one's
	// errno in cgWriteErr) and opens each one's tasks file, for pid 2 to
	// join the cgroup by as soon as it starts (cgTasks, taskN of them, a
	// negative errno for one it could not open); cgWrote (a futex) is 1
	// once done. The run's plan gets the descriptors at the release, and
	// joinTasks from the supervisor when the run takes them.
	cgWrites   [cgWritesMax]cgWrite
	cgWriteN   int
	cgWriteErr [cgWritesMax]int32
	cgWrote    uint32
	cgTasks    [3]int32
	taskN      int
	joinTasks  bool

	// cpus is the CPU affinity of the process that cloned an early init
	// (cpusLen bytes of it; 0: none kept), which the init takes back once
	// released, before it clones pid 2 (spread).
	cpus    [16]uint64
	cpusLen uintptr

	// An early init (StartEarly) is cloned with a first plan that covers
	// its namespaces and descriptors; the supervisor writes the run's
	// plan into the same memory once it knows the run, and points next at
	// it before the release, from which on the init follows it.
	next *childPlan

	// pid 2 is cloned (clone3Stack) onto a stack of its own in childMem,
	// sharing the init's memory: prog is childProgram's entry, gp the g.
	pid2Args  cloneArgs
	prog, gp  uintptr
	treeFd    uintptr // the init's treefd, which pid 2 closes at once: the init's close must be the last
	goAhead   uint32  // futex: the init has built the root, pid 2 may finish
	pid2Marks markBuf
	// pid2Fail is pid 2's report of its failed step while its write may
	// not have gone out: the policy's filter, loaded last, may refuse or
	// kill a write to the report pipe (a rule on write's descriptor), as
	// when execve then fails. pid 2 shares the init's memory until its
	// execve; the init sends it after reaping pid 2 (failExit).
	pid2Fail report
}

// cgWrite is one limits.EarlyWrite, as the init makes it: the file in
// directory cgPath[dir], NUL-terminated, and the value's valueN bytes.
type cgWrite struct {
	dir     int32
	missing limits.Missing
	file    [cgFileMax]byte
	value   [24]byte
	valueN  int32
}

// cgWritesMax bounds the writes an early init makes (limits.EarlyWrites),
// cgFileMax a control file's name.
const cgWritesMax, cgFileMax = 8, 40

// markBuf is what mark writes and sends, one per process (the init and pid
// 2 run at the same time, in the same memory).
type markBuf struct {
	rep report
	ts  unix.Timespec
}

// initVars are the init's larger variables, and those pid 2 reads too.
type initVars struct {
	rep    report
	attr   mountAttr
	pfd    [3]unix.PollFd
	ru     unix.Rusage
	keep   [5]uintptr // the init's descriptors
	sigbuf [128]byte
	marks  markBuf

	// The init's own oom_score_adj, raised for pid 2 to inherit, and taken
	// back once pid 2 has exec'd: EOF on the exec pipe, whose write end pid
	// 2 holds close-on-exec. oomOldN 0: nothing to take back.
	oomFd    uintptr
	oomOld   [16]byte
	oomOldN  uintptr
	execPipe [2]int32
	how      openHow
	st       syscall.Stat_t // a policy's bind source, as opened
	// noTreeAttr: the kernel has no open_tree_attr (before Linux 6.15),
	// or a filter refuses it, and binds take mount_setattr after
	// (bindFrom).
	noTreeAttr bool
	// cgBuf: a control file's path, for an early init's cgroup writes
	// (cgroupWrites).
	cgBuf [cgPathMax + 1 + cgFileMax + 8]byte
	// opDirBuf and opDirHow: the directory of a path of the root that
	// opDir opens, on an older kernel.
	opDirBuf [1536]byte // a path of the jail's: at most 1024 bytes, and a file's 255 (validate)
	opDirHow openHow
}

// openHow is struct open_how for openat2(2) (Linux 5.6).
type openHow struct {
	flags, mode, resolve uint64
}

// cloneArgs is struct clone_args for clone3(2) (Linux 5.3; cgroup: 5.7).
type cloneArgs struct {
	flags, pidfd, childTid, parentTid, exitSignal, stack, stackSize, tls, setTid, setTidSize, cgroup uint64
}

// rlimit is one resource limit, applied with prlimit64.
type rlimit struct {
	resource uintptr
	cur, max uint64
}

// sockFprog is struct sock_fprog for seccomp(2).
type sockFprog struct {
	len    uint16
	filter *unix.SockFilter
}

// mountAttr is struct mount_attr for mount_setattr(2).
type mountAttr struct {
	set, clr, propagation, usernsFd uint64
}

// capHeader and capData are the capset(2) structures, version 3.
type capHeader struct {
	version uint32
	pid     int32
}
type capData struct {
	effective, permitted, inheritable uint32
}

// sigaction is struct sigaction as the rt_sigaction system call takes it.
type sigaction struct {
	handler, flags, restorer, mask uint64
}

// forkChild clones the jail's init into new namespaces, and returns its
// pid and its copy of the plan, in m, which the caller settles and then
// frees; m keeps room bytes more, for an early init's second plan
// (complete). The init (childInit) never returns: it builds the jail,
// forks the program as pid 2, and stays as pid 1 to reap and report. It
// runs on a stack of its own, with its copy of the plan, in a childMem,
// and the clone leaves the Go heap out of it (see childmem_linux.go).
func forkChild(c *childPlan, room int) (pid int, cp *childPlan, m *childMem, err error) {
	// The walk to /sys/fs/cgroup now, before the child makes its network
	// namespace, which locks sysfs (limits.OpenRoot).
	limits.OpenRoot()
	var sizing childMem
	c.into(&sizing)
	if m, err = newChildMem(sizing.off + room); err != nil {
		return 0, nil, nil, fmt.Errorf("map the jail's init: %w", err)
	}
	cp = m.plan(c)
	entryPC := m.readyClone(cp) // not between BeforeFork and the clone: checkptr calls out

	if LeanClones {
		// No other fork of this process meanwhile (os/exec's take ForkLock
		// too), nor another jail's clone, which restores the flags.
		syscall.ForkLock.Lock()
		defer syscall.ForkLock.Unlock()
		inheritMemory(false, m.mem)
	}
	restore := raiseOOMFloor()
	runtime_BeforeFork() // from here to the clone, this goroutine keeps its thread, and calls nothing that may grow its stack
	if LeanClones {
		keepThreadTLS()
	}
	r1, e1 := clone3Stack(unsafe.Pointer(&cp.cloneArgs), unsafe.Sizeof(cp.cloneArgs), entryPC, unsafe.Pointer(cp), m.g)
	runtime_AfterFork()
	restore()
	if LeanClones {
		inheritMemory(true, m.mem)
	}
	if e1 != 0 {
		m.free()
		return 0, nil, nil, e1
	}
	return int(r1), cp, m, nil
}

// readyClone completes cp's clone arguments for an init on m's stack,
// with m's TLS, and returns the address the init starts at: childInit's.
// It allocates nothing (entryStart).
func (m *childMem) readyClone(cp *childPlan) uintptr {
	cp.cloneArgs.flags |= unix.CLONE_SETTLS
	cp.cloneArgs.tls = uint64(m.tls)
	cp.cloneArgs.stack, cp.cloneArgs.stackSize = m.stack()
	entry := childInit
	return **(**uintptr)(unsafe.Pointer(&entry))
}

// deathPending reports whether an early init's parent-death signal before
// its release, SIGUSR2, blocked, is pending: its supervisor has died.
//
//go:norace
//go:nosplit
func deathPending() bool {
	var set uint64
	syscall.RawSyscall(syscall.SYS_RT_SIGPENDING, uintptr(unsafe.Pointer(&set)), 8, 0)
	return set&(1<<(syscall.SIGUSR2-1)) != 0
}

// cgPathMax bounds a cgroup directory's path an early init makes.
const cgPathMax = 256

// cgroupDirs makes the cgroup directories an early init was asked for
// (make), or removes those it made (the supervisor gave up: the run never
// took them). Raw system calls only.
//
//go:norace
//go:nosplit
func cgroupDirs(c *childPlan, make bool) {
	for i := 0; i < c.cgCount && i < len(c.cgPath); i++ {
		if make {
			_, _, e := syscall.RawSyscall(syscall.SYS_MKDIRAT, uintptr(c.cgRoot-1), uintptr(unsafe.Pointer(&c.cgPath[i][0])), 0o755)
			initStore32((*uint32)(unsafe.Pointer(&c.cgErr[i])), uint32(e))
		} else if initLoad32(&c.cgDone) == 1 && c.cgErr[i] == 0 {
			syscall.RawSyscall(syscall.SYS_UNLINKAT, uintptr(c.cgRoot-1), uintptr(unsafe.Pointer(&c.cgPath[i][0])), unix.AT_REMOVEDIR)
		}
	}
	if make {
		initStore32(&c.cgDone, 1)
		syscall.RawSyscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(&c.cgDone)), futexWake, 1, 0, 0, 0)
	}
}

// cgroupWrites makes the writes an early init was asked for (cgWrites,
// limits.EarlyWrites: in apply's order), into the directories it made,
// and opens their tasks files, then says it is done (cgWrote). Raw system
// calls only.
//
//go:norace
//go:nosplit
func cgroupWrites(c *childPlan) {
	v := &c.vars
	var e syscall.Errno
	for i := 0; i < c.cgWriteN && i < len(c.cgWrites); i++ {
		w := &c.cgWrites[i]
		e = syscall.ENOENT // a directory it did not make
		if int(w.dir) < c.cgCount && c.cgErr[w.dir] == 0 {
			e = cgroupWrite(c, cgFile(v, &c.cgPath[w.dir], &w.file), &w.value, int(w.valueN))
		}
		c.cgWriteErr[i] = int32(e)
		if e == 0 && w.missing == limits.MissingElse {
			i++ // made: not the one after
		} else if e != 0 && (e != syscall.ENOENT || w.missing == limits.MissingFails) {
			break // the first error ends them
		}
	}
	for i := 0; i < c.cgCount && i < len(c.cgTasks); i++ {
		c.cgTasks[i] = -int32(syscall.ENOENT)
		if c.cgErr[i] == 0 {
			fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(c.cgRoot-1), uintptr(unsafe.Pointer(cgFile(v, &c.cgPath[i], &tasksFile))),
				syscall.O_WRONLY|syscall.O_CLOEXEC, 0, 0, 0)
			if c.cgTasks[i] = int32(fd); e != 0 {
				c.cgTasks[i] = -int32(e)
			}
		}
		c.taskN = i + 1
	}
	initStore32(&c.cgWrote, 1)
	syscall.RawSyscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(&c.cgWrote)), futexWake, 1, 0, 0, 0)
}

// tasksFile is a v1 cgroup's tasks file, NUL-padded to cgFileMax.
var tasksFile = [cgFileMax]byte{'t', 'a', 's', 'k', 's'}

// cgFile is the path of the control file name in the directory dir, both
// NUL-terminated, in v.cgBuf.
//
//go:norace
//go:nosplit
func cgFile(v *initVars, dir *[cgPathMax]byte, name *[cgFileMax]byte) *byte {
	n := 0
	for n < len(dir) && dir[n] != 0 {
		v.cgBuf[n] = dir[n]
		n++
	}
	v.cgBuf[n] = '/'
	n++
	for j := 0; j < len(name) && name[j] != 0; j++ {
		v.cgBuf[n] = name[j]
		n++
	}
	v.cgBuf[n] = 0
	return &v.cgBuf[0]
}

// cgroupWrite writes the control file path (below the init's cgroup root)
// in one write(2), as limits.WriteFile does, and returns its errno.
//
//go:norace
//go:nosplit
func cgroupWrite(c *childPlan, path *byte, value *[24]byte, n int) syscall.Errno {
	fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(c.cgRoot-1), uintptr(unsafe.Pointer(path)), syscall.O_WRONLY|syscall.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return e
	}
	for {
		_, _, e = syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&value[0])), uintptr(n))
		if e != syscall.EINTR {
			break
		}
	}
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	return e
}

// raiseOOMFloor, as root, sets this process's oom_score_adj to 1000 until
// restore, for the jail's init to inherit, and with it the floor: written
// with CAP_SYS_RESOURCE, the value is also the least the process and its
// children may set without that capability (oom_score_adj_min), so that
// the program, which inherits both from the init, cannot lower its own
// (the init's own write of 1000 sets no floor: its capabilities are its
// user namespace's). The init then keeps 1000 too. Without that
// capability (rootless, or a root without it) there is no floor to set.
// Jails cloned at once take turns (the value is the whole process's).
func raiseOOMFloor() (restore func()) {
	if !canFloorOOM() {
		return func() {}
	}
	oomFloorMu.Lock()
	var f oomFloor
	if !f.raise() {
		oomFloorMu.Unlock()
		return func() {}
	}
	return func() {
		f.restore()
		oomFloorMu.Unlock()
	}
}

var oomFloorMu sync.Mutex

// oomFloor is this process's oom_score_adj as it was before raise, to be
// restored.
type oomFloor struct {
	fd  uintptr
	old [8]byte
	n   uintptr
}

// raise writes 1000 to this process's oom_score_adj, false if it could
// not read it first. Raw system calls only (entryStart).
func (f *oomFloor) raise() bool {
	fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&oomScoreAdj[0])), syscall.O_RDWR|syscall.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return false
	}
	n, _, e := syscall.RawSyscall6(syscall.SYS_PREAD64, fd, uintptr(unsafe.Pointer(&f.old[0])), uintptr(len(f.old)), 0, 0, 0)
	if e != 0 || n == 0 {
		syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
		return false
	}
	f.fd, f.n = fd, n
	syscall.RawSyscall6(syscall.SYS_PWRITE64, fd, uintptr(unsafe.Pointer(&oomMax[0])), uintptr(len(oomMax)), 0, 0, 0)
	return true
}

func (f *oomFloor) restore() {
	syscall.RawSyscall6(syscall.SYS_PWRITE64, f.fd, uintptr(unsafe.Pointer(&f.old[0])), f.n, 0, 0, 0)
	syscall.RawSyscall(syscall.SYS_CLOSE, f.fd, 0, 0)
}

// canFloorOOM: root with CAP_SYS_RESOURCE, without which the raise would
// set no floor and the init would inherit 1000 as its own value to keep.
var canFloorOOM = sync.OnceValue(floorsOOM)

// floorsOOM is canFloorOOM's answer, asked each time. Raw system calls
// only (entryStart).
func floorsOOM() bool {
	if uid, _, _ := syscall.RawSyscall(syscall.SYS_GETEUID, 0, 0, 0); uid != 0 {
		return false
	}
	hdr := capHeader{version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]capData
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return false
	}
	return data[unix.CAP_SYS_RESOURCE/32].effective&(1<<(unix.CAP_SYS_RESOURCE%32)) != 0
}

// plan copies c into m, with what pid 2's clone takes: its stack in m,
// its entry and the g it shares with the init.
func (m *childMem) plan(c *childPlan) *childPlan {
	cp := c.into(m)
	cp.pid2Args = cloneArgs{flags: unix.CLONE_VM, exitSignal: uint64(syscall.SIGCHLD)}
	cp.pid2Args.stack, cp.pid2Args.stackSize = m.stack2()
	prog := childProgram
	cp.prog, cp.gp = **(**uintptr)(unsafe.Pointer(&prog)), m.g
	return cp
}

// clone3Stack is clone3 with the child on the stack args gives, calling
// fn(arg) there with gp as its goroutine; in clone_amd64.s.
func clone3Stack(args unsafe.Pointer, size uintptr, fn uintptr, arg unsafe.Pointer, gp uintptr) (pid uintptr, errno syscall.Errno)

// spinLoad loads *p until it is not zero, at most n times, and returns the
// last value; in clone_amd64.s.
//
//go:noescape
func spinLoad(p *uint32, n uintptr) uint32

// initStore32 and initLoad32 are atomic.StoreUint32 and LoadUint32 for the
// init, which has no Go runtime (under the race detector, sync/atomic calls
// into it); in clone_amd64.s.
//
//go:noescape
func initStore32(p *uint32, v uint32)

//go:noescape
func initLoad32(p *uint32) uint32

// childInit is the jail's init, pid 1 of the new pid namespace, from its
// first instruction on its own stack (see childmem_linux.go for what it
// may not do). Its larger variables are in c.vars.
//
//go:norace
//go:nocheckptr
func childInit(c *childPlan) {
	var (
		r1     uintptr
		e1     syscall.Errno
		fd     uintptr
		rootfd uintptr
		treefd uintptr       // the host's mount tree, a detached copy
		oomfd  uintptr       // this process's oom_score_adj
		procfd uintptr       // the jail's proc, made before the copy of the host's tree is unmounted
		treeTs unix.Timespec // when the copy was unmounted, for --debug's mark
		b      [1]byte
		ws     uint32
		i, j   int
		step   Step
		op     *mountOp
		odir   uintptr // where op's last name is made: rootfd, or its directory (opDir)
		oname  *byte   // op's last name there
		sfd    uintptr // the signalfd of SIGCHLD
		pid2   uintptr // the program's process
		v      = &c.vars
	)

	// Every signal stays blocked, as runtime_BeforeFork left it: Go's
	// handlers, still installed, can never run here. The init takes SIGCHLD
	// from a signalfd; pid 2 unblocks just before execve, which resets every
	// caught signal to its default.

	// Die with the supervisor: PDEATHSIG fires when the thread that cloned
	// us exits (Go ends none of its unlocked threads: that is the process's
	// exit), and the release pipe reads EOF if it died before this line.
	// An init that may make the run's cgroup directories before its
	// release (cgRoot) must live to remove them, at that EOF: until the
	// release its signal is one that stays blocked, and pending
	// (deathPending), and SIGKILL only after.
	if c.cgRoot > 0 {
		syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGUSR2), 0)
	} else {
		syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	}
	// Close every descriptor but the child's own, at once: the supervisor's
	// ends of our pipes (EOF must come when the supervisor closes them),
	// another jail's pipes made meanwhile by a concurrent run, and whatever
	// our caller leaked. c.keepFds is sorted.
	fd = 0
	for i = range c.keepFds {
		if c.keepFds[i] > fd {
			syscall.RawSyscall(unix.SYS_CLOSE_RANGE, fd, c.keepFds[i]-1, 0)
		}
		fd = c.keepFds[i] + 1
	}
	syscall.RawSyscall(unix.SYS_CLOSE_RANGE, fd, ^uintptr(0), 0)

	// The other namespaces, the network one the costliest (every protocol
	// sets up its state), are made here while the supervisor writes our
	// maps, on the other core: only the user and pid namespaces must exist
	// at clone, and the user namespace's capabilities need no map.
	step = stepUnshare
	if _, _, e1 = syscall.RawSyscall(syscall.SYS_UNSHARE, c.unshareFlags, 0, 0); e1 != 0 {
		goto fail
	}
	// The capability bounding and ambient sets emptied, for pid 2 to
	// inherit at its clone, while the init waits for its release rather
	// than on pid 2's way to the program: the init never execs, so they
	// limit nothing of its own (its effective set is untouched). Every
	// number up to the kernel's last, which PR_CAPBSET_DROP refuses past
	// with EINVAL, or up to 63, the last a set can hold.
	step = stepCapBound
	for j = 0; j < 64; j++ {
		if _, _, e1 = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_CAPBSET_DROP, uintptr(j), 0); e1 != 0 {
			break
		}
	}
	if e1 != 0 && e1 != syscall.EINVAL || j == 0 {
		goto fail
	}
	e1 = 0
	step = stepCapAmbient
	if _, _, e1 = syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e1 != 0 {
		goto fail
	}
	j = 0

	// The time, for --debug's mark, which an early init's first plan
	// cannot ask for yet.
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&v.marks.ts)), 0)

	// The new mount namespace is a copy of the caller's, which the jail must
	// not keep: it is unmounted now, while the supervisor reads the run,
	// rather than once the root is built, as a lazy unmount waits for an
	// RCU grace period (0.2-0.4 ms measured in an init, on the way to the
	// program). What the binds need of it is kept as a detached copy of
	// its tree (treefd), which pid 2 closes as it starts and the init once
	// the root is built: that last close, which frees the copy after
	// another grace period, comes as the program starts. The namespace's
	// root becomes an empty tmpfs, read-only, attached over the copy's
	// /proc and entered with pivot_root; the jail's root is mounted over it
	// once the run is known (below).
	//
	// The OOM score's file first (see stepOOMScore below), while the
	// host's /proc is this process's.
	step = stepOOMScore
	if oomfd, _, e1 = syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&oomScoreAdj[0])), syscall.O_RDWR|syscall.O_CLOEXEC, 0, 0, 0); e1 != 0 {
		goto fail
	}
	// No mount event of ours may propagate back to the host.
	step = stepMountPrivate
	if _, _, e1 = syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(&dotDir[0])), uintptr(unsafe.Pointer(&slash[0])), 0, syscall.MS_REC|syscall.MS_PRIVATE, 0, 0); e1 != 0 {
		goto fail
	}
	step = stepHostTree
	if treefd, _, e1 = syscall.RawSyscall(unix.SYS_OPEN_TREE, atFDCWD, uintptr(unsafe.Pointer(&slash[0])), unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE); e1 != 0 {
		goto fail
	}
	// The jail's proc, made now: the kernel lets a user namespace mount a
	// proc only where one is already fully visible (mount_too_revealing),
	// and once the copy is gone there is none. It is attached in the root
	// (opProc).
	if procfd, _, e1 = newMount(&procDir[1], nil, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC); e1 != 0 {
		step = stepProc
		goto fail
	}
	// Whether binds can be cloned from a detached tree (Linux 6.15): a clone
	// of the tree's /dev/null (a file: no mount below it, which the user
	// namespace's locks would make a clone of a directory refuse), put over
	// the copy's own, so that the unmount below takes it away with the
	// copy. Where that fails, the copy stays until the root is built, as
	// before.
	step = stepHostTree
	fd, _, e1 = syscall.RawSyscall(unix.SYS_OPEN_TREE, treefd, uintptr(unsafe.Pointer(&devNull[1])), unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if e1 == 0 {
		_, _, e1 = syscall.RawSyscall6(unix.SYS_MOVE_MOUNT, fd, uintptr(unsafe.Pointer(&empty[0])),
			atFDCWD, uintptr(unsafe.Pointer(&devNull[0])), unix.MOVE_MOUNT_F_EMPTY_PATH, 0)
		syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	}
	if e1 != 0 {
		syscall.RawSyscall(syscall.SYS_CLOSE, treefd, 0, 0)
		treefd = noTree
		goto waitRelease
	}
	// The empty root: a read-only tmpfs.
	step = stepPivotRoot
	if fd, _, e1 = newMount(&tmpfsName[0], []fsOpt{{&modeKey[0], &mode555[0]}}, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC); e1 != 0 {
		goto fail
	}
	if _, _, e1 = syscall.RawSyscall6(unix.SYS_MOVE_MOUNT, fd, uintptr(unsafe.Pointer(&empty[0])),
		atFDCWD, uintptr(unsafe.Pointer(&procDir[0])), unix.MOVE_MOUNT_F_EMPTY_PATH, 0); e1 != 0 {
		goto fail
	}
	// pivot_root(".", ".") stacks the old root on the new one, and the lazy
	// unmount removes it (pivot_root(2)).
	if _, _, e1 = syscall.RawSyscall(syscall.SYS_FCHDIR, fd, 0, 0); e1 != 0 {
		goto fail
	}
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	if _, _, e1 = syscall.RawSyscall(syscall.SYS_PIVOT_ROOT, uintptr(unsafe.Pointer(&dotDir[0])), uintptr(unsafe.Pointer(&dotDir[0])), 0); e1 != 0 {
		goto fail
	}
	if _, _, e1 = syscall.RawSyscall(syscall.SYS_UMOUNT2, uintptr(unsafe.Pointer(&dotDir[0])), syscall.MNT_DETACH, 0); e1 != 0 {
		goto fail
	}
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&treeTs)), 0)

waitRelease:
	// Wait until the supervisor has written our uid/gid maps, completed our
	// plan (settle) and made our cgroup (with an early init on v1, it comes
	// after, to pid 2, which waits for it: lateJoin): nothing of the jail
	// runs before it is in its limits.
	step = stepRelease
	for {
		r1, _, e1 = syscall.RawSyscall(syscall.SYS_READ, uintptr(c.syncR), uintptr(unsafe.Pointer(&b[0])), 1)
		if e1 != 0 || r1 != 1 || b[0] != 'r' && b[0] != 'c' && b[0] != 'l' {
			cgroupDirs(c, false)
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0) // the supervisor gave up: nothing to report
		}
		if b[0] == 'r' {
			break
		}
		if b[0] == 'c' {
			cgroupDirs(c, true)
		} else {
			cgroupWrites(c)
		}
	}
	if c.cgRoot > 0 {
		syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(c.cgRoot-1), 0, 0)
		// Released: the directories are the run's. SIGKILL from here on;
		// a supervisor that died meanwhile left SIGUSR2 pending.
		syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
		if deathPending() {
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
		}
	}
	if c.cpusLen != 0 {
		syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, c.cpusLen, uintptr(unsafe.Pointer(&c.cpus[0])))
	}
	if c.next != nil { // an early init: the run's plan from here on
		c.next.cpus, c.next.cpusLen = c.cpus, c.cpusLen   // for pid 2 (spread)
		c.next.cgTasks, c.next.taskN = c.cgTasks, c.taskN // for pid 2 (joinTasks)
		c.next.vars.marks.ts = v.marks.ts
		c = c.next
		v = &c.vars
	}
	markAt(c, &v.marks, stepUnshare)
	if treefd != noTree {
		v.marks.ts = treeTs
		markAt(c, &v.marks, stepHostTree)
	}
	mark(c, &v.marks, stepRelease)
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(c.syncR), 0, 0)

	// The jail's root: a small tmpfs, nosuid and nodev, the jail's user's,
	// mounted over the namespace's empty root and entered with chroot, so
	// that pid 2, cloned below, starts in it. Nothing is below it but that
	// empty file system: ".." from the root is the root, and no process of
	// the jail has another root or any descriptor outside it.
	if rootfd, _, e1 = newMount(&tmpfsName[0], c.rootOpts, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV); e1 != 0 {
		step = stepRootFS
		goto fail
	}
	// Without the tree (an older kernel), the root is attached over the
	// copy's /proc instead, built, and entered with pivot_root (below).
	step = stepAttachRoot
	if treefd == noTree {
		if _, _, e1 = syscall.RawSyscall6(unix.SYS_MOVE_MOUNT, rootfd, uintptr(unsafe.Pointer(&empty[0])),
			atFDCWD, uintptr(unsafe.Pointer(&procDir[0])), unix.MOVE_MOUNT_F_EMPTY_PATH, 0); e1 != 0 {
			goto fail
		}
		if _, _, e1 = syscall.RawSyscall(syscall.SYS_FCHDIR, rootfd, 0, 0); e1 != 0 {
			goto fail
		}
	} else {
		if _, _, e1 = syscall.RawSyscall6(unix.SYS_MOVE_MOUNT, rootfd, uintptr(unsafe.Pointer(&empty[0])),
			atFDCWD, uintptr(unsafe.Pointer(&slash[0])), unix.MOVE_MOUNT_F_EMPTY_PATH, 0); e1 != 0 {
			goto fail
		}
		step = stepChroot
		if _, _, e1 = syscall.RawSyscall(syscall.SYS_FCHDIR, rootfd, 0, 0); e1 != 0 {
			goto fail
		}
		if _, _, e1 = syscall.RawSyscall(syscall.SYS_CHROOT, uintptr(unsafe.Pointer(&dotDir[0])), 0, 0); e1 != 0 {
			goto fail
		}
	}

	if c.loUp {
		step = stepLoopback
		fd, _, e1 = syscall.RawSyscall(syscall.SYS_SOCKET, syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
		if e1 != 0 {
			goto fail
		}
		if _, _, e1 = syscall.RawSyscall(syscall.SYS_IOCTL, fd, syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&c.ifreq[0]))); e1 != 0 {
			goto fail
		}
		syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	}

	// The cgroup, which the supervisor made meanwhile and opened for us (a
	// walk of each long path in the cgroup file system here took 0.1 ms):
	// the v2 directory pid 2 is cloned into, or the v1 tasks files, which
	// pid 2, cloned below, has too; an early init's stdin first, opened
	// once the run was known.
	step = stepJoinCgroup
	if c.joinFirst+c.joinCount > 0 && !c.lateJoin {
		if e1 = recvJoin(c); e1 != 0 {
			goto fail
		}
		if c.joinInto {
			c.pid2Args.flags |= unix.CLONE_INTO_CGROUP // pid 2 starts inside it (Linux 5.7)
			c.pid2Args.cgroup = uint64(*(*int32)(unsafe.Pointer(&c.joinCmsg[cmsgHdrSize+4*c.joinFirst])))
		}
	}

	// The OOM killer's first choice: pid 2 and all it starts, who inherit
	// the adjustment this process has at the clone. It takes its own back
	// once pid 2 has exec'd: until then they share their memory, and the
	// kernel gives a write to one to both. (Outside the jail's cgroup this
	// process is no candidate of that cgroup's OOM killer; an enclosing
	// cgroup's, or the host's, may take it.) The file was
	// opened before the new root was entered, while it belongs to this
	// process (its credentials are still the supervisor's, and it is
	// dumpable), and is kept for the taking back. Already 1000 (as root
	// with CAP_SYS_RESOURCE, inherited with its floor: raiseOOMFloor), it
	// is left alone: the taking back, a write once pid 2 has shared this
	// process's memory, walks every process of the host under a lock
	// every run takes (45 µs of CPU a run here, profiled, with some 80
	// processes; 150 µs beside 2,000).
	step = stepOOMScore
	v.oomFd = oomfd
	if v.oomOldN, _, e1 = syscall.RawSyscall6(syscall.SYS_PREAD64, v.oomFd, uintptr(unsafe.Pointer(&v.oomOld[0])), uintptr(len(v.oomOld)), 0, 0, 0); e1 != 0 {
		goto fail
	}
	if isOOMMax(v) {
		v.oomOldN = 0 // nothing to take back
	} else if _, _, e1 = syscall.RawSyscall6(syscall.SYS_PWRITE64, v.oomFd, uintptr(unsafe.Pointer(&oomMax[0])), uintptr(len(oomMax)), 0, 0, 0); e1 != 0 {
		goto fail
	}
	if _, _, e1 = syscall.RawSyscall(syscall.SYS_PIPE2, uintptr(unsafe.Pointer(&v.execPipe[0])), syscall.O_CLOEXEC, 0); e1 != 0 {
		goto fail
	}
	// Above the stdio numbers, which pid 2's dup3 takes over: the write end
	// must last until its execve. (This process closed every descriptor it
	// did not need, those too.)
	v.execPipe[1] = int32(aboveStdio(uintptr(v.execPipe[1])))

	// The caller's timer slack, for this process and pid 2, which inherits
	// it (and keeps it through execve): the thread this process was
	// cloned from may be one the runtime's monitor started, with the
	// monitor's (package oneproc).
	if c.timerSlack != 0 {
		syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_SET_TIMERSLACK, c.timerSlack, 0)
	}

	// The program's process, pid 2, starts now, on a stack of its own in
	// this process's memory (not a copy: nothing of it is copied for the
	// program, and its execve has nothing to tear down), while this process
	// builds the root: it joins the jail's cgroup, takes the jail's user,
	// drops what the program must not have, then waits for the root
	// (goAhead) and moves into it. It has its own descriptors and signal
	// handlers. It is cloned with this process's credentials still the
	// supervisor's: on v2 the clone puts it into the jail's cgroup, which
	// the kernel allows the cgroup's owner.
	step = stepFork
	c.treeFd = treefd
	pid2, e1 = clone3Stack(unsafe.Pointer(&c.pid2Args), unsafe.Sizeof(c.pid2Args), c.prog, unsafe.Pointer(c), c.gp)
	if e1 != 0 {
		goto fail
	}
	// Off this CPU, which builds the root meanwhile, as the entry moved
	// this process (spread): left here, pid 2 would wait for the root to
	// be built before its first step. It takes the caller's CPUs back once
	// the root is built (goAhead), which comes after this call.
	spread(int(pid2), c)
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(v.execPipe[1]), 0, 0)
	for i = c.joinFirst; i < c.joinFirst+c.joinCount && !c.lateJoin; i++ {
		syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(*(*int32)(unsafe.Pointer(&c.joinCmsg[cmsgHdrSize+4*i]))), 0, 0)
	}
	i = 0

	// The jail's user (see becomeUser), so that every file the setup
	// creates belongs to a uid that the namespace maps.
	if step, e1 = becomeUser(c); e1 != 0 {
		goto fail
	}
	// Not dumpable: the program cannot ptrace this init or read its
	// /proc/1/environ, which is a copy of the supervisor's environment.
	step = stepDumpable
	if _, _, e1 = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); e1 != 0 {
		goto fail
	}
	syscall.RawSyscall(syscall.SYS_UMASK, 0, 0, 0) // modes below are meant as written

	// Build the root: directories, links, files, binds and new file systems,
	// every path relative to the root's descriptor, within the root (opDir).
	for i = range c.ops {
		op = &c.ops[i]
		if odir, oname, e1 = opDir(rootfd, op.path, treefd == noTree, v); e1 != 0 {
			step = opSteps[op.kind]
			goto failOp
		}
		switch op.kind {
		case opMkdir:
			step = stepMkdir
			if _, _, e1 = syscall.RawSyscall6(syscall.SYS_MKDIRAT, odir, uintptr(unsafe.Pointer(oname)), uintptr(op.mode), 0, 0, 0); e1 != 0 {
				goto failOp
			}
		case opSymlink:
			step = stepSymlink
			if _, _, e1 = syscall.RawSyscall(syscall.SYS_SYMLINKAT, uintptr(unsafe.Pointer(op.src)), odir, uintptr(unsafe.Pointer(oname))); e1 != 0 {
				goto failOp
			}
		case opFile:
			// O_EXCL|O_NOFOLLOW: never write through a link or an existing file.
			step = stepWriteFile
			fd, _, e1 = syscall.RawSyscall6(syscall.SYS_OPENAT, odir, uintptr(unsafe.Pointer(oname)),
				syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, uintptr(op.mode), 0, 0)
			if e1 != 0 {
				goto failOp
			}
			for j = 0; j < len(op.data); {
				r1, _, e1 = syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&op.data[j])), uintptr(len(op.data)-j))
				if e1 == syscall.EINTR {
					continue
				}
				if e1 != 0 {
					goto failOp
				}
				j += int(r1)
			}
			syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
		case opBind:
			step = stepMountPoint
			if op.isFile {
				fd, _, e1 = syscall.RawSyscall6(syscall.SYS_OPENAT, odir, uintptr(unsafe.Pointer(oname)),
					syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o444, 0, 0)
				if e1 == 0 {
					syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
				}
			} else {
				_, _, e1 = syscall.RawSyscall6(syscall.SYS_MKDIRAT, odir, uintptr(unsafe.Pointer(oname)), 0o755, 0, 0, 0)
			}
			// A bind nested in another bind finds its mount point there
			// already, on a read-only mount: mount(2) says if it is missing.
			if e1 != 0 && e1 != syscall.EEXIST && e1 != syscall.EROFS {
				goto failOp
			}
			// A recursive bind (the working directory is the new root),
			// read-only, nosuid and nodev on it and every submount.
			step = stepBind
			v.attr = mountAttr{set: op.attr}
			if op.noLinks {
				// A policy's own: its tree cloned from a descriptor opened
				// following no link (ELOOP if one was put on its path).
				v.how = openHow{flags: unix.O_PATH | unix.O_CLOEXEC, resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
				if fd, _, e1 = syscall.RawSyscall6(unix.SYS_OPENAT2, sourceDir(op.src, treefd, rootfd, &v.how), uintptr(unsafe.Pointer(inTree(op.src, treefd))),
					uintptr(unsafe.Pointer(&v.how)), unsafe.Sizeof(v.how), 0, 0); e1 != 0 {
					goto failOp
				}
				// Still what was checked: a directory, or a file that is
				// not a socket or FIFO put in its place since (which a
				// read-only bind would still let the program talk to).
				if _, _, e1 = syscall.RawSyscall6(unix.SYS_NEWFSTATAT, fd, uintptr(unsafe.Pointer(&empty[0])),
					uintptr(unsafe.Pointer(&v.st)), unix.AT_EMPTY_PATH, 0, 0); e1 == 0 {
					switch v.st.Mode & syscall.S_IFMT {
					case syscall.S_IFSOCK, syscall.S_IFIFO:
						e1 = syscall.EINVAL
					case syscall.S_IFDIR:
						if op.isFile {
							e1 = syscall.EISDIR
						}
					default:
						if !op.isFile {
							e1 = syscall.ENOTDIR
						}
					}
				}
				if e1 != 0 {
					syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
					goto failOp
				}
				// And still the file or directory that was checked, not
				// another renamed in meanwhile (one holding a mount of a
				// kernel interface, which the check would refuse). A
				// directory renamed away and back around the check's read
				// of the mount table still passes this: one that had no
				// mount below it then is cloned without what is below it,
				// which the user namespace's locks refuse (EINVAL) where
				// there is any.
				if v.st.Dev != op.dev || v.st.Ino != op.ino {
					syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
					step, e1 = stepBindChanged, syscall.ESTALE
					goto failOp
				}
				if step, e1 = bindFrom(fd, odir, oname, op.recursive, v); e1 != 0 {
					if step == stepBind && e1 == syscall.EINVAL && !op.recursive {
						step = stepBindChanged
					}
					goto failOp
				}
			} else {
				// gojail's own (the system's directories, and the
				// submitted file onto itself): links on the way are
				// followed, within the host's tree or the new root (or,
				// without the tree, from the host's root, this process's
				// until pivot_root).
				v.how = openHow{flags: unix.O_PATH | unix.O_CLOEXEC, resolve: unix.RESOLVE_NO_MAGICLINKS}
				if fd, _, e1 = syscall.RawSyscall6(unix.SYS_OPENAT2, sourceDir(op.src, treefd, rootfd, &v.how), uintptr(unsafe.Pointer(inTree(op.src, treefd))),
					uintptr(unsafe.Pointer(&v.how)), unsafe.Sizeof(v.how), 0, 0); e1 != 0 {
					goto failOp
				}
				if step, e1 = bindFrom(fd, odir, oname, op.recursive, v); e1 != 0 {
					goto failOp
				}
			}
		case opProc, opFS:
			if op.kind == opProc {
				// The proc made before the host's tree went (procfd); a
				// pid-only one, when the policy asks for it, goes over it,
				// which the kernel allows while the first is visible.
				step = stepMoveMount
				if _, _, e1 = syscall.RawSyscall6(unix.SYS_MOVE_MOUNT, procfd, uintptr(unsafe.Pointer(&empty[0])),
					odir, uintptr(unsafe.Pointer(oname)), unix.MOVE_MOUNT_F_EMPTY_PATH, 0); e1 != 0 {
					goto failOp
				}
				syscall.RawSyscall(syscall.SYS_CLOSE, procfd, 0, 0)
				if len(op.opts) == 0 {
					break
				}
			}
			if fd, step, e1 = newMount(op.src, op.opts, uintptr(op.attr)); e1 != 0 {
				goto failOp
			}
			step = stepMountPoint
			if _, _, e1 = syscall.RawSyscall6(syscall.SYS_MKDIRAT, odir, uintptr(unsafe.Pointer(oname)), 0o755, 0, 0, 0); e1 != 0 && e1 != syscall.EEXIST {
				goto failOp
			}
			step = stepMoveMount
			if _, _, e1 = syscall.RawSyscall6(unix.SYS_MOVE_MOUNT, fd, uintptr(unsafe.Pointer(&empty[0])),
				odir, uintptr(unsafe.Pointer(oname)), unix.MOVE_MOUNT_F_EMPTY_PATH, 0); e1 != 0 {
				goto failOp
			}
			syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
		}
		if odir != rootfd {
			syscall.RawSyscall(syscall.SYS_CLOSE, odir, 0, 0)
		}
	}
	i = 0

	// The jail's own host name (its own UTS namespace).
	step = stepHostname
	if _, _, e1 = syscall.RawSyscall(syscall.SYS_SETHOSTNAME, uintptr(unsafe.Pointer(&c.hostname[0])), uintptr(len(c.hostname)), 0); e1 != 0 {
		goto fail
	}
	// Nothing may be created in / itself: make the root tmpfs read-only
	// (not recursively: /tmp and the work directory stay writable).
	step = stepRootReadOnly
	v.attr = mountAttr{set: unix.MOUNT_ATTR_RDONLY}
	if _, _, e1 = syscall.RawSyscall6(unix.SYS_MOUNT_SETATTR, rootfd, uintptr(unsafe.Pointer(&empty[0])),
		unix.AT_EMPTY_PATH, uintptr(unsafe.Pointer(&v.attr)), unsafe.Sizeof(v.attr), 0); e1 != 0 {
		goto fail
	}

	mark(c, &v.marks, stepMoveMount)
	if treefd == noTree {
		// Enter the root and detach the host's: pivot_root(".", ".")
		// stacks the old root on the new one (and moves pid 2's root too),
		// and the lazy unmount removes it (pivot_root(2)).
		step = stepPivotRoot
		if _, _, e1 = syscall.RawSyscall(syscall.SYS_PIVOT_ROOT, uintptr(unsafe.Pointer(&dotDir[0])), uintptr(unsafe.Pointer(&dotDir[0])), 0); e1 != 0 {
			goto fail
		}
		if _, _, e1 = syscall.RawSyscall(syscall.SYS_UMOUNT2, uintptr(unsafe.Pointer(&dotDir[0])), syscall.MNT_DETACH, 0); e1 != 0 {
			goto fail
		}
	}
	syscall.RawSyscall(syscall.SYS_CLOSE, rootfd, 0, 0)
	step = stepChdir
	if _, _, e1 = syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(c.workdir)), 0, 0); e1 != 0 {
		goto fail
	}

	// The init keeps the caller's session: it never opens a terminal and
	// keeps every signal blocked, and pid 2, cloned before this point,
	// makes a session of its own for the program (setsid, which makes a
	// scheduler group too: some 40 µs here).

	// The program runs as pid 2; this process stays as pid 1 to reap.
	// SIGCHLD is blocked first so that the signalfd below misses no exit.
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, sigBlock, uintptr(unsafe.Pointer(&chldMask)), 0, 8, 0, 0)
	step = stepSignalfd
	sfd, _, e1 = syscall.RawSyscall6(syscall.SYS_SIGNALFD4, ^uintptr(0), uintptr(unsafe.Pointer(&chldMask)), 8,
		syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0, 0)
	if e1 != 0 {
		goto fail
	}
	// /proc/1/cmdline shows anyone in the jail this process's argv: the
	// supervisor's. Blank it, and the environment with it, before the
	// program exists (pid 2 uses neither).
	for j = range c.scrub {
		for i = range c.scrub[j] {
			c.scrub[j][i] = 0
		}
	}
	i = 0
	mark(c, &v.marks, stepCloseFds)
	// The root is built: pid 2 may enter it.
	// A plain store (sync/atomic is instrumented under -race, which the
	// init cannot call into): the futex call that follows orders it, and
	// x86 stores are seen in order.
	c.goAhead = 1
	syscall.RawSyscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(&c.goAhead)), futexWakePrivate, 1, 0, 0, 0)
	{
		// ---- pid 1: v.keep only the report and control pipes, reap every
		// child as it ends, and when the program ends or the supervisor says
		// stop, kill what is left and reap it too, so that the CPU time and
		// peak memory of the whole tree reach the supervisor's wait4. (When
		// the namespace's init simply exits, the kernel reaps the rest with
		// SIGCHLD ignored and their usage is lost.)
		// Keep the report pipe, the control pipe and the signalfd: close
		// the ranges between them, in ascending order.
		v.keep = [5]uintptr{uintptr(c.reportW), uintptr(c.ctlR), sfd, uintptr(v.execPipe[0]), v.oomFd}
		for i = 0; i < 5; i++ {
			for j = i + 1; j < 5; j++ {
				if v.keep[j] < v.keep[i] {
					v.keep[i], v.keep[j] = v.keep[j], v.keep[i]
				}
			}
		}
		fd = 0
		for i = 0; i < 5; i++ {
			if v.keep[i] > fd {
				syscall.RawSyscall(unix.SYS_CLOSE_RANGE, fd, v.keep[i]-1, 0)
			}
			fd = v.keep[i] + 1
		}
		syscall.RawSyscall(unix.SYS_CLOSE_RANGE, fd, ^uintptr(0), 0)
		v.rep = report{Kind: reportExit}
		fd = sfd
		v.pfd[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
		v.pfd[1] = unix.PollFd{Fd: int32(c.ctlR), Events: unix.POLLIN}
		v.pfd[2] = unix.PollFd{Fd: v.execPipe[0], Events: unix.POLLIN}
	wait:
		for {
			v.pfd[0].Revents, v.pfd[1].Revents, v.pfd[2].Revents = 0, 0, 0
			if _, _, e1 = syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&v.pfd[0])), 3, 0, 0, 0, 0); e1 != 0 && e1 != syscall.EINTR {
				break
			}
			r1 = 0
			if c.prepared && v.pfd[2].Revents&unix.POLLIN != 0 {
				r1, _, _ = syscall.RawSyscall(syscall.SYS_READ, uintptr(v.execPipe[0]), uintptr(unsafe.Pointer(&b[0])), 1)
			}
			if r1 == 1 { // a prepared pid 2 has opened its file: bind it read-only
				ws = 1
				if e1 = bindReadOnly(c, v); e1 != 0 {
					c.codeErr, ws = uint32(e1), 2
				}
				c.codeBound = ws // a plain store, ordered by the futex call (see goAhead)
				syscall.RawSyscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(&c.codeBound)), futexWakePrivate, 1, 0, 0, 0)
				ws = 0
			} else if v.pfd[2].Revents != 0 { // pid 2 has exec'd (or died)
				oomBack(v)
			}
			if v.pfd[1].Revents != 0 { // a stop request, or EOF: the supervisor is gone
				v.rep.Kind = reportKilled
				break
			}
			for syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&v.sigbuf[0])), uintptr(len(v.sigbuf))); ; {
				r2, _, e2 := syscall.RawSyscall6(syscall.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&ws)), syscall.WNOHANG, 0, 0, 0)
				if e2 != 0 || r2 == 0 {
					break
				}
				if r2 == pid2 {
					v.rep.Status = ws
					break wait
				}
			}
		}
		// pid 2 may have ended before its exec pipe's EOF was seen (after
		// its file's byte, or with a stop request).
		oomBack(v)
		// Every process of the jail left, the program's orphans included,
		// is a child of this init: with none (ECHILD) there is nothing to
		// kill, and kill(-1) would walk every process of the host.
		if _, _, e1 = syscall.RawSyscall6(syscall.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&ws)), syscall.WNOHANG, 0, 0, 0); e1 != syscall.ECHILD {
			syscall.RawSyscall(syscall.SYS_KILL, ^uintptr(0), uintptr(syscall.SIGKILL), 0)
			for {
				if _, _, e1 = syscall.RawSyscall6(syscall.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&ws)), 0, 0, 0, 0); e1 != syscall.EINTR && e1 != 0 {
					break
				}
			}
		}
		mark(c, &v.marks, stepReaped)
		// pid 2's failure, which its filter kept it from reporting.
		if c.pid2Fail.Kind == reportError {
			syscall.RawSyscall(syscall.SYS_WRITE, uintptr(c.reportW), uintptr(unsafe.Pointer(&c.pid2Fail)), unsafe.Sizeof(c.pid2Fail))
		}
		// Every process of the jail is reaped: their usage, for the report.
		syscall.RawSyscall(syscall.SYS_GETRUSAGE, ^uintptr(0), uintptr(unsafe.Pointer(&v.ru)), 0) // RUSAGE_CHILDREN
		v.rep.UtimeUs = uint64(v.ru.Utime.Sec)*1e6 + uint64(v.ru.Utime.Usec)
		v.rep.StimeUs = uint64(v.ru.Stime.Sec)*1e6 + uint64(v.ru.Stime.Usec)
		v.rep.MaxrssKB = uint64(v.ru.Maxrss)
		// The init leaves its exit (the teardown of the namespaces, which
		// makes every CPU wait for RCU) until the supervisor has its
		// result: until a byte or EOF on the control pipe, which comes
		// when the supervisor closes the jail's descriptors (closeAll),
		// or, for one that exits then (Input.Exiting), when its keeper
		// has (Exit), after the supervisor's own caller was told. The
		// supervisor's exit would kill the init before: it no longer
		// needs to, every process of the jail being reaped, and the pipe
		// reads EOF once both are gone, however the supervisor ends.
		// Before the report, which the supervisor may exit as soon as it
		// has read.
		if c.exiting {
			syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, 0, 0)
		}
		syscall.RawSyscall(syscall.SYS_WRITE, uintptr(c.reportW), uintptr(unsafe.Pointer(&v.rep)), unsafe.Sizeof(v.rep))
		syscall.RawSyscall(syscall.SYS_READ, uintptr(c.ctlR), uintptr(unsafe.Pointer(&v.sigbuf[0])), 1)
		for {
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
		}
	}

fail:
	i = 0
failOp:
	for {
		failExit(c, step, i, e1)
	}
}

// childProgram is pid 2: the program, the leader of a session of its own.
// It runs from its first instruction on its own stack, beside the init
// (childInit), and never returns: it execs, or reports its failed step and
// exits.
//
//go:norace
//go:nocheckptr
func childProgram(c *childPlan) {
	var (
		e1   syscall.Errno
		fd   uintptr
		i, j int
		step Step
		hdr  capHeader
		data [2]capData
		sa   sigaction
		mask uint64
		rep  report
		b    [1]byte
	)
	// The init's: the exec pipe's read end (pid 2 keeps the write end until
	// its execve), its oom_score_adj file, and the host's tree, whose last
	// close (the init's, once the root is built) frees it after a grace
	// period.
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(c.vars.execPipe[0]), 0, 0)
	syscall.RawSyscall(syscall.SYS_CLOSE, c.vars.oomFd, 0, 0)
	if c.treeFd != noTree {
		syscall.RawSyscall(syscall.SYS_CLOSE, c.treeFd, 0, 0)
	}
	// First what needs neither the cgroup nor the jail's user (an early
	// init's pid 2 may wait for its cgroup below, while the init builds the
	// root): its own session, the dispositions and the listener's socket.
	step = stepSetsid
	if _, _, e1 = syscall.RawSyscall(syscall.SYS_SETSID, 0, 0, 0); e1 != 0 {
		goto fail
	}
	syscall.RawSyscall(syscall.SYS_UMASK, 0o022, 0, 0)
	// Default dispositions for the signals our caller had ignored (execve
	// keeps an ignored signal ignored, and resets only the caught ones).
	for j = range c.ignored {
		syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(c.ignored[j]), uintptr(unsafe.Pointer(&sa)), 0, 8, 0, 0)
	}
	// And SIGSYS's, before any filter is loaded: a policy can trap a call
	// of the steps left, execve itself, and Go's handler, installed here
	// still, would fault in memory that is not the runtime's.
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(syscall.SIGSYS), uintptr(unsafe.Pointer(&sa)), 0, 8, 0, 0)

	// The listener's socket at its fixed number, then the descriptor limit
	// that keeps the program below that number.
	if c.filter != nil {
		step = stepNotifySocket
		if _, _, e1 = syscall.RawSyscall(syscall.SYS_FCNTL, c.notifyFd, syscall.F_GETFD, 0); e1 != syscall.EBADF {
			e1 = syscall.EBUSY // taken: dup3 would close it
			goto fail
		}
		if _, _, e1 = syscall.RawSyscall(syscall.SYS_DUP3, uintptr(c.notifySock), c.notifyFd, syscall.O_CLOEXEC); e1 != 0 {
			goto fail
		}
	}
	// No capability survives: the bounding and ambient sets, emptied by
	// the init before this process's clone, then (capset, below) all of
	// effective, permitted and inheritable (the uid is not 0, so execve
	// would clear most of them anyway).

	// Into the jail's cgroup before anything of the program's, on v1 (on
	// v2 clone3 put this process there): "0", this thread, to each
	// hierarchy's tasks file, which moves only the writer and takes no
	// global lock (moving another process takes the threadgroup lock, whose
	// first writer waits for an RCU grace period).
	step = stepJoinCgroup
	if c.lateJoin {
		if e1 = recvJoin(c); e1 != 0 {
			goto fail
		}
	}
	for i = c.joinFirst; i < c.joinFirst+c.joinCount && !c.joinInto; i++ {
		fd = uintptr(*(*int32)(unsafe.Pointer(&c.joinCmsg[cmsgHdrSize+4*i])))
		if _, _, e1 = syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&self[0])), 1); e1 != 0 {
			goto failOp
		}
		syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	}
	// Or the tasks files an early init opened (cgroupWrites), when the run
	// took them; otherwise they are only closed.
	for j = 0; j < c.taskN && j < len(c.cgTasks); j++ {
		if c.cgTasks[j] < 0 {
			continue
		}
		fd = uintptr(c.cgTasks[j])
		if c.joinTasks {
			if _, _, e1 = syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&self[0])), 1); e1 != 0 {
				i = c.joinFirst + j // as the message's would be numbered
				goto failOp
			}
		}
		syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	}
	i = 0
	// Its cgroup namespace is rooted there, so that the jail sees its own
	// cgroup as "/".
	step = stepCgroupns
	if _, _, e1 = syscall.RawSyscall(syscall.SYS_UNSHARE, unix.CLONE_NEWCGROUP, 0, 0); e1 != 0 {
		goto fail
	}
	if step, e1 = becomeUser(c); e1 != 0 {
		goto fail
	}
	step = stepCapset
	hdr = capHeader{version: unix.LINUX_CAPABILITY_VERSION_3}
	if _, _, e1 = syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e1 != 0 {
		goto fail
	}
	step = stepNoNewPrivs
	if _, _, e1 = syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e1 != 0 {
		goto fail
	}
	// The filter now, while the init builds the root, when it allows every
	// call that follows; and before the limits whenever it allows them
	// (filterOrder).
	if c.earlyFilter {
		if step, e1 = loadFilter(c); e1 != 0 {
			goto fail
		}
	}
	// A one-shot run's limits now; a prepared jail's once the submitted file
	// is written (the file size limit is the program's, not the
	// submission's).
	if !c.prepared && !c.limitsLate {
		if step, i, e1 = setLimits(c); e1 != 0 {
			goto failOp
		}
	}

	// The root is built when goAhead is set: pid 2, cloned into it, moves
	// to its working directory. It spins a short while first (some 12 µs
	// here), for a root that is about to be built: waking a sleeping CPU
	// costs more. Longer, it spins for roots that are not, now that its
	// cgroup is ready when it starts, and a spin in a virtual machine may
	// give its CPU up to the host (testdata/bench/NOTES.md: goAhead's spin).
	spinLoad(&c.goAhead, goAheadSpins)
	for c.goAhead == 0 { // reloaded after each call (see the init's store)
		syscall.RawSyscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(&c.goAhead)), futexWaitPrivate, 0, 0, 0, 0)
	}
	if c.cpusLen != 0 { // the caller's CPUs, for the program (spread)
		syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, c.cpusLen, uintptr(unsafe.Pointer(&c.cpus[0])))
	}
	step = stepChdir
	if _, _, e1 = syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(c.workdir)), 0, 0); e1 != 0 {
		goto fail
	}
	// The program's stdio, and every other descriptor marked close-on-exec,
	// those leaked by our own caller included (runc CVE-2024-21626).
	step = stepStdio
	for i = 0; i < 3; i++ {
		if _, _, e1 = syscall.RawSyscall(syscall.SYS_DUP3, uintptr(c.stdio[i]), uintptr(i), 0); e1 != 0 {
			goto failOp
		}
	}
	i = 0
	step = stepCloseFds
	if _, _, e1 = syscall.RawSyscall(unix.SYS_CLOSE_RANGE, 3, ^uintptr(0), unix.CLOSE_RANGE_CLOEXEC); e1 != 0 {
		goto fail
	}

	// A prepared jail (Prepare) waits here, everything in place (the filter
	// too when it allows what follows), until its program is known: it
	// says it is ready, then reads the submitted file, which it writes into
	// the work directory itself, and the command (readCommand).
	if c.prepared {
		// The file first, opened now and bound read-only by the init
		// (bindReadOnly) before the jail says it is ready: its writes go
		// through this descriptor.
		step = stepCodeFile
		if c.codeFd, _, e1 = syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(c.fileName)),
			syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, c.fileMode, 0, 0); e1 != 0 {
			goto fail
		}
		// The first pages the command lands in (readCommand), touched
		// now: pid 2's first touch of a page of the shared mapping is a
		// fault, a few µs each, which would come on the request's path.
		c.blob[0], c.argvRaw[0], c.envvRaw[0] = 0, 0, 0
		b[0] = 'f'
		if _, _, e1 = syscall.RawSyscall(syscall.SYS_WRITE, uintptr(c.vars.execPipe[1]), uintptr(unsafe.Pointer(&b[0])), 1); e1 != 0 {
			goto fail
		}
		for c.codeBound == 0 { // reloaded after each call (see goAhead)
			syscall.RawSyscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(&c.codeBound)), futexWaitPrivate, 0, 0, 0, 0)
		}
		if c.codeBound != 1 {
			e1 = syscall.Errno(c.codeErr)
			goto fail
		}
		rep = report{Kind: reportReady}
		syscall.RawSyscall(syscall.SYS_WRITE, uintptr(c.reportW), uintptr(unsafe.Pointer(&rep)), unsafe.Sizeof(rep))
		step = stepCommand
		if e1 = readCommand(c); e1 != 0 {
			goto fail
		}
		if c.stdinSent {
			step = stepStdin
			if e1 = recvStdin(c); e1 != 0 {
				goto fail
			}
		}
		if !c.limitsLate {
			if step, i, e1 = setLimits(c); e1 != 0 {
				goto failOp
			}
		}
	}

	// An empty signal mask for the program (execve keeps the mask). No one
	// signals this process before execve: it has no terminal, and the
	// supervisor signals only the init. The filter may (SIGSYS, above).
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, sigSetmask, uintptr(unsafe.Pointer(&mask)), 0, 8, 0, 0)
	// Seccomp is the last step before execve, so that the filter need not
	// allow anything the setup does.
	if !c.earlyFilter {
		if step, e1 = loadFilter(c); e1 != 0 {
			goto fail
		}
	}
	if c.limitsLate {
		if step, i, e1 = setLimits(c); e1 != 0 {
			goto failOp
		}
	}
	mark(c, &c.pid2Marks, stepSeccomp)
	step = stepExec
	if c.prepared {
		_, _, e1 = syscall.RawSyscall(syscall.SYS_EXECVE, c.argvRaw[0], uintptr(unsafe.Pointer(&c.argvRaw[0])), uintptr(unsafe.Pointer(&c.envvRaw[0])))
	} else {
		_, _, e1 = syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(c.path)),
			uintptr(unsafe.Pointer(&c.argv[0])), uintptr(unsafe.Pointer(&c.envv[0])))
	}

fail:
	i = 0
failOp:
	for {
		failExit(c, step, i, e1)
	}
}

// recvJoin receives the supervisor's message of descriptors: one
// SCM_RIGHTS message (its length in the header's first word;
// msg_controllen counts its padding too) of joinFirst+joinCount of them,
// the program's stdin first when joinFirst is 1.
//
//go:nosplit
//go:norace
//go:nocheckptr
func recvJoin(c *childPlan) syscall.Errno {
	if _, _, e1 := syscall.RawSyscall(syscall.SYS_RECVMSG, uintptr(c.notifySock), uintptr(unsafe.Pointer(&c.joinMsg)), syscall.MSG_CMSG_CLOEXEC); e1 != 0 {
		return e1
	}
	if *(*uint64)(unsafe.Pointer(&c.joinCmsg[0])) != uint64(cmsgHdrSize+4*(c.joinFirst+c.joinCount)) ||
		*(*int32)(unsafe.Pointer(&c.joinCmsg[8])) != syscall.SOL_SOCKET || *(*int32)(unsafe.Pointer(&c.joinCmsg[12])) != syscall.SCM_RIGHTS {
		return syscall.EBADMSG
	}
	if c.joinFirst > 0 { // above the numbers pid 2's dup3 onto stdio takes
		c.stdio[0] = int(aboveStdio(uintptr(*(*int32)(unsafe.Pointer(&c.joinCmsg[cmsgHdrSize])))))
	}
	return 0
}

// recvStdin takes a prepared jail's stdin, which the supervisor sent on the
// listener's socket once the request was known, before the command (as a
// one-shot run's: a sealed copy of the data or of a file, a FIFO or a
// device), and puts it at 0 in place of the /dev/null it was prepared with.
//
//go:nosplit
//go:norace
//go:nocheckptr
func recvStdin(c *childPlan) syscall.Errno {
	c.joinMsg.Controllen = uint64(len(c.joinCmsg)) // the last recvmsg wrote its own
	r1, _, e1 := syscall.RawSyscall(syscall.SYS_RECVMSG, uintptr(c.notifySock), uintptr(unsafe.Pointer(&c.joinMsg)), syscall.MSG_CMSG_CLOEXEC|syscall.MSG_DONTWAIT)
	if e1 != 0 {
		return e1
	}
	if r1 != 1 || *(*uint64)(unsafe.Pointer(&c.joinCmsg[0])) != uint64(cmsgHdrSize+4) ||
		*(*int32)(unsafe.Pointer(&c.joinCmsg[8])) != syscall.SOL_SOCKET || *(*int32)(unsafe.Pointer(&c.joinCmsg[12])) != syscall.SCM_RIGHTS {
		return syscall.EBADMSG
	}
	fd := uintptr(*(*int32)(unsafe.Pointer(&c.joinCmsg[cmsgHdrSize])))
	_, _, e1 = syscall.RawSyscall(syscall.SYS_DUP3, fd, 0, 0)
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	return e1
}

// aboveStdio moves fd above 2, where the program's stdio goes.
//
//go:nosplit
//go:norace
//go:nocheckptr
func aboveStdio(fd uintptr) uintptr {
	if fd > 2 {
		return fd
	}
	nfd, _, e1 := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_DUPFD_CLOEXEC, 3)
	if e1 != 0 {
		return fd
	}
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	return nfd
}

// becomeUser gives the calling process the jail's user and group, keeping
// the user namespace's capabilities (no uid maps to 0 in it, so setresuid
// does not clear them). The init and pid 2 each call it.
//
//go:nosplit
//go:norace
//go:nocheckptr
func becomeUser(c *childPlan) (Step, syscall.Errno) {
	if c.clearGroups {
		if _, _, e1 := syscall.RawSyscall(syscall.SYS_SETGROUPS, 0, 0, 0); e1 != 0 {
			return stepSetgroups, e1
		}
	}
	if _, _, e1 := syscall.RawSyscall(syscall.SYS_SETRESGID, c.gid, c.gid, c.gid); e1 != 0 {
		return stepSetgid, e1
	}
	if _, _, e1 := syscall.RawSyscall(syscall.SYS_SETRESUID, c.uid, c.uid, c.uid); e1 != 0 {
		return stepSetuid, e1
	}
	return stepSetuid, 0
}

// oomBack gives the init its own oom_score_adj back, once pid 2, which
// inherited the raised one, has exec'd or died, and closes the exec pipe;
// only the first call does anything.
//
//go:nosplit
//go:norace
//go:nocheckptr
func oomBack(v *initVars) {
	if v.pfd[2].Fd < 0 {
		return
	}
	if v.oomOldN > 0 {
		syscall.RawSyscall6(syscall.SYS_PWRITE64, v.oomFd, uintptr(unsafe.Pointer(&v.oomOld[0])), v.oomOldN, 0, 0, 0)
	}
	syscall.RawSyscall(syscall.SYS_CLOSE, v.oomFd, 0, 0)
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(v.execPipe[0]), 0, 0)
	v.pfd[2].Fd = -1
}

// isOOMMax reports whether the init's oom_score_adj, as read, is oomMax.
//
//go:nosplit
//go:norace
//go:nocheckptr
func isOOMMax(v *initVars) bool {
	if v.oomOldN != uintptr(len(oomMax))+1 || v.oomOld[len(oomMax)] != '\n' {
		return false
	}
	for i := range oomMax {
		if v.oomOld[i] != oomMax[i] {
			return false
		}
	}
	return true
}

// bindReadOnly binds a prepared jail's submitted file (c.fileName, in the
// working directory, which pid 2 has just created) read-only onto itself,
// as a one-shot run's root has it (see buildMounts): the init, outside the
// jail's cgroup, is charged for its pages. pid 2 keeps the descriptor it
// opened before, to write the file when its program comes.
//
//go:nosplit
//go:norace
//go:nocheckptr
func bindReadOnly(c *childPlan, v *initVars) syscall.Errno {
	if _, _, e1 := syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(c.fileName)), uintptr(unsafe.Pointer(c.fileName)),
		0, syscall.MS_BIND, 0, 0); e1 != 0 {
		return e1
	}
	v.attr = mountAttr{set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	_, _, e1 := syscall.RawSyscall6(unix.SYS_MOUNT_SETATTR, atFDCWD, uintptr(unsafe.Pointer(c.fileName)),
		unix.AT_SYMLINK_NOFOLLOW, uintptr(unsafe.Pointer(&v.attr)), unsafe.Sizeof(v.attr), 0)
	return e1
}

// setLimits sets RLIMIT_NOFILE, then the rlimits, on the program and all
// it starts, not on the init (the program could otherwise get the init
// killed by its own limits). It returns the failed step and the index of
// the rlimit.
//
//go:nosplit
//go:norace
//go:nocheckptr
func setLimits(c *childPlan) (Step, int, syscall.Errno) {
	if _, _, e1 := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, c.nofile.resource, uintptr(unsafe.Pointer(&c.nofile.cur)), 0, 0, 0); e1 != 0 {
		return stepNofile, 0, e1
	}
	for i := range c.rlimits {
		if _, _, e1 := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, c.rlimits[i].resource,
			uintptr(unsafe.Pointer(&c.rlimits[i].cur)), 0, 0, 0); e1 != 0 {
			return stepRlimit, i, e1
		}
	}
	return stepRlimit, 0, 0
}

// failExit reports that step (its i-th item) failed with e1, and exits
// with 127; the init and the program's process both end so.
//
//go:nosplit
//go:norace
//go:nocheckptr
func failExit(c *childPlan, step Step, i int, e1 syscall.Errno) {
	rep := report{Kind: reportError, Step: uint32(step), Index: uint32(i), Errno: uint32(e1)}
	// Kept first where the init will find it (pid2Fail), and taken back
	// once written: a filter's kill ends this process within the write.
	// (The init's own failure leaves it unread.)
	c.pid2Fail = rep
	if n, _, _ := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(c.reportW), uintptr(unsafe.Pointer(&rep)), unsafe.Sizeof(rep)); n == unsafe.Sizeof(rep) {
		c.pid2Fail = report{}
	}
	syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 127, 0, 0)
	// A policy may refuse exit_group (a program's libc falls back to
	// exit, as here): this process has one thread.
	syscall.RawSyscall(syscall.SYS_EXIT, 127, 0, 0)
}

// mark reports, for --debug, that the child has finished a step, with the
// time (CLOCK_MONOTONIC) in the report's UtimeUs, in nanoseconds.
//
//go:nosplit
//go:norace
//go:nocheckptr
func mark(c *childPlan, b *markBuf, step Step) {
	if !c.debug {
		return
	}
	if _, _, e1 := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&b.ts)), 0); e1 != 0 {
		b.ts = unix.Timespec{} // a filter that refuses it: no time (markLine)
	}
	markAt(c, b, step)
}

// markAt sends a mark of the time already in b.ts.
//
//go:nosplit
//go:norace
//go:nocheckptr
func markAt(c *childPlan, b *markBuf, step Step) {
	if !c.debug {
		return
	}
	b.rep = report{Kind: reportMark, Step: uint32(step), UtimeUs: uint64(b.ts.Sec)*1e9 + uint64(b.ts.Nsec)}
	syscall.RawSyscall(syscall.SYS_WRITE, uintptr(c.reportW), uintptr(unsafe.Pointer(&b.rep)), unsafe.Sizeof(b.rep))
}

// loadFilter loads the seccomp filter with a listener and sends the
// listener to the supervisor; it returns the failed step, if any.
//
//go:nosplit
//go:norace
//go:nocheckptr
func loadFilter(c *childPlan) (Step, syscall.Errno) {
	if c.filter == nil {
		return stepSeccomp, 0
	}
	fd, _, e1 := syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, c.filterFlags, uintptr(unsafe.Pointer(c.filter)))
	if e1 != 0 {
		return stepSeccomp, e1
	}
	// The listener is close-on-exec; so is the socket.
	*(*int32)(unsafe.Pointer(&c.cmsg[c.cmsgFd])) = int32(fd)
	if _, _, e1 = syscall.RawSyscall(syscall.SYS_SENDMSG, c.notifyFd, uintptr(unsafe.Pointer(&c.msg)), 0); e1 != 0 {
		return stepSendListener, e1
	}
	return stepSeccomp, 0
}

// readCommand reads a prepared jail's program from the go pipe: it copies
// the submitted file into the work directory (the current directory), then
// parses argv and the environment. EOF before anything means the
// supervisor gave the jail up: it exits quietly.
//
//go:nosplit
//go:norace
//go:nocheckptr
func readCommand(c *childPlan) syscall.Errno {
	var (
		n, m, k, start int
		want           int
		r1, fd         uintptr
		e1             syscall.Errno
		size           uint64
	)
	// The file's length, then its bytes.
	for n < 8 {
		r1, _, e1 = syscall.RawSyscall(syscall.SYS_READ, uintptr(c.goR), uintptr(unsafe.Pointer(&c.blob[n])), uintptr(8-n))
		if e1 == syscall.EINTR {
			continue
		}
		if e1 != 0 {
			return e1
		}
		if r1 == 0 {
			for {
				syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
			}
		}
		n += int(r1)
	}
	size = uint64(c.blob[0]) | uint64(c.blob[1])<<8 | uint64(c.blob[2])<<16 | uint64(c.blob[3])<<24 |
		uint64(c.blob[4])<<32 | uint64(c.blob[5])<<40 | uint64(c.blob[6])<<48 | uint64(c.blob[7])<<56
	fd = c.codeFd           // opened while the jail was prepared, before its read-only bind
	if size != ^uint64(0) { // all ones: no file (a program inside the jail), which stays empty
		for size > 0 {
			m = len(c.blob)
			if uint64(m) > size {
				m = int(size)
			}
			r1, _, e1 = syscall.RawSyscall(syscall.SYS_READ, uintptr(c.goR), uintptr(unsafe.Pointer(&c.blob[0])), uintptr(m))
			if e1 == syscall.EINTR {
				continue
			}
			if e1 != 0 {
				return e1
			}
			if r1 == 0 {
				return syscall.EPIPE
			}
			for n = 0; n < int(r1); {
				w, _, e2 := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&c.blob[n])), r1-uintptr(n))
				if e2 == syscall.EINTR {
					continue
				}
				if e2 != 0 {
					return e2
				}
				n += int(w)
			}
			size -= uint64(r1)
		}
	}
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	// Then the length of the rest (4 bytes, little endian), so that the
	// command ends without waiting for the pipe's EOF (the supervisor's
	// close, which may come only once it has gone on to wait for the
	// program): the counts of argv and the environment (4 bytes each),
	// then their strings, each NUL-terminated (empty ones too).
	for n, want = 0, len(c.blob); n < want; {
		r1, _, e1 = syscall.RawSyscall(syscall.SYS_READ, uintptr(c.goR), uintptr(unsafe.Pointer(&c.blob[n])), uintptr(want-n))
		if e1 == syscall.EINTR {
			continue
		}
		if e1 != 0 {
			return e1
		}
		if r1 == 0 {
			return syscall.EPIPE
		}
		n += int(r1)
		if n >= 4 && want == len(c.blob) {
			want = 4 + (int(c.blob[0]) | int(c.blob[1])<<8 | int(c.blob[2])<<16 | int(c.blob[3])<<24)
			if want > len(c.blob) {
				return syscall.E2BIG
			}
		}
	}
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(c.goR), 0, 0)
	if n != want || n < 12 {
		return syscall.EINVAL
	}
	argc := int(c.blob[4]) | int(c.blob[5])<<8 | int(c.blob[6])<<16 | int(c.blob[7]&0x7f)<<24
	c.stdinSent = c.blob[7]&0x80 != 0
	envc := int(c.blob[8]) | int(c.blob[9])<<8 | int(c.blob[10])<<16 | int(c.blob[11])<<24
	if argc < 1 || argc >= len(c.argvRaw) || envc >= len(c.envvRaw) {
		return syscall.E2BIG
	}
	start = 12
	for m = 12; m < n && k < argc+envc; m++ {
		if c.blob[m] != 0 {
			continue
		}
		if k < argc {
			c.argvRaw[k] = uintptr(unsafe.Pointer(&c.blob[start]))
		} else {
			c.envvRaw[k-argc] = uintptr(unsafe.Pointer(&c.blob[start]))
		}
		k++
		start = m + 1
	}
	if k != argc+envc {
		return syscall.EINVAL
	}
	c.argvRaw[argc] = 0
	c.envvRaw[envc] = 0
	return 0
}

// opSteps name the step of each kind of op whose place opDir could not
// find.
var opSteps = [...]Step{opMkdir: stepMkdir, opSymlink: stepSymlink, opFile: stepWriteFile, opBind: stepMountPoint, opProc: stepMountPoint, opFS: stepMountPoint}

// opDir is where the build makes path, relative to the new root rootfd,
// and its name there. Entered (chroot) before it is built, the root is
// this process's, whose ".." and absolute links stay in it: rootfd and
// path as they are. On an older kernel (late), whose root is entered once
// it is built, this process's root is still the host's tree, and a link in
// the root (a policy's own, to ../../tmp, with binds below it) led the
// build out of it onto the host: path's directory is opened within the
// root (RESOLVE_IN_ROOT), and its last name is made there. The caller
// closes the directory (not rootfd).
//
//go:nosplit
//go:norace
//go:nocheckptr
func opDir(rootfd uintptr, path *byte, late bool, v *initVars) (uintptr, *byte, syscall.Errno) {
	if !late {
		return rootfd, path, 0
	}
	last := -1
	n := 0
	for p := path; *p != 0; p = (*byte)(unsafe.Add(unsafe.Pointer(p), 1)) {
		if *p == '/' {
			last = n
		}
		n++
	}
	if last < 0 {
		return rootfd, path, 0
	}
	if last >= len(v.opDirBuf) {
		return 0, nil, syscall.ENAMETOOLONG
	}
	for j := 0; j < last; j++ {
		v.opDirBuf[j] = *(*byte)(unsafe.Add(unsafe.Pointer(path), j))
	}
	v.opDirBuf[last] = 0
	v.opDirHow = openHow{flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
	fd, _, e := syscall.RawSyscall6(unix.SYS_OPENAT2, rootfd, uintptr(unsafe.Pointer(&v.opDirBuf[0])),
		uintptr(unsafe.Pointer(&v.opDirHow)), unsafe.Sizeof(v.opDirHow), 0, 0)
	if e != 0 {
		return 0, nil, e
	}
	return fd, (*byte)(unsafe.Add(unsafe.Pointer(path), last+1)), 0
}

// sourceDir is where a bind's source is looked up: an absolute path in the
// host's tree (treefd, which how then keeps the lookup within), or from this
// process's root where there is no tree (an older kernel); a relative one
// in the new root (rootfd), within it (see opDir). inTree is the path to
// look up there.
//
//go:nosplit
//go:norace
//go:nocheckptr
func sourceDir(path *byte, treefd, rootfd uintptr, how *openHow) uintptr {
	switch {
	case *path != '/':
		how.resolve |= unix.RESOLVE_IN_ROOT
		return rootfd
	case treefd == noTree:
		return atFDCWD
	}
	how.resolve |= unix.RESOLVE_IN_ROOT
	return treefd
}

// inTree is path as sourceDir looks it up: an absolute one relative to the
// host's tree, without its leading slashes ("." for the tree's root).
//
//go:nosplit
//go:norace
//go:nocheckptr
func inTree(path *byte, treefd uintptr) *byte {
	if *path != '/' || treefd == noTree {
		return path
	}
	for *path == '/' {
		path = (*byte)(unsafe.Add(unsafe.Pointer(path), 1))
	}
	if *path == 0 {
		return &dotDir[0]
	}
	return path
}

// bindFrom binds what fd, an O_PATH descriptor in the host's tree, opens
// (and, recursive, what is mounted below it) at path under the root rootfd, and
// closes fd: a clone of its tree with v.attr set on each of its mounts,
// moved there. The clone is made with them (open_tree_attr, Linux 6.15);
// where the kernel has no open_tree_attr, or a filter refuses it,
// v.noTreeAttr is set and they are set on the clone after
// (mount_setattr). It returns the step that failed.
//
//go:nosplit
//go:norace
//go:nocheckptr
func bindFrom(fd, rootfd uintptr, path *byte, recursive bool, v *initVars) (Step, syscall.Errno) {
	var tree uintptr
	e1 := syscall.ENOSYS
	flags := uintptr(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_EMPTY_PATH)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	if !v.noTreeAttr {
		tree, _, e1 = syscall.RawSyscall6(unix.SYS_OPEN_TREE_ATTR, fd, uintptr(unsafe.Pointer(&empty[0])),
			flags, uintptr(unsafe.Pointer(&v.attr)), unsafe.Sizeof(v.attr), 0)
		// EPERM too: a container's filter that predates the call may
		// refuse it so, and a refusal of the attributes themselves comes
		// again from mount_setattr.
		v.noTreeAttr = e1 == syscall.ENOSYS || e1 == syscall.EPERM
	}
	if v.noTreeAttr {
		tree, _, e1 = syscall.RawSyscall(unix.SYS_OPEN_TREE, fd, uintptr(unsafe.Pointer(&empty[0])), flags)
		if e1 == 0 {
			if _, _, e1 = syscall.RawSyscall6(unix.SYS_MOUNT_SETATTR, tree, uintptr(unsafe.Pointer(&empty[0])),
				unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, uintptr(unsafe.Pointer(&v.attr)), unsafe.Sizeof(v.attr), 0); e1 != 0 {
				syscall.RawSyscall(syscall.SYS_CLOSE, tree, 0, 0)
				syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
				return stepSetattr, e1
			}
		}
	}
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	if e1 != 0 {
		return stepBind, e1
	}
	_, _, e1 = syscall.RawSyscall6(unix.SYS_MOVE_MOUNT, tree, uintptr(unsafe.Pointer(&empty[0])),
		rootfd, uintptr(unsafe.Pointer(path)), unix.MOVE_MOUNT_F_EMPTY_PATH, 0)
	syscall.RawSyscall(syscall.SYS_CLOSE, tree, 0, 0)
	return stepBind, e1
}

// newMount makes a file system of type typ with the options opts and
// returns a detached mount of it with the attributes attr (fsopen,
// fsconfig, fsmount), or the step that failed.
//
//go:nosplit
//go:norace
//go:nocheckptr
func newMount(typ *byte, opts []fsOpt, attr uintptr) (uintptr, Step, syscall.Errno) {
	fsfd, _, e1 := syscall.RawSyscall(unix.SYS_FSOPEN, uintptr(unsafe.Pointer(typ)), unix.FSOPEN_CLOEXEC, 0)
	if e1 != 0 {
		return 0, stepFsopen, e1
	}
	for j := range opts {
		if _, _, e1 = syscall.RawSyscall6(unix.SYS_FSCONFIG, fsfd, unix.FSCONFIG_SET_STRING,
			uintptr(unsafe.Pointer(opts[j].key)), uintptr(unsafe.Pointer(opts[j].val)), 0, 0); e1 != 0 {
			syscall.RawSyscall(syscall.SYS_CLOSE, fsfd, 0, 0)
			return 0, stepFsconfig, e1
		}
	}
	if _, _, e1 = syscall.RawSyscall6(unix.SYS_FSCONFIG, fsfd, unix.FSCONFIG_CMD_CREATE, 0, 0, 0, 0); e1 != 0 {
		syscall.RawSyscall(syscall.SYS_CLOSE, fsfd, 0, 0)
		return 0, stepFsconfig, e1
	}
	fd, _, e1 := syscall.RawSyscall(unix.SYS_FSMOUNT, fsfd, unix.FSMOUNT_CLOEXEC, attr)
	syscall.RawSyscall(syscall.SYS_CLOSE, fsfd, 0, 0)
	if e1 != 0 {
		return 0, stepFsmount, e1
	}
	return fd, stepFsmount, 0
}

// noTree is treefd's value where the kernel cannot clone binds from a
// detached tree (childInit).
const noTree = ^uintptr(0)

// Constant C strings the child uses.
var (
	oomScoreAdj = [...]byte{'/', 'p', 'r', 'o', 'c', '/', 's', 'e', 'l', 'f', '/', 'o', 'o', 'm', '_', 's', 'c', 'o', 'r', 'e', '_', 'a', 'd', 'j', 0}
	oomMax      = [4]byte{'1', '0', '0', '0'}
	slash       = [2]byte{'/', 0}
	dotDir      = [2]byte{'.', 0}
	procDir     = [6]byte{'/', 'p', 'r', 'o', 'c', 0}
	devNull     = [10]byte{'/', 'd', 'e', 'v', '/', 'n', 'u', 'l', 'l', 0}
	modeKey     = [5]byte{'m', 'o', 'd', 'e', 0}
	mode555     = [4]byte{'5', '5', '5', 0}
	self        = [1]byte{'0'} // "this process", to a cgroup's tasks file
	empty       = [1]byte{0}
	tmpfsName   = [6]byte{'t', 'm', 'p', 'f', 's', 0}
)

// The control message that brings the tasks files: a cmsghdr and room for
// a descriptor per v1 hierarchy.
const (
	cmsgHdrSize  = 16                          // struct cmsghdr on amd64
	joinCmsgSize = cmsgHdrSize + 4*(1+maxJoin) // stdin and the tasks files
)

const (
	goAheadSpins     = 512          // pid 2's spin for goAhead before its futex wait: 12 µs on this machine's CPUs
	futexWaitPrivate = 128          // FUTEX_WAIT|FUTEX_PRIVATE_FLAG: pid 2 shares the init's memory
	futexWakePrivate = 129          // FUTEX_WAKE|FUTEX_PRIVATE_FLAG
	futexWait        = 0            // FUTEX_WAIT, on memory shared with another process (cgDone)
	futexWake        = 1            // FUTEX_WAKE
	atFDCWD          = ^uintptr(99) // AT_FDCWD, -100, as a system call argument
	sigBlock         = 0            // SIG_BLOCK
	sigSetmask       = 2            // SIG_SETMASK
)

// chldMask is the signal set holding only SIGCHLD.
var chldMask uint64 = 1 << (syscall.SIGCHLD - 1)
