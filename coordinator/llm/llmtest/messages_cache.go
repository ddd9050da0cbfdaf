package llmtest

import (
	"crypto/sha256"
	"encoding/json"
)

// The prompt cache of the Messages API, simulated. The real cache keys a
// request's prefix (tools, then system, then the messages, in that order)
// at each block marked with cache_control; a later request that repeats a
// remembered prefix reads it from the cache, and the part after it up to
// the request's last breakpoint is written. The API looks back about 20
// blocks from each breakpoint for an earlier remembered prefix, and a
// change of the model, the tools, tool_choice or the thinking settings
// starts the prefix afresh (docs.claude.com, prompt caching). The
// stand-in keeps what it has seen for the server's lifetime: its tests
// run well within the five minutes an entry lives.

// cacheLookback is how many blocks before a breakpoint the cache checks
// for an earlier hit.
const cacheLookback = 20

// prefixKey is the hash of a request prefix, cache_control stripped.
type prefixKey [sha256.Size]byte

// cacheUse is what one request reads from and writes to the cache.
type cacheUse struct {
	read, write int         // tokens
	remember    []prefixKey // the prefixes at its breakpoints
	tokens      []int       // their token counts
}

// cachePrefixes hashes the request's blocks in cache order. keys[i] is
// the prefix that ends with block i, tokens[i] its size in estimated
// tokens, marked[i] whether block i carries cache_control.
func cachePrefixes(req *messagesRequest, system []contentBlock, msgs [][]contentBlock) (keys []prefixKey, tokens []int, marked []bool) {
	settings, _ := json.Marshal(map[string]any{"model": req.Model, "tool_choice": req.ToolChoice, "thinking": req.Thinking})
	h := sha256.Sum256(settings)
	chars := 0
	add := func(kind string, raw json.RawMessage, cache bool) {
		canon := canonical(raw)
		next := sha256.New()
		next.Write(h[:])
		next.Write([]byte(kind))
		next.Write(canon)
		copy(h[:], next.Sum(nil))
		chars += len(canon)
		keys = append(keys, h)
		tokens = append(tokens, quarter(chars))
		marked = append(marked, cache)
	}
	for _, t := range req.Tools {
		var tool struct {
			Cache json.RawMessage `json:"cache_control"`
		}
		_ = json.Unmarshal(t, &tool)
		add("tool", t, hasCache(tool.Cache))
	}
	for _, b := range system {
		add("system", b.raw, hasCache(b.Cache))
	}
	for i, bs := range msgs {
		for _, b := range bs {
			add(req.Messages[i].Role, b.raw, hasCache(b.Cache))
		}
	}
	return keys, tokens, marked
}

// canonical is a block's JSON without its cache_control and with its
// keys sorted, so that moving a breakpoint does not change the prefix.
func canonical(raw json.RawMessage) []byte {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "cache_control")
	}
	b, _ := json.Marshal(v)
	return b
}

// lookupCache finds what a request reads from the cache and writes to it,
// with prompt tokens in all. Breakpoints below the scenario's minimum
// prefix are ignored, as the real API ignores them silently.
func (s *Server) lookupCache(req *messagesRequest, system []contentBlock, msgs [][]contentBlock, prompt int) *cacheUse {
	keys, tokens, marked := cachePrefixes(req, system, msgs)
	minTokens := 0
	if s.scenario != nil {
		minTokens = s.scenario.CacheMinTokens
	}
	use := &cacheUse{}
	hit, last := -1, -1
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range keys {
		if !marked[i] || tokens[i] < minTokens {
			continue
		}
		last = i
		use.remember = append(use.remember, keys[i])
		use.tokens = append(use.tokens, tokens[i])
		for j := i; j >= 0 && j > i-cacheLookback; j-- {
			if _, ok := s.cache[keys[j]]; ok {
				hit = max(hit, j)
				break
			}
		}
	}
	if hit >= 0 {
		use.read = min(tokens[hit], prompt)
	}
	if last > hit {
		use.write = min(tokens[last], prompt) - use.read
	}
	return use
}

// commitCache remembers the prefixes of the request being answered, once
// the answer is sure to be served, and records the cache counts rp
// reports.
func (x *exchange) commitCache(rp *reply) {
	if x.cache == nil {
		return
	}
	s := x.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache == nil {
		s.cache = map[prefixKey]int{}
	}
	for i, k := range x.cache.remember {
		s.cache[k] = x.cache.tokens[i]
	}
	rec := &s.requests[x.rec.Index]
	rec.CacheRead, rec.CacheWrite = rp.usage.cacheRead, rp.usage.cacheWrite
}
