package jail

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The jail's init is a copy of the supervisor made by clone3, and a copy
// costs what is mapped: the page tables are copied at the clone, and every
// page either process writes afterwards is copied first (with a TLB flush
// sent to the other CPU). The Go heap is most of what is mapped and nearly
// all of what the supervisor writes, and the init needs none of it: it runs
// on a stack of its own with a copy of its plan, both in a childMem mapped
// apart from the heap, and with LeanClones the heap is not inherited
// (MADV_DONTFORK) for the length of the clone. The init then shares only
// the executable's own segments and the stack's top.

// childStack is the init's stack, pid2Stack pid 2's, above it (each with
// a guard page below).
const childStack, pid2Stack = 64 << 10, 32 << 10

// The init's code is Go compiled for the goroutine it was cloned from:
// function prologues compare the stack pointer with the goroutine's
// stackguard0 (at offset 16 of the g that R14 points to), and code that
// calls assembly reloads R14 from the thread's TLS (at -8 from FS). Both
// the goroutine and, but on the main thread, the TLS block are heap
// memory, which the init does not have; it gets its own in childMem: a g
// whose stack is childMem's, and a TLS slot pointing at it (CLONE_SETTLS).
// Nothing in the init may use more of a g: it allocates nothing, takes no
// lock, and writes no pointer into memory the collector watches.
const (
	fakeGSize  = 256  // covers what prologues read
	stackGuard = 928  // the distance above stack.lo where Go's stackguard0 sits
	tlsSize    = 4096 // below the thread pointer: every word is the g
)

// The mappings the init does not inherit: those from heapLo up to just
// below the vdso or the process's argv, whichever is lower. Go's heap
// arenas are within the low 2^46 bytes on linux/amd64 (randomised since Go
// 1.26) and above the binary's segments (which a static binary maps at
// 4 MB); the runtime's other mappings are placed top-down below the vdso,
// which Linux 6.x places below the main thread's stack (before 6.4 it was
// above). The init keeps the executable's segments (binaryRange), its
// childMem (made forkable again), and the top of the stack, where the argv
// and environment are (scrub). The vdso's data pages, 24 KB below it on
// Linux 6.18, stay out of the range: a no-fork mark on them could not be
// undone.
const heapLo = 1 << 30

// noForkHi is the end of the range: 64 KB below the vdso (from the
// auxiliary vector) or the page of argv[0], else the end of the heap's.
var noForkHi = sync.OnceValue(func() uintptr {
	const atSysinfoEhdr, vdsoData = 33, 64 << 10
	hi := uintptr(1 << 46)
	if auxv, err := unix.Auxv(); err == nil {
		for _, kv := range auxv {
			if kv[0] == atSysinfoEhdr && kv[1] > heapLo+vdsoData {
				hi = kv[1] - vdsoData
			}
		}
	}
	if len(os.Args) > 0 && os.Args[0] != "" {
		if argv := uintptr(unsafe.Pointer(unsafe.StringData(os.Args[0]))) &^ 0xfff; argv > heapLo && argv < hi {
			hi = argv
		}
	}
	return hi
})

// LeanClones, when set (the gojail command sets it), leaves out of each
// jail's init, for the length of its clone, the mappings from heapLo up to
// the vdso but for the executable: the Go heap and the runtime's and the C
// library's mappings. The clone then copies none of their page tables, and
// no page the caller writes afterwards is copied first (0.25 ms of a
// /bin/true run measured here). It changes those mappings' fork flags for
// that length, under syscall.ForkLock, which os/exec's forks take too; a
// fork from C code meanwhile would miss them, and a mapping the program
// itself marked MADV_DONTFORK is inheritable again after. Off by default:
// a program that forks from C, or relies on MADV_DONTFORK, leaves it so.
var LeanClones bool

// childMem is the init's stack, pid 2's, and a copy of the plan, in one
// shared anonymous mapping with a guard page below each stack: the supervisor
// completes the plan after the clone (settle), before it releases the
// init, and then unmaps its view. It never reads it again: the init is
// the jail's.
type childMem struct {
	mem    []byte // nil while sizing: alloc then only counts
	off    int
	g, tls uintptr // the init's g, and its TLS pointer (FS)
}

// newChildMem maps a childMem with room for size bytes of plan, and
// sets up its g and TLS slot.
func newChildMem(size int) (*childMem, error) {
	m := new(childMem)
	if e := m.mapRoom(size); e != 0 {
		return nil, e
	}
	return m, nil
}

