package text

import "time"

// Clock is a moment as people read it in a status line: "14:05" today,
// "Tue 14:05" within the week ahead, "Jan 2 14:05" further off, in the
// local time zone.
func Clock(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	y1, m1, d1 := t.Date()
	y2, m2, d2 := now.Date()
	switch {
	case y1 == y2 && m1 == m2 && d1 == d2:
		return t.Format("15:04")
	case t.After(now) && t.Sub(now) < 6*24*time.Hour:
		return t.Format("Mon 15:04")
	}
	return t.Format("Jan 2 15:04")
}
