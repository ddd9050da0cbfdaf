package lsp

import "encoding/json"

// The few messages of the Language Server Protocol (3.17) ralph speaks,
// written by hand: the Go modules that carry every type of the protocol
// pull in far more than these (go.lsp.dev/protocol brings zap) and are
// old, while ralph needs a dozen structs.

type position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type lspRange struct {
	Start position `json:"start"`
	End   position `json:"end"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

type initializeParams struct {
	// ProcessID is always null: a server in the sandbox's PID namespace
	// cannot see ralph's pid, and one built on vscode-languageserver
	// (typescript-language-server, pyright) that is given it checks it
	// every few seconds and exits with status 1 when kill(pid, 0) fails.
	// The server dies with ralph anyway, with its process group and the
	// sandbox's helper.
	ProcessID        *int              `json:"processId"`
	ClientInfo       clientInfo        `json:"clientInfo"`
	RootURI          string            `json:"rootUri"`
	RootPath         string            `json:"rootPath"`
	WorkspaceFolders []workspaceFolder `json:"workspaceFolders"`
	Capabilities     clientCaps        `json:"capabilities"`
	// InitializationOptions is null: a server reads its settings from
	// workspace/configuration, which ralph answers with nulls.
	InitializationOptions any `json:"initializationOptions"`
}

type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

type clientCaps struct {
	Workspace    workspaceCaps    `json:"workspace"`
	TextDocument textDocumentCaps `json:"textDocument"`
	Window       windowCaps       `json:"window"`
}

type workspaceCaps struct {
	Configuration          bool                `json:"configuration"`
	WorkspaceFolders       bool                `json:"workspaceFolders"`
	DidChangeWatchedFiles  dynamicRegistration `json:"didChangeWatchedFiles"`
	DidChangeConfiguration dynamicRegistration `json:"didChangeConfiguration"`
	ApplyEdit              bool                `json:"applyEdit"`
}

type dynamicRegistration struct {
	DynamicRegistration bool `json:"dynamicRegistration"`
}

type textDocumentCaps struct {
	Synchronization    syncCaps        `json:"synchronization"`
	PublishDiagnostics publishDiagCaps `json:"publishDiagnostics"`
}

type syncCaps struct {
	DynamicRegistration bool `json:"dynamicRegistration"`
	DidSave             bool `json:"didSave"`
	WillSave            bool `json:"willSave"`
}

type publishDiagCaps struct {
	RelatedInformation bool `json:"relatedInformation"`
	VersionSupport     bool `json:"versionSupport"`
}

type windowCaps struct {
	WorkDoneProgress bool `json:"workDoneProgress"`
}

type textDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

type didOpenParams struct {
	TextDocument textDocumentItem `json:"textDocument"`
}

type versionedDoc struct {
	URI     string `json:"uri"`
	Version int    `json:"version"`
}

type docID struct {
	URI string `json:"uri"`
}

type contentChange struct {
	Text string `json:"text"`
}

type didChangeParams struct {
	TextDocument   versionedDoc    `json:"textDocument"`
	ContentChanges []contentChange `json:"contentChanges"`
}

type didSaveParams struct {
	TextDocument docID  `json:"textDocument"`
	Text         string `json:"text,omitempty"`
}

type didCloseParams struct {
	TextDocument docID `json:"textDocument"`
}

// File change types of workspace/didChangeWatchedFiles.
const (
	fileCreated = 1
	fileChanged = 2
	fileDeleted = 3
)

type fileEvent struct {
	URI  string `json:"uri"`
	Type int    `json:"type"`
}

type didChangeWatchedParams struct {
	Changes []fileEvent `json:"changes"`
}

type protoDiagnostic struct {
	Range    lspRange `json:"range"`
	Severity int      `json:"severity"`
	Message  string   `json:"message"`
	Source   string   `json:"source,omitempty"`
}

type publishDiagnosticsParams struct {
	URI         string            `json:"uri"`
	Version     *int              `json:"version,omitempty"`
	Diagnostics []protoDiagnostic `json:"diagnostics"`
}

type configurationParams struct {
	Items []json.RawMessage `json:"items"`
}
