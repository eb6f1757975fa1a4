package jail

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"strings"
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
		if rng.Intn(2) == 0 {
			r.ID, _ = json.Marshal([]any{str(), rng.Intn(1000)}[rng.Intn(2)])
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

// WriteJSON writes what AppendJSON appends, for output long enough to be
// escaped in pieces: characters of every width and invalid bytes across
// the pieces' cuts, and a long run of bytes that start no character. No
// write is much larger than a piece, whatever the output.
func TestWriteJSON(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	pieces := []string{"a", "é", "日本", "\U0001F600", "\xff", "\xe2\x80", "\x80\x80\x80\x80\x80", "\x00", "\n", "\u2028", "\"", "\\"}
	long := func(n int) string {
		var b []byte
		for len(b) < n {
			b = append(b, pieces[rng.Intn(len(pieces))]...)
		}
		return string(b)
	}
	results := []*Result{
		{Status: StatusOK, Stdout: long(300 << 10), Stderr: long(70 << 10), Enforced: map[string]string{"memory": "cgroup-v1"}},
		{Status: StatusOK, Stdout: string(make([]byte, 1<<20)), Stderr: strings.Repeat("\x80", 100<<10)},
		{Status: StatusRuntimeError, Stdout: long(jsonPiece - 1), Stderr: long(jsonPiece + 1)},
		{Status: StatusOK},
	}
	// A valid character followed by bytes that continue none, at every
	// offset around the first cut: "\xe2\x80\x80" is U+2000 whole.
	for k := 0; k < 12; k++ {
		results = append(results, &Result{Stdout: strings.Repeat("a", jsonPiece/8-k) + "\xe2\x80\x80\x80\x80\x80\x80\U0001F600" + strings.Repeat("b", jsonPiece)})
	}
	for i, r := range results {
		var w writes
		if err := r.WriteJSON(&w); err != nil {
			t.Fatal(err)
		}
		if want := r.AppendJSON(nil); !bytes.Equal(w.all, want) {
			t.Fatalf("result %d: WriteJSON's %d bytes differ from AppendJSON's %d", i, len(w.all), len(want))
		}
		var enc bytes.Buffer
		e := json.NewEncoder(&enc)
		e.SetEscapeHTML(false)
		if err := e.Encode(r); err != nil || !bytes.Equal(w.all, enc.Bytes()) {
			t.Fatalf("result %d: differs from encoding/json's (%v)", i, err)
		}
		if w.largest > 2*jsonPiece+64 {
			t.Errorf("result %d: a write of %d bytes", i, w.largest)
		}
	}
}

type writes struct {
	all     []byte
	largest int
}

func (w *writes) Write(b []byte) (int, error) {
	w.all = append(w.all, b...)
	w.largest = max(w.largest, len(b))
	return len(b), nil
}
