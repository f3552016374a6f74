package catalog

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/generator"
)

// WriteTest writes the catalog into a fresh temporary directory with the
// built-in generators and returns it.
func WriteTest(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "catalog")
	if err := Write(context.Background(), dir, generator.Default()); err != nil {
		tb.Fatal(err)
	}
	return dir
}
