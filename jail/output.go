package jail

import (
	"unicode/utf8"
	"unsafe"
)

// stream is one pipe the supervisor reads from the jail: stdout, stderr or
// the report pipe. It keeps at most limit bytes and counts the rest, so that
// a flood neither blocks the program nor grows the supervisor (snekbox PR 81).
type stream struct {
	fd        int
	limit     int64
	buf       []byte
	total     int64
	truncated bool
	// tail is the stream's last tailSize bytes once it is past its limit:
	// a program's last words (MemoryError) come after what is kept.
	tail []byte
}

const tailSize = 4096

// add keeps what fits of b and reports whether b was the first data past
// the limit.
func (s *stream) add(b []byte) (over bool) {
	s.total += int64(len(b))
	keep := len(b)
	if room := s.limit - int64(len(s.buf)); int64(keep) > room {
		keep = int(room)
		over = !s.truncated
		s.truncated = true
	}
	if need := len(s.buf) + keep; need > cap(s.buf) {
		// Doubling, up to the limit: append's own growth goes past the
		// limit, by a quarter at a time (64 MiB kept held 105 MB).
		nb := make([]byte, len(s.buf), min(s.limit, int64(max(2*cap(s.buf), need, 4096))))
		copy(nb, s.buf)
		s.buf = nb
	}
	s.buf = append(s.buf, b[:keep]...)
	if s.truncated {
		if over {
			s.addTail(s.buf[max(0, len(s.buf)-tailSize):])
		}
		s.addTail(b[keep:])
	}
	return over
}

// addTail appends b to the tail, keeping its last tailSize bytes.
func (s *stream) addTail(b []byte) {
	if len(b) >= tailSize {
		s.tail = append(s.tail[:0], b[len(b)-tailSize:]...)
		return
	}
	if drop := len(s.tail) + len(b) - tailSize; drop > 0 {
		s.tail = append(s.tail[:0], s.tail[drop:]...)
	}
	s.tail = append(s.tail, b...)
}

// kept is what the result holds of the stream: its bytes, less a character
// the limit cut in two (the JSON form would show U+FFFD, which the program
// never wrote, for its first bytes). Only a truncated stream loses them,
// and at most utf8.UTFMax-1.
//
// It is called once the stream has ended, and shares its bytes, which are
// never written again: a copy would double what a large output limit holds.
func (s *stream) kept() string {
	b := s.buf
	if s.truncated {
		for i := len(b) - 1; i >= 0 && i > len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}
