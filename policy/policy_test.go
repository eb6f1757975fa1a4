package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPresetsDecode(t *testing.T) {
	for _, name := range PresetNames() {
		p, err := Preset(name)
		if err != nil {
			t.Fatalf("preset %s: %v", name, err)
		}
		if p.Name != name || len(p.Run.Command) == 0 {
			t.Fatalf("preset %s decoded as %+v", name, p)
		}
	}
	if got := strings.Join(PresetNames(), ","); got != "bash,exec,node,python,sh" {
		t.Fatalf("presets %s", got)
	}
}

func TestPresetForFile(t *testing.T) {
	for file, want := range map[string]string{"a.py": "python", "b.js": "node", "c.sh": "bash", "D.PY": "python", "e.mjs": "node"} {
		if got, ok := PresetForFile(file); !ok || got != want {
			t.Errorf("%s: got %q, want %q", file, got, want)
		}
	}
	for _, file := range []string{"a.rb", "noext", "a."} {
		if got, ok := PresetForFile(file); ok {
			t.Errorf("%s: got %q, want none", file, got)
		}
	}
}

func TestDecodeGood(t *testing.T) {
	p, err := Load("../testdata/policies/good/python-strict.toml")
	if err != nil {
		t.Fatal(err)
	}
	// From the file, from its base, and from the defaults.
	if p.Name != "python-strict" || p.Limits.Memory != 64<<20 || p.Limits.OutputAction != OutputKill ||
		p.Net.Mode != NetLoopback || p.Run.File != "main.py" || p.Limits.Stack != 8<<20 {
		t.Fatalf("decoded %+v", p)
	}
	f, err := Load("../testdata/policies/good/full.toml")
	if err != nil {
		t.Fatal(err)
	}
	if f.Limits.WallTime.Std() != time.Minute || f.Limits.Memory != 1<<30 || f.Limits.Output != 10_000_000 ||
		f.FS.Proc != ProcPid || f.Run.UID != 2000 || len(f.FS.ReadOnly) != 6 {
		t.Fatalf("decoded %+v", f)
	}
}

// Each bad/NAME.toml fails to decode with an error containing bad/NAME.err,
// unless it decodes and only validation (in package validate) refuses it.
func TestDecodeBad(t *testing.T) {
	files, _ := filepath.Glob("../testdata/policies/bad/*.toml")
	if len(files) < 5 {
		t.Fatalf("found %d bad policies", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(f, ".toml") + ".err")
			if err != nil {
				t.Fatal(err)
			}
			_, err = Load(f)
			if filepath.Base(f) == "invalid-values.toml" {
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("decoded without error")
			}
			if !strings.Contains(err.Error(), strings.TrimSpace(string(want))) {
				t.Fatalf("error %q does not contain %q", err, strings.TrimSpace(string(want)))
			}
		})
	}
}

func TestSizes(t *testing.T) {
	good := map[string]Size{"64MiB": 64 << 20, "1GiB": 1 << 30, "512KiB": 512 << 10, "4096": 4096, "10MB": 10_000_000, "0": 0, "1 MiB": 1 << 20, "2K": 2048}
	for s, want := range good {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "-1", "12XB", "1.5GiB", "MiB", "99999999999999GiB"} {
		if _, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) accepted", s)
		}
	}
	for _, s := range []Size{1 << 30, 64 << 20, 4096, 1000, 64_000_000, 1536, 0} {
		if back, err := ParseSize(s.String()); err != nil || back != s {
			t.Errorf("%d printed as %q reads back as %d", s, s, back)
		}
	}
	// In the unit that takes the fewest digits: a limit given as 64MB is
	// printed so, not as 62500KiB.
	for s, want := range map[Size]string{64 << 20: "64MiB", 64_000_000: "64MB", 1000: "1KB", 1024: "1KiB", 1536: "1536B", 0: "0B", 3 << 30: "3GiB"} {
		if got := s.String(); got != want {
			t.Errorf("%d printed as %q, want %q", s, got, want)
		}
	}
}

func TestShowRoundTrips(t *testing.T) {
	for _, name := range PresetNames() {
		p, _ := Preset(name)
		b, err := Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Decode(b, name+"-shown.toml")
		if err != nil {
			t.Fatalf("%s: shown policy does not decode: %v\n%s", name, err, b)
		}
		b2, _ := Encode(q)
		if string(b) != string(b2) {
			t.Fatalf("%s: show is not stable:\n%s\n---\n%s", name, b, b2)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, name := range PresetNames() {
		src, _ := PresetSource(name)
		f.Add(src)
	}
	files, _ := filepath.Glob("../testdata/policies/*/*.toml")
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(data, "fuzz.toml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if _, err := Encode(p); err != nil {
			t.Fatalf("decoded policy does not encode: %v", err)
		}
	})
}

// The built-in presets as presets_gen.go builds them are their TOML files
// decoded, every field; after editing a preset: make generate.
func TestPresetsGenerated(t *testing.T) {
	names := PresetNames()
	if len(presetBuilders) != len(names) {
		t.Fatalf("presets_gen.go builds %d presets, presets/ has %d: make generate", len(presetBuilders), len(names))
	}
	for _, name := range names {
		src, _ := PresetSource(name)
		want, err := decode(src, name+".toml (built in)", Defaults())
		if err != nil {
			t.Fatal(err)
		}
		got, err := Preset(name)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("preset %s: presets_gen.go builds %+v, its TOML decodes to %+v: make generate", name, got, want)
		}
		// Each call builds its own: a caller's changes reach no other.
		got.Run.Env[0] = "changed"
		if again, _ := Preset(name); again.Run.Env[0] == "changed" {
			t.Errorf("preset %s: two calls share their lists", name)
		}
	}
}

// A bad value stops the decoder; the unknown keys are named all the same,
// in the order of their lines (only the bad value was).
func TestDecodeEveryProblem(t *testing.T) {
	data := "base = \"python\"\n[limits]\nmemroy = \"1MiB\"\nwall_time = \"abc\"\n[fs]\nrw = [\"/x\"]\n"
	_, err := Decode([]byte(data), "p.toml")
	if err == nil {
		t.Fatal("no error")
	}
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		lines = append(lines, strings.SplitN(l, ": ", 3)[0]+": "+strings.SplitN(l, ": ", 3)[1])
	}
	want := []string{`p.toml:3: "limits.memroy"`, `p.toml:4: "limits.wall_time"`, `p.toml:6: "fs.rw"`}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("problems %q, want %q\n%v", lines, want, err)
	}
}
