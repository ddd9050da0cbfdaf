package terminal

import "testing"

func TestKeyQuestion(t *testing.T) {
	approval := KeyQuestion{Keys: "ynt"}
	yesNo := KeyQuestion{Keys: "yn", Default: "n"}
	cases := []struct {
		q      KeyQuestion
		r      rune
		press  Press
		answer string
	}{
		{approval, 'y', PressAnswer, "y"},
		{approval, 'T', PressAnswer, "t"},
		{approval, 'a', PressUnoffered, ""},
		{approval, 'é', PressUnoffered, ""},
		{approval, ' ', PressUnoffered, ""},
		{approval, '\r', PressIgnored, ""},
		{approval, 3, PressOther, ""},
		{approval, 0x1b, PressOther, ""},
		{yesNo, '\r', PressAnswer, "n"},
		{yesNo, '\n', PressAnswer, "n"},
		{yesNo, 'Y', PressAnswer, "y"},
	}
	for _, c := range cases {
		if p, a := c.q.Press(c.r); p != c.press || a != c.answer {
			t.Errorf("%+v.Press(%q) = %v, %q; want %v, %q", c.q, c.r, p, a, c.press, c.answer)
		}
	}
	for keys, want := range map[string]string{"ynt": "press y, n or t", "yn": "press y or n", "ared": "press a, r, e or d", "y": "press y", "": ""} {
		if got := (KeyQuestion{Keys: keys}).Hint(); got != want {
			t.Errorf("Hint(%q) = %q, want %q", keys, got, want)
		}
	}
}
