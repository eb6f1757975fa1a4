package seccomp

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The kernel's seccomp return values (seccomp(2)).
const (
	retAllow  = 0x7fff0000
	retErrno  = 0x00050000
	retNotify = 0x7fc00000
	retLog    = 0x7ffc0000
	retTrap   = 0x00030000

	archX8664 = 0xc000003e // AUDIT_ARCH_X86_64
	archI386  = 0x40000003 // AUDIT_ARCH_I386
	x32Bit    = 0x40000000 // __X32_SYSCALL_BIT
)

// run interprets prog over one seccomp_data. x/net/bpf loads words in
// network (big endian) order, the kernel in native order: each 32-bit word
// of seccomp_data is written big endian, the low word of a 64-bit field
// first, as a little-endian kernel lays it out.
func run(t *testing.T, prog []unix.SockFilter, arch uint32, nr int, args ...uint64) uint32 {
	t.Helper()
	raw := make([]bpf.RawInstruction, len(prog))
	for i, in := range prog {
		raw[i] = bpf.RawInstruction{Op: in.Code, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	insns, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("the filter does not disassemble")
	}
	vm, err := bpf.NewVM(insns)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[0:], uint32(nr))
	binary.BigEndian.PutUint32(data[4:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(data[16+8*i:], uint32(a))
		binary.BigEndian.PutUint32(data[20+8*i:], uint32(a>>32))
	}
	out, err := vm.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(out)
}

func TestDefaultProfileOffline(t *testing.T) {
	prog, src, err := Load(mustSpec(t))
	if err != nil || src != FromEmbedded {
		t.Fatalf("load: %v (%s)", err, src)
	}
	eperm := uint32(retErrno | unix.EPERM)
	tests := []struct {
		name string
		arch uint32
		nr   int
		args []uint64
		want uint32
	}{
		{"read is allowed", archX8664, unix.SYS_READ, nil, retAllow},
		{"execve is allowed", archX8664, unix.SYS_EXECVE, nil, retAllow},
		{"a plain fork-like clone", archX8664, unix.SYS_CLONE, []uint64{uint64(unix.SIGCHLD)}, retAllow},
		{"a thread clone", archX8664, unix.SYS_CLONE, []uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD | unix.CLONE_SYSVSEM | unix.CLONE_SETTLS | unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID}, retAllow},
		{"clone with CLONE_NEWUSER", archX8664, unix.SYS_CLONE, []uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, eperm},
		{"clone with CLONE_NEWNET", archX8664, unix.SYS_CLONE, []uint64{unix.CLONE_NEWNET}, eperm},
		{"clone3 answers ENOSYS", archX8664, unix.SYS_CLONE3, nil, retErrno | uint32(unix.ENOSYS)},
		{"unshare of files only", archX8664, unix.SYS_UNSHARE, []uint64{unix.CLONE_FILES}, retAllow},
		{"unshare with CLONE_NEWNS", archX8664, unix.SYS_UNSHARE, []uint64{unix.CLONE_NEWNS}, eperm},
		{"unshare with CLONE_NEWTIME", archX8664, unix.SYS_UNSHARE, []uint64{unix.CLONE_NEWTIME}, eperm},
		{"mount", archX8664, unix.SYS_MOUNT, nil, eperm},
		{"fsopen", archX8664, unix.SYS_FSOPEN, nil, eperm},
		{"ptrace", archX8664, unix.SYS_PTRACE, nil, eperm},
		{"process_vm_readv", archX8664, unix.SYS_PROCESS_VM_READV, nil, eperm},
		{"keyctl", archX8664, unix.SYS_KEYCTL, nil, eperm},
		{"bpf", archX8664, unix.SYS_BPF, nil, eperm},
		{"io_uring_setup", archX8664, unix.SYS_IO_URING_SETUP, nil, eperm},
		{"userfaultfd", archX8664, unix.SYS_USERFAULTFD, nil, eperm},
		{"io_setup answers ENOSYS (the host's AIO pool)", archX8664, unix.SYS_IO_SETUP, nil, retErrno | uint32(unix.ENOSYS)},
		{"io_submit is allowed (no context without io_setup)", archX8664, unix.SYS_IO_SUBMIT, nil, retAllow},
		{"perf_event_open", archX8664, unix.SYS_PERF_EVENT_OPEN, nil, eperm},
		{"preadv2 with RWF_NOWAIT answers EOPNOTSUPP (the page cache)", archX8664, unix.SYS_PREADV2, []uint64{3, 0, 1, 0, 0, unix.RWF_NOWAIT}, retErrno | uint32(unix.EOPNOTSUPP)},
		{"preadv2 with RWF_NOWAIT among other flags", archX8664, unix.SYS_PREADV2, []uint64{3, 0, 1, 0, 0, unix.RWF_HIPRI | unix.RWF_NOWAIT}, retErrno | uint32(unix.EOPNOTSUPP)},
		{"preadv2 without flags", archX8664, unix.SYS_PREADV2, []uint64{3, 0, 1, 0, 0, 0}, retAllow},
		{"preadv2 with RWF_HIPRI", archX8664, unix.SYS_PREADV2, []uint64{3, 0, 1, 0, 0, unix.RWF_HIPRI}, retAllow},
		{"pwritev2 with RWF_NOWAIT", archX8664, unix.SYS_PWRITEV2, []uint64{3, 0, 1, 0, 0, unix.RWF_NOWAIT}, retAllow},
		{"fadvise64 POSIX_FADV_DONTNEED", archX8664, unix.SYS_FADVISE64, []uint64{3, 0, 0, unix.FADV_DONTNEED}, eperm},
		{"fadvise64 POSIX_FADV_DONTNEED with high bits set", archX8664, unix.SYS_FADVISE64, []uint64{3, 0, 0, 1<<32 | unix.FADV_DONTNEED}, eperm},
		{"fadvise64 POSIX_FADV_RANDOM", archX8664, unix.SYS_FADVISE64, []uint64{3, 0, 0, unix.FADV_RANDOM}, retAllow},
		{"fadvise64 POSIX_FADV_WILLNEED", archX8664, unix.SYS_FADVISE64, []uint64{3, 0, 0, unix.FADV_WILLNEED}, retAllow},
		{"cachestat", archX8664, unix.SYS_CACHESTAT, nil, eperm},
		{"open_by_handle_at", archX8664, unix.SYS_OPEN_BY_HANDLE_AT, nil, eperm},
		{"kexec_load", archX8664, unix.SYS_KEXEC_LOAD, nil, eperm},
		{"iopl", archX8664, unix.SYS_IOPL, nil, eperm},
		{"reboot", archX8664, unix.SYS_REBOOT, nil, eperm},
		{"ioctl TIOCSTI", archX8664, unix.SYS_IOCTL, []uint64{0, unix.TIOCSTI}, eperm},
		{"ioctl TIOCSTI with the high 32 bits set", archX8664, unix.SYS_IOCTL, []uint64{0, 0xdeadbeef_00000000 | unix.TIOCSTI}, eperm},
		{"ioctl TIOCLINUX", archX8664, unix.SYS_IOCTL, []uint64{0, unix.TIOCLINUX}, eperm},
		{"ioctl TIOCLINUX with the high 32 bits set", archX8664, unix.SYS_IOCTL, []uint64{0, 1<<32 | unix.TIOCLINUX}, eperm},
		{"ioctl TCGETS", archX8664, unix.SYS_IOCTL, []uint64{0, unix.TCGETS}, retAllow},
		{"socket AF_UNIX", archX8664, unix.SYS_SOCKET, []uint64{unix.AF_UNIX}, retAllow},
		{"socket AF_INET", archX8664, unix.SYS_SOCKET, []uint64{unix.AF_INET}, retAllow},
		{"socket AF_INET6", archX8664, unix.SYS_SOCKET, []uint64{unix.AF_INET6}, retAllow},
		{"socket AF_PACKET", archX8664, unix.SYS_SOCKET, []uint64{unix.AF_PACKET}, eperm},
		{"socket AF_NETLINK", archX8664, unix.SYS_SOCKET, []uint64{unix.AF_NETLINK}, eperm},
		{"socket AF_VSOCK", archX8664, unix.SYS_SOCKET, []uint64{unix.AF_VSOCK}, eperm},
		{"socket AF_UNSPEC", archX8664, unix.SYS_SOCKET, []uint64{unix.AF_UNSPEC}, eperm},
		{"socket AF_AX25", archX8664, unix.SYS_SOCKET, []uint64{unix.AF_AX25}, eperm},
		{"socket AF_INET with high bits set", archX8664, unix.SYS_SOCKET, []uint64{1<<32 | unix.AF_INET}, eperm},
		{"socketpair AF_UNIX", archX8664, unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX}, retAllow},
		{"socketpair AF_NETLINK", archX8664, unix.SYS_SOCKETPAIR, []uint64{unix.AF_NETLINK}, eperm},
		{"prlimit64 on itself", archX8664, unix.SYS_PRLIMIT64, []uint64{0}, retAllow},
		{"prlimit64 on pid 1", archX8664, unix.SYS_PRLIMIT64, []uint64{1}, eperm},
		{"inotify_init1", archX8664, unix.SYS_INOTIFY_INIT1, nil, eperm},
		{"fanotify_init", archX8664, unix.SYS_FANOTIFY_INIT, []uint64{unix.FAN_CLASS_NOTIF | unix.FAN_REPORT_FID}, eperm},
		{"fanotify_mark", archX8664, unix.SYS_FANOTIFY_MARK, nil, eperm},
		{"fcntl F_NOTIFY", archX8664, unix.SYS_FCNTL, []uint64{0, unix.F_NOTIFY}, eperm},
		{"fcntl F_NOTIFY with high bits set", archX8664, unix.SYS_FCNTL, []uint64{0, 1<<32 | unix.F_NOTIFY}, eperm},
		{"fcntl F_GETFL", archX8664, unix.SYS_FCNTL, []uint64{0, unix.F_GETFL}, retAllow},
		{"personality(PER_LINUX)", archX8664, unix.SYS_PERSONALITY, []uint64{0}, retAllow},
		{"personality(PER_LINUX32)", archX8664, unix.SYS_PERSONALITY, []uint64{8}, retAllow},
		{"personality(UNAME26|PER_LINUX32)", archX8664, unix.SYS_PERSONALITY, []uint64{0x20008}, retAllow},
		{"personality(ADDR_NO_RANDOMIZE)", archX8664, unix.SYS_PERSONALITY, []uint64{0x0040000}, eperm},
		{"personality(READ_IMPLIES_EXEC)", archX8664, unix.SYS_PERSONALITY, []uint64{0x0400000}, eperm},
		{"personality with high bits", archX8664, unix.SYS_PERSONALITY, []uint64{1 << 32}, eperm},
		{"personality(UNAME26)", archX8664, unix.SYS_PERSONALITY, []uint64{0x20000}, retAllow},
		{"personality(bit 0)", archX8664, unix.SYS_PERSONALITY, []uint64{0x1}, eperm},
		{"personality(bit 4)", archX8664, unix.SYS_PERSONALITY, []uint64{0x10}, eperm},
		{"personality(bit 16)", archX8664, unix.SYS_PERSONALITY, []uint64{0x10000}, eperm},
		{"personality(bit 31)", archX8664, unix.SYS_PERSONALITY, []uint64{0x80000000}, eperm},
		{"personality(0xffffffff), the query", archX8664, unix.SYS_PERSONALITY, []uint64{0xffffffff}, eperm},
		{"i386 int 0x80 (exit) goes to the supervisor", archI386, 1, nil, retNotify},
		{"i386 int 0x80 (setuid32)", archI386, 213, nil, retNotify},
		{"x32 read goes to the supervisor", archX8664, x32Bit | unix.SYS_READ, nil, retNotify},
		{"x32 mount", archX8664, x32Bit | unix.SYS_MOUNT, nil, retNotify},
	}
	spec := mustSpec(t)
	for _, tc := range tests {
		if got := run(t, prog, tc.arch, tc.nr, tc.args...); got != tc.want {
			t.Errorf("%s: got %#x, want %#x", tc.name, got, tc.want)
		}
		// Log mode's evaluator reads the rules as the filter does.
		if tc.arch == archX8664 && tc.nr&x32Bit == 0 {
			var args [6]uint64
			copy(args[:], tc.args)
			action, errno, _ := spec.Decide(tc.nr, args)
			want := map[string]uint32{"allow": retAllow, "errno": retErrno | uint32(errno)}[action]
			if want != tc.want {
				t.Errorf("%s: Decide says %s %d, the filter %#x", tc.name, action, errno, tc.want)
			}
		}
	}
}

