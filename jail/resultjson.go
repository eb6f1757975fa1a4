package jail

import (
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends r as one line of JSON, byte for byte what
// encoding/json's Encoder writes with SetEscapeHTML(false)
// (TestAppendJSON), without its reflection: building its encoders on
// first use took 0.16 ms of every `gojail run --json`.
func (r *Result) AppendJSON(b []byte) []byte { return r.appendJSON(b, nil) }

// WriteJSON writes what AppendJSON appends, in pieces of some 32 KiB: the
// escaped output is never whole in memory. A control byte takes six bytes
// escaped, so 1 MiB of output kept could otherwise take 6 MiB more, and
// with the garbage collector off for a run, every smaller buffer it grew
// from as well (43 MB resident for a run whose program wrote zeros).
func (r *Result) WriteJSON(w io.Writer) error {
	var err error
	b := r.appendJSON(make([]byte, 0, 1024), func(b []byte) []byte {
		if err == nil {
			_, err = w.Write(b)
		}
		return b[:0]
	})
	if err == nil {
		_, err = w.Write(b)
	}
	return err
}

const jsonPiece = 32 << 10

// appendJSON is AppendJSON; with flush, the program's output is escaped
// piece by piece, and flush takes the bytes so far each time they pass
// jsonPiece and returns what to append to next.
func (r *Result) appendJSON(b []byte, flush func([]byte) []byte) []byte {
	b = append(b, `{"status":`...)
	b = appendJSONString(b, string(r.Status))
	b = append(b, `,"exit_code":`...)
	b = strconv.AppendInt(b, int64(r.ExitCode), 10)
	b = append(b, `,"signal":`...)
	b = appendJSONString(b, r.Signal)
	b = append(b, `,"stdout":`...)
	b = appendLongJSONString(b, r.Stdout, flush)
	b = append(b, `,"stderr":`...)
	b = appendLongJSONString(b, r.Stderr, flush)
	b = append(b, `,"stdout_truncated":`...)
	b = strconv.AppendBool(b, r.StdoutTruncated)
	b = append(b, `,"stderr_truncated":`...)
	b = strconv.AppendBool(b, r.StderrTruncated)
	b = append(b, `,"stdout_bytes":`...)
	b = strconv.AppendInt(b, r.StdoutBytes, 10)
	b = append(b, `,"stderr_bytes":`...)
	b = strconv.AppendInt(b, r.StderrBytes, 10)
	b = append(b, `,"wall_ms":`...)
	b = appendJSONFloat(b, r.WallMs)
	b = append(b, `,"cpu_ms":`...)
	b = appendJSONFloat(b, r.CPUMs)
	b = append(b, `,"memory_peak_bytes":`...)
	b = strconv.AppendInt(b, r.MemoryPeakBytes, 10)
	b = append(b, `,"enforced":`...)
	if r.Enforced == nil {
		b = append(b, "null"...)
	} else {
		keys := make([]string, 0, len(r.Enforced))
		for k := range r.Enforced {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, r.Enforced[k])
		}
		b = append(b, '}')
	}
	b = append(b, `,"error":`...)
	b = appendJSONString(b, r.Error)
	if len(r.SeccompLog) > 0 {
		b = append(b, `,"seccomp_log":[`...)
		for i, e := range r.SeccompLog {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"syscall":`...)
			b = appendJSONString(b, e.Syscall)
			b = append(b, `,"action":`...)
			b = appendJSONString(b, e.Action)
			b = append(b, `,"rule":`...)
			b = appendJSONString(b, e.Rule)
			b = append(b, `,"count":`...)
			b = strconv.AppendInt(b, int64(e.Count), 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if r.LatencyMs != 0 {
		b = append(b, `,"latency_ms":`...)
		b = appendJSONFloat(b, r.LatencyMs)
	}
	if len(r.ID) > 0 { // a JSON string or number, as the request gave it (batch checks)
		b = append(b, `,"id":`...)
		b = append(b, r.ID...)
	}
	return append(b, "}\n"...)
}

// appendLongJSONString is appendJSONString, s escaped in pieces of about
// 4 KiB, each followed by flush (when not nil) once the bytes so far pass
// jsonPiece. No piece ends inside a valid character, so the pieces escape
// to what s does whole (an invalid byte is \ufffd on its own either way).
func appendLongJSONString(b []byte, s string, flush func([]byte) []byte) []byte {
	if flush == nil {
		return appendJSONString(b, s)
	}
	b = append(b, '"')
	for len(s) > 0 {
		n := min(len(s), jsonPiece/8) // at most six bytes escaped for one
		if n < len(s) && !utf8.RuneStart(s[n]) {
			// s[n] may continue a character begun within the three bytes
			// before it: cut before that beginning. With none there, no
			// valid character spans the cut.
			for i := n - 1; i > 0 && i >= n-(utf8.UTFMax-1); i-- {
				if utf8.RuneStart(s[i]) {
					n = i
					break
				}
			}
		}
		b = appendJSONStringBody(b, s[:n])
		s = s[n:]
		if len(b) >= jsonPiece {
			b = flush(b)
		}
	}
	return append(b, '"')
}

// appendJSONString is encoding/json's string encoding without HTML
// escaping: control characters escaped (\b, \f, \n, \r, \t by name), an
// invalid UTF-8 byte as \ufffd, and U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	return append(appendJSONStringBody(b, s), '"')
}

// appendJSONStringBody is appendJSONString without the quotes.
func appendJSONStringBody(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

// appendJSONFloat is encoding/json's float64: the shortest form, with an
// exponent only for very small or large magnitudes.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
