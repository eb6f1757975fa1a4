#include "textflag.h"

// func keeper(ppid uintptr, pfd *pollFd, ranges *[2]uintptr, n uintptr) (pid uintptr, errno syscall.Errno)
//
// clone(CLONE_VM) with no exit signal and no stack of its own: the child
// runs only system calls, with every signal blocked (the caller's mask,
// SIGKILL aside), and touches no memory but *pfd, ranges, keeperNap and
// keeperRmdir. It closes the n ranges of descriptors, makes a process group
// of its own (a kill of the caller's group, as timeout(1) sends, leaves it
// to finish), opens a pidfd of ppid, and waits until that polls readable:
// until every thread of ppid has exited (or at once, if ppid is no longer
// its parent: it exited before the pidfd was opened). Without a pidfd (or
// if its poll fails) it looks at its parent every keeperNap instead. It
// then removes the directories keeperRmdir points to, in order up to a 0,
// and exits.
TEXT ·keeper(SB),NOSPLIT|NOFRAME,$0-48
	MOVQ	ppid+0(FP), R12
	MOVQ	pfd+8(FP), R13
	MOVQ	ranges+16(FP), BX
	MOVQ	n+24(FP), R9
	MOVQ	$0x100, DI	// CLONE_VM
	XORQ	SI, SI	// the caller's stack, which the child never uses
	XORQ	DX, DX
	XORQ	R10, R10
	XORQ	R8, R8
	MOVQ	$56, AX	// SYS_clone
	SYSCALL
	CMPQ	AX, $0
	JEQ	child
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	MOVQ	$0, pid+32(FP)
	NEGQ	AX
	MOVQ	AX, errno+40(FP)
	RET
ok:
	MOVQ	AX, pid+32(FP)
	MOVQ	$0, errno+40(FP)
	RET
child:
	TESTQ	R9, R9
	JEQ	open
	MOVQ	0(BX), DI
	MOVQ	8(BX), SI
	XORQ	DX, DX
	MOVQ	$436, AX	// SYS_close_range(first, last, 0)
	SYSCALL
	ADDQ	$16, BX
	DECQ	R9
	JMP	child
open:
	XORQ	DI, DI
	XORQ	SI, SI
	MOVQ	$109, AX	// SYS_setpgid(0, 0)
	SYSCALL
	MOVQ	R12, DI
	XORQ	SI, SI
	MOVQ	$434, AX	// SYS_pidfd_open(ppid, 0)
	SYSCALL
	CMPQ	AX, $0xfffffffffffff001
	JCC	nap
	MOVL	AX, 0(R13)	// pfd.fd
	MOVQ	$110, AX	// SYS_getppid
	SYSCALL
	CMPQ	AX, R12
	JNE	exit
wait:
	MOVQ	R13, DI
	MOVQ	$1, SI
	MOVQ	$-1, DX
	MOVQ	$7, AX	// SYS_poll(pfd, 1, -1)
	SYSCALL
	CMPQ	AX, $-4	// EINTR
	JEQ	wait
	CMPQ	AX, $0xfffffffffffff001
	JCS	exit	// readable: ppid is gone
nap:
	MOVQ	$110, AX	// SYS_getppid
	SYSCALL
	CMPQ	AX, R12
	JNE	exit
	LEAQ	·keeperNap(SB), DI
	XORQ	SI, SI
	MOVQ	$35, AX	// SYS_nanosleep(&keeperNap, nil)
	SYSCALL
	JMP	nap
exit:
	LEAQ	·keeperRmdir(SB), BX
rmdirs:
	MOVQ	0(BX), DI
	TESTQ	DI, DI
	JEQ	done
	MOVQ	$84, AX	// SYS_rmdir(path)
	SYSCALL
	ADDQ	$8, BX
	JMP	rmdirs
done:
	XORQ	DI, DI
	MOVQ	$60, AX	// SYS_exit(0)
	SYSCALL
	JMP	done