func mustSpec(t *testing.T) Spec {
	t.Helper()
	spec, err := SpecOf(defaultsSeccomp())
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// Without $HOME or $XDG_CACHE_HOME (a clean environment), the cache is in
// the home the password database gives, not nowhere.
func TestCacheDirWithoutHome(t *testing.T) {
	home := passwdHome(os.Geteuid())
	if home == "" {
		t.Skip("this user has no home in /etc/passwd")
	}
	t.Setenv("HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	want := filepath.Join(home, ".cache", "gojail", "seccomp")
	fd, got := cacheDir()
	if fd >= 0 {
		unix.Close(fd)
	}
	if _, err := os.Stat(home); err != nil {
		want = "" // a home that does not exist (nobody's) keeps no cache
	}
	if got != want {
		t.Fatalf("cacheDir() = %q without HOME, want %q", got, want)
	}
}

// The cache directory is reached without following a symbolic link, and
// only through directories no one else can change.
func TestOpenTrusted(t *testing.T) {
	base := t.TempDir() // below /tmp, which is sticky
	if fd, err := openTrusted(filepath.Join(base, "a", "b")); err != nil {
		t.Fatalf("a fresh path: %v", err)
	} else {
		unix.Close(fd)
	}
	os.Mkdir(filepath.Join(base, "elsewhere"), 0o700)
	os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(base, "link"))
	if fd, err := openTrusted(filepath.Join(base, "link", "seccomp")); err == nil {
		unix.Close(fd)
		t.Errorf("a path through a symbolic link was trusted")
	}
	if _, err := os.Stat(filepath.Join(base, "elsewhere", "seccomp")); err == nil {
		t.Errorf("a directory was made through a symbolic link")
	}
	shared := filepath.Join(base, "shared")
	os.Mkdir(shared, 0o700)
	os.Chmod(shared, 0o777)
	if fd, err := openTrusted(filepath.Join(shared, "seccomp")); err == nil {
		unix.Close(fd)
		t.Errorf("a path through a directory anyone can write was trusted")
	}
	if fd, err := openTrusted(shared); err == nil {
		unix.Close(fd)
		t.Errorf("a cache directory anyone can write was trusted")
	}
	if os.Geteuid() == 0 {
		other := filepath.Join(base, "other")
		os.Mkdir(other, 0o755)
		os.Chown(other, 65534, 65534)
		if fd, err := openTrusted(filepath.Join(other, "seccomp")); err == nil {
			unix.Close(fd)
			t.Errorf("a path through another user's directory was trusted")
		}
	}
}

// A cached filter is read back only under the key it was stored for: one
// renamed to another policy's key (a weaker filter for a stricter policy)
// is not taken.
func TestCacheKeyChecked(t *testing.T) {
	dir, err := openTrusted(filepath.Join(t.TempDir(), "seccomp"))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dir)
	raw := []byte("a compiled filter")
	store(dir, "weak", raw)
	if got, err := readTrusted(dir, "weak"); err != nil || string(got) != string(raw) {
		t.Fatalf("read back %q, %v", got, err)
	}
	if err := unix.Renameat(dir, "weak.bpf", dir, "strict.bpf"); err != nil {
		t.Fatal(err)
	}
	if got, err := readTrusted(dir, "strict"); err == nil {
		t.Fatalf("a file renamed to another key was read as its filter: %q", got)
	}
}

