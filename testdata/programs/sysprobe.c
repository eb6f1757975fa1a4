// sysprobe calls each system call the default seccomp profile refuses and
// prints "name errno" for each, one per line: the test expects EPERM (ENOSYS
// for clone3, EOPNOTSUPP for preadv2's RWF_NOWAIT). Each has arguments the
// kernel would refuse otherwise (a descriptor of -1: EBADF), so that only the
// filter's answer is EPERM. With an argument it makes one kind of forbidden call that the
// filter kills: "int80" (the i386 ABI), "x32" and "x32sendmsg" (the x32 ABI).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <termios.h>
#include <unistd.h>

static void probe6(const char *name, long nr, long a0, long a1, long a2, long a3, long a4, long a5) {
	errno = 0;
	long r = syscall(nr, a0, a1, a2, a3, a4, a5);
	printf("%s %s\n", name, r == -1 ? strerrorname_np(errno) : "allowed");
}

static void probe(const char *name, long nr, long a0, long a1, long a2) {
	probe6(name, nr, a0, a1, a2, 0, 0, 0);
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "int80") == 0) {
		long r;
		// getpid through the i386 entry point (20 is getpid there).
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
		printf("int 0x80 returned %ld\n", r);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "cmdline") == 0) {
		// The jail's init blanks its command line (the supervisor's) before
		// the program starts: read it as early as a program can.
		char buf[4096];
		FILE *f = fopen("/proc/1/cmdline", "r");
		if (!f) {
			printf(errno == ENOENT ? "hidden\n" : "unreadable: %s\n", strerror(errno));
			return 0;
		}
		size_t n = fread(buf, 1, sizeof buf, f);
		for (size_t i = 0; i < n; i++)
			if (buf[i]) {
				printf("leaked\n");
				return 0;
			}
		printf("blank\n");
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "init") == 0) {
		// Every way to the init's memory (a copy of the supervisor's) that a
		// system call the filter allows could take.
		int fd = open("/proc/1/mem", O_RDWR);
		printf("open /proc/1/mem: %s\n", fd < 0 ? strerrorname_np(errno) : "opened");
		long pidfd = syscall(SYS_pidfd_open, 1, 0);
		printf("pidfd_open(1): %s\n", pidfd < 0 ? strerrorname_np(errno) : "opened");
		if (pidfd >= 0) {
			long r = syscall(SYS_pidfd_getfd, pidfd, 0, 0);
			printf("pidfd_getfd: %s\n", r < 0 ? strerrorname_np(errno) : "got a descriptor");
		}
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "x32") == 0) {
		long r = syscall(0x40000000L | SYS_getpid);
		printf("x32 returned %ld\n", r);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "x32sendmsg") == 0) { /* x32's own number, no x86-64 name */
		long r = syscall(0x40000000L | 518, 0, 0, 0);
		printf("x32 returned %ld\n", r);
		return 0;
	}
	probe("unshare(CLONE_NEWUSER)", SYS_unshare, CLONE_NEWUSER, 0, 0);
	probe("unshare(CLONE_NEWNET)", SYS_unshare, CLONE_NEWNET, 0, 0);
	probe("clone(CLONE_NEWPID)", SYS_clone, CLONE_NEWPID | SIGCHLD, 0, 0);
	probe("clone3", SYS_clone3, 0, 0, 0);
	probe("setns", SYS_setns, 0, 0, 0);
	probe("mount", SYS_mount, (long)"none", (long)"/tmp", (long)"tmpfs");
	probe("umount2", SYS_umount2, (long)"/tmp", 0, 0);
	probe("pivot_root", SYS_pivot_root, (long)"/tmp", (long)"/tmp", 0);
	probe("chroot", SYS_chroot, (long)"/tmp", 0, 0);
	probe("ptrace", SYS_ptrace, 0, 1, 0);
	probe("process_vm_readv", SYS_process_vm_readv, 1, 0, 0);
	probe("process_vm_writev", SYS_process_vm_writev, 1, 0, 0);
	probe("keyctl", SYS_keyctl, 0, 0, 0);
	probe("add_key", SYS_add_key, (long)"user", (long)"k", 0);
	probe("request_key", SYS_request_key, (long)"user", (long)"k", 0);
	probe("bpf", SYS_bpf, 0, 0, 0);
	probe("perf_event_open", SYS_perf_event_open, 0, 0, -1);
	probe("userfaultfd", SYS_userfaultfd, 0, 0, 0);
	probe("io_uring_setup", SYS_io_uring_setup, 1, 0, 0);
	probe("io_uring_enter", SYS_io_uring_enter, 0, 0, 0);
	probe("io_uring_register", SYS_io_uring_register, 0, 0, 0);
	probe("kexec_load", SYS_kexec_load, 0, 0, 0);
	probe("kexec_file_load", SYS_kexec_file_load, 0, 0, 0);
	probe("init_module", SYS_init_module, 0, 0, 0);
	probe("finit_module", SYS_finit_module, 0, 0, 0);
	probe("delete_module", SYS_delete_module, (long)"x", 0, 0);
	probe("iopl", SYS_iopl, 3, 0, 0);
	probe("ioperm", SYS_ioperm, 0, 1, 1);
	probe("swapon", SYS_swapon, (long)"/tmp/x", 0, 0);
	probe("swapoff", SYS_swapoff, (long)"/tmp/x", 0, 0);
	probe("reboot", SYS_reboot, 0, 0, 0);
	probe("syslog", SYS_syslog, 3, 0, 0);
	probe("acct", SYS_acct, 0, 0, 0);
	probe("settimeofday", SYS_settimeofday, 0, 0, 0);
	probe("clock_settime", SYS_clock_settime, 0, 0, 0);
	probe("open_by_handle_at", SYS_open_by_handle_at, 0, 0, 0);
	probe("name_to_handle_at", SYS_name_to_handle_at, 0, 0, 0);
	probe("personality(ADDR_NO_RANDOMIZE)", SYS_personality, 0x0040000, 0, 0);
	probe("ioctl(TIOCSTI)", SYS_ioctl, 0, TIOCSTI, (long)"x");
	probe("ioctl(TIOCSTI|high-bits)", SYS_ioctl, 0, 0x100000000L | TIOCSTI, (long)"x");
	probe("ioctl(TIOCLINUX)", SYS_ioctl, 0, TIOCLINUX, (long)"x");
	probe("socket(AF_PACKET)", SYS_socket, AF_PACKET, SOCK_RAW, 0);
	probe("socket(AF_VSOCK)", SYS_socket, AF_VSOCK, SOCK_STREAM, 0);
	probe("socket(AF_NETLINK)", SYS_socket, AF_NETLINK, SOCK_RAW, 0);
	int sv[2];
	probe("socketpair(AF_NETLINK)", SYS_socketpair, AF_NETLINK, SOCK_RAW, (long)sv);
	probe("prlimit64(1)", SYS_prlimit64, 1, RLIMIT_CPU, 0);
	probe("inotify_init1", SYS_inotify_init1, 0, 0, 0);
	probe("fanotify_init(FAN_REPORT_FID)", SYS_fanotify_init, 0x200, O_RDONLY, 0);
	probe("fanotify_mark", SYS_fanotify_mark, 0, 0, 0);
	probe("fcntl(F_NOTIFY)", SYS_fcntl, 0, F_NOTIFY, 0);
	probe("fcntl(F_NOTIFY|high-bits)", SYS_fcntl, 0, 0x100000000L | F_NOTIFY, 0);
	probe6("preadv2(RWF_NOWAIT)", SYS_preadv2, -1, 0, 1, 0, 0, RWF_NOWAIT);
	probe6("fadvise64(POSIX_FADV_DONTNEED)", SYS_fadvise64, -1, 0, 0, POSIX_FADV_DONTNEED, 0, 0);
	probe6("fadvise64(POSIX_FADV_DONTNEED|high-bits)", SYS_fadvise64, -1, 0, 0, 0x100000000L | POSIX_FADV_DONTNEED, 0, 0);
	probe("cachestat", 451, -1, 0, 0);
	return 0;
}
