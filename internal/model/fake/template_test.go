package fake_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
)

// TestTemplatePrefixes: with the zero template a chat's second prompt
// extends the first turn's prompt and completion; with ReasoningTemplate
// (past reasoning stripped, tool-call JSON re-serialised) it does not.
func TestTemplatePrefixes(t *testing.T) {
	for _, tc := range []struct {
		tmpl    fake.Template
		extends bool
	}{{fake.Template{}, true}, {fake.ReasoningTemplate, false}} {
		first := fake.Turn{ToolCalls: []fake.ToolCall{{ID: "c1", Name: "shell", Arguments: `{"command":"ls","z":1}`}}}
		if !tc.extends {
			first.Reasoning = "let me look"
		}
		srv := fake.New(t, first, fake.Turn{Content: "done"})
		srv.SetTemplate(tc.tmpl)
		c := srv.Client(t, nil)
		msgs := []model.Message{{Role: model.RoleSystem, Content: "s"}, {Role: model.RoleUser, Content: "u"}}
		tools := []model.Tool{{Name: "shell"}}
		r1, err := c.Chat(context.Background(), model.Request{Messages: msgs, Tools: tools, ReturnTokenIDs: true})
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, model.Message{Role: model.RoleAssistant, Content: r1.Content, ToolCalls: r1.ToolCalls},
			model.Message{Role: model.RoleTool, ToolCallID: "c1", Content: "a b"})
		r2, err := c.Chat(context.Background(), model.Request{Messages: msgs, Tools: tools, ReturnTokenIDs: true})
		if err != nil {
			t.Fatal(err)
		}
		held := append(slices.Clone(r1.PromptTokenIDs), r1.CompletionTokenIDs...)
		got := len(r2.PromptTokenIDs) >= len(held) && slices.Equal(r2.PromptTokenIDs[:len(held)], held)
		if got != tc.extends {
			t.Fatalf("%+v: second prompt extends %t, want %t:\n%q\n%q", tc.tmpl, got, tc.extends, fake.Decode(held, false), fake.Decode(r2.PromptTokenIDs, false))
		}
		if !tc.extends && !strings.Contains(fake.Decode(r2.PromptTokenIDs, false), `{"arguments": {"command": "ls", "z": 1}, "name": "shell"}`) {
			t.Fatalf("not re-serialised: %q", fake.Decode(r2.PromptTokenIDs, false))
		}
	}
	if ids := fake.Encode("<|im_start|>a<|im_end|>"); !slices.Equal(ids, []int{fake.IMStart, 'a', fake.IMEnd}) || fake.Decode(ids, true) != "a" {
		t.Fatalf("Encode/Decode: %v", ids)
	}
}

// TestTokenEndpointsNeedATemplate: without SetTemplate the token
// endpoints answer 404, as a server without them does.
func TestTokenEndpointsNeedATemplate(t *testing.T) {
	srv := fake.New(t)
	srv.SetEngine(model.EngineVLLM)
	_, err := srv.Client(t, nil).Generate(context.Background(), model.TokenRequest{PromptIDs: []int{1}})
	var me *model.Error
	if err == nil || !errors.As(err, &me) || me.Status != 404 {
		t.Fatalf("err = %v", err)
	}
}
