package scripts

import (
	"os"

	"github.com/charmbracelet/glamour"
)

// renderMarkdown renders an answer for a terminal. The style is fixed
// rather than auto-detected because detection queries the terminal, which
// can stall a fast command; GLAMOUR_STYLE overrides it as glamour documents.
func renderMarkdown(md string, width int, color bool) (string, error) {
	if width <= 0 || width > 120 {
		width = 100
	}
	style := "dark"
	if s := os.Getenv("GLAMOUR_STYLE"); s != "" {
		style = s
	}
	if !color {
		style = "notty"
	}
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(width))
	if err != nil {
		return "", err
	}
	return r.Render(md)
}
