package jail

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gojail/gojail/jail/seccomp"
	"github.com/gojail/gojail/policy"
)

// The init's copy of its plan points nowhere but into its childMem (and at
// the argv and environment areas it blanks): the init does not have the Go
// heap, and a field added to childPlan without a copy in into would make
// every jail's init fault. Both plans: a one-shot run's, with a submitted
// file, and a prepared jail's.
func TestChildPlanCopy(t *testing.T) {
	for _, prepared := range []bool{false, true} {
		t.Run(fmt.Sprintf("prepared=%v", prepared), func(t *testing.T) {
			p, err := policy.Preset("python")
			if err != nil {
				t.Fatal(err)
			}
			s := &supervisor{p: &p, in: Input{Code: []byte("print(1)\n")}, log: func(string, ...any) {},
				enforced: map[string]string{}, prepared: prepared}
			defer s.closeAll()
			if s.plan, err = s.prepare(); err != nil {
				t.Fatal(err)
			}
			if _, _, err = s.pipes(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			if err = s.filter(); err != nil {
				t.Fatal(err)
			}
			c := s.plan
			var sizing childMem
			c.into(&sizing)
			m, err := newChildMem(sizing.off)
			if err != nil {
				t.Fatal(err)
			}
			defer m.free()
			cp := c.into(m)

			lo := uintptr(unsafe.Pointer(&m.mem[0]))
			hi := lo + uintptr(len(m.mem))
			allowed := func(p uintptr) bool {
				if p >= lo && p < hi {
					return true
				}
				for _, b := range c.scrub {
					if b0 := uintptr(unsafe.Pointer(unsafe.SliceData(b))); p >= b0 && p < b0+uintptr(len(b)) {
						return true
					}
				}
				return false
			}
			var walk func(path string, v reflect.Value)
			walk = func(path string, v reflect.Value) {
				switch v.Kind() {
				case reflect.Pointer, reflect.UnsafePointer:
					if v.IsNil() {
						return
					}
					if !allowed(v.Pointer()) {
						t.Errorf("%s points outside the init's memory: %#x", path, v.Pointer())
						return
					}
					if v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct {
						walk(path+".*", v.Elem())
					}
				case reflect.Slice:
					if v.Pointer() != 0 && !allowed(v.Pointer()) {
						t.Errorf("%s's array is outside the init's memory: %#x", path, v.Pointer())
						return
					}
					for i := 0; i < v.Len(); i++ {
						walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
					}
				case reflect.String:
					if v.Len() > 0 {
						t.Errorf("%s is a string (%q): its bytes are on the heap", path, v.String())
					}
				case reflect.Struct:
					for i := 0; i < v.NumField(); i++ {
						walk(path+"."+v.Type().Field(i).Name, v.Field(i))
					}
				case reflect.Array:
					for i := 0; i < v.Len(); i++ {
						walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
					}
				}
			}
			walk("plan", reflect.ValueOf(cp).Elem())

			// The same plan: every C string, operation and buffer as made.
			if gostr(cp.path) != gostr(c.path) || gostr(cp.workdir) != gostr(c.workdir) || len(cp.argv) != len(c.argv) ||
				len(cp.envv) != len(c.envv) || len(cp.ops) != len(c.ops) || len(cp.blob) != c.blobLen ||
				len(cp.argvRaw) != c.rawLen || len(cp.envvRaw) != c.rawLen || cp.filter == nil || cp.filter.len != c.filter.len || cp.msg.Iov != &cp.iov {
				t.Fatalf("the copy differs from the plan")
			}
			for i := range c.argv[:len(c.argv)-1] {
				if gostr(cp.argv[i]) != gostr(c.argv[i]) {
					t.Fatalf("argv[%d] = %q, want %q", i, gostr(cp.argv[i]), gostr(c.argv[i]))
				}
			}
			for i, op := range c.ops {
				if d := cp.ops[i]; d.kind != op.kind || gostr(d.path) != gostr(op.path) || gostr(d.src) != gostr(op.src) ||
					string(d.data) != string(op.data) || len(d.opts) != len(op.opts) {
					t.Fatalf("ops[%d] differs: %+v, want %+v", i, d, op)
				}
			}
			if *cp.filter.filter != *c.filter.filter {
				t.Fatal("the filter's first instruction differs")
			}
		})
	}
}

func gostr(p *byte) string {
	if p == nil {
		return ""
	}
	return unix.BytePtrToString(p)
}

// The init has none of the Go heap (so no page the supervisor writes is
// shared with it), nor the runtime's other mappings: what it inherits
// between heapLo and the vdso is its childMem and the cloning thread's TLS
// area. And the clone leaves the supervisor's own mappings as they were:
// none stays marked not to be inherited by a later fork of the caller's.
func TestInitInheritsNoHeap(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the init is not dumpable: only root may read its memory map (the root run of make test checks this)")
	}
	LeanClones = true
	defer func() { LeanClones = false }()
	p, err := policy.Preset("exec")
	if err != nil {
		t.Fatal(err)
	}
	heapObj := new([4096]byte)
	pj, err := Prepare(context.Background(), &p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pj.Close()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pj.s.pid))
	if err != nil {
		t.Fatal(err)
	}
	obj := uintptr(unsafe.Pointer(heapObj))
	var inherited uintptr
	for _, line := range strings.Split(strings.TrimSpace(string(maps)), "\n") {
		var a, b uintptr
		if _, err := fmt.Sscanf(line, "%x-%x", &a, &b); err != nil {
			t.Fatalf("maps line %q: %v", line, err)
		}
		if obj >= a && obj < b {
			t.Errorf("the init has the supervisor's heap: %s", line)
		}
		if a >= heapLo && b <= noForkHi() {
			inherited += b - a
		}
	}
	runtime.KeepAlive(heapObj)
	if inherited > 1<<20 {
		t.Errorf("the init inherits %d KB between heapLo and the vdso, want its childMem and a TLS area (< 1 MB):\n%s", inherited>>10, maps)
	}

	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var cur string
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			cur = line // a mapping's first line: its range
		}
		if strings.HasPrefix(line, "VmFlags:") && strings.Contains(line+" ", " dc ") {
			t.Errorf("the supervisor's mapping is left not inheritable: %s (%s)", cur, line)
		}
	}
}

