package jail

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/limits"
)

// idMap is the jail's one-user map: inside id -> outside id.
type idMap struct {
	uidIn, uidOut int
	gidIn, gidOut int
	root          bool // the supervisor is root and may map any id
}

// hostIDs picks who the jail is on the host. Rootless, it can only be the
// caller itself. As root it is an id of its own, drawn for each jail from
// hostIDSpan ids above hostIDBase (the gid the same), never root (a jail that
// is root on the host would own every root-owned file it can reach) and
// never nobody: no host account uses these ids, so no host process can
// signal the jail's or own a file it could reach; and two jails running at
// once do not share the kernel's per-user quotas (pending signals,
// descriptors in flight in unix sockets, pipe buffers, epoll watches, POSIX
// message queues), which one jail could otherwise use up for the others.
func hostIDs(uidIn, gidIn int) idMap {
	if os.Geteuid() == 0 {
		id := hostIDBase + rand.IntN(hostIDSpan)
		return idMap{uidIn, id, gidIn, id, true}
	}
	return idMap{uidIn, os.Geteuid(), gidIn, os.Getegid(), false}
}

// hostIDBase is where the jails' host ids start when gojail runs as root:
// far above the ids of accounts (below 65536) and of the subordinate ranges
// container runtimes hand out (from 100000, 65536 each). hostIDSpan keeps
// them below 2^32 - 1, which is no id: two of 100 jails at once share one
// with a chance of 1 in 400,000.
const (
	hostIDBase = 2_000_000_000
	hostIDSpan = 1 << 31
)

// write sets the child's uid and gid maps (user_namespaces(7)). Rootless,
// setgroups must be denied before gid_map may be written; as root it stays
// allowed so that the child can drop root's supplementary groups.
func (m idMap) write(pid int) error {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	if !m.root {
		if err := limits.WriteFile(dir+"setgroups", "deny"); err != nil {
			return fmt.Errorf("write %ssetgroups: %w", dir, err)
		}
	}
	if err := limits.WriteFile(dir+"uid_map", fmt.Sprintf("%d %d 1\n", m.uidIn, m.uidOut)); err != nil {
		hint := "are unprivileged user namespaces enabled? see sysctl kernel.unprivileged_userns_clone and user.max_user_namespaces"
		if m.root {
			hint = "mapping another user takes CAP_SETUID and CAP_SETGID: gojail runs as root without them (its capability bounding set, or a container's)"
		}
		return fmt.Errorf("write %suid_map: %w (%s)", dir, err, hint)
	}
	if err := limits.WriteFile(dir+"gid_map", fmt.Sprintf("%d %d 1\n", m.gidIn, m.gidOut)); err != nil {
		return fmt.Errorf("write %sgid_map: %w", dir, err)
	}
	return nil
}

// ownProc checks that /proc is the one of gojail's own pid namespace: the
// child's pid from clone3 is a pid of that namespace, and in another's
// /proc the same number is another process, whose maps gojail must never
// write.
func ownProc() error {
	var buf [32]byte
	n, err := unix.Readlink("/proc/self", buf[:])
	if self := strconv.Itoa(os.Getpid()); err != nil || string(buf[:n]) != self {
		return fmt.Errorf("the /proc mounted here is not of gojail's pid namespace (/proc/self is %q, gojail is pid %s): mount one, e.g. unshare --pid --fork --mount-proc", buf[:max(n, 0)], self)
	}
	return nil
}
