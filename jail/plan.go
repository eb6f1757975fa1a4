package jail

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/policy"
	"github.com/gojail/gojail/validate"
)

// opKind is what one step of building the jail's file system does. Every
// path is relative to the new root, so nothing outside it is touched.
type opKind uint32

const (
	opMkdir   opKind = iota + 1 // mkdirat(root, path, mode)
	opSymlink                   // symlinkat(src, root, path)
	opFile                      // create path (O_EXCL|O_NOFOLLOW) and write data
	opBind                      // clone the host tree src (open_tree) onto path
	opFS                        // a new file system of type src (fsopen) onto path
	// opProc: the jail's proc, which its init made before the root (see
	// childInit) onto path, and with opts a proc of those options over it.
	opProc
)

// fsOpt is one fsconfig key=value of a new file system.
type fsOpt struct {
	key, val *byte
}

// mountOp is one step of building the root, prepared before the fork as
// C strings so that the child only makes system calls.
type mountOp struct {
	kind   opKind
	path   *byte // target, relative to the new root
	src    *byte // bind source, link target, or file system type
	isFile bool  // the bind target is a file, not a directory
	// noLinks: a policy's own bind, whose source (resolved when checked,
	// validate.HostBind) is opened following no link at all, so that a
	// directory swapped for a link since cannot redirect it.
	noLinks bool
	attr    uint64 // MOUNT_ATTR_* to set (recursively, for binds)
	// dev and ino: a policy's own bind's source as it was checked
	// (validate.Binds.Identity), which what the child opens must still be.
	dev, ino uint64
	// recursive: the bind takes the mounts below its source along (the
	// system's directories; a policy's own where it had mounts below it
	// when checked, validate.Binds.MountsBelow).
	recursive bool
	opts      []fsOpt // fsconfig options of opFS and opProc
	data      []byte  // contents of opFile
	mode      uint32

	desc string // for error messages and --debug; unused by the child
}

// buildMounts turns the policy into the ordered steps that build the root.
// code is the submitted file, written into the work directory (nil: none).
func buildMounts(p *policy.Policy, code []byte) ([]mountOp, error) {
	b := &mountBuilder{made: map[string]bool{".": true}, bound: map[string]bool{}}
	const roBind = unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV

	// Read-only binds of host paths, parents before children.
	ro := append([]string(nil), p.FS.ReadOnly...)
	sort.Strings(ro)
	var binds validate.Binds // the mount table read once, for all of them
	for _, src := range ro {
		src = filepath.Clean(src)
		if validate.MadeByJail(src) {
			return nil, validate.OwnFileBind(src) // /etc/passwd, say: the jail's own
		}
		st, err := os.Lstat(src)
		if err != nil {
			return nil, fmt.Errorf("fs.ro %s: %w", src, err)
		}
		rel := strings.TrimPrefix(src, "/")
		b.parents(rel)
		switch {
		case st.Mode()&os.ModeSymlink != 0 && b.inBind(filepath.Dir(rel)):
			// A link inside a bound directory is there already.
			continue
		case st.Mode()&os.ModeSymlink != 0:
			// /bin -> usr/bin on merged-/usr systems: the same link in the jail.
			target, err := os.Readlink(src)
			if err != nil {
				return nil, fmt.Errorf("fs.ro %s: %w", src, err)
			}
			b.add(mountOp{kind: opSymlink, path: cstr(rel), src: cstr(target), desc: "/" + rel + " -> " + target})
		default:
			from, custom := src, validate.Custom(src)
			if custom {
				// The host path the mount would reach, its directories'
				// links followed now (validate.HostBind checked it).
				if from, err = binds.HostBind(src); err != nil {
					return nil, err
				}
			}
			op := mountOp{kind: opBind, path: cstr(rel), src: cstr(from), isFile: !st.IsDir(), attr: roBind, noLinks: custom, recursive: !custom, desc: src + " (read-only)"}
			if custom {
				op.recursive = st.IsDir() && binds.MountsBelow(from)
				var ok bool
				if op.dev, op.ino, ok = binds.Identity(from); !ok {
					return nil, fmt.Errorf("fs.ro %s: not checked", src)
				}
			}
			b.add(op)
			if st.IsDir() {
				b.bound[rel] = true
			}
		}
		b.made[rel] = true
	}

	// /etc holds only what the policy binds, plus a passwd, group and hosts
	// that name the jail's own user and host, never the host's (which no
	// bind replaces: see above).
	b.dir("etc", 0o755)
	for name, text := range map[string]string{
		"etc/passwd": fmt.Sprintf("root:x:0:0:root:/root:/bin/sh\nsandbox:x:%d:%d:sandbox:%s:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n", p.Run.UID, p.Run.GID, p.Run.Workdir),
		"etc/group":  fmt.Sprintf("root:x:0:\nsandbox:x:%d:\nnogroup:x:65534:\n", p.Run.GID),
		"etc/hosts":  fmt.Sprintf("127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.1.1\t%s\n", p.Run.Hostname),
	} {
		b.add(mountOp{kind: opFile, path: cstr(name), data: []byte(text), mode: 0o444, desc: "/" + name})
	}

	// A minimal /dev: the harmless character devices bound from the host
	// (a user namespace cannot mknod), links into /proc, and a private shm.
	b.dir("dev", 0o755)
	for _, d := range []string{"null", "zero", "full", "random", "urandom"} {
		b.add(mountOp{kind: opBind, path: cstr("dev/" + d), src: cstr("/dev/" + d), isFile: true,
			attr: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC, desc: "/dev/" + d})
	}
	for link, target := range map[string]string{"dev/fd": "/proc/self/fd", "dev/stdin": "/proc/self/fd/0", "dev/stdout": "/proc/self/fd/1", "dev/stderr": "/proc/self/fd/2"} {
		b.add(mountOp{kind: opSymlink, path: cstr(link), src: cstr(target), desc: "/" + link})
	}
	// POSIX shared memory and semaphores (shm_open, multiprocessing) live
	// in /dev/shm: here it is /tmp, which has the same size cap.
	b.add(mountOp{kind: opSymlink, path: cstr("dev/shm"), src: cstr("../tmp"), desc: "/dev/shm -> ../tmp"})

	// A fresh /proc of the jail's own pid namespace (nsjail PR 283: never
	// without nosuid, nodev, noexec).
	b.dir("proc", 0o555)
	procOpts := []fsOpt(nil)
	if p.FS.Proc == policy.ProcPid {
		procOpts = append(procOpts, fsOpt{cstr("subset"), cstr("pid")})
	}
	b.add(mountOp{kind: opProc, path: cstr("proc"), src: cstr("proc"), opts: procOpts,
		attr: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC, desc: "/proc"})
	// Rootless, the jail's processes are the caller's user on the host, and
	// /proc/keys lists every key that user can view, those of the caller's
	// other processes too (their descriptions: keyctl, which would read
	// them, is refused), and /proc/key-users its key counts. Both read as
	// empty here. As root each jail is a host user of its own (userns.go),
	// which holds no key the jail did not make.
	if p.FS.Proc != policy.ProcPid && os.Geteuid() != 0 {
		for _, f := range []string{"proc/keys", "proc/key-users"} {
			b.add(mountOp{kind: opBind, path: cstr(f), src: cstr("/dev/null"), isFile: true,
				attr: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC, desc: "/" + f + " (empty)"})
		}
	}

	// Writable scratch space, each a tmpfs with a size and inode cap.
	b.tmpfs("tmp", p.Limits.TmpSize, p.Limits.Inodes, 0o1777, 0)
	work := strings.TrimPrefix(filepath.Clean(p.Run.Workdir), "/")
	b.parents(work)
	b.tmpfs(work, p.Limits.WorkSize, p.Limits.Inodes, 0o755, 0)
	if code != nil {
		mode := uint32(0o644)
		if p.Run.Binary {
			mode = 0o755
		}
		name := work + "/" + p.Run.File
		b.add(mountOp{kind: opFile, path: cstr(name), data: code, mode: mode, desc: "/" + name})
		// Then bound read-only onto itself. The init writes it, outside
		// the jail's cgroup, so its pages are not the jail's memory: the
		// program, which owns it, could otherwise map it and write up to
		// limits.code_size there uncounted. A mount point cannot be
		// removed or renamed either, and the mount cannot be undone from a
		// namespace the program could make (it would be locked there).
		b.add(mountOp{kind: opBind, path: cstr(name), src: cstr(name), isFile: true,
			attr: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV, desc: "/" + name + " (read-only)"})
	}
	return b.ops, nil
}

