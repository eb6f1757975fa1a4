// Package seccomp turns a policy's [seccomp] section into a BPF filter.
// The rules are plain data (this file); compiling them needs libseccomp,
// which gojail's own binary does not link (a cgo binary starts 1.2-1.5 ms
// slower, on every run): the default profile is compiled at build time and
// embedded, and any other filter is compiled once by the gojail-seccomp
// helper and cached by its content (filter.go).
package seccomp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/policy"
)

// Spec is everything a filter is compiled from.
type Spec struct {
	DefaultAction string               `json:"default_action"`
	DefaultErrno  int                  `json:"default_errno"`
	Rules         []policy.SeccompRule `json:"rules"`
	// SetupFd is the descriptor on which the jail sends the filter's
	// listener after loading it, with the filter in force. A filter that
	// refuses by default allows that sendmsg and execve (see Compile).
	SetupFd int `json:"setup_fd,omitempty"`
	// LogMode sends every refusal to the supervisor (--seccomp-log).
	LogMode bool `json:"log_mode,omitempty"`
	// Own is the index of the policy's first own rule in Rules (those
	// before it are the profile's), for naming rules in errors.
	Own int `json:"-"`
}

// RuleName names Rules[i] as the policy author knows it.
func (s Spec) RuleName(i int) string {
	if i >= s.Own {
		return fmt.Sprintf("seccomp rule %d", i-s.Own+1)
	}
	return fmt.Sprintf("rule %d of the %s profile", i+1, "default")
}

// Key identifies a spec's compiled filter (cache file name, embedded check).
func (s Spec) Key() string {
	b, _ := json.Marshal(s)
	h := sha256.Sum256(append(b, []byte(keyVersion)...))
	return hex.EncodeToString(h[:16])
}

// keyVersion changes when the meaning of a spec changes (action mapping):
// 2, an errno action without its errno is EPERM (it was 41).
const keyVersion = "gojail-seccomp-2 amd64"

// The namespace flags that clone and unshare may not carry (clone(2)).
var nsFlags = []uint64{
	unix.CLONE_NEWNS, unix.CLONE_NEWCGROUP, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC,
	unix.CLONE_NEWUSER, unix.CLONE_NEWPID, unix.CLONE_NEWNET,
}