// filterOrder's shortcut: the default profile allows every call of a
// one-shot pid 2's last steps, with and without --debug's marks.
func TestDefaultProfileEarly(t *testing.T) {
	for _, debug := range []bool{false, true} {
		p, err := policy.Preset("exec")
		if err != nil {
			t.Fatal(err)
		}
		// With an early init, whose pid 2 has the most last steps.
		s := &supervisor{p: &p, in: Input{Program: "/bin/true"}, log: func(string, ...any) {}, enforced: map[string]string{}, debug: debug, early: &Early{}}
		if s.plan, err = s.prepare(); err != nil {
			t.Fatal(err)
		}
		if err = s.filter(); err != nil {
			t.Fatal(err)
		}
		spec, err := seccomp.SpecOf(p.Seccomp)
		if err != nil {
			t.Fatal(err)
		}
		if !spec.AllowsAll(append(s.lastCalls(), s.limitCalls()...)) {
			t.Errorf("debug %v: the default profile refuses a call of pid 2's last steps: filterOrder's shortcut is wrong", debug)
		}
		s.closeAll()
	}
}

// The jail's cgroup holds the program's process, pid 2, and not the
// jail's init: its figures are the program's, its OOM killer cannot take
// the init, and it can go as soon as the init has reported.
func TestInitOutsideCgroup(t *testing.T) {
	p, err := policy.Preset("exec")
	if err != nil {
		t.Fatal(err)
	}
	pj, err := Prepare(context.Background(), &p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pj.Close()
	if pj.s.cg == nil {
		t.Skip("no cgroup for this user: nothing to hold the program (enforced says so)")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pj.s.pid, pj.s.pid))
	if err != nil {
		t.Fatal(err)
	}
	children := strings.Fields(string(b))
	procs, err := pj.s.cg.Procs()
	if err != nil {
		t.Fatal(err)
	}
	if len(children) != 1 || len(procs) != 1 || fmt.Sprint(procs[0]) != children[0] {
		t.Fatalf("the cgroup holds %v; the init is %d, its children %v: want pid 2 alone", procs, pj.s.pid, children)
	}
}

// A failed join names its tasks file: pid 2 counts the descriptors of the
// message, which brings an early init's stdin first.
func TestJoinErrorNamesTasksFile(t *testing.T) {
	paths := []string{"/sys/fs/cgroup/memory/x/tasks", "/sys/fs/cgroup/pids/x/tasks"}
	for _, tc := range []struct{ first, index int }{{0, 1}, {1, 2}} {
		s := &supervisor{joinPaths: paths, joinFirst: tc.first}
		e := s.childError(report{Kind: reportError, Step: uint32(stepJoinCgroup), Index: uint32(tc.index), Errno: uint32(syscall.EINVAL)})
		if e.Detail != paths[1] {
			t.Errorf("joinFirst %d, index %d: detail %q, want %q", tc.first, tc.index, e.Detail, paths[1])
		}
	}
}
