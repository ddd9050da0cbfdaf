package childenv

import (
	"bytes"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Assignment is one variable a CLAUDE_ENV_FILE sets.
type Assignment struct {
	Name, Value string
}

// ParseEnvFile reads a CLAUDE_ENV_FILE as the shell would source it, but
// without running anything: Claude Code sources the file before each
// command, and ralph never sources a file a hook wrote outside the
// sandbox. Only assignments count, `export NAME=value` (and `declare -x`,
// `typeset -x`) or a bare `NAME=value`, their values expanded as the shell
// would (quotes, $NAME, ${NAME}, ~) against base and the assignments
// before them, so `export PATH="$HOME/shim:$PATH"` puts the shim first.
// A value that needs a command to expand ($(…), backquotes, <(…)) is
// skipped, and so is every other statement: ignored counts them, so that
// the person is told the file held more than ralph applied.
func ParseEnvFile(data []byte, base []string) (set []Assignment, ignored int, err error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(data), "CLAUDE_ENV_FILE")
	if err != nil {
		return nil, 0, fmt.Errorf("the environment file is not shell ralph can read: %w", err)
	}
	env := map[string]string{}
	for _, kv := range base {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	cfg := &expand.Config{Env: envMap(env)}
	add := func(a *syntax.Assign) bool {
		if a.Name == nil || a.Naked || a.Append || a.Array != nil || a.Index != nil {
			return false
		}
		value := ""
		if a.Value != nil {
			v, err := expand.Literal(cfg, a.Value)
			if err != nil {
				return false
			}
			value = v
		}
		env[a.Name.Value] = value
		set = append(set, Assignment{a.Name.Value, value})
		return true
	}
	for _, st := range f.Stmts {
		if st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 {
			ignored++
			continue
		}
		switch c := st.Cmd.(type) {
		case *syntax.DeclClause:
			if !exporting(c) {
				ignored++
				continue
			}
			for _, a := range c.Args {
				if a.Naked {
					// `export NAME` exports what is set already, and
					// declare's -x is its option.
					continue
				}
				if !add(a) {
					ignored++
				}
			}
		case *syntax.CallExpr:
			if len(c.Args) > 0 || len(c.Assigns) == 0 {
				ignored++
				continue
			}
			for _, a := range c.Assigns {
				if !add(a) {
					ignored++
				}
			}
		default:
			ignored++
		}
	}
	return set, ignored, nil
}

// exporting reports whether a declaration exports what it assigns:
// export, or declare/typeset with -x and no other option ralph would
// have to model.
func exporting(c *syntax.DeclClause) bool {
	if c.Variant == nil {
		return false
	}
	switch c.Variant.Value {
	case "export":
		return true
	case "declare", "typeset":
		flag := false
		for _, a := range c.Args {
			if a.Naked && a.Value != nil {
				lit := a.Value.Lit()
				if lit != "-x" {
					return false
				}
				flag = true
			}
		}
		return flag
	}
	return false
}

// envMap is an expand.Environ over a map that ParseEnvFile updates as it
// goes: every variable counts as exported and set.
type envMap map[string]string

func (m envMap) Get(name string) expand.Variable {
	v, ok := m[name]
	if !ok {
		return expand.Variable{}
	}
	return expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: v}
}

func (m envMap) Each(f func(name string, vr expand.Variable) bool) {
	for k := range m {
		if !f(k, m.Get(k)) {
			return
		}
	}
}
