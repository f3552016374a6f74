package sqlguard

import (
	"context"
	"errors"
	"reflect"
	"sync"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// interrupter returns a function that interrupts the statement running on
// the modernc.org/sqlite driver connection dc (sqlite3_interrupt, which
// may be called from any goroutine). The driver interrupts a statement on
// its context only while it computes the first row; a Guard's Watch uses
// this to stop one whose later rows take long. The connection's handle is
// the driver's unexported field db: TestWatch fails if a new driver
// moves it.
func interrupter(dc any) (func(), error) {
	v := reflect.ValueOf(dc)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, errors.New("the SQLite driver's connection is not a struct")
	}
	f := v.Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Uintptr || f.Uint() == 0 {
		return nil, errors.New("the SQLite driver's connection has no handle to interrupt")
	}
	db := uintptr(f.Uint())
	return func() {
		tls := libc.NewTLS()
		sqlite3.Xsqlite3_interrupt(tls, db)
		tls.Close()
	}, nil
}

// Watch interrupts the statement running on the guard's connection when
// ctx ends, until stop is called; the caller calls stop before the
// connection is closed or used for anything else. Run a statement's
// rows within its bound under Watch (the driver stops only a statement
// computing its first row on its own).
func (g *Guard) Watch(ctx context.Context) (stop func()) {
	if g.interrupt == nil || ctx.Done() == nil {
		return func() {}
	}
	var mu sync.Mutex
	stopped := false
	stopAfter := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			g.interrupt()
		}
	})
	return func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		stopAfter()
	}
}
