//go:build linux

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// acpSwapScript is the red team's swapper (issue 91, REPRO-1): it makes
// DIR a real directory holding FILE and DIR.l a link to TARGET, then
// exchanges the two every 0.2 ms with renameat2(RENAME_EXCHANGE).
const acpSwapScript = `import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
d, tgt, f = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(d, exist_ok=True)
open(os.path.join(d, f), 'w').write('inside\n')
os.symlink(tgt, d + '.l')
end = time.time() + 60
while time.time() < end:
    if libc.renameat2(-100, d.encode(), -100, (d + '.l').encode(), 2) != 0:
        break
    time.sleep(0.0002)
`

// TestACPEditorRaceWithTheModelsBackgroundCommand is REPRO-1 through
// ralph acp and the npm client: the model's background command swaps two
// project directories with links out of the project (one to a file the
// writes aim at, one to a key the reads aim at) while write_file and
// read_file go through an editor that follows links. ralph holds its
// processes still while the editor is asked, so nothing outside is
// written and no read returns the key.
func TestACPEditorRaceWithTheModelsBackgroundCommand(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 for the swapper")
	}
	base := t.TempDir()
	victim, keys := filepath.Join(base, "victim"), filepath.Join(base, "keys")
	mustWrite(t, filepath.Join(victim, "v.txt"), "untouched\n")
	mustWrite(t, filepath.Join(keys, "id"), "OUTSIDE-KEY\n")
	turns := [][]toolCall{
		{{"run_command", fmt.Sprintf(`{"command":"%s swap.py d %s v.txt & %s swap.py k %s id & wait","background":true}`, py, victim, py, keys)}},
		{{"run_command", `{"command":"sleep 1"}`}},
	}
	const n = 20
	for i := range n {
		dots := strings.Repeat("./", i)
		turns = append(turns,
			[]toolCall{{"write_file", fmt.Sprintf(`{"path":"d/%sv.txt","content":"PWNED-%d\n"}`, dots, i)}},
			[]toolCall{{"read_file", fmt.Sprintf(`{"path":"k/%sid"}`, dots)}})
	}
	dir, env, _ := acpProject(t, toolScenario(t, "acp-fsrace", turns, "done"))
	mustWrite(t, filepath.Join(dir, "swap.py"), acpSwapScript)
	s := acpEditor(t, dir, env, acpPlan{
		// An editor that takes 40 ms before it opens the path leaves
		// the swapper time to put a link in: before the freeze, about
		// half of the writes landed outside.
		FS: acpFS{Read: true, Write: true}, WriteDisk: true, FSDelayMs: 40,
		Steps: []acpStep{{Op: "new", Cwd: dir}, {Op: "prompt", Text: "swap and write"}},
	})
	if got := readFileT(t, filepath.Join(victim, "v.txt")); got != "untouched\n" {
		t.Errorf("the editor wrote outside the project: %q", got)
	}
	out := s.toolText()
	if strings.Contains(out, "OUTSIDE-KEY") {
		t.Errorf("read_file returned the key outside the project:\n%s", out)
	}
	asked := len(s.requests("fs/write_text_file")) + len(s.requests("fs/read_text_file"))
	if asked == 0 {
		t.Errorf("the editor was never asked: the test shows nothing:\n%s", out)
	}
	t.Logf("the editor was asked %d times of %d calls", asked, 2*n)
}