// pageSize is the page size of linux/amd64 (syscall.Getpagesize asks the
// runtime, which the entry's clone runs before).
const pageSize = 4096

// mapRoom maps m with room for size bytes of plan, and sets up its g and
// TLS slot. It allocates nothing and makes only raw system calls: the
// process's entry calls it before the Go runtime starts (entryStart).
//
//go:norace
//go:nocheckptr
func (m *childMem) mapRoom(size int) syscall.Errno {
	n := pageSize + childStack + pageSize + pid2Stack + (fakeGSize+tlsSize+64+size+pageSize-1)&^(pageSize-1)
	p, _, e := syscall.RawSyscall6(syscall.SYS_MMAP, 0, uintptr(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE, ^uintptr(0), 0)
	if e != 0 {
		return e
	}
	m.mem = unsafe.Slice(*(**byte)(unsafe.Pointer(&p)), n) // mapped here, not Go memory
	m.off = 0
	guard2 := pageSize + childStack
	for _, at := range [2]int{0, guard2} {
		if _, _, e = syscall.RawSyscall(syscall.SYS_MPROTECT, p+uintptr(at), pageSize, unix.PROT_NONE); e != 0 {
			m.free()
			return e
		}
	}
	lo := p + pageSize
	m.off = guard2 + pageSize + pid2Stack
	g := (*[3]uintptr)(m.alloc(fakeGSize, 64)) // stack.lo, stack.hi, stackguard0
	g[0], g[1], g[2] = lo, lo+childStack, lo+stackGuard
	tls := unsafe.Slice((*uintptr)(m.alloc(tlsSize, 64)), tlsSize/8)
	for i := range tls {
		tls[i] = uintptr(unsafe.Pointer(g))
	}
	m.g, m.tls = uintptr(unsafe.Pointer(g)), uintptr(unsafe.Pointer(&tls[0]))+tlsSize
	return 0
}

// stack is the lowest address of the init's stack and the size clone3 is
// given: the child starts below the top by callerFrame, where the function
// it calls spills its arguments (Go's internal ABI: in the caller's frame).
func (m *childMem) stack() (uint64, uint64) {
	return uint64(uintptr(unsafe.Pointer(&m.mem[0])) + pageSize), childStack - callerFrame
}

// stack2 is pid 2's, as stack: above the init's, so above the stackguard0
// of the g they share.
func (m *childMem) stack2() (uint64, uint64) {
	return uint64(uintptr(unsafe.Pointer(&m.mem[0])) + 2*pageSize + childStack), pid2Stack - callerFrame
}

const callerFrame = 256

func (m *childMem) free() {
	syscall.RawSyscall(syscall.SYS_MUNMAP, uintptr(unsafe.Pointer(&m.mem[0])), uintptr(len(m.mem)), 0)
	m.mem = nil
}

// alloc takes n bytes (zero, as mapped) aligned to align; nil when sizing
// or when n is 0.
func (m *childMem) alloc(n, align int) unsafe.Pointer {
	m.off = (m.off + align - 1) &^ (align - 1)
	if m.mem == nil || n == 0 {
		m.off += n
		return nil
	}
	if m.off+n > len(m.mem) {
		panic("BUG(gojail): childMem sized too small")
	}
	p := unsafe.Pointer(&m.mem[m.off])
	m.off += n
	return p
}

// memMake is a zero slice of n T in m.
func memMake[T any](m *childMem, n int) []T {
	var z T
	p := m.alloc(n*int(unsafe.Sizeof(z)), int(unsafe.Alignof(z)))
	if p == nil {
		return nil
	}
	return unsafe.Slice((*T)(p), n)
}

// memCopy is a copy of s in m (its elements copied as they are).
func memCopy[T any](m *childMem, s []T) []T {
	d := memMake[T](m, len(s))
	copy(d, s)
	return d
}

// cstr copies a NUL-terminated string.
func (m *childMem) cstr(p *byte) *byte {
	if p == nil {
		return nil
	}
	n := 1
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n-1)) != 0 {
		n++
	}
	d := memCopy(m, unsafe.Slice(p, n))
	if d == nil {
		return nil
	}
	return &d[0]
}

// cstrv copies a NULL-terminated array of C strings.
func (m *childMem) cstrv(v []*byte) []*byte {
	d := memMake[*byte](m, len(v))
	for i, p := range v {
		if q := m.cstr(p); d != nil {
			d[i] = q
		}
	}
	return d
}

