package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// modulePath is ralph's module: the types under it have their sources,
// and so their field comments, beneath the module's root.
const modulePath = "github.com/ralph-dev/ralph"

// field is one JSON member of a type as encoding/json writes it.
type field struct {
	name string
	typ  reflect.Type
	// always says the member is never left out (no omitempty or
	// omitzero).
	always bool
	// doc is the meaning, from the Go field's comment.
	doc string
}

// jsonFields lists t's members in the order encoding/json writes them:
// an embedded struct's fields where it is embedded, a field of a
// shallower struct hiding a deeper one of the same name. Fields of type
// *struct{} hide a member and are never written, so they are left out.
func jsonFields(t reflect.Type, docs *comments) ([]field, error) {
	type found struct {
		field
		depth int
	}
	var all []found
	var walk func(t reflect.Type, depth int) error
	walk = func(t reflect.Type, depth int) error {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				if err := walk(f.Type, depth+1); err != nil {
					return err
				}
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			doc, err := docs.field(t, f.Name)
			if err != nil {
				return err
			}
			omit := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
			all = append(all, found{field{name: name, typ: f.Type, always: !omit, doc: doc}, depth})
		}
		return nil
	}
	if err := walk(t, 0); err != nil {
		return nil, err
	}
	shallowest := map[string]int{}
	for _, f := range all {
		if d, ok := shallowest[f.name]; !ok || f.depth < d {
			shallowest[f.name] = f.depth
		}
	}
	var out []field
	for _, f := range all {
		if f.depth != shallowest[f.name] || f.typ == reflect.TypeFor[*struct{}]() {
			continue
		}
		out = append(out, f.field)
	}
	return out, nil
}

// comments are the field comments of the module's packages, read from
// their sources once per package.
type comments struct {
	root string
	// byPackage maps a package's import path to its structs' field
	// comments: type name, then field name.
	byPackage map[string]map[string]map[string]string
}

// field is the comment of t's field name: the one above it, or the one
// after it on its line; a field with neither shares the comment above
// the field before it when that comment names it ("Usage and CostUSD
// are …").
func (c *comments) field(t reflect.Type, name string) (string, error) {
	if !strings.HasPrefix(t.PkgPath(), modulePath) {
		return "", nil
	}
	pkg, ok := c.byPackage[t.PkgPath()]
	if !ok {
		var err error
		if pkg, err = c.read(t.PkgPath()); err != nil {
			return "", err
		}
		c.byPackage[t.PkgPath()] = pkg
	}
	return pkg[t.Name()][name], nil
}

// typeComment is the comment of t's declaration.
func (c *comments) typeComment(t reflect.Type) (string, error) {
	return c.field(t, typeDoc)
}

// read parses a package's sources (tests left out) for its structs'
// field comments.
func (c *comments) read(importPath string) (map[string]map[string]string, error) {
	dir := filepath.Join(c.root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(importPath, modulePath), "/")))
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	out := map[string]map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			fields := map[string]string{}
			var prev string
			for _, fl := range st.Fields.List {
				doc := strings.TrimSpace(oneParagraph(fl.Doc.Text()) + " " + oneParagraph(fl.Comment.Text()))
				for _, id := range fl.Names {
					switch {
					case doc != "":
						fields[id.Name] = doc
					case namesIt(prev, id.Name):
						fields[id.Name] = prev
					}
				}
				if doc != "" {
					prev = doc
				}
			}
			out[ts.Name.Name] = fields
			return true
		})
		for _, d := range f.Decls {
			// A type's own comment is on its declaration when it is
			// declared alone.
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE && len(gd.Specs) == 1 && gd.Doc != nil {
				if fields, ok := out[gd.Specs[0].(*ast.TypeSpec).Name.Name]; ok {
					fields[typeDoc] = oneParagraph(gd.Doc.Text())
				}
			}
		}
	}
	return out, nil
}

// typeDoc is the key of a type's own comment among its fields'.
const typeDoc = ""

// namesIt says a comment is about name too: name is among the words
// before its first "is" or "are", or says something itself ("…;
// ModelLoaded says …").
func namesIt(doc, name string) bool {
	if strings.Contains(doc, name+" says ") || strings.Contains(doc, name+" is ") {
		return true
	}
	for _, w := range strings.Fields(doc) {
		switch w = strings.Trim(w, ","); w {
		case "is", "are":
			return false
		case name:
			return true
		}
	}
	return false
}

// eventTypes are the values of the event package's Type constants (the
// kinds).
func eventTypes(root string) ([]string, error) {
	path := filepath.Join(root, "coordinator", "event", "event.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	var types []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Type" {
				continue
			}
			for _, val := range v.Values {
				if lit, ok := val.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					types = append(types, strings.Trim(lit.Value, `"`))
				}
			}
		}
	}
	if len(types) == 0 {
		return nil, fmt.Errorf("no Type constants in %s", path)
	}
	return types, nil
}

// oneParagraph joins a comment's lines into one.
func oneParagraph(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
