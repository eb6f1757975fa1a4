package jail

import "testing"

func TestCountCPUs(t *testing.T) {
	for list, want := range map[string]int{
		"0": 1, "0-1": 2, "0-3,8,10-11": 7, "0,2,4": 3,
		"": 0, "x": 0, "3-1": 0, "0-": 0, "-1": 0, "0,,1": 0,
	} {
		if got := countCPUs(list); got != want {
			t.Errorf("countCPUs(%q) = %d, want %d", list, got, want)
		}
	}
	if n := jailCPUs(); n < 1 {
		t.Fatalf("jailCPUs() = %d", n)
	}
}
