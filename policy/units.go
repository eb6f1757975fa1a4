package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Size is a number of bytes. In TOML it is an integer (bytes) or a string
// with a unit: "64MiB", "512KiB", "1GiB", "10MB", "4096".
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	// Longest suffixes first so that "MiB" is not read as "B".
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30},
	{"B", 1},
}

// ParseSize reads a size such as "64MiB" or "4096".
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size: want a number of bytes or a number with a unit, e.g. \"64MiB\"")
	}
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			mult = u.mult
			t = strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q: want a non-negative whole number of bytes or a unit of B, KiB, MiB, GiB (K, M, G are the same), KB, MB, GB (powers of 1000), e.g. \"64MiB\"", s)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return Size(n * mult), nil
}

// String prints the size in the unit that divides it exactly with the
// fewest digits, binary before decimal: 64MiB, 64MB (not 62500KiB), 4KiB.
func (s Size) String() string {
	best := strconv.FormatInt(int64(s), 10)
	unit := "B"
	if s == 0 {
		return best + unit
	}
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}} {
		if int64(s)%u.mult == 0 {
			if v := strconv.FormatInt(int64(s)/u.mult, 10); len(v) < len(best) {
				best, unit = v, u.suffix
			}
		}
	}
	return best + unit
}

// UnmarshalTOML accepts an integer (bytes) or a string with a unit.
func (s *Size) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return fmt.Errorf("size %d is negative", x)
		}
		*s = Size(x)
		return nil
	case string:
		n, err := ParseSize(x)
		if err != nil {
			return err
		}
		*s = n
		return nil
	}
	return fmt.Errorf("a size must be an integer number of bytes or a string such as \"64MiB\", not %T", v)
}

// MarshalText lets the encoder print sizes with their unit.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Duration is a span of time. In TOML it is a string such as "500ms" or "2s".
type Duration time.Duration

// ParseDuration reads a duration such as "500ms"; a bare number is refused
// because its unit would be a guess.
func ParseDuration(s string) (Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("bad duration %q: want a number with a unit, e.g. \"500ms\", \"2s\", \"1m\"", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return Duration(d), nil
}

func (d Duration) String() string { return time.Duration(d).String() }

// Std returns the duration as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// UnmarshalTOML accepts a string with a unit.
func (d *Duration) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("a duration must be a string with a unit, e.g. \"2s\", not %v", v)
	}
	x, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = x
	return nil
}

// MarshalText lets the encoder print durations with their unit.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }
