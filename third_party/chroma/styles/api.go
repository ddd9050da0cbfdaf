package styles

import (
	"embed"
	"io/fs"
	"sort"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed *.xml
var embedded embed.FS

// Registry of Styles.
//
// The embedded styles are parsed into it on first use of Get or Names, not
// in package init: parsing all of them took ~5 ms and 1.7 MB at the start of
// every program that linked chroma. Styles registered before that are kept:
// an embedded style never replaces one of the same name, as if it had been
// registered first, as it used to be. Call Get or Names before reading it
// directly for an embedded style.
var Registry = map[string]*chroma.Style{}

// Fallback style. Reassign to change the default fallback style. It is nil
// until the embedded styles are loaded, which then set it to "swapoff"
// unless it was reassigned.
var Fallback *chroma.Style

var loadOnce sync.Once

// loadEmbedded adds every embedded style that is not registered yet.
func loadEmbedded() {
	loadOnce.Do(func() {
		files, err := fs.ReadDir(embedded, ".")
		if err != nil {
			panic(err)
		}
		for _, file := range files {
			if file.IsDir() {
				continue
			}
			r, err := embedded.Open(file.Name())
			if err != nil {
				panic(err)
			}
			style, err := chroma.NewXMLStyle(r)
			if err != nil {
				panic(err)
			}
			if _, ok := Registry[style.Name]; !ok {
				Registry[style.Name] = style
			}
			_ = r.Close()
		}
		if Fallback == nil {
			Fallback = Registry["swapoff"]
		}
	})
}

// Register a chroma.Style.
func Register(style *chroma.Style) *chroma.Style {
	Registry[style.Name] = style
	return style
}

// Names of all available styles.
func Names() []string {
	loadEmbedded()
	out := []string{}
	for name := range Registry {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Get named style, or Fallback. A style registered by name is returned
// without loading the embedded ones.
func Get(name string) *chroma.Style {
	if style, ok := Registry[name]; ok {
		return style
	}
	loadEmbedded()
	if style, ok := Registry[name]; ok {
		return style
	}
	return Fallback
}
