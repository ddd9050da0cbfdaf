package render

import (
	"strings"
	"testing"
)

// TestRawHTMLIsShownAsWritten: text goldmark reads as HTML (generics,
// comparisons, tags, comments) is on the screen as the model wrote it,
// since a terminal draws no HTML and glamour used to drop it silently.
func TestRawHTMLIsShownAsWritten(t *testing.T) {
	for _, tc := range []struct {
		name, md string
		want     []string // each must appear in the rendered text
	}{
		{"generics", "It returns Vec<u8>, a List<String> and Promise<void>.", []string{"Vec<u8>", "List<String>", "Promise<void>"}},
		{"tags and comparison", "<b>bold</b> a<c and x>y", []string{"<b>bold</b>", "a<c and x>y"}},
		{"comparison", "if a<b and b>c then", []string{"a<b and b>c"}},
		{"cpp template", "Use std::vector<std::pair<int, int>> here.", []string{"std::vector<std::pair<int,", "int>>"}},
		{"typescript", "function f<T extends object>(x: T): Map<string, T> {}", []string{"f<T extends object>(x:", "Map<string, T>"}},
		{"autolink", "See <https://example.com/x> for more.", []string{"https://example.com/x"}},
		{"inline comment", "Keep this <!-- a note --> visible.", []string{"<!-- a note -->"}},
		{"comment block", "Before.\n\n<!-- hidden note -->\n\nAfter.", []string{"Before.", "<!-- hidden note -->", "After."}},
		{"html block", "Text.\n\n<div align=\"center\">\n  <img src=\"x.png\">\n</div>\n\nMore.", []string{"<div align=\"center\">", "<img src=\"x.png\">", "</div>", "More."}},
		{"details block", "<details>\n<summary>Why</summary>\n\nBecause.\n\n</details>", []string{"<details>", "<summary>Why</summary>", "Because.", "</details>"}},
		{"code span", "The type `Vec<u8>` and `a<b`.", []string{"Vec<u8>", "a<b"}},
		{"code block", "```rust\nlet v: Vec<u8> = vec![];\n```", []string{"Vec<u8>"}},
		{"list item", "- `Option<T>` or Result<T, E>\n- Box<dyn Error>", []string{"Option<T>", "Result<T, E>", "Box<dyn Error>"}},
		{"heading", "# Using HashMap<K, V>", []string{"HashMap<K, V>"}},
		{"table", "| type | use |\n|---|---|\n| Arc<Mutex<T>> | shared |", []string{"Arc<Mutex<T>>"}},
		{"entity in tag", "<a title=\"&#27;[2J\">x</a>", []string{"<a title=", "x</a>"}},
	} {
		for _, style := range []string{StyleDark, StyleNoTTY} {
			out := Markdown(tc.md, Options{Width: 100, Color: true, Style: style})
			if strings.Contains(stripSGR(out), "\x1b") {
				t.Errorf("%s/%s: a control sequence reached the output: %q", tc.name, style, out)
			}
			plain := strings.Join(strings.Fields(stripSGR(out)), " ")
			for _, w := range tc.want {
				if !strings.Contains(plain, strings.Join(strings.Fields(w), " ")) {
					t.Errorf("%s/%s: %q is missing from the rendering:\n%s", tc.name, style, w, stripSGR(out))
				}
			}
		}
	}
}
