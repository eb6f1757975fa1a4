package limits

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The calls on cgroup files made while a run ends (its counters, the
// removal of its directories) are made raw, without telling the runtime
// (syscall.Syscall's entersyscall) that they might block, which they do
// not, beyond a brief wait for the kernel's cgroup lock: the first call so
// made after the supervisor's thread was parked wakes the runtime's
// monitor thread from its deep sleep, a futex wake that, to a sleeping CPU
// of a virtual machine, costs the caller tens of microseconds, on the way
// from the program's end to the result (see the jail package's quiet.go).

func rawPread(fd int, b []byte, off int64) (int, error) {
	r, _, e := syscall.RawSyscall6(syscall.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(off), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func rawClose(fd int) {
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
}

func rawUnlinkat(dir int, path string, flags int) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_UNLINKAT, uintptr(dir), uintptr(unsafe.Pointer(p)), uintptr(flags)); e != 0 {
		return e
	}
	return nil
}

func rawFstatat(dir int, path string, st *unix.Stat_t, flags int) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	if _, _, e := syscall.RawSyscall6(unix.SYS_NEWFSTATAT, uintptr(dir), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0); e != 0 {
		return e
	}
	return nil
}
