package seccomp

import "golang.org/x/sys/unix"

// The native ABI's, for the filter's own instructions (WithSetupSend).
const (
	auditArch = unix.AUDIT_ARCH_X86_64
	nrSendmsg = unix.SYS_SENDMSG
)