func (m *childMem) fsOpts(o []fsOpt) []fsOpt {
	d := memMake[fsOpt](m, len(o))
	for i := range o {
		if k, v := m.cstr(o[i].key), m.cstr(o[i].val); d != nil {
			d[i] = fsOpt{key: k, val: v}
		}
	}
	return d
}

// into copies the plan, and everything it points to, into m: the copy
// points only into m (and at the argv and environment areas, scrub, which
// are outside the heap). With a sizing m it only counts.
func (c *childPlan) into(m *childMem) *childPlan {
	n := (*childPlan)(m.alloc(int(unsafe.Sizeof(*c)), int(unsafe.Alignof(*c))))
	sizing := n == nil
	if sizing {
		n = new(childPlan)
	}
	*n = *c
	n.keepFds = memCopy(m, c.keepFds)
	n.rootOpts = m.fsOpts(c.rootOpts)
	n.ops = memCopy(m, c.ops)
	for i := range c.ops {
		op := &c.ops[i]
		path, src, opts, data := m.cstr(op.path), m.cstr(op.src), m.fsOpts(op.opts), memCopy(m, op.data)
		if !sizing {
			d := &n.ops[i]
			d.path, d.src, d.opts, d.data, d.desc = path, src, opts, data, ""
		}
	}
	n.hostname = memCopy(m, c.hostname)
	n.rlimits = memMake[rlimit](m, maxRlimits)[:0] // settle's
	n.workdir = m.cstr(c.workdir)
	n.path = m.cstr(c.path)
	n.argv = m.cstrv(c.argv)
	n.envv = m.cstrv(c.envv)
	n.ignored = memCopy(m, c.ignored)
	n.scrub = memCopy(m, c.scrub)
	n.fileName = m.cstr(c.fileName)
	n.blob = memMake[byte](m, c.blobLen)
	n.argvRaw = memMake[uintptr](m, c.rawLen)
	n.envvRaw = memMake[uintptr](m, c.rawLen)
	n.filter = nil
	if c.filter != nil {
		f := (*sockFprog)(m.alloc(int(unsafe.Sizeof(*c.filter)), int(unsafe.Alignof(*c.filter))))
		prog := memCopy(m, unsafe.Slice(c.filter.filter, c.filter.len))
		if !sizing {
			*f = sockFprog{len: c.filter.len, filter: &prog[0]}
			n.filter = f
		}
	}
	n.cmsg = memCopy(m, c.cmsg)
	if !sizing && c.msg.Iov != nil {
		n.iov.Base = &n.iobuf[0]
		n.msg.Iov = &n.iov
		n.msg.Control = &n.cmsg[0]
	}
	return n
}

// The room kept in the init's plan for what settle writes.
const (
	maxJoin    = 8 // v1 hierarchies
	maxRlimits = 16
)

// settle writes into the init's plan, before its release, what the
// supervisor learns after the clone: whether its message brings the
// program's stdin first (joinFirst, an early init's), how many descriptors
// of the cgroup follow (into: the v2 directory pid 2 is cloned into, else
// v1 tasks files),
// the rlimits (which depend on whether a cgroup could be made), and whether
// the filter can be loaded early (which depends on the rlimits).
func (c *childPlan) settle(joinFirst, joinCount int, into bool, rlimits []rlimit, nofile rlimit, earlyFilter, limitsLate bool) error {
	if err := c.settleLate(joinCount, rlimits, nofile); err != nil {
		return err
	}
	c.joinFirst, c.joinInto = joinFirst, into
	c.joinIov.Base = &c.joinByte[0]
	c.joinIov.SetLen(1)
	c.joinMsg.Iov = &c.joinIov
	c.joinMsg.SetIovlen(1)
	c.joinMsg.Control = &c.joinCmsg[0]
	c.joinMsg.SetControllen(len(c.joinCmsg))
	c.earlyFilter, c.limitsLate = earlyFilter, limitsLate
	return nil
}

// settleLate writes what the cgroup decides: how many tasks files the
// message brings, and the rlimits; part of settle, and, with lateJoin,
// written again once the cgroup is made after the release (pid 2 reads
// them once it has the message).
func (c *childPlan) settleLate(joinCount int, rlimits []rlimit, nofile rlimit) error {
	if joinCount > maxJoin || len(rlimits) > maxRlimits {
		return fmt.Errorf("BUG(gojail): %d tasks files and %d rlimits, room for %d and %d", joinCount, len(rlimits), maxJoin, maxRlimits)
	}
	c.joinCount = joinCount
	c.rlimits = append(c.rlimits[:0], rlimits...)
	c.nofile = nofile
	return nil
}

