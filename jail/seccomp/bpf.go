package seccomp

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// decodeBPF reads a filter in the kernel's layout (struct sock_filter,
// native byte order: little endian on amd64).
func decodeBPF(raw []byte) ([]unix.SockFilter, error) {
	if len(raw) == 0 || len(raw)%8 != 0 || len(raw)/8 > 4096 {
		return nil, fmt.Errorf("a BPF filter of %d bytes: want a whole number of 8-byte instructions, 1 to 4096", len(raw))
	}
	prog := make([]unix.SockFilter, len(raw)/8)
	for i := range prog {
		b := raw[i*8:]
		prog[i] = unix.SockFilter{Code: binary.LittleEndian.Uint16(b), Jt: b[2], Jf: b[3], K: binary.LittleEndian.Uint32(b[4:])}
	}
	return prog, nil
}

// encodeBPF is decodeBPF's inverse.
func encodeBPF(prog []unix.SockFilter) []byte {
	raw := make([]byte, 8*len(prog))
	for i, in := range prog {
		b := raw[i*8:]
		binary.LittleEndian.PutUint16(b, in.Code)
		b[2], b[3] = in.Jt, in.Jf
		binary.LittleEndian.PutUint32(b[4:], in.K)
	}
	return raw
}
