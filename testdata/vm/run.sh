#!/usr/bin/env bash
# Runs gojail's cgroup tests in a small VM whose cgroups are v2 (unified).
#
# Why a VM: a host's controllers belong to one cgroup version at a time (the
# CI host binds them to v1), so the v2 code path can only be tested under
# another kernel. The VM is Debian's own kernel, booted by qemu with software
# emulation (TCG: /dev/kvm cannot be relied on), with an initramfs of
# busybox-static and static builds of gojail, its test binary, hog and runas
# (testdata/vm/runas). Its init (testdata/vm/init) mounts cgroup2 alone on
# /sys/fs/cgroup, runs the tests as root, then again as nobody (uid/gid
# 65534) in a cgroup subtree delegated to it as systemd delegates one, so
# that the rootless cgroup v2 path is tested too, and prints a verdict line
# on the serial console (PASS only when both runs pass).
#
# Usage: testdata/vm/run.sh            (from anywhere; the repo is found from
#                                       this file's place)
# Environment:
#   GO                  the go command (default: go on PATH, else /usr/local/go/bin/go)
#   GOJAIL_VM_TESTS     the -test.run pattern (default: the cgroup tests)
#   GOJAIL_VM_TIMEOUT   seconds before the VM is killed and the run fails (300)
#   GOJAIL_VM_CACHE     where the kernel is kept between runs
#                       (root: /var/cache/gojail-vm, else $XDG_CACHE_HOME/gojail-vm)
#   GOJAIL_VM_KERNEL    a kernel image to boot instead of Debian's (skips the download)
#   GOJAIL_VM_MEM, GOJAIL_VM_CPUS   the VM's memory (1024M) and CPUs (2)
#   GOJAIL_VM_LOG       a file to copy the whole serial console to
# Exit status: 0 only when the VM printed "GOJAIL-VM-RESULT: PASS".
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
tests=${GOJAIL_VM_TESTS:-'TestMemoryLimit|TestCPULimitOfTheTree|TestForkBomb|TestCgroupsLeftBehind|TestEnclosingCgroupCap|TestOOMScoreFloor|TestRootIsolationShell|TestEarlyCgroupDirs'}
vm_timeout=${GOJAIL_VM_TIMEOUT:-300}
mem=${GOJAIL_VM_MEM:-1024M}
cpus=${GOJAIL_VM_CPUS:-2}
if [ "$(id -u)" = 0 ]; then
	cache=${GOJAIL_VM_CACHE:-/var/cache/gojail-vm}
else
	cache=${GOJAIL_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gojail-vm}
fi
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}

log() { echo "test-cgroup2: $*" >&2; }
die() { log "$*"; exit 1; }

# --- 1. Packages -------------------------------------------------------------
# qemu-system-x86 boots the VM; busybox-static is the VM's whole userland
# (and its cpio writes the initramfs, so no cpio package is needed). The
# dynamic "busybox" package also provides /bin/busybox, so ask dpkg for the
# static one by name rather than looking for the file.
missing=""
command -v qemu-system-x86_64 >/dev/null || missing="$missing qemu-system-x86"
dpkg-query -W -f='${Status}\n' busybox-static 2>/dev/null | grep -q 'ok installed' || missing="$missing busybox-static"
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		die "missing packages:$missing; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing"
	fi
	log "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# --no-install-recommends: qemu's recommends (GUI, OVMF, qemu-utils) are
	# not needed to boot a kernel on a serial console.
	# shellcheck disable=SC2086 # $missing is a list of package names
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
command -v "$GO" >/dev/null || die "Go is not installed (GO=$GO): see https://go.dev/doc/install"
busybox=/bin/busybox

