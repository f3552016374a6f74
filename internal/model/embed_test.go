package model_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
)

// TestEmbed: embeddings come back one per text, in order, as the server
// computed them; a model the server lacks is an Error naming it.
func TestEmbed(t *testing.T) {
	srv := fake.New(t)
	c := srv.Client(t, nil)
	texts := []string{"order two cables", "book a hotel night", "order two cables"}
	got, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !slices.Equal(got[0], fake.Embedding(texts[0])) || !slices.Equal(got[1], fake.Embedding(texts[1])) || !slices.Equal(got[0], got[2]) {
		t.Fatalf("embeddings %v", got)
	}
	spec := srv.Spec()
	spec.Model = "no-such-embedder"
	bad, err := model.New(spec, &model.Options{MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Embed(context.Background(), texts)
	var me *model.Error
	if !errors.As(err, &me) || me.Status != 404 || me.Op != "embeddings" {
		t.Fatalf("an unknown model: %v", err)
	}
}
