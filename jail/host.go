package jail

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/limits"
)

func goString(p *byte) string {
	if p == nil {
		return ""
	}
	return unix.BytePtrToString(p)
}

// nsNames lists the namespaces in clone flags, for --debug.
func nsNames(flags uint64) string {
	var names []string
	for _, ns := range []struct {
		flag uint64
		name string
	}{{syscall.CLONE_NEWUSER, "user"}, {syscall.CLONE_NEWPID, "pid"}, {syscall.CLONE_NEWNET, "net"},
		{syscall.CLONE_NEWNS, "mount"}, {syscall.CLONE_NEWIPC, "ipc"}, {syscall.CLONE_NEWUTS, "uts"}, {unix.CLONE_NEWCGROUP, "cgroup"}} {
		if flags&ns.flag != 0 {
			names = append(names, ns.name)
		}
	}
	return strings.Join(names, ", ")
}

func cloneHint(errno syscall.Errno) string {
	switch errno {
	case syscall.EPERM, syscall.ENOSPC, syscall.EUSERS:
		return " (creating a user namespace was refused: check sysctl user.max_user_namespaces and kernel.unprivileged_userns_clone, or an AppArmor restriction on unprivileged user namespaces)"
	}
	return ""
}

// argvAndEnviron returns this process's argv and environment areas, where
// /proc/PID/cmdline and environ read them (proc(5): arg_start..arg_end,
// env_start..env_end of /proc/self/stat); Go's own os.Args and environment
// strings point into them. The jail's init blanks its copies.
func argvAndEnviron() [][]byte {
	b, err := limits.ReadFile("/proc/self/stat")
	if err != nil {
		return nil
	}
	// Fields after the command name, which is in parentheses: field 3 on.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	num := func(field int) uintptr { // 1-based, as in proc(5)
		if field-3 >= len(f) {
			return 0
		}
		n, _ := strconv.ParseUint(f[field-3], 10, 64)
		return uintptr(n)
	}
	if len(os.Args) == 0 {
		return nil
	}
	p := unsafe.StringData(os.Args[0])
	start, end := num(48), num(49)
	if num(50) == end { // the environment follows argv, as the kernel lays them out
		end = num(51)
	}
	if os.Args[0] == "" || uintptr(unsafe.Pointer(p)) != start || end <= start || end-start > 1<<20 {
		return nil // not where the kernel says: leave it
	}
	return [][]byte{unsafe.Slice(p, end-start)}
}

// ignoredSignals lists the signals, real-time ones included, that this
// process was started with ignored (nohup, a shell's background job, a make
// that ignores signal 32): the program gets them back at their default.
// The Go runtime has replaced some of them with its handler since; an init
// cloned before it started has them all ignored (entryStart keeps them).
func ignoredSignals() []uintptr {
	return signalList(ignoredMask())
}

// ignoredMask is the set of this process's ignored signals, signal n at
// bit n-1. Raw system calls only (entryStart).
func ignoredMask() uint64 {
	var mask uint64
	for sig := uintptr(1); sig <= 64; sig++ {
		var old sigaction
		_, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, 0, uintptr(unsafe.Pointer(&old)), 8, 0, 0)
		if e == 0 && old.handler == 1 { // SIG_IGN
			mask |= 1 << (sig - 1)
		}
	}
	return mask
}

// signalList lists the signals of mask.
func signalList(mask uint64) []uintptr {
	var sigs []uintptr
	for sig := uintptr(1); sig <= 64; sig++ {
		if mask&(1<<(sig-1)) != 0 {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

// callerSlack is the timer slack of the process's main thread, read as the
// package initialises (on that thread), or the one it had before the
// entry's StartSlack (entrySlack): the caller's, which a jail's program
// gets (a thread of this process may have another: the entry's, or one
// package oneproc of the gojail command gives). 0 if it cannot be read.
var callerSlack = func() uintptr {
	if entrySlack != 0 {
		return entrySlack
	}
	r, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_GET_TIMERSLACK, 0, 0)
	if e != 0 || int(r) < 0 {
		return 0
	}
	return r
}()

// jailCPUs is how many CPUs a jail's processes can run on at once: those
// its cpuset allows, read once, when a run first checks its CPU time (a
// short run never does: see cpuBound). It is not this process's own
// affinity (runtime.NumCPU, narrowed by taskset, say): a program may widen
// the one it inherits, as far as the cpuset. This thread, locked to the
// goroutine so that no other goroutine runs on it (and, say, clones a
// jail's init) while it is widened, asks for every CPU, reads what the
// kernel granted (the cpuset's CPUs that are online), and puts its own
// mask back. Where that fails, the online CPUs bound it. (The runtime's
// first LockOSThread starts a thread, and the locked thread hands its P
// to another: 0.1 ms, paid by runs that last their CPU limit over
// cpuBound, not by every run.)
var jailCPUs = sync.OnceValue(countJailCPUs)

func countJailCPUs() int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var own, all, got unix.CPUSet
	if unix.SchedGetaffinity(0, &own) == nil {
		for i := range all {
			all[i] = ^all[i]
		}
		if unix.SchedSetaffinity(0, &all) == nil {
			err := unix.SchedGetaffinity(0, &got)
			unix.SchedSetaffinity(0, &own)
			if err == nil && got.Count() > 0 {
				return max(got.Count(), own.Count())
			}
		}
	}
	if b, err := limits.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if n := countCPUs(strings.TrimSpace(string(b))); n > 0 {
			return max(n, runtime.NumCPU())
		}
	}
	return len(all) * 64
}

// cpuBound is at least jailCPUs, and takes no thread of its own: the CPUs
// the kernel could ever bring online (/sys/devices/system/cpu/possible,
// which bounds every cpuset), read once. A run's first CPU check is timed
// with it, so that a run that ends before its limit over cpuBound never
// counts the jail's CPUs (2 here: a 2 s limit's first check comes after 1 s).
// Where the file cannot be read, maskBound.
var cpuBound = sync.OnceValue(func() int {
	if b, err := limits.ReadFile("/sys/devices/system/cpu/possible"); err == nil {
		if n := countCPUs(strings.TrimSpace(string(b))); n > 0 {
			// A /sys of a container's own could list fewer than this
			// process runs on.
			return max(n, runtime.NumCPU())
		}
	}
	return maskBound()
})

// maskBound is at least jailCPUs, from one system call: the kernel's CPU
// numbers rounded up to its CPU masks' size, which is how many bytes
// sched_getaffinity copies out (into room for 8192, x86's most). That is
// nr_cpu_ids rounded up to 64 on a kernel that sizes its masks by it, but
// its build's most (NR_CPUS, 256 on this project's machine) on one that
// does not: a 2 s limit's first check would come after 7.8 ms, in the run
// of many a short program.
func maskBound() int {
	var set [8192 / 64]uint64
	n, _, e := syscall.RawSyscall(unix.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(set), uintptr(unsafe.Pointer(&set)))
	if e != 0 || n == 0 {
		return max(len(set)*64, jailCPUs())
	}
	return int(n) * 8
}

// countCPUs counts the CPUs of a kernel CPU list such as "0-3,8,10-11"; 0
// if it is not one.
func countCPUs(list string) int {
	n := 0
	for _, r := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}
