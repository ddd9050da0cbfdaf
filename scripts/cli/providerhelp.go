package cli

import (
	"strings"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// The help text's words about providers come from the provider table
// (memory/providers): the key variables, the endpoint variables, a local
// server's endpoint and model are its facts, and a second copy here would
// drift from the row (TestProviderFactsLiveInTheTable).

// modelHelp is the root command's paragraph on how the model is chosen,
// wrapped as the rest of the help is.
func modelHelp() string {
	var keys, titles, prefixes, urls []string
	for _, p := range providers.All() {
		if p.KeyEnv != "" {
			keys, titles = append(keys, p.KeyEnv), append(titles, p.Title())
		}
		for _, prefix := range p.ModelPrefixes {
			prefixes = append(prefixes, prefix+"…")
		}
		if v := p.URLVariable(); v != "" && p.Name != providers.Default().Name {
			urls = append(urls, v)
		}
	}
	endpoint := providers.OpenAIBaseURLEnv
	if len(urls) > 0 {
		endpoint += " (or " + orList(urls) + ")"
	}
	return terminal.Wrap("The model is configured by the key a person has ("+orList(keys)+" picks "+orList(titles)+
		"; a "+orList(prefixes)+" model picks its own), --provider, "+endpoint+" and "+config.ModelSetting.Env+
		", the flags below, or .ralph/config.toml (project) over ~/.config/ralph/config.toml. "+
		"Local endpoints ("+strings.Join(localTitles(), ", ")+", vLLM, LM Studio, llama.cpp) need no key. "+
		"ralph doctor says which provider and why.", 82)
}

// localExample is the help's example of a local model: the first local
// row's endpoint and default model.
func localExample() string {
	for _, p := range providers.All() {
		if p.Local {
			return providers.OpenAIBaseURLEnv + "=" + p.BaseURL + " " + config.ModelSetting.Env + "=" + p.DefaultModel
		}
	}
	return config.ModelSetting.Env + "=" + providers.Default().DefaultModel
}

// localEndpoint is --base-url's example: the first local row's endpoint.
func localEndpoint() string {
	for _, p := range providers.All() {
		if p.Local {
			return p.BaseURL
		}
	}
	return providers.Default().BaseURL
}

// localTitles are the names of the table's local providers.
func localTitles() []string {
	var out []string
	for _, p := range providers.All() {
		if p.Local {
			out = append(out, p.Title())
		}
	}
	return out
}

// orList is words as a sentence lists choices: "a, b or c".
func orList(words []string) string {
	switch n := len(words); n {
	case 0:
		return ""
	case 1:
		return words[0]
	default:
		return strings.Join(words[:n-1], ", ") + " or " + words[n-1]
	}
}