// The instructions ahead of a filter allow the jail's own sendmsg on its
// fixed descriptor, of the native ABI, and send everything else on to the
// filter: the same number and descriptor from i386 or x32, another
// descriptor, a descriptor with high bits.
func TestWithSetupSend(t *testing.T) {
	const fd = 256
	deny := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | 1}}
	prog := WithSetupSend(deny, fd)
	if len(prog) != setupSendLen+1 {
		t.Fatalf("%d instructions ahead, want %d", len(prog)-1, setupSendLen)
	}
	for _, tc := range []struct {
		name string
		arch uint32
		nr   int
		arg0 uint64
		want uint32
	}{
		{"sendmsg on the descriptor", archX8664, 46, fd, retAllow},
		{"sendmsg on another", archX8664, 46, 3, unix.SECCOMP_RET_ERRNO | 1},
		{"sendmsg with high bits set", archX8664, 46, 1<<32 | fd, unix.SECCOMP_RET_ERRNO | 1},
		{"x32's sendmsg", archX8664, 46 | x32Bit, fd, unix.SECCOMP_RET_ERRNO | 1},
		{"i386's number 46 (setgid)", archI386, 46, fd, unix.SECCOMP_RET_ERRNO | 1},
		{"another call", archX8664, 1, fd, unix.SECCOMP_RET_ERRNO | 1},
	} {
		if got := run(t, prog, tc.arch, tc.nr, tc.arg0); got != tc.want {
			t.Errorf("%s: %#x, want %#x", tc.name, got, tc.want)
		}
	}
	big := make([]unix.SockFilter, 4096-setupSendLen+1)
	if err := fits(big); err == nil {
		t.Errorf("a filter of %d instructions fits, with %d ahead of it", len(big), setupSendLen)
	}
	if err := fits(big[1:]); err != nil {
		t.Errorf("a filter of %d instructions: %v", len(big)-1, err)
	}
}
