package jail

import (
	"fmt"
	"syscall"
)

// Step names one step of the child's setup, so that a failure inside the
// jail comes back to the supervisor as typed data: step, index, errno.
type Step uint32

// The child's steps, in the order it takes them (see child_linux.go).
const (
	stepNone Step = iota
	stepJoinCgroup
	stepUnshare
	stepRelease
	stepCgroupns
	stepSetgroups
	stepSetgid
	stepSetuid
	stepDumpable
	stepMountPrivate
	stepHostTree
	stepProc
	stepBind
	stepSetattr
	stepRootFS
	stepAttachRoot
	stepMkdir
	stepSymlink
	stepWriteFile
	stepMountPoint
	stepMoveMount
	stepFsopen
	stepFsconfig
	stepFsmount
	stepHostname
	stepLoopback
	stepRootReadOnly
	stepPivotRoot
	stepChroot
	stepChdir
	stepRlimit
	stepOOMScore
	stepSetsid
	stepStdio
	stepCloseFds
	stepCommand
	stepStdin
	stepCodeFile
	stepSignalfd
	stepFork
	stepNotifySocket
	stepNofile
	stepCapBound
	stepCapAmbient
	stepCapset
	stepNoNewPrivs
	stepSeccomp
	stepSendListener
	stepExec
	stepReaped
	stepBindChanged
	stepCount
)

var stepNames = [stepCount]string{
	stepNone:         "none",
	stepJoinCgroup:   "join the cgroup",
	stepUnshare:      "unshare the mount, ipc, uts and network namespaces",
	stepRelease:      "wait for the supervisor",
	stepCgroupns:     "unshare the cgroup namespace",
	stepSetgroups:    "setgroups",
	stepSetgid:       "setresgid",
	stepSetuid:       "setresuid",
	stepDumpable:     "prctl(PR_SET_DUMPABLE)",
	stepMountPrivate: "make / private",
	stepHostTree:     "copy the host's mount tree",
	stepProc:         "make the jail's /proc",
	stepBind:         "bind",
	stepSetattr:      "mount_setattr",
	stepRootFS:       "create the root tmpfs",
	stepAttachRoot:   "attach the new root",
	stepMkdir:        "mkdir",
	stepSymlink:      "symlink",
	stepWriteFile:    "write file",
	stepMountPoint:   "create mount point",
	stepMoveMount:    "move_mount",
	stepFsopen:       "fsopen",
	stepFsconfig:     "fsconfig",
	stepFsmount:      "fsmount",
	stepHostname:     "sethostname",
	stepLoopback:     "bring up lo",
	stepRootReadOnly: "make the root read-only",
	stepPivotRoot:    "pivot_root into an empty root",
	stepChroot:       "enter the new root",
	stepChdir:        "chdir",
	stepRlimit:       "setrlimit",
	stepOOMScore:     "raise oom_score_adj",
	stepSetsid:       "setsid",
	stepStdio:        "dup3 stdio",
	stepCloseFds:     "close_range",
	stepCommand:      "read the command",
	stepStdin:        "receive the program's stdin",
	stepCodeFile:     "create the submitted file and bind it read-only",
	stepSignalfd:     "signalfd",
	stepFork:         "fork the program",
	stepNotifySocket: "dup3 the listener's socket",
	stepNofile:       "setrlimit(RLIMIT_NOFILE)",
	stepCapBound:     "drop the capability bounding set",
	stepCapAmbient:   "clear ambient capabilities",
	stepCapset:       "capset",
	stepNoNewPrivs:   "prctl(PR_SET_NO_NEW_PRIVS)",
	stepSeccomp:      "seccomp",
	stepSendListener: "send the seccomp listener",
	stepExec:         "execve",
	stepReaped:       "the program ended, every process reaped",
	stepBindChanged:  "bind",
}

func (s Step) String() string {
	if s < stepCount {
		return stepNames[s]
	}
	return fmt.Sprintf("step %d", uint32(s))
}

// ChildError is a failure of the jail's setup, reported by the child.
type ChildError struct {
	Step   Step
	Index  int    // which mount, file or rlimit, when the step has several
	Detail string // what the step worked on, e.g. the path
	Errno  syscall.Errno
}

func (e *ChildError) Error() string {
	if e.Step == stepBindChanged {
		return fmt.Sprintf("bind %s: its source is not what was checked: it was renamed or replaced on the host meanwhile", e.Detail)
	}
	if e.Detail != "" {
		return fmt.Sprintf("%s %s: %v", e.Step, e.Detail, e.Errno)
	}
	return fmt.Sprintf("%s: %v", e.Step, e.Errno)
}

// Unwrap lets errors.Is(err, unix.EPERM) see the errno.
func (e *ChildError) Unwrap() error { return e.Errno }

// report is the record the child writes on the report pipe: a setup failure
// (kind reportError) or, from the jail's init, the program's wait status
// (kind reportExit). One write of 48 bytes is atomic on a pipe.
type report struct {
	Kind   uint32
	Step   uint32
	Index  uint32
	Errno  uint32
	Status uint32
	_      uint32
	// The whole tree's usage, reaped by the init (reportExit, reportKilled):
	// the supervisor need not wait for the init's own exit to have it.
	UtimeUs, StimeUs, MaxrssKB uint64
}

const (
	reportError  = 1
	reportExit   = 2 // the program ended; Status is its wait status
	reportKilled = 3 // the supervisor asked init to stop the jail
	reportReady  = 4 // a prepared jail waits for its program
	reportMark   = 5 // --debug: a step done, at UtimeUs nanoseconds (CLOCK_MONOTONIC)
)
