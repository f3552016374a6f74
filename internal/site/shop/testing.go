package shop

import (
	"testing"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// The account MakeTestWorld creates.
const (
	TestUser     = "alex"
	TestPassword = "correct horse battery"
)

// MakeTestWorld writes a small world into dir: db/shop.sqlite with Schema,
// and one shop account (TestUser, TestPassword). It returns dir.
func MakeTestWorld(tb testing.TB, dir string) string {
	tb.Helper()
	state.MakeTestWorld(tb, dir, state.TestWorld{Persona: "avtech", SQL: map[string][]string{DBName: Schema()}})
	accts := []world.Account{{Site: SiteName, Username: TestUser, PasswordHash: world.HashPassword(SiteName, TestUser, "test", TestPassword), Display: "Alex"}}
	if err := world.WriteAccounts(dir, accts); err != nil {
		tb.Fatal(err)
	}
	return dir
}
