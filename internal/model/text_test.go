package model

import "testing"

func TestSplitThink(t *testing.T) {
	for _, c := range []struct {
		in, said, reasoning string
		ok                  bool
	}{
		{"Bean There", "Bean There", "", false},
		{"<think>Maybe Cafe Uno? No: Bean There is nearer.</think>\n\nBean There", "Bean There", "Maybe Cafe Uno? No: Bean There is nearer.", true},
		{"Cafe Uno or Bean There...</think>Bean There", "Bean There", "Cafe Uno or Bean There...", true},
		{"<THINK>a</THINK>b<think>c</think>d", "bd", "a\n\nc", true},
		{"The answer: <think>still thinking about Cafe Uno", "The answer:", "still thinking about Cafe Uno", true},
		{"<think>only thought</think>", "", "only thought", true},
	} {
		said, reasoning, ok := SplitThink(c.in)
		if said != c.said || reasoning != c.reasoning || ok != c.ok {
			t.Errorf("SplitThink(%q) = %q, %q, %t; want %q, %q, %t", c.in, said, reasoning, ok, c.said, c.reasoning, c.ok)
		}
	}
}

func TestTextToolCall(t *testing.T) {
	tools := []string{"shell", "browser_open"}
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`<tool_call>{"name": "shell", "arguments": {"command": "ls"}}</tool_call>`, true},
		{`{"name": "shell", "arguments": {"command": "ls"}}`, true},
		{"I will list the files.\n```json\n{\"name\": \"browser_open\", \"arguments\": {\"url\": \"/\"}}\n```", true},
		{`{"function": {"name": "shell"}, "parameters": {}}`, true},
		{`[TOOL_CALLS] [{"name": "shell"}]`, true},
		{`{"name": "Bean There", "arguments": 2}`, false},
		{"The cheapest day is 2026-03-04.", false},
		{`{"answer": "2026-03-04"}`, false},
	} {
		if what, ok := TextToolCall(c.in, tools); ok != c.ok {
			t.Errorf("TextToolCall(%q) = %q, %t; want %t", c.in, what, ok, c.ok)
		}
	}
}
