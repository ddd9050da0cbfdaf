package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPFilesystemResultsOnce is issue 36's item 9 with the real
// @modelcontextprotocol/server-filesystem, which repeats every answer as
// structured content: a short file reaches the model once, a 300 KB
// image as the note alone, and a 42 KB file as the file cut in the
// middle, its end the file's own lines rather than an escaped copy.
func TestMCPFilesystemResultsOnce(t *testing.T) {
	t.Parallel()
	server := filesystemServer(t)
	dir, env := t.TempDir(), cleanEnv(t)
	mustWrite(t, filepath.Join(dir, "short.txt"), "a short file\n")
	long := strings.Repeat("a line of the long file\n", 1800) + "THE LAST LINE\n"
	mustWrite(t, filepath.Join(dir, "long.txt"), long)
	if err := os.WriteFile(filepath.Join(dir, "big.png"), make([]byte, 300<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	userConfig(t, env, fsTable(server, "fs", "", dir))
	media, _ := json.Marshal(map[string]string{"path": filepath.Join(dir, "big.png")})
	got := fsRun(t, dir, env, [][]toolCall{
		{readCall("fs", filepath.Join(dir, "short.txt"))},
		{{"mcp__fs__read_media_file", string(media)}},
		{readCall("fs", filepath.Join(dir, "long.txt"))},
	})
	if got[0] != "a short file\n" {
		t.Errorf("the short file reached the model as %q", got[0])
	}
	if len(got[1]) > 200 || !strings.Contains(got[1], "not shown") {
		t.Errorf("the image reached the model as %d bytes: %.200q", len(got[1]), got[1])
	}
	if strings.Contains(got[2], "structured content") || !strings.HasSuffix(strings.TrimSpace(got[2]), "THE LAST LINE") || strings.Contains(got[2], `\n`) {
		t.Errorf("the long file reached the model as %d bytes ending %q", len(got[2]), got[2][len(got[2])-80:])
	}
}
