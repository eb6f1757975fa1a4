package jail

import (
	"syscall"
	"unsafe"
)

// The supervisor's calls that cannot block are made raw, without telling
// the runtime (syscall.Syscall's entersyscall) that they might: the first
// call so made after the supervisor's thread was parked in the poller
// wakes the runtime's monitor thread from its deep sleep, a futex wake
// that, to a sleeping CPU of a virtual machine, costs the caller tens of
// microseconds, on the way from the program's end to the result. Each of
// these returns at once: a non-blocking descriptor's, or one that polled
// readable and has no other reader (the report pipe).

// rawRead is read(2) of a descriptor that does not block (see above).
func rawRead(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}