type mountBuilder struct {
	ops   []mountOp
	made  map[string]bool
	bound map[string]bool // directories bound from the host
}

func (b *mountBuilder) add(op mountOp) { b.ops = append(b.ops, op) }

// parents creates every missing directory above rel; none inside a bind,
// whose directories come from the host.
func (b *mountBuilder) parents(rel string) {
	dir := filepath.Dir(rel)
	if b.made[dir] || b.inBind(dir) {
		return
	}
	b.parents(dir)
	b.dir(dir, 0o755)
}

// inBind reports whether rel is inside a directory bound from the host.
func (b *mountBuilder) inBind(rel string) bool {
	for d := rel; d != "."; d = filepath.Dir(d) {
		if b.bound[d] {
			return true
		}
	}
	return false
}

func (b *mountBuilder) dir(rel string, mode uint32) {
	if b.made[rel] {
		return
	}
	b.made[rel] = true
	b.add(mountOp{kind: opMkdir, path: cstr(rel), mode: mode, desc: "/" + rel})
}

// tmpfs mounts a size-capped tmpfs at rel; nosuid and nodev always.
func (b *mountBuilder) tmpfs(rel string, size policy.Size, inodes int, mode uint32, attr uint64) {
	b.made[rel] = true
	b.add(mountOp{kind: opFS, path: cstr(rel), src: cstr("tmpfs"), opts: tmpfsOpts(size, inodes, mode),
		attr: attr | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV, desc: "/" + rel + " (tmpfs " + size.String() + ")"})
}

func tmpfsOpts(size policy.Size, inodes int, mode uint32) []fsOpt {
	return []fsOpt{
		{cstr("size"), cstr(strconv.FormatInt(int64(size), 10))},
		{cstr("nr_inodes"), cstr(strconv.Itoa(inodes))},
		{cstr("mode"), cstr(strconv.FormatUint(uint64(mode), 8))},
	}
}

// cstr makes a NUL-terminated copy of s for the child's system calls.
// Validation has refused NUL bytes in every string that reaches here.
func cstr(s string) *byte {
	p, err := syscall.BytePtrFromString(s)
	if err != nil {
		panic("BUG(gojail): NUL byte in " + strconv.Quote(s) + " passed validation")
	}
	return p
}

// cstrv makes a NULL-terminated array of C strings (argv, envp).
func cstrv(ss []string) []*byte {
	v := make([]*byte, len(ss)+1)
	for i, s := range ss {
		v[i] = cstr(s)
	}
	return v
}
