package policy

import "testing"

// An errno action's error: a name, a number, or EPERM when none is given
// (an empty name once matched the first number without a name, 41).
func TestParseErrno(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"", 1, true}, {"EPERM", 1, true}, {"EACCES", 13, true}, {"13", 13, true}, {"4095", 4095, true},
		{"0", 0, false}, {"4096", 0, false}, {"-1", 0, false}, {"EFOO", 0, false}, {"eperm", 0, false},
		// Both names of a number that has two.
		{"ENOTSUP", 95, true}, {"EOPNOTSUPP", 95, true}, {"EAGAIN", 11, true}, {"EWOULDBLOCK", 11, true},
		{"EDEADLK", 35, true}, {"EDEADLOCK", 35, true},
	} {
		got, err := ParseErrno(Errno(tc.in))
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseErrno(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// A policy gives an errno as a name or a number, quoted or not: 13 was
// refused as a TOML integer.
func TestErrnoAsNumber(t *testing.T) {
	p, err := Decode([]byte("base = \"python\"\n[seccomp]\ndefault_action = \"allow\"\n[[seccomp.rules]]\nsyscalls = [\"getppid\"]\naction = \"errno\"\nerrno = 13\n"), "n.toml")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := ParseErrno(p.Seccomp.Rules[0].Errno); n != 13 || err != nil {
		t.Fatalf("errno = 13 reads as %d, %v", n, err)
	}
	if _, err := Decode([]byte("base = \"python\"\n[[seccomp.rules]]\nsyscalls = [\"getppid\"]\naction = \"errno\"\nerrno = 1.5\n"), "f.toml"); err == nil {
		t.Fatal("errno = 1.5 accepted")
	}
}
