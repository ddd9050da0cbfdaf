package mentions

import (
	"reflect"
	"testing"
)

func TestImagePathsReadsEveryFormAPathIsPastedIn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []string
		word []string // the words as written, when not the path
	}{
		{"look at @shot.png", []string{"shot.png"}, []string{"@shot.png"}},
		{"look at shot.png.", []string{"shot.png"}, []string{"shot.png"}},
		{"'/home/me/Screen Shot 1.png' what is it?", []string{"/home/me/Screen Shot 1.png"}, []string{"'/home/me/Screen Shot 1.png'"}},
		{`/home/me/Screen\ Shot\ 1.png`, []string{"/home/me/Screen Shot 1.png"}, []string{`/home/me/Screen\ Shot\ 1.png`}},
		{`see "a \"b\".JPG" and ~/x.webp`, []string{`a "b".JPG`, "~/x.webp"}, []string{`"a \"b\".JPG"`, "~/x.webp"}},
		{"file:///tmp/Screen%20Shot.gif", []string{"/tmp/Screen Shot.gif"}, nil},
		{"file://localhost/tmp/a.png file://host/tmp/b.png", []string{"/tmp/a.png"}, []string{"file://localhost/tmp/a.png"}},
		{`@"/tmp/with space.jpeg"`, []string{"/tmp/with space.jpeg"}, nil},
		{"is '/tmp/a b.png', right?", []string{"/tmp/a b.png"}, []string{"'/tmp/a b.png'"}},
		{"(see ./img/a.png)", []string{"./img/a.png"}, []string{"./img/a.png"}},
		{"notes.txt .png https://x.org/a.png ~me/a.png it's fine", nil, nil},
		{"'unclosed /tmp/a.png", []string{"/tmp/a.png"}, nil},
		{"Context:\n\n```\nwrote /tmp/log.png\n```\n\nsee /tmp/b.png", []string{"/tmp/b.png"}, nil},
		{"~~~\n/tmp/a.png", nil, nil},
	} {
		var got, words []string
		for _, p := range ImagePaths(c.in) {
			got = append(got, p.Path)
			words = append(words, c.in[p.Start:p.End])
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ImagePaths(%q) = %q, want %q", c.in, got, c.want)
		}
		if c.word != nil && !reflect.DeepEqual(words, c.word) {
			t.Errorf("ImagePaths(%q) words = %q, want %q", c.in, words, c.word)
		}
	}
}