// inheritMemory sets whether a clone copies the mappings from heapLo to
// noForkHi (MADV_DOFORK) or leaves them out of the child (MADV_DONTFORK),
// mem excepted. madvise walks every mapping in the range and reports
// ENOMEM for the gaps between them.
func inheritMemory(inherit bool, mem []byte) {
	advice := uintptr(syscall.MADV_DONTFORK)
	if inherit {
		advice = syscall.MADV_DOFORK
	}
	lo, hi := uintptr(heapLo), noForkHi()
	binLo, binHi := binaryRange()
	failed := false
	for _, r := range [2][2]uintptr{{lo, min(hi, binLo)}, {max(lo, binHi), hi}} {
		if r[0] < r[1] {
			if _, _, e := syscall.RawSyscall(syscall.SYS_MADVISE, r[0], r[1]-r[0], advice); e == syscall.EINVAL {
				failed = true
			}
		}
	}
	if inherit && failed {
		// A mapping of a device (VM_IO, VM_PFNMAP) ends madvise's walk: the
		// rest is made inheritable one mapping at a time.
		inheritEach(lo, hi)
	}
	if !inherit {
		syscall.RawSyscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), syscall.MADV_DOFORK)
	}
}

// inheritEach marks each mapping within [lo, hi) inheritable again.
func inheritEach(lo, hi uintptr) {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		var a, z uintptr
		if _, err := fmt.Sscanf(line, "%x-%x", &a, &z); err == nil && a >= lo && z <= hi {
			syscall.RawSyscall(syscall.SYS_MADVISE, a, z-a, syscall.MADV_DOFORK)
		}
	}
}

// binaryRange is where the executable itself is mapped, from its program
// headers (the auxiliary vector says where they are): a position-independent
// executable is loaded high, within the range the init does not inherit,
// whose code the init needs.
var binaryRange = sync.OnceValues(func() (uintptr, uintptr) {
	const atPhdr, atPhnum, ptLoad, ptPhdr = 3, 5, 1, 6
	type phdr struct { // Elf64_Phdr
		typ, flags                       uint32
		off, vaddr, paddr, filesz, memsz uint64
		align                            uint64
	}
	var at, n uintptr
	if auxv, err := unix.Auxv(); err == nil {
		for _, kv := range auxv {
			switch kv[0] {
			case atPhdr:
				at = kv[1]
			case atPhnum:
				n = kv[1]
			}
		}
	}
	if at == 0 || n == 0 {
		return 0, 0
	}
	hs := unsafe.Slice((*phdr)(*(*unsafe.Pointer)(unsafe.Pointer(&at))), n) // mapped by the kernel, not Go memory
	var bias uintptr
	for _, h := range hs {
		if h.typ == ptPhdr {
			bias = at - uintptr(h.vaddr)
		}
	}
	lo, hi := ^uintptr(0), uintptr(0)
	for _, h := range hs {
		if h.typ == ptLoad {
			lo, hi = min(lo, bias+uintptr(h.vaddr)), max(hi, bias+uintptr(h.vaddr+h.memsz))
		}
	}
	if lo >= hi {
		return 0, 0
	}
	return lo &^ (pageSize - 1), (hi + pageSize - 1) &^ (pageSize - 1)
})

// keepThreadTLS keeps the cloning thread's own TLS area inherited, 64 KB
// on either side of its thread pointer: in a program linked with the C
// library, that holds the thread's restartable-sequence area, which the
// kernel writes on every return to user space of a process that inherited
// it (rseq(2)), the init's first one included. Called between
// runtime_BeforeFork and the clone, which keep the goroutine on its thread
// (runtime.LockOSThread would start the runtime's template thread, 0.06 ms).
//
//go:nosplit
//go:norace
//go:nocheckptr
func keepThreadTLS() {
	const archGetFS, around = 0x1003, 64 << 10
	var fs uintptr
	if _, _, e := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archGetFS, uintptr(unsafe.Pointer(&fs)), 0); e == 0 && fs > around {
		syscall.RawSyscall(syscall.SYS_MADVISE, (fs-around)&^0xfff, 2*around, syscall.MADV_DOFORK)
	}
}
