package fake

// ByteTokens gives a scripted turn the token ids an engine would return
// for a chat request, from a tokenizer that needs no template: a role
// token and the bytes of each message (tool calls as their name and
// arguments). An assistant message sent back tokenizes to the completion
// it was, so each turn's prompt extends the last turn's prompt and
// completion, as with a real engine whose template keeps the past.
func ByteTokens(r Request, t Turn) Turn {
	var prompt []int
	for _, m := range r.Messages {
		prompt = append(prompt, roleTokens(m.Role, m.Content, m.ToolCalls)...)
	}
	var calls []WireToolCall
	for _, c := range t.ToolCalls {
		var w WireToolCall
		w.Function.Name, w.Function.Arguments = c.Name, c.Arguments
		calls = append(calls, w)
	}
	t.PromptTokenIDs, t.CompletionTokenIDs = prompt, roleTokens("assistant", t.Content, calls)
	return t
}

func roleTokens(role, content string, calls []WireToolCall) []int {
	out := []int{map[string]int{"system": 1, "user": 2, "assistant": 3, "tool": 4}[role]}
	for _, b := range []byte(content) {
		out = append(out, 10+int(b))
	}
	for _, c := range calls {
		out = append(out, 5)
		for _, b := range []byte(c.Function.Name + "\x00" + c.Function.Arguments) {
			out = append(out, 10+int(b))
		}
	}
	return out
}
