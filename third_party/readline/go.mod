module github.com/chzyer/readline

go 1.15

require (
	github.com/chzyer/test v1.0.0
	golang.org/x/sys v0.0.0-20220310020820-b874c991c1a5
)

require github.com/chzyer/logex v1.2.1
