package jail

import (
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/limits"
)

// EntrySymbol is the entry point the gojail command is linked with (go
// build -ldflags "-E ..."): entry, which clones a run's init before the Go
// runtime starts. The init then makes its namespaces (the network one
// alone some 0.5 ms) while the runtime and the packages start; StartEarly,
// called from the first package initialisation that can, comes some 1.4
// ms after the execve. The command adopts the init (EntryInit); a build
// without the flag starts its init with StartEarly.
const EntrySymbol = "github.com/gojail/gojail/jail.entry"

// entry is the process's entry point; in entry_amd64.s.
func entry()

// entryStack is the process's stack at its entry: argc, then argv.
type entryStack struct {
	argc uintptr
	argv [1 << 16]*byte
}

// What entry and entryStart use and leave, none of it initialised by
// code: the Go runtime and the package initialisation, which come after,
// leave it as it is.
var (
	entrySP     uintptr     // the stack pointer at entry, given back to the runtime
	entryG      [3]uintptr  // a g for entryStart's prologues: stack guard 0, never reached
	entryTLS    [2]uintptr  // the thread pointer is &entryTLS[1]; entryTLS[0] points at entryG
	entryTried  bool        // entryStart looked at the arguments: a run's
	entryEnvSet bool        // entryEnv added GOMAXPROCS=1 to the environment
	entryRoot   int32       // /sys/fs/cgroup, opened before the network namespace (+1: 0 for none)
	entryInit   Early       // the init cloned (pid 0: none)
	entryMem    childMem    // its memory
	entryPlan   childPlan   // its first plan, as copied into entryMem
	entryKeep   [7]uintptr  // the descriptors it keeps
	entryMask   [2]uint64   // every signal, and the mask this process had
	entryLimit  unix.Rlimit // RLIMIT_NPROC
	entrySlack  uintptr     // the main thread's timer slack before entrySlow (0: not changed)
	cgroupDir   = [...]byte{'/', 's', 'y', 's', '/', 'f', 's', '/', 'c', 'g', 'r', 'o', 'u', 'p', 0}
)

// entryNprocFloor is the least RLIMIT_NPROC under which the entry clones
// the init: the runtime makes a few threads as it starts, each a process
// to that limit.
const entryNprocFloor = 128

// firstPlanRoom is what an early init's first plan takes of its memory,
// and more (TestFirstPlanRoom): the entry's init cannot size it with into,
// which allocates to count.
const firstPlanRoom = 16 << 10

// entryStart runs before the Go runtime starts: it clones a run's init, as
// StartEarly does, for a process whose arguments ask for a run
// (entryClone), and gives the runtime one P (entryEnv). It may allocate
// nothing, call nothing of the runtime, and make only raw system calls; it
// uses only variables that no code initialises. Whatever fails, it undoes
// what it did and leaves the run to its own init.
//
//go:norace
//go:nocheckptr
func entryStart(st *entryStack) {
	entryClone(st)
	entryEnv(unsafe.Pointer(st))
}

