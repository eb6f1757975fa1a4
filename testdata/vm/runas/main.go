// Command runas runs a program as another user: the VM's init (see
// testdata/vm/init) runs gojail's tests as nobody with it. busybox, the
// VM's userland, has no setpriv --reuid and its su wants a passwd file.
//
// Usage: runas UID:GID PROGRAM [ARG...]
//
// It must start as root. It drops every supplementary group, sets the real,
// effective and saved group and user IDs (the kernel then clears the
// capabilities), checks that root cannot be regained, and executes PROGRAM
// (looked up in PATH when it has no slash) with the same environment.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	if len(os.Args) < 3 {
		fail("usage: runas UID:GID PROGRAM [ARG...]")
	}
	u, g, ok := strings.Cut(os.Args[1], ":")
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if !ok || err1 != nil || err2 != nil || uid <= 0 || gid <= 0 {
		fail("runas: %q is not UID:GID of an unprivileged user", os.Args[1])
	}
	prog, err := exec.LookPath(os.Args[2])
	if err != nil {
		fail("runas: %v", err)
	}
	// Groups and group ID first: once the user ID is not root, neither may
	// change. Go applies these to every thread of the process.
	if err := syscall.Setgroups(nil); err != nil {
		fail("runas: setgroups: %v", err)
	}
	if err := syscall.Setresgid(gid, gid, gid); err != nil {
		fail("runas: setresgid %d: %v", gid, err)
	}
	if err := syscall.Setresuid(uid, uid, uid); err != nil {
		fail("runas: setresuid %d: %v", uid, err)
	}
	if syscall.Setuid(0) == nil || os.Getuid() != uid || os.Geteuid() != uid || os.Getgid() != gid || os.Getegid() != gid {
		fail("runas: privileges were not dropped")
	}
	if groups, err := os.Getgroups(); err != nil || len(groups) != 0 {
		fail("runas: supplementary groups left: %v %v", groups, err)
	}
	err = syscall.Exec(prog, os.Args[2:], os.Environ())
	fail("runas: exec %s: %v", prog, err)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(127)
}
