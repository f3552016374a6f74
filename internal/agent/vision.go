package agent

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/vision"
)

// visionPrompt asks a vision model for what the offline tool reports, in
// words.
const visionPrompt = `Describe this image for someone who cannot see it: what it shows, its main colours, any text or display on it. Be factual and brief (at most five sentences).`

// ModelVision is the vision tool backed by a vision model (any
// OpenAI-compatible chat endpoint that takes image parts): the picture goes
// to the model and its words come back as the description, once
// vision.Check has bounded its bytes and pixels. The offline
// default, vision.Describe, reads the pixels itself.
func ModelVision(m Chatter) func(ctx context.Context, img []byte) (*vision.Description, error) {
	return func(ctx context.Context, img []byte) (*vision.Description, error) {
		// The model server decodes what it is sent: the same bounds as the
		// offline tool's, checked on the header, keep a bomb from it.
		cfg, err := vision.Check(img)
		if err != nil {
			if mime := http.DetectContentType(img); !strings.HasPrefix(mime, "image/") {
				return nil, fmt.Errorf("describe image: the bytes are %s, not an image", mime)
			}
			return nil, fmt.Errorf("describe image: %w", err)
		}
		resp, err := m.Chat(ctx, model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: visionPrompt,
			Images: []model.Image{{MIME: cfg.MIME, Data: img}}}}, MaxTokens: 300})
		if err != nil {
			return nil, fmt.Errorf("%w: vision model: %v", ErrInfra, err)
		}
		text := strings.TrimSpace(resp.Content)
		if text == "" {
			return nil, fmt.Errorf("the vision model described nothing (finish reason %q)", resp.FinishReason)
		}
		return &vision.Description{Text: text}, nil
	}
}
