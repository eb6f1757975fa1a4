package validate

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/policy"
)

// Custom reports whether a read-only bind is the policy's own, not one of
// the defaults every preset has (system directories, checked as written).
func Custom(src string) bool {
	return !defaultBinds()[filepath.Clean(src)]
}

// defaultBinds is made on first use, not as gojail starts (before the
// jail's init is cloned).
var defaultBinds = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, d := range policy.Defaults().FS.ReadOnly {
		m[filepath.Clean(d)] = true
	}
	return m
})

// HostBind resolves a policy's read-only bind on the host as the mount
// would: the directories above its last component with their symbolic
// links followed (its last, a link, becomes the same link in the jail). It
// refuses what a read-only bind would still let the program reach the host
// through: a kernel interface (/proc, /sys, /dev, or a file system of that
// kind, reached through a link or mounted below the bind), a unix socket or
// a FIFO (a read-only mount does not stop connect(2) or a write to a FIFO).
// The jail binds the path it returns. For several binds, a Binds reads the
// mount table once for them all.
func HostBind(src string) (string, error) {
	var b Binds
	return b.HostBind(src)
}

// Binds checks a policy's binds (HostBind) against one reading of this
// process's mount table, made at its first directory: the cost of each
// bind is then its own path, not the whole table again.
type Binds struct {
	read   bool
	err    error
	mounts []hostMount       // every mount, with its type
	dirs   map[string]string // directories resolved (EvalSymlinks), for binds that share them
	ids    map[string][2]uint64
}

// Identity is the device and inode number the bind HostBind returned host
// for had when it was checked: the jail's setup binds it only if what it
// opens there is still that (not a directory renamed in meanwhile).
func (b *Binds) Identity(host string) (dev, ino uint64, ok bool) {
	id, ok := b.ids[host]
	return id[0], id[1], ok
}

type hostMount struct{ at, fstype string }

// HostBind is the package's HostBind, with the mount table read once.
func (b *Binds) HostBind(src string) (string, error) {
	src = filepath.Clean(src)
	dir, ok := b.dirs[filepath.Dir(src)]
	if !ok {
		var err error
		if dir, err = filepath.EvalSymlinks(filepath.Dir(src)); err != nil {
			return "", fmt.Errorf("fs.ro entry %s: %w", src, unwrapPath(err))
		}
		if b.dirs == nil {
			b.dirs = map[string]string{}
		}
		b.dirs[filepath.Dir(src)] = dir
	}
	host := filepath.Join(dir, filepath.Base(src))
	if host != src && (under(host, "/proc") || under(host, "/sys") || under(host, "/dev") || host == "/") {
		return "", fmt.Errorf("fs.ro entry %s is %s through a symbolic link: host kernel interfaces are never bound", src, host)
	}
	var st unix.Stat_t
	if err := unix.Lstat(host, &st); err != nil {
		return "", fmt.Errorf("fs.ro entry %s: %w", src, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return host, nil
	case unix.S_IFSOCK, unix.S_IFIFO:
		return "", fmt.Errorf("fs.ro entry %s is a unix socket or a FIFO: a read-only bind would still let the program talk to whatever serves it on the host", src)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(host, &fs); err != nil {
		return "", fmt.Errorf("fs.ro entry %s: %w", src, err)
	}
	if name, ok := kernelFS[int64(fs.Type)]; ok {
		return "", fmt.Errorf("fs.ro entry %s is on a %s file system: host kernel interfaces are never bound", src, name)
	}
	// The host's root under another name (a bind of /, say) is the whole
	// host, as / is.
	var root unix.Stat_t
	if err := unix.Stat("/", &root); err == nil && root.Dev == st.Dev && root.Ino == st.Ino {
		return "", fmt.Errorf("fs.ro entry %s is the host's root directory (%s): name the directories the program needs instead", src, host)
	}
	// A kernel interface mounted at the path itself, or below a directory
	// (a bind takes the mounts below it along): some (devtmpfs, which says
	// it is tmpfs; mqueue) only mountinfo tells.
	if m, err := b.kernelMountAt(host, st.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
		return "", fmt.Errorf("fs.ro entry %s: %w", src, err)
	} else if m != "" {
		return "", fmt.Errorf("fs.ro entry %s holds %s: host kernel interfaces are never bound, and a bind takes the mounts below it along", src, m)
	}
	if b.ids == nil {
		b.ids = map[string][2]uint64{}
	}
	b.ids[host] = [2]uint64{st.Dev, st.Ino}
	return host, nil
}

// kernelFS are the file systems that are the host kernel's interfaces.
var kernelFS = map[int64]string{
	unix.PROC_SUPER_MAGIC: "proc", unix.SYSFS_MAGIC: "sysfs", unix.DEVPTS_SUPER_MAGIC: "devpts",
	unix.DEBUGFS_MAGIC: "debugfs", unix.TRACEFS_MAGIC: "tracefs", unix.SECURITYFS_MAGIC: "securityfs",
	unix.CGROUP_SUPER_MAGIC: "cgroup", unix.CGROUP2_SUPER_MAGIC: "cgroup2", unix.BPF_FS_MAGIC: "bpf",
	unix.NSFS_MAGIC: "nsfs", 0x62656570: "configfs", unix.PSTOREFS_MAGIC: "pstore",
	unix.EFIVARFS_MAGIC: "efivarfs", 0x65735543: "fusectl",
}

// kernelTypes are the same file systems by the names mountinfo gives.
var kernelTypes = map[string]bool{
	"proc": true, "sysfs": true, "devpts": true, "devtmpfs": true, "debugfs": true, "tracefs": true,
	"securityfs": true, "cgroup": true, "cgroup2": true, "bpf": true, "nsfs": true, "configfs": true,
	"pstore": true, "efivarfs": true, "fusectl": true, "mqueue": true, "binfmt_misc": true,
	"hugetlbfs": true, "autofs": true, "rpc_pipefs": true,
}

// kernelMountAt names a mount of a kernel interface at path, or, for a
// directory, below it (in this process's mount namespace, which the jail's
// init copies), or "".
func (b *Binds) kernelMountAt(path string, dir bool) (string, error) {
	if !b.read {
		b.read = true
		b.mounts, b.err = readMounts()
	}
	if b.err != nil {
		return "", b.err
	}
	for _, m := range b.mounts {
		if kernelTypes[m.fstype] && (m.at == path || dir && strictlyBelow(m.at, path)) {
			return m.at + " (" + m.fstype + ")", nil
		}
	}
	return "", nil
}

// MountsBelow reports whether the mount table read for the binds' checks
// had a mount below host (a bind HostBind returned): the jail clones such
// a bind with what is mounted below it, and any other without, so that a
// directory renamed into its place since, with a kernel interface mounted
// below it, cannot bring that along (the user namespace's locks make the
// clone fail).
func (b *Binds) MountsBelow(host string) bool {
	for _, m := range b.mounts {
		if strictlyBelow(m.at, host) {
			return true
		}
	}
	return false
}

// strictlyBelow reports whether path p is below directory dir, both clean
// and absolute (a mount point, a resolved bind): under, without cleaning
// them again for every pair.
func strictlyBelow(p, dir string) bool {
	if dir == "/" {
		return len(p) > 1
	}
	return len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

// readMounts is hostMounts (a test counts its calls).
var readMounts = hostMounts

// hostMounts reads every mount, and its type, from mountinfo.
func hostMounts() ([]hostMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ms []hostMount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - type source super
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, x := range fields {
			if x == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			continue
		}
		ms = append(ms, hostMount{at: unescapeMount(fields[4]), fstype: fields[sep+1]})
	}
	return ms, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
