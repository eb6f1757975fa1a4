package jail

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
)

// AppendJSON writes what encoding/json's Encoder (SetEscapeHTML(false))
// writes, byte for byte, for results of every shape: output that is binary,
// invalid UTF-8, control characters, U+2028 and U+2029, HTML; figures small
// and large; no enforced map, an empty one, a full one; with and without a
// seccomp log and a latency.
func TestAppendJSON(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"", "a", "é", "\u2028", "\u2029", "\xff", "\xe2\x80", "<&>", "\"", "\\", "\x00", "\x1f", "\x7f", "\b\f\n\r\t", "日本", "\U0001F600", "\xed\xa0\x80"}
	str := func() string {
		var b []byte
		for n := rng.Intn(12); n > 0; n-- {
			if rng.Intn(4) == 0 {
				b = append(b, byte(rng.Intn(256)))
			} else {
				b = append(b, pieces[rng.Intn(len(pieces))]...)
			}
		}
		return string(b)
	}
	floats := []float64{0, 1.5, 2.25, 1e-7, 3e-9, 1e21, 1.234e25, 0.000001, 123456.789, 17.4, -2.5}
	for i := 0; i < 3000; i++ {
		r := &Result{
			Status: Status(str()), ExitCode: rng.Intn(300) - 1, Signal: str(), Stdout: str(), Stderr: str(),
			StdoutTruncated: rng.Intn(2) == 0, StderrTruncated: rng.Intn(2) == 0,
			StdoutBytes: rng.Int63(), StderrBytes: rng.Int63n(1000), WallMs: floats[rng.Intn(len(floats))],
			CPUMs: rng.Float64() * 1000, MemoryPeakBytes: rng.Int63(), Error: str(),
		}
		switch rng.Intn(3) {
		case 1:
			r.Enforced = map[string]string{}
		case 2:
			r.Enforced = map[string]string{str(): str(), "memory": "cgroup-v1", "b": str(), "a": str()}
		}
		if rng.Intn(3) == 0 {
			r.SeccompLog = []SeccompEvent{{Syscall: str(), Action: str(), Rule: str(), Count: rng.Intn(9)}, {Syscall: "mount", Action: "errno EPERM", Rule: "rule 1", Count: 2}}
		} else if rng.Intn(2) == 0 {
			r.SeccompLog = []SeccompEvent{}
		}
		if rng.Intn(2) == 0 {
			r.LatencyMs = floats[rng.Intn(len(floats))]
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		if got := r.AppendJSON(nil); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("result %d:\n got %q\nwant %q", i, got, want.Bytes())
		}
	}
}
