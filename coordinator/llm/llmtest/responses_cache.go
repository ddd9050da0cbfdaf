package llmtest

import (
	"crypto/sha256"
	"encoding/json"
)

// The Responses API's prompt cache, simulated when the scenario asks for
// it (Scenario.PromptCache). OpenAI caches prompts
// without being asked: a request whose prefix (the tools and instructions,
// then the input items in order) an earlier request already sent reads
// that prefix from the cache, reported as
// usage.input_tokens_details.cached_tokens. prompt_cache_key routes
// requests that share prefixes to the same cache, so the stand-in keys
// its prefixes by it and the model. The real cache keeps prefixes of
// 1,024 tokens and more, in 128-token steps; the stand-in keeps every
// prefix of Scenario.CacheMinTokens and more (default 0, so that short
// test conversations read from it), at every item.

// responsesPrefixes hashes a request's prefixes: keys[i] ends with its
// i-th item, tokens[i] is that prefix's size in estimated tokens.
func responsesPrefixes(req *responsesRequest) (keys []prefixKey, tokens []int) {
	head, _ := json.Marshal(map[string]any{"api": "responses", "model": req.Model, "key": req.PromptCacheKey,
		"instructions": req.Instructions, "tools": req.Tools, "tool_choice": req.ToolChoice})
	h := sha256.Sum256(head)
	chars := len(req.Instructions) + len(req.Tools)
	for _, raw := range append(append([]json.RawMessage(nil), req.history...), req.items...) {
		canon := canonical(raw)
		next := sha256.New()
		next.Write(h[:])
		next.Write(canon)
		copy(h[:], next.Sum(nil))
		chars += len(canon)
		keys = append(keys, h)
		tokens = append(tokens, quarter(chars))
	}
	return keys, tokens
}

// lookupResponsesCache finds the longest prefix of the request that an
// earlier request left in the cache; the request's own prefixes are
// remembered once it is served (commitCache).
func (s *Server) lookupResponsesCache(req *responsesRequest, prompt int) *cacheUse {
	keys, tokens := responsesPrefixes(req)
	minTokens := 0
	if s.scenario != nil {
		minTokens = s.scenario.CacheMinTokens
	}
	use := &cacheUse{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range keys {
		if tokens[i] < minTokens {
			continue
		}
		use.remember = append(use.remember, keys[i])
		use.tokens = append(use.tokens, tokens[i])
		if _, ok := s.cache[keys[i]]; ok {
			use.read = min(tokens[i], prompt)
		}
	}
	return use
}