// entryClone is entryStart's clone of the init.
//
//go:norace
//go:nocheckptr
func entryClone(st *entryStack) {
	n := int(st.argc)
	if n < 2 || n > len(st.argv) || !WantsEarly(n-1, func(i int) string { return cString(st.argv[i+1]) }) {
		return
	}
	// A caller that allows its user only a few processes gets the init
	// cloned later, once the runtime has its threads: cloned here, the init
	// could take the last one the runtime needs, and the runtime ends the
	// process when it cannot make a thread (a run's own clone that fails
	// is reported).
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, unix.RLIMIT_NPROC, 0, uintptr(unsafe.Pointer(&entryLimit)), 0, 0); e != 0 || entryLimit.Cur < entryNprocFloor {
		return
	}
	entryTried = true
	// What forkChild does first (limits.OpenRoot): /sys/fs/cgroup is
	// opened before the network namespace is made. Every descriptor made
	// here is above 2: the runtime gives a caller's closed stdin, stdout or
	// stderr /dev/null as it starts, which a descriptor of ours would
	// otherwise hold.
	if fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&cgroupDir[0])), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0, 0, 0); e == 0 {
		entryRoot = int32(above2(int(fd))) + 1
	}
	e := &entryInit
	var errno syscall.Errno
	if e.p, _, errno = makeJailPipes(); errno != 0 {
		return
	}
	c := &entryPlan
	entryKeep = e.firstPlan(c, int(entryRoot)-1)
	c.keepFds = entryKeep[:]
	m := &entryMem
	if errno = m.mapRoom(firstPlanRoom + earlyRoom); errno != 0 {
		e.p.closeAll()
		return
	}
	cp := m.plan(c)
	entryPC := m.readyClone(cp)
	var ts unix.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&ts)), 0)
	e.mono = time.Duration(ts.Sec)*time.Second + time.Duration(ts.Nsec)
	// The init starts with every signal blocked (childInit), and with the
	// OOM floor (raiseOOMFloor).
	entryMask[0] = ^uint64(0)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, sigSetmask, uintptr(unsafe.Pointer(&entryMask[0])), uintptr(unsafe.Pointer(&entryMask[1])), 8, 0, 0)
	var floor oomFloor
	raised := floorsOOM() && floor.raise()
	// SIGCHLD at its default for the init: ignored (or SA_NOCLDWAIT), as a
	// caller may leave it, the kernel would reap pid 2 before the init
	// could read its status. The runtime replaces it with its own handler
	// as it starts, as it does in every other case.
	var chld, dfl sigaction
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(syscall.SIGCHLD), 0, uintptr(unsafe.Pointer(&chld)), 8, 0, 0)
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(syscall.SIGCHLD), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
	// The init's descriptor limit as the runtime would have left it: the
	// hard one (Go raises its soft limit to it as it starts; pid 2 sets the
	// jail's own after placing the listener's socket at limits.open_files).
	var nofile, nofileAll unix.Rlimit
	syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, unix.RLIMIT_NOFILE, 0, uintptr(unsafe.Pointer(&nofile)), 0, 0)
	nofileAll = unix.Rlimit{Cur: nofile.Max, Max: nofile.Max}
	syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, unix.RLIMIT_NOFILE, uintptr(unsafe.Pointer(&nofileAll)), 0, 0, 0)
	pid, errno := clone3Stack(unsafe.Pointer(&cp.cloneArgs), unsafe.Sizeof(cp.cloneArgs), entryPC, unsafe.Pointer(cp), m.g)
	syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, unix.RLIMIT_NOFILE, uintptr(unsafe.Pointer(&nofile)), 0, 0, 0)
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(syscall.SIGCHLD), uintptr(unsafe.Pointer(&chld)), 0, 8, 0, 0)
	if raised {
		floor.restore()
	}
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, sigSetmask, uintptr(unsafe.Pointer(&entryMask[1])), 0, 8, 0, 0)
	if errno != 0 {
		e.p.closeAll()
		m.free()
		return
	}
	spread(int(pid), cp)
	ends := e.p.childEnds()
	closeFds(ends[:]) // the init's now; the numbers stay, for its plan
	e.pidfd = int32(above2(int(e.pidfd)))
	e.pid, e.cp, e.mem = int(pid), cp, m
	e.ignored = ignoredMask() // the init's too, which the runtime's handlers will not replace
	entrySlow()
}

// StartSlack is the timer slack, in ns, the entry gives the main thread
// of a run's process for the runtime's start (entrySlow).
const StartSlack = 10_000_000

// entrySlow gives this thread a timer slack of StartSlack, which the
// threads it starts inherit, the runtime's monitor (sysmon) first. The
// monitor sleeps 20 µs at a time while a P is busy (its first 50 sleeps):
// through the supervisor's start and a short run it woke some 9 times a
// run, each wake a context switch on a CPU the supervisor or the jail's
// init is using. EntryInit gives the main thread the caller's slack back
// (entrySlack); a thread that waits for a run's deadline takes it too
// (netPoll.poll). The init, cloned before, keeps the caller's.
//
//go:norace
func entrySlow() {
	r, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_GET_TIMERSLACK, 0, 0)
	if e != 0 || int(r) <= 0 {
		return
	}
	if _, _, e = syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_SET_TIMERSLACK, StartSlack, 0); e == 0 {
		entrySlack = r
	}
}