work=$(mktemp -d "${TMPDIR:-/tmp}/gojail-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT # so that the EXIT trap cleans up on Ctrl-C too
trap 'exit 143' TERM

# --- 2. Kernel ---------------------------------------------------------------
# Debian's generic kernel has everything built in that the VM needs (8250
# serial console, tmpfs, devtmpfs, cgroup2 with memory, pids and cpu), so no
# modules are loaded. The metapackage linux-image-amd64 names the current
# image package; only its vmlinuz is kept, in the cache, under the image's
# name, so that a second run does not download again.
# shellcheck disable=SC2012 # our own file names
latest_cached() { ls -1 "$cache"/vmlinuz-* 2>/dev/null | sort -V | tail -n 1 || true; }
image_pkg() { apt-cache depends linux-image-amd64 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-/ {print $2; exit}'; }
fetch_kernel() { # $1: image package, e.g. linux-image-6.1.0-56-amd64
	local pkg=$1 dl="$work/deb"
	mkdir -p "$dl" "$cache"
	# apt downloads as the unprivileged _apt user when it can; it cannot
	# write into a private temp dir, so let root do it without the warning.
	(cd "$dl" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "$pkg" >/dev/null) || return 1
	dpkg-deb --fsys-tarfile "$dl"/"$pkg"_*.deb | tar -xO "./boot/vmlinuz-${pkg#linux-image-}" >"$cache/.vmlinuz.tmp" || return 1
	mv "$cache/.vmlinuz.tmp" "$cache/vmlinuz-${pkg#linux-image-}"
	# Kernels that Debian has since replaced are not needed any more.
	find "$cache" -maxdepth 1 -name "vmlinuz-*" ! -name "vmlinuz-${pkg#linux-image-}" -delete
	rm -rf "$dl"
}
if [ -n "${GOJAIL_VM_KERNEL:-}" ]; then
	kernel=$GOJAIL_VM_KERNEL
else
	pkg=$(image_pkg || true)
	if [ -z "$pkg" ] && [ "$(id -u)" = 0 ]; then
		apt-get update -qq && pkg=$(image_pkg || true) # a machine that never ran apt-get update
	fi
	if [ -n "$pkg" ] && [ -s "$cache/vmlinuz-${pkg#linux-image-}" ]; then
		kernel="$cache/vmlinuz-${pkg#linux-image-}"
	elif [ -n "$pkg" ]; then
		log "downloading $pkg into $cache"
		if ! fetch_kernel "$pkg"; then
			# Stale package lists name a version the mirror no longer has.
			[ "$(id -u)" = 0 ] || die "cannot download $pkg: run apt-get update, then this again"
			apt-get update -qq
			pkg=$(image_pkg)
			fetch_kernel "$pkg" || die "cannot download $pkg"
		fi
		kernel="$cache/vmlinuz-${pkg#linux-image-}"
	else
		# No package lists: any kernel an earlier run kept will do.
		kernel=$(latest_cached)
		[ -n "$kernel" ] || die "cannot tell which kernel to download: apt-cache knows no linux-image-amd64 (run apt-get update)"
	fi
fi
[ -s "$kernel" ] || die "no kernel at $kernel"

# --- 3. Binaries -------------------------------------------------------------
# All static (CGO_ENABLED=0): the VM has no libc. gojail is built as the
# Makefile builds it (without VCS stamping, which fails in a checkout owned
# by another user); the test binary is told where it and hog are, so it
# does not try to run the go command inside the VM. runas drops root for the
# run as nobody (busybox has no setpriv --reuid).
log "building gojail, gojail.test, hog and runas"
root="$work/root"
mkdir -p "$root/gojail"
(
	cd "$repo"
	export CGO_ENABLED=0
	"$GO" build -trimpath -buildvcs=false -tags urfave_cli_no_docs -o "$root/gojail/gojail" ./cmd/gojail
	"$GO" test -c -o "$root/gojail/gojail.test" ./cmd/gojail
	"$GO" build -trimpath -buildvcs=false -o "$root/gojail/hog" ./testdata/programs/hog
	"$GO" build -trimpath -buildvcs=false -o "$root/gojail/runas" ./testdata/vm/runas
)
printf 'TESTS=%q\n' "$tests" >"$root/gojail/tests.conf"

# --- 4. Root filesystem ------------------------------------------------------
# Merged-/usr layout, because the jail's default policy binds /usr, /bin,
# /lib, /lib64, /etc/ld.so.cache and /etc/alternatives read-only and validation wants each to
# exist. busybox and its applets live in /usr/bin; the tests' probe runs
# /bin/true, which is the symlink usr/bin/true -> busybox reached through
# /bin -> usr/bin (busybox picks the applet from argv[0], "/bin/true").
mkdir -p "$root"/{usr/bin,usr/lib,usr/lib64,etc/alternatives,dev,proc,sys,tmp,newroot}
chmod 1777 "$root/tmp"
cp "$busybox" "$root/usr/bin/busybox"
for applet in $("$busybox" --list); do
	[ -e "$root/usr/bin/$applet" ] || ln -s busybox "$root/usr/bin/$applet"
done
ln -s usr/bin "$root/bin"
ln -s usr/bin "$root/sbin"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
: >"$root/etc/ld.so.cache"
install -m 0755 "$here/init" "$root/init"
chmod -R a+rX "$root" # nobody (the jail's user, and the second run's) reads the binaries
# newc, owned by root whoever builds it; uncompressed (TCG unpacks it faster).
(cd "$root" && find . -mindepth 1 | "$busybox" cpio -o -H newc -R 0:0 2>/dev/null) >"$work/initrd"

# --- 5. Boot -----------------------------------------------------------------
# TCG with every CPU feature it emulates; serial console on stdio (no
# monitor, no network; stdin is not read); panic=-1 and -no-reboot end qemu
# if init dies. --foreground keeps qemu in this script's process group, so
# that Ctrl-C stops it too. qemu exits 0 whatever the tests did: the verdict
# is the "GOJAIL-VM-RESULT:" line init prints. The console goes to a log
# whole (less carriage returns and terminal escapes); on the terminal, the
# firmware's banner, kernel printk lines (timestamped) and qemu's warnings
# are left out.
console="$work/console.log"
log "booting $(basename "$kernel") (qemu TCG, $cpus CPUs, $mem), timeout ${vm_timeout}s"
start=$(date +%s)
set +e
timeout --foreground -k 10 "$vm_timeout" qemu-system-x86_64 \
	-machine pc -accel tcg,thread=multi -cpu max -smp "$cpus" -m "$mem" \
	-nographic -no-reboot -monitor none -serial stdio -nic none \
	-kernel "$kernel" -initrd "$work/initrd" \
	-append "console=ttyS0 panic=-1 quiet rdinit=/init" \
	</dev/null 2>&1 |
	sed -u -e 's/\r//g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1b[A-Za-z]//g' | tee "$console" |
	grep --line-buffered -vE '^\[ *[0-9]+\.[0-9]+\]|^qemu-system-x86_64: warning:|^SeaBIOS |^Booting from ROM|^\s*$'
rc=${PIPESTATUS[0]}
set -e
elapsed=$(($(date +%s) - start))
[ -z "${GOJAIL_VM_LOG:-}" ] || cp "$console" "$GOJAIL_VM_LOG"

if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	die "TIMEOUT: the VM did not finish within ${vm_timeout}s (GOJAIL_VM_TIMEOUT); last console lines:
$(tail -n 20 "$console")"
fi
if grep -qx 'GOJAIL-VM-RESULT: PASS' "$console"; then
	log "PASS in ${elapsed}s (qemu exit $rc)"
	exit 0
fi
if ! grep -q '^GOJAIL-VM-RESULT:' "$console"; then
	die "FAIL: no verdict from the VM (qemu exit $rc after ${elapsed}s); last console lines:
$(tail -n 40 "$console")"
fi
die "FAIL in ${elapsed}s: $(grep '^GOJAIL-VM-RESULT:' "$console" | tail -n 1)"
