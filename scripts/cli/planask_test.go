package cli

import "testing"

// TestParsePlanAnswer: from ralph answer or the web page the plan takes
// a and d alone, and r only with what should change.
func TestParsePlanAnswer(t *testing.T) {
	for in, want := range map[string]string{
		"a": "accept", "accept": "accept", "d": "drop", " drop ": "drop",
		"r: split task 3": "revise: split task 3", "r split  task 3": "revise: split task 3", "revise: more tests": "revise: more tests",
	} {
		v, ok := parsePlanAnswer(in)
		if a, _ := v.(planAnswer); !ok || a.String() != want {
			t.Errorf("%q: %v %v, want %q", in, v, ok, want)
		}
	}
	for _, in := range []string{"", "r", "r:", "e", "x", "a: and more", "d now"} {
		if v, ok := parsePlanAnswer(in); ok {
			t.Errorf("%q was taken as %v", in, v)
		}
	}
}
