package jail

import (
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
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

// ignoredSignals lists the signals, real-time ones included, that this
// process was started with ignored (nohup, a shell's background job, a make
// that ignores signal 32): the program gets them back at their default.
func ignoredSignals() []uintptr {
	var sigs []uintptr
	for sig := uintptr(1); sig <= 64; sig++ {
		var old sigaction
		_, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, 0, uintptr(unsafe.Pointer(&old)), 8, 0, 0)
		if e == 0 && old.handler == 1 { // SIG_IGN
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

// lastCap is the kernel's highest capability number: the last that
// PR_CAPBSET_READ knows (it refuses a number past it with EINVAL), found
// in a few calls rather than a read of /proc/sys/kernel/cap_last_cap.
var lastCap = sync.OnceValue(func() int {
	lo, hi := 0, 63 // lo is known, hi+1 is not
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_CAPBSET_READ, uintptr(mid), 0); e == syscall.EINVAL {
			hi = mid - 1
		} else {
			lo = mid
		}
	}
	return lo
})
