package checkpoint

import (
	"context"
	"testing"

	"github.com/ralph-dev/ralph/memory/git"
)

// BenchmarkStampGit is the look at the work tree a chat takes when it lets
// the project go and when it takes it back, on ralph's own repository.
func BenchmarkStampGit(b *testing.B) {
	repo, err := git.Open(context.Background(), "../..")
	if err != nil {
		b.Skip("not in a git work tree")
	}
	for b.Loop() {
		if s := stampGit(context.Background(), repo); len(s) == 0 {
			b.Fatal("no files stamped")
		}
	}
}
