// Package modelpaths holds the end-to-end tests of every model flag of the
// command line (tests only): each command run in process (cli.Run) through
// to its product against the local fake model server, healthy, flaky (one
// chat in N fails as a real server's do) and down, in each engine's
// shapes. They live apart from internal/cli's tests to run within go
// test's time limit beside them.
//
// It imports cli and, in its tests, the packages whose products they read.
package modelpaths
