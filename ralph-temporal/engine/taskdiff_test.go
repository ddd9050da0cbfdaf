package engine

import "testing"

// TestATaskDiffGivesBackTheFile: applied to the file it was made from, a
// diff gives the file the integration wrote, whatever changed where.
func TestATaskDiffGivesBackTheFile(t *testing.T) {
	t.Parallel()
	cases := [][2]string{
		{"", ""},
		{"", "- [ ] a\n"},
		{"- [ ] a\n", ""},
		{"- [ ] a\n- [ ] b\n", "- [ ] a\n- [x] b\n"},
		{"- [ ] a\n- [ ] b\n- [ ] c", "- [x] a\n  attempts: 1\n- [ ] b\n- [ ] c"},
		{"x\nx\nx\n", "x\nx\n"},
		{"x\nx\n", "x\nx\nx\n"},
		{"a\nb\n", "a\nb"},
	}
	for _, c := range cases {
		d := diffTasks(c[0], c[1])
		got, err := d.apply(c[0])
		if err != nil || got != c[1] {
			t.Errorf("diff %+v of %q to %q gives %q (%v)", d, c[0], c[1], got, err)
		}
	}
	if _, err := (TaskDiff{From: 2, To: 5}).apply("a\n"); err == nil {
		t.Error("a diff past the file's end applied")
	}
}
