package scripts

import "github.com/ralph-dev/ralph/scripts/render"

// renderMarkdown renders an answer for a terminal. ralph renders with its
// own goldmark-based renderer rather than glamour: glamour's syntax
// highlighter costs ~17 ms of package initialisation at every start.
func renderMarkdown(md string, width int, color bool) (string, error) {
	return render.Markdown(md, render.Options{Width: width, Color: color}), nil
}
