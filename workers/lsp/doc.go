// Package lsp is ralph's small Language Server Protocol client and the
// session's set of language servers: it starts a server lazily, in the
// sandbox, on the first edit of a file it handles, tells it of each edit,
// and waits a bounded time for the diagnostics the edit caused, which the
// edit tools add to their results (report.go's lines). A server that
// crashes, hangs or floods is stopped and named in one line; the edit
// still succeeds.
package lsp
