package jail

import (
	"fmt"
	"testing"
	"unsafe"
)

// --seccomp-log's entries are counted per system call and action, and
// bounded: past maxEvents-1 of them, one more counts all the rest.
func TestRecordBounded(t *testing.T) {
	s := &supervisor{}
	for i := 0; i < 3; i++ {
		s.record(SeccompEvent{Syscall: "mount", Action: "errno EPERM", Rule: "rule 1"})
	}
	s.record(SeccompEvent{Syscall: "mount", Action: "kill", Rule: "rule 2"})
	for i := 0; i < 1000; i++ {
		s.record(SeccompEvent{Syscall: fmt.Sprintf("system call %d", 1000+i), Action: "errno ENOSYS", Rule: "the default action"})
	}
	s.record(SeccompEvent{Syscall: "mount", Action: "kill", Rule: "rule 2"})
	if len(s.events) != maxEvents {
		t.Fatalf("%d entries, want %d", len(s.events), maxEvents)
	}
	if e := s.events[0]; e.Syscall != "mount" || e.Action != "errno EPERM" || e.Count != 3 {
		t.Errorf("first entry %+v, want mount errno EPERM counted 3 times", e)
	}
	if e := s.events[1]; e.Syscall != "mount" || e.Action != "kill" || e.Count != 2 {
		t.Errorf("second entry %+v, want mount kill counted twice (once past the bound)", e)
	}
	last := s.events[maxEvents-1]
	if want := 1000 - (maxEvents - 3); last.Syscall != "other system calls" || last.Count != want {
		t.Errorf("last entry %+v, want other system calls counted %d times", last, want)
	}
}

// A stream cut at its limit keeps no part of a character the cut split:
// the bytes before it, and nothing that could show as U+FFFD. Uncut, or
// cut between characters, it keeps every byte, invalid ones too.
func TestKeptWholeCharacters(t *testing.T) {
	for _, tc := range []struct {
		write string
		limit int64
		want  string
	}{
		{"aaé", 3, "aa"},               // é's first byte of two
		{"a😀", 4, "a"},                 // three bytes of four
		{"a😀", 2, "a"},                 // one of four
		{"aéb", 3, "aé"},               // cut after it
		{"a\xffb", 2, "a\xff"},         // an invalid byte is kept
		{"aé", 10, "aé"},               // not cut
		{"a\xe2\x80", 10, "a\xe2\x80"}, // not cut: the program's own partial bytes stay
	} {
		s := &stream{limit: tc.limit}
		s.add([]byte(tc.write))
		if got := s.kept(); got != tc.want {
			t.Errorf("%q at %d bytes: kept %q, want %q", tc.write, tc.limit, got, tc.want)
		}
	}
}

// hasFinalReport says what finalReport(decodeReports(b)) != nil says, for
// every mix of records and a record cut short.
func TestHasFinalReport(t *testing.T) {
	rec := func(k uint32) []byte {
		r := report{Kind: k}
		return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&r)), unsafe.Sizeof(r))...)
	}
	for _, kinds := range [][]uint32{nil, {reportMark}, {reportMark, reportExit}, {reportKilled}, {reportReady, reportMark}, {reportError}} {
		var b []byte
		for _, k := range kinds {
			b = append(b, rec(k)...)
		}
		for _, cut := range []int{0, 1} {
			bb := b[:max(len(b)-cut, 0)]
			if got, want := hasFinalReport(bb), finalReport(decodeReports(bb)) != nil; got != want {
				t.Errorf("kinds %v cut %d: hasFinalReport %v, finalReport %v", kinds, cut, got, want)
			}
		}
	}
}
