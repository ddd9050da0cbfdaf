package e2e

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestAttackUndoPutsBackNoPlantedObject: the model's command changes b.txt
// and then replaces the loose object that holds your b.txt, under that
// object's own name, with bytes of its own (a command may write
// .git/objects, which its own git commit needs; git reads a loose object
// without checking its name). ralph undo must not write the model's bytes
// back as yours: it fails in one sentence naming the file, exits non-zero
// and writes nothing.
func TestAttackUndoPutsBackNoPlantedObject(t *testing.T) {
	t.Parallel()
	dir := gitProjectDir(t)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("blob 9\x00backdoor\n"))
	zw.Close()
	var planted strings.Builder
	for _, c := range z.Bytes() {
		fmt.Fprintf(&planted, "\\%03o", c)
	}
	script := "printf 'model\\n' > b.txt && o=$(git rev-parse HEAD:b.txt) && d=.git/objects/$(echo $o | cut -c1-2) && " +
		"f=$d/$(echo $o | cut -c3-) && rm -f $f && printf '" + planted.String() + "' > $f && git cat-file blob $o"
	args, _ := json.Marshal(map[string]string{"command": script})
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if msgs[len(msgs)-1].Role == "tool" {
			return llmtest.Response{Text: "done"}
		}
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "run_command", Arguments: string(args)}}}
	})
	t.Cleanup(srv.Close)
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	if r := ralph(t, dir, env, nil, "-y", "plant it"); r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := shIn(t, dir, "git cat-file blob HEAD:b.txt"); got != "backdoor\n" {
		t.Fatalf("the command did not plant the object (the test's premise): %q", got)
	}
	u := ralph(t, dir, env, nil, "undo")
	if u.code == 0 {
		t.Fatalf("undo put back a planted object and exited 0\n%s%s", u.stdout, u.stderr)
	}
	if !strings.Contains(u.stderr, "b.txt") || !strings.Contains(u.stderr, "changed after the checkpoint") {
		t.Errorf("undo's refusal does not say what happened to b.txt:\n%s", u.stderr)
	}
	if c, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(c) != "model\n" {
		t.Errorf("the refused undo wrote b.txt: %q", c)
	}
	t.Logf("undo said:\n%s", u.stderr)
}
