package notify

import "encoding/json"

// textBody is the frozen body of an action whose outlet sends text (a
// nudge, a log line).
type textBody struct {
	Text string `json:"text"`
}

// EncodeText freezes a text action's body.
func EncodeText(s string) string {
	b, _ := json.Marshal(textBody{Text: s}) // a struct of one string always marshals
	return string(b)
}

// DecodeText reads a text action's body; a body that is not one is its own
// text.
func DecodeText(body string) string {
	var t textBody
	if json.Unmarshal([]byte(body), &t) != nil {
		return body
	}
	return t.Text
}
