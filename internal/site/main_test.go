package site_test

import (
	"os"
	"testing"
)

// sharedTmp holds what the tests of this package share (the built catalog).
var sharedTmp string

func TestMain(m *testing.M) {
	var err error
	if sharedTmp, err = os.MkdirTemp("", "wildawm-site-test-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(sharedTmp)
	os.Exit(code)
}
