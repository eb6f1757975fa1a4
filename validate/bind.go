package validate

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/policy"
)

// Custom reports whether a read-only bind is the policy's own, not one of
// the defaults every preset has (system directories, checked as written).
func Custom(src string) bool {
	for _, d := range policy.Defaults().FS.ReadOnly {
		if filepath.Clean(src) == d {
			return false
		}
	}
	return true
}

// HostBind resolves a policy's read-only bind on the host as the mount
// would: the directories above its last component with their symbolic
// links followed (its last, a link, becomes the same link in the jail). It
// refuses what a read-only bind would still let the program reach the host
// through: a kernel interface (/proc, /sys, /dev, or a file system of that
// kind, reached through a link or mounted below the bind), a unix socket or
// a FIFO (a read-only mount does not stop connect(2) or a write to a FIFO).
// The jail binds the path it returns.
func HostBind(src string) (string, error) {
	src = filepath.Clean(src)
	dir, err := filepath.EvalSymlinks(filepath.Dir(src))
	if err != nil {
		return "", fmt.Errorf("fs.ro entry %s: %w", src, unwrapPath(err))
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
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if m, err := kernelMountBelow(host); err != nil {
			return "", fmt.Errorf("fs.ro entry %s: %w", src, err)
		} else if m != "" {
			return "", fmt.Errorf("fs.ro entry %s holds %s: host kernel interfaces are never bound, and a bind takes the mounts below it along", src, m)
		}
	}
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

// kernelMountBelow names a mount of a kernel interface below dir (in this
// process's mount namespace, which the jail's init copies), or "".
func kernelMountBelow(dir string) (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
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
		at := unescapeMount(fields[4])
		if at != dir && under(at, dir) && kernelTypes[fields[sep+1]] {
			return at + " (" + fields[sep+1] + ")", nil
		}
	}
	return "", sc.Err()
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
