package jail

import (
	"io"
	"os"
)

// capture reads one of the program's output streams until EOF, keeping at
// most limit bytes and draining the rest so that a flood neither blocks the
// program nor grows the supervisor (snekbox PR 81). onOver is called once,
// when the first byte past the limit arrives.
type capture struct {
	buf       []byte
	total     int64
	truncated bool
}

func (c *capture) readAll(f *os.File, limit int64, onOver func()) {
	chunk := make([]byte, 64<<10)
	for {
		n, err := f.Read(chunk)
		if n > 0 {
			c.total += int64(n)
			keep := int64(n)
			if room := limit - int64(len(c.buf)); keep > room {
				keep = room
				if !c.truncated {
					c.truncated = true
					if onOver != nil {
						onOver()
					}
				}
			}
			c.buf = append(c.buf, chunk[:keep]...)
		}
		if err != nil {
			if err != io.EOF {
				c.truncated = true // a read error loses the rest: say so
			}
			return
		}
	}
}
