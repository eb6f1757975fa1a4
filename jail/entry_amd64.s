#include "textflag.h"

// func entry()
//
// The process's first instructions, where the gojail command is linked
// with it as its entry point (EntrySymbol): entryStart may clone a run's
// init, then the Go runtime starts as it would have from the kernel's
// jump, on the same stack. entryStart is Go code without a runtime under
// it: its prologues read entryG (R14), whose stack guard is 0, and the
// ABI wrapper that calls it reloads R14 from the word below the thread
// pointer, entryTLS[0]; the runtime sets its own thread pointer as it
// starts.
TEXT ·entry(SB),NOSPLIT|NOFRAME,$0
	MOVQ	SP, ·entrySP(SB)
	LEAQ	·entryG(SB), AX
	MOVQ	AX, ·entryTLS(SB)
	LEAQ	·entryTLS+8(SB), SI
	MOVQ	$0x1002, DI	// ARCH_SET_FS
	MOVQ	$158, AX	// SYS_arch_prctl
	SYSCALL
	CMPQ	AX, $0
	JNE	runtime
	LEAQ	·entryG(SB), R14
	XORPS	X15, X15
	ANDQ	$~15, SP
	SUBQ	$32, SP	// the two words below the stack pointer stay free (entryEnv)
	MOVQ	·entrySP(SB), AX
	MOVQ	AX, 0(SP)
	CALL	·entryStart(SB)
	MOVQ	·entrySP(SB), SP	// moved down a word when entryEnv added a variable
runtime:
	JMP	_rt0_amd64_linux(SB)
