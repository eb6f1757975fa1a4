#include "textflag.h"

// func clone3Stack(args unsafe.Pointer, size uintptr, fn uintptr, arg unsafe.Pointer, gp uintptr) (pid uintptr, errno syscall.Errno)
//
// clone3(args, size) where args gives the child a stack of its own: the
// child calls fn(arg) there, fn being the entry of a Go function that
// never returns, with Go's internal ABI (its argument in AX, its goroutine
// in R14, X15 zero) and gp as its goroutine.
TEXT ·clone3Stack(SB),NOSPLIT|NOFRAME,$0-56
	MOVQ	args+0(FP), DI
	MOVQ	size+8(FP), SI
	MOVQ	fn+16(FP), R12
	MOVQ	arg+24(FP), R13
	MOVQ	gp+32(FP), R15
	MOVQ	$435, AX	// SYS_clone3
	SYSCALL
	CMPQ	AX, $0
	JEQ	child
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	MOVQ	$0, pid+40(FP)
	NEGQ	AX
	MOVQ	AX, errno+48(FP)
	RET
ok:
	MOVQ	AX, pid+40(FP)
	MOVQ	$0, errno+48(FP)
	RET
child:
	MOVQ	R15, R14
	MOVQ	R13, AX
	XORPS	X15, X15
	CALL	R12
	MOVQ	$127, DI
	MOVQ	$231, AX	// SYS_exit_group
	SYSCALL
	JMP	child

// func spinLoad(p *uint32, n uintptr) uint32
//
// Loads *p until it is not zero, at most n times, with a PAUSE between
// loads, and returns the last value: a bounded busy wait for a flag that
// another CPU is about to set, shorter than the wake-up of a sleeping one.
TEXT ·spinLoad(SB),NOSPLIT|NOFRAME,$0-20
	MOVQ	p+0(FP), DI
	MOVQ	n+8(FP), CX
loop:
	MOVL	(DI), AX
	TESTL	AX, AX
	JNZ	done
	PAUSE
	DECQ	CX
	JNZ	loop
done:
	MOVL	AX, ret+16(FP)
	RET

// func initStore32(p *uint32, v uint32)
//
// Stores v at *p with XCHG, as atomic.StoreUint32 does on amd64: the jail's
// init has no Go runtime, and under the race detector sync/atomic calls
// into the race runtime.
TEXT ·initStore32(SB),NOSPLIT|NOFRAME,$0-12
	MOVQ	p+0(FP), DI
	MOVL	v+8(FP), AX
	XCHGL	AX, (DI)
	RET

// func initLoad32(p *uint32) uint32
//
// Loads *p, as atomic.LoadUint32 does on amd64 (a plain load), for the init.
TEXT ·initLoad32(SB),NOSPLIT|NOFRAME,$0-12
	MOVQ	p+0(FP), DI
	MOVL	(DI), AX
	MOVL	AX, ret+8(FP)
	RET
