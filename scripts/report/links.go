package report

import (
	"fmt"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// writeLinks lists the sessions this one is linked to by a hand-off, a
// fork or a merge (links.json), so a report says where its conversation
// came from and where it went. A session without links has no section.
func writeLinks(b *strings.Builder, fs afero.Fs, root, id string) {
	l, err := memory.LoadLinks(fs, root, id)
	if err != nil {
		fmt.Fprintf(b, "\n## Linked sessions\n\n- Note: %s\n", oneLine(err.Error(), 300))
		return
	}
	if l.Empty() {
		return
	}
	b.WriteString("\n## Linked sessions\n\n")
	for _, line := range l.Lines() {
		fmt.Fprintf(b, "- %s\n", line)
	}
}
