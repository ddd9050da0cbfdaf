module github.com/modelcontextprotocol/go-sdk

go 1.25.0

require (
	github.com/google/jsonschema-go v0.4.3
	github.com/segmentio/encoding v0.5.4
	github.com/yosida95/uritemplate/v3 v3.0.2
	golang.org/x/oauth2 v0.35.0
	golang.org/x/sync v0.20.0
	golang.org/x/time v0.15.0
)

require (
	github.com/segmentio/asm v1.1.3 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