// entryEnv gives the runtime GOMAXPROCS=1 in its environment, unless the
// caller set GOMAXPROCS: the runtime then starts with the one P that
// package oneproc sets, where it would otherwise start a thread for a
// second one meanwhile (0.1 ms of a /bin/true run, paired). The variable is put at the end of envp, the
// words from argc to it moved down one (into room entry keeps free below
// the stack pointer, which follows them, entrySP); envp's end and the
// auxiliary vector stay where they are. EntryInit removes it from the
// process's environment again. sp is the stack at the entry.
//
//go:norace
//go:nocheckptr
func entryEnv(sp unsafe.Pointer) {
	const most = 1 << 22 // words of argv and envp looked at, at most
	word := func(i int) *uintptr { return (*uintptr)(unsafe.Add(sp, 8*i)) }
	argc := *word(0)
	if argc >= most {
		return
	}
	end := int(argc) + 2 // envp's first
	for ; *word(end) != 0; end++ {
		if end >= most || hasPrefix(*(**byte)(unsafe.Pointer(word(end))), &gomaxprocs1) {
			return
		}
	}
	for i := 0; i < end; i++ {
		*word(i - 1) = *word(i)
	}
	*word(end - 1) = uintptr(unsafe.Pointer(&gomaxprocs1[0]))
	entrySP -= 8
	entryEnvSet = true
}

// gomaxprocs1 is the variable entryEnv adds; hasPrefix compares its name.
var gomaxprocs1 = [...]byte{'G', 'O', 'M', 'A', 'X', 'P', 'R', 'O', 'C', 'S', '=', '1', 0}

// hasPrefix reports whether the C string s starts with what v holds up to
// its '='.
//
//go:nocheckptr
func hasPrefix(s *byte, v *[13]byte) bool {
	for i := 0; ; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(s), i))
		if c != v[i] {
			return false
		}
		if c == '=' {
			return true
		}
	}
}

// cString is the NUL-terminated string at p, not copied.
//
//go:nocheckptr
func cString(p *byte) string {
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return unsafe.String(p, n)
}

// EntryInit is the init the process's entry cloned, or nil; tried says
// whether the entry tried: false in a build without the entry, for a
// command that is not a run, and under a low RLIMIT_NPROC
// (entryNprocFloor), where StartEarly is the way. When the entry's clone
// failed, the run clones its own and reports why that failed.
func EntryInit() (e *Early, tried bool) {
	if entryEnvSet {
		entryEnvSet = false
		os.Unsetenv("GOMAXPROCS")
	}
	if entrySlack != 0 { // on the main thread: package initialisation keeps it there
		syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_SET_TIMERSLACK, entrySlack, 0)
	}
	if !entryTried {
		return nil, false
	}
	if entryRoot > 0 {
		limits.UseRoot(int(entryRoot - 1))
	}
	if entryInit.pid == 0 {
		return nil, true
	}
	e = new(Early)
	*e = entryInit
	e.atEntry = true
	e.askCgroup()
	return e, true
}

// WantsEarly tells, from a command's arguments (without the program's
// name, arg(i) for i < n), a run that will adopt an init started early:
// not a request for help, nor a run on the host's network (which a policy
// file may ask for too; then the run discards the init). The init costs
// any other command, and such a run, its namespaces and its wait.
func WantsEarly(n int, arg func(int) string) bool {
	if n < 1 || arg(0) != "run" {
		return false
	}
	for i := 1; i < n; i++ {
		switch a := arg(i); {
		case a == "--":
			return true
		case a == "-h" || a == "--help" || a == "-help":
			return false
		case a == "--net=host" || a == "-net=host":
			return false
		case (a == "--net" || a == "-net") && i+1 < n && arg(i+1) == "host":
			return false
		}
	}
	return true
}

// spread moves a process just cloned (pid) off the CPU of the thread that
// cloned it, onto the others of cp.cpus, the CPUs the caller may use,
// until it takes them all back: the init at its release, pid 2 once the
// root is built (childInit, childProgram). The kernel leaves a new
// process on its parent's CPU more often than not, where it waits until
// the parent sleeps or its time slice ends: the init 0.6-1.1 ms in half
// the runs traced here, while the supervisor starts the Go runtime beside
// it, and pid 2 0.3 ms at the median, while the init builds the root.
// With one CPU, or none known, it does nothing. It allocates nothing
// (entryStart).
//
//go:norace
//go:nocheckptr
func spread(pid int, cp *childPlan) {
	var cpu uint32
	if cp.cpusLen == 0 {
		return
	}
	if _, _, e := syscall.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e != 0 || uintptr(cpu/8) >= cp.cpusLen {
		return
	}
	others := cp.cpus
	others[cpu/64%16] &^= 1 << (cpu % 64) // cpu/64 < 16, checked above
	for _, w := range others {
		if w != 0 {
			syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(pid), cp.cpusLen, uintptr(unsafe.Pointer(&others[0])))
			return
		}
	}
}
