package view

// Palette is the one set of colours ralph's faces style their own words
// with (never the model's: its text is stripped of controls before it is
// styled). Off, every method returns its text unchanged, which is what
// NO_COLOR, TERM=dumb and output that is not a terminal get.
type Palette struct{ On bool }

// The SGR codes the palette uses: a reset after each styled run, so a
// style never leaks into the text after it.
const (
	sgrBold  = "1"
	sgrDim   = "2"
	sgrRed   = "31"
	sgrGreen = "32"
	sgrCyan  = "36"
	sgrReset = "\x1b[0m"
)

// Bold is for headings and questions.
func (p Palette) Bold(s string) string { return p.style(sgrBold, s) }

// Dim is for what ralph says beside the answer: tool lines, notes, status.
func (p Palette) Dim(s string) string { return p.style(sgrDim, s) }

// Red is for errors and removed lines.
func (p Palette) Red(s string) string { return p.style(sgrRed, s) }

// Green is for added lines and success.
func (p Palette) Green(s string) string { return p.style(sgrGreen, s) }

// Cyan is for a diff's hunk headers.
func (p Palette) Cyan(s string) string { return p.style(sgrCyan, s) }

func (p Palette) style(code, s string) string {
	if !p.On || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + sgrReset
}
