package slacktest

import "unicode/utf8"

// validate applies the Block Kit limits Slack enforces.
func validate(text string, blocks []map[string]any) string {
	if utf8.RuneCountInString(text) > 40000 {
		return "msg_too_long"
	}
	if len(blocks) > 50 {
		return "invalid_blocks"
	}
	total := 0
	for _, b := range blocks {
		limit := 3000
		if b["type"] == "header" {
			limit = 150
		}
		if t, ok := b["text"].(map[string]any); ok {
			if s, _ := t["text"].(string); utf8.RuneCountInString(s) > limit || s == "" {
				return "invalid_blocks"
			}
		}
		total += blockText(b)
	}
	// Slack does not document the limit on all blocks' text together; its
	// users saw msg_blocks_too_long from about 11,300 characters
	// (slackapi/bolt-js#2509, #2867). The fake refuses from there.
	if total > 11000 {
		return "msg_blocks_too_long"
	}
	return ""
}

// blockText counts the characters of a block's text objects: its text, its
// fields and its elements (a context block's).
func blockText(b map[string]any) int {
	n := 0
	count := func(v any) {
		if t, ok := v.(map[string]any); ok {
			s, _ := t["text"].(string)
			n += utf8.RuneCountInString(s)
		}
	}
	count(b["text"])
	for _, key := range []string{"fields", "elements"} {
		list, _ := b[key].([]any)
		for _, v := range list {
			count(v)
		}
	}
	return n
}
