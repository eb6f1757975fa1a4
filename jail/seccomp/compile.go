//go:build cgo

package seccomp

import (
	"errors"
	"fmt"
	"io"
	"os"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/policy"
)

// Compile builds the BPF filter of spec with libseccomp, for this machine's
// native architecture. The filter's architecture check sends every call of
// a foreign ABI (i386 int 0x80, x32) to the supervisor, which kills the jail
// and names the call; so do kill rules (SECCOMP_RET_USER_NOTIF, Linux 5.0).
// Every problem is reported, each naming its rule.
func Compile(spec Spec) ([]unix.SockFilter, error) {
	def, err := spec.action(spec.DefaultAction, spec.DefaultErrno)
	if err != nil {
		return nil, fmt.Errorf("seccomp.default_action: %w", err)
	}
	f, err := libseccomp.NewFilter(def)
	if err != nil {
		return nil, fmt.Errorf("libseccomp: %w", err)
	}
	defer f.Release()
	// The jail sets no_new_privs itself, just before the filter.
	if err := f.SetNoNewPrivsBit(false); err != nil {
		return nil, err
	}
	// A binary search over system-call numbers instead of a linear list:
	// the default profile names some 50 calls, checked on every system call.
	if err := f.SetOptimize(2); err != nil {
		return nil, fmt.Errorf("libseccomp: optimize: %w", err)
	}
	if err := f.SetBadArchAction(libseccomp.ActNotify); err != nil {
		return nil, fmt.Errorf("libseccomp: bad-architecture action: %w", err)
	}
	var errs []error
	if spec.DefaultAction != policy.ActAllow {
		// The jail's last two steps run under the filter: sending its
		// listener on SetupFd, a descriptor above the program's
		// RLIMIT_NOFILE that the program can never have, and execve.
		send := policy.SeccompRule{Syscalls: []string{"sendmsg"}, Action: policy.ActAllow,
			Args: []policy.SeccompArg{{Index: 0, Op: "==", Value: uint64(spec.SetupFd)}}}
		rules := []policy.SeccompRule{send}
		if !names(spec.Rules, "execve") {
			rules = append(rules, policy.SeccompRule{Syscalls: []string{"execve"}, Action: policy.ActAllow})
		}
		for _, r := range rules {
			if err := spec.addRule(f, r); err != nil {
				errs = append(errs, fmt.Errorf("gojail's own rule for %v: %w", r.Syscalls, err))
			}
		}
	}
	for i, r := range spec.Rules {
		if err := spec.addRule(f, r); err != nil {
			errs = append(errs, fmt.Errorf("%s (%v): %w", spec.RuleName(i), r.Syscalls, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return export(f)
}

// export writes the filter to a memfd and reads it back (libseccomp 2.5
// has no export to memory).
func export(f *libseccomp.ScmpFilter) ([]unix.SockFilter, error) {
	fd, err := unix.MemfdCreate("gojail-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	file := os.NewFile(uintptr(fd), "gojail-seccomp")
	defer file.Close()
	if err := f.ExportBPF(file); err != nil {
		return nil, fmt.Errorf("libseccomp: export: %w", err)
	}
	raw, err := io.ReadAll(io.NewSectionReader(file, 0, 1<<20))
	if err != nil {
		return nil, err
	}
	return decodeBPF(raw)
}

func (spec Spec) addRule(f *libseccomp.ScmpFilter, r policy.SeccompRule) error {
	errno := 0
	if r.Action == policy.ActErrno {
		n, err := policy.ParseErrno(r.Errno)
		if err != nil {
			return err
		}
		errno = n
	}
	act, err := spec.action(r.Action, errno)
	if err != nil {
		return err
	}
	if def, _ := spec.action(spec.DefaultAction, spec.DefaultErrno); act == def {
		return nil // log mode: the rule's refusal goes to the supervisor, as the default's does
	}
	var conds []libseccomp.ScmpCondition
	for _, a := range r.Args {
		c, err := condition(a)
		if err != nil {
			return err
		}
		conds = append(conds, c)
	}
	var errs []error
	for _, name := range r.Syscalls {
		sc, err := libseccomp.GetSyscallFromName(name)
		if err != nil || sc < 0 {
			errs = append(errs, fmt.Errorf("unknown system call %q on this architecture", name))
			continue
		}
		if len(conds) == 0 {
			err = f.AddRule(sc, act)
		} else {
			err = f.AddRuleConditional(sc, act, conds)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// action maps a policy action to libseccomp's. In log mode every refusal
// goes to the supervisor, which records it and answers as the policy would.
func (spec Spec) action(name string, errno int) (libseccomp.ScmpAction, error) {
	if spec.LogMode && name != policy.ActAllow {
		if _, err := (Spec{}).action(name, errno); err != nil {
			return 0, err
		}
		return libseccomp.ActNotify, nil
	}
	switch name {
	case policy.ActAllow:
		return libseccomp.ActAllow, nil
	case policy.ActErrno:
		if errno < 1 || errno > 4095 {
			return 0, fmt.Errorf("errno %d is out of range", errno)
		}
		return libseccomp.ActErrno.SetReturnCode(int16(errno)), nil
	case policy.ActKill:
		return libseccomp.ActNotify, nil
	case policy.ActLog:
		return libseccomp.ActLog, nil
	case policy.ActTrap:
		return libseccomp.ActTrap, nil
	}
	return 0, fmt.Errorf("unknown action %q: want allow, errno, kill, log or trap", name)
}

func condition(a policy.SeccompArg) (libseccomp.ScmpCondition, error) {
	if a.Index > 5 {
		return libseccomp.ScmpCondition{}, fmt.Errorf("argument index %d: system calls have arguments 0 to 5", a.Index)
	}
	ops := map[string]libseccomp.ScmpCompareOp{
		"==": libseccomp.CompareEqual, "!=": libseccomp.CompareNotEqual,
		"<": libseccomp.CompareLess, "<=": libseccomp.CompareLessOrEqual,
		">": libseccomp.CompareGreater, ">=": libseccomp.CompareGreaterEqual,
	}
	if a.Op == "&=" {
		// libseccomp takes the mask first: (arg & mask) == value.
		return libseccomp.MakeCondition(a.Index, libseccomp.CompareMaskedEqual, a.Mask, a.Value)
	}
	op, ok := ops[a.Op]
	if !ok {
		return libseccomp.ScmpCondition{}, fmt.Errorf("unknown comparison %q: want ==, !=, <, <=, >, >= or &=", a.Op)
	}
	if a.Mask != 0 {
		return libseccomp.ScmpCondition{}, fmt.Errorf("mask is only for the &= comparison")
	}
	return libseccomp.MakeCondition(a.Index, op, a.Value)
}

// SyscallName names a system call number of the native architecture.
func SyscallName(nr int) (string, bool) {
	name, err := libseccomp.ScmpSyscall(nr).GetName()
	return name, err == nil
}

// CompileBytes compiles spec to the kernel's byte layout.
func CompileBytes(spec Spec) ([]byte, error) {
	prog, err := Compile(spec)
	if err != nil {
		return nil, err
	}
	return encodeBPF(prog), nil
}