// DefaultProfile is gojail's default profile: it refuses, with EPERM so that
// a program gets a clean error, the kernel's rarely used and often
// vulnerable interfaces that no ordinary program needs (after Docker's
// default profile and the peers' security history in DESIGN.md). The
// foreign system-call ABIs (i386 int 0x80, x32) are killed by the filter's
// architecture check, not by a rule.
func DefaultProfile() []policy.SeccompRule {
	eperm := func(names ...string) policy.SeccompRule {
		return policy.SeccompRule{Syscalls: names, Action: policy.ActErrno, Errno: "EPERM"}
	}
	arg := func(index uint, op string, value, mask uint64) []policy.SeccompArg {
		return []policy.SeccompArg{{Index: index, Op: op, Value: value, Mask: mask}}
	}
	rules := []policy.SeccompRule{
		// Mounts and root changes: the jail's file system is fixed.
		eperm("mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
			"move_mount", "open_tree", "mount_setattr"),
		// Other namespaces, other processes' memory, file handles that
		// bypass paths (open_by_handle_at: the "shocker" escape).
		eperm("setns", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
			"open_by_handle_at", "name_to_handle_at"),
		// Kernel attack surface with a record of exploits.
		eperm("keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
			"io_uring_setup", "io_uring_enter", "io_uring_register"),
		// The machine's own state.
		eperm("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
			"iopl", "ioperm", "swapon", "swapoff", "reboot", "syslog", "acct", "settimeofday",
			"clock_settime", "clock_adjtime", "adjtimex", "quotactl", "quotactl_fd", "lookup_dcookie",
			"uselib", "vhangup", "move_pages", "migrate_pages"),
		// clone3 passes its flags in memory, which a filter cannot read:
		// ENOSYS makes libc fall back to clone, whose flags it can.
		{Syscalls: []string{"clone3"}, Action: policy.ActErrno, Errno: "ENOSYS"},
		// Typing into the terminal (bubblewrap CVE-2017-5226), matched on the
		// low 32 bits of the request (CVE-2019-10063 set the high ones).
		{Syscalls: []string{"ioctl"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(1, "&=", unix.TIOCSTI, 0xffffffff)},
		{Syscalls: []string{"ioctl"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(1, "&=", unix.TIOCLINUX, 0xffffffff)},
		// Sockets: only unix, inet and inet6 (not AF_PACKET, AF_VSOCK,
		// AF_NETLINK, ...). ">= 11" compares all 64 bits, so high bits set
		// on an allowed family are refused too.
		{Syscalls: []string{"socket"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(0, ">=", unix.AF_INET6+1, 0)},
		{Syscalls: []string{"socket"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(0, "==", unix.AF_UNSPEC, 0)},
		// socketpair makes only unix sockets that work; others reach
		// family code the filter keeps away from socket().
		{Syscalls: []string{"socketpair"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(0, "==", unix.AF_UNSPEC, 0)},
		{Syscalls: []string{"socketpair"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(0, ">=", unix.AF_UNIX+1, 0)},
		// Another process's limits: the program and the jail's init share a
		// uid, which is all prlimit checks; the program could make the init
		// die of its own limits.
		{Syscalls: []string{"prlimit64"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(0, "!=", 0, 0)},
		// inotify, fanotify and dnotify (fcntl F_NOTIFY) watches on the
		// read-only binds, which the host and every run share, would show
		// what they open (fanotify needs no privilege since Linux 5.13);
		// and every inotify or fanotify instance counts against the host
		// user's quota (128 by default). F_NOTIFY is matched on the low 32
		// bits, all the kernel reads of the command.
		eperm("inotify_init", "inotify_init1", "fanotify_init", "fanotify_mark"),
		{Syscalls: []string{"fcntl"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(1, "&=", unix.F_NOTIFY, 0xffffffff)},
		// Kernel AIO contexts come from one pool for the whole host
		// (fs.aio-max-nr, 65536): one jail could take them all, and every
		// io_setup on the host and in other jails would fail meanwhile.
		// ENOSYS, as where the kernel has no AIO: programs that use it
		// fall back to threads.
		{Syscalls: []string{"io_setup"}, Action: policy.ActErrno, Errno: "ENOSYS"},
		// The page cache of the read-only binds is the host's, and every
		// run's: which pages of a file are cached is a message one run can
		// leave for the next. The calls that tell it exactly are refused: a
		// read that must not wait (preadv2's RWF_NOWAIT, EAGAIN on a page
		// not cached; refused with EOPNOTSUPP, the kernel's own answer for a
		// file that cannot do it, on which programs fall back) and
		// cachestat (which Linux 6.14 refuses for a file the caller cannot
		// write, as mincore since 5.2: here for older kernels). So is
		// dropping a shared file's cached pages (fadvise64's
		// POSIX_FADV_DONTNEED), which also takes them from the host and from
		// other runs. A read's timing still tells (README: not isolated).
		// Both flags are matched on the low 32 bits, all the kernel reads.
		{Syscalls: []string{"preadv2"}, Action: policy.ActErrno, Errno: "EOPNOTSUPP", Args: arg(5, "&=", unix.RWF_NOWAIT, unix.RWF_NOWAIT)},
		{Syscalls: []string{"fadvise64"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(3, "&=", unix.FADV_DONTNEED, 0xffffffff)},
		eperm("cachestat"),
	}
	for af := uint64(unix.AF_INET + 1); af < unix.AF_INET6; af++ {
		rules = append(rules, policy.SeccompRule{Syscalls: []string{"socket"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(0, "==", af, 0)})
	}
	for _, f := range nsFlags {
		rules = append(rules, policy.SeccompRule{Syscalls: []string{"clone"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(0, "&=", f, f)})
	}
	for _, f := range append(nsFlags, unix.CLONE_NEWTIME) {
		rules = append(rules, policy.SeccompRule{Syscalls: []string{"unshare"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(0, "&=", f, f)})
	}
	// personality: only the harmless values, Linux (0), the 32-bit domain
	// (8), UNAME26 (0x20000) and both (0x20008): a value with any other bit
	// set is refused (ADDR_NO_RANDOMIZE and READ_IMPLIES_EXEC weaken exploit
	// mitigations). Every value from 0x40000 up has a bit above 17, so one
	// rule refuses them all, 64 bits compared; the bits below it are one
	// rule each. (The filter's size is what loading it costs: one rule per
	// bit made it 272 instructions, 102 of them personality's.) The query
	// 0xffffffff is refused too: rules of one comparison per argument cannot
	// tell it apart, and a filter's default action cannot be given to an
	// exception.
	for b := uint(0); b < 18; b++ {
		if bit := uint64(1) << b; bit != 0x8 && bit != 0x20000 {
			rules = append(rules, policy.SeccompRule{Syscalls: []string{"personality"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(0, "&=", bit, bit)})
		}
	}
	rules = append(rules, policy.SeccompRule{Syscalls: []string{"personality"}, Action: policy.ActErrno, Errno: "EPERM", Args: arg(0, ">=", 0x40000, 0)})
	return rules
}

// SpecOf builds the spec of a policy's section: the profile's rules, less
// those for system calls the policy's own rules name, then the policy's.
func SpecOf(s policy.Seccomp) (Spec, error) {
	spec := Spec{DefaultAction: s.DefaultAction}
	if s.DefaultAction == policy.ActErrno {
		n, err := policy.ParseErrno(s.DefaultErrno)
		if err != nil {
			return Spec{}, fmt.Errorf("seccomp.default_errno: %w", err)
		}
		spec.DefaultErrno = n
	}
	var base []policy.SeccompRule
	switch s.Profile {
	case "default":
		base = DefaultProfile()
	case "none":
	default:
		return Spec{}, fmt.Errorf("seccomp.profile %q: want \"default\" or \"none\"", s.Profile)
	}
	named := map[string]bool{}
	for _, r := range s.Rules {
		for _, sc := range r.Syscalls {
			named[sc] = true
		}
	}
	for _, r := range base {
		var keep []string
		for _, sc := range r.Syscalls {
			if !named[sc] {
				keep = append(keep, sc)
			}
		}
		if len(keep) > 0 {
			r.Syscalls = keep
			spec.Rules = append(spec.Rules, r)
		}
	}
	spec.Own = len(spec.Rules)
	spec.Rules = append(spec.Rules, s.Rules...)
	return spec, nil
}

// Replaced names, for each of the policy's own rules, the system calls it
// names whose default-profile rules look at arguments: the rule replaces
// them (SpecOf), and with them refusals a rule of its own may not repeat
// (the profile's socket families, clone's namespace flags). policy check
// says so.
func Replaced(s policy.Seccomp) [][]string {
	if s.Profile != "default" || len(s.Rules) == 0 {
		return nil
	}
	byArgs := map[string]bool{}
	for _, r := range DefaultProfile() {
		if len(r.Args) > 0 {
			for _, sc := range r.Syscalls {
				byArgs[sc] = true
			}
		}
	}
	out := make([][]string, len(s.Rules))
	for i, r := range s.Rules {
		for _, sc := range r.Syscalls {
			if byArgs[sc] && !slices.Contains(out[i], sc) {
				out[i] = append(out[i], sc)
			}
		}
	}
	return out
}
