package jail

// stream is one pipe the supervisor reads from the jail: stdout, stderr or
// the report pipe. It keeps at most limit bytes and counts the rest, so that
// a flood neither blocks the program nor grows the supervisor (snekbox PR 81).
type stream struct {
	fd        int
	limit     int64
	buf       []byte
	total     int64
	truncated bool
}

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
	s.buf = append(s.buf, b[:keep]...)
	return over
}
