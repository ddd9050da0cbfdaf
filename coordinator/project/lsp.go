package project

import (
	"context"
	"errors"

	"github.com/ralph-dev/ralph/memory/config"
)

// approveLanguageServer decides whether a language server a project's
// .ralph/config.toml names may start: it is a program a file of the
// repository names, so it is approved exactly as a project's MCP server
// is (the same question, the same remembered approval by its
// definition), under the name lsp.NAME.
func (p *Project) approveLanguageServer(ctx context.Context, s config.LSPServer) error {
	d := p.Approval.ApproveServer(ctx, s.AsMCPServer())
	if d.Allowed {
		return nil
	}
	return errors.New(d.Reason)
}
