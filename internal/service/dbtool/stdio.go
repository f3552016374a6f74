package dbtool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"
)

// MaxLineLength is the longest message ServeStdio reads, as the SDK's
// stdio transport's default.
const MaxLineLength = mcp.DefaultMaxLineLength

// ServeStdio serves srv on one session over stdin and stdout until the
// client closes stdin or ctx ends.
//
// A harness hands its server stdin in blocking mode, which Go's poller does
// not take, and a Read of it cannot be interrupted: StdioTransport would
// fall back to the SDK's transport. So ServeStdio reads a pipe stdin
// through a second, non-blocking open of the same pipe (/proc/self/fd/0),
// which leaves fd 0, its mode and whatever shares it alone; and a socket
// stdin (Node harnesses hand their servers socket pairs) through a
// duplicate of fd 0 switched to non-blocking mode (which switches fd 0 too:
// they share the open socket), unless stdout is the same socket, which
// must stay blocking for os.Stdout. Any other stdin (a terminal, a file,
// either of those when it fails) is read through the SDK's transport.
func ServeStdio(ctx context.Context, srv *mcp.Server) error {
	in := pollableStdin()
	if in != os.Stdin {
		defer in.Close()
	}
	return srv.Run(ctx, &StdioTransport{In: in, Out: os.Stdout})
}

func pollableStdin() *os.File {
	fi, err := os.Stdin.Stat()
	switch {
	case err != nil:
	case fi.Mode()&os.ModeNamedPipe != 0:
		// O_NONBLOCK: opening a pipe's read end blocks until it has a
		// writer, and the harness may have written and closed it already.
		if f, err := os.OpenFile("/proc/self/fd/0", os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
			return f
		}
	case fi.Mode()&os.ModeSocket != 0 && !sameFile(0, 1):
		fd, err := unix.FcntlInt(0, unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			break
		}
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(fd)
			break
		}
		return os.NewFile(uintptr(fd), "/dev/stdin")
	}
	return os.Stdin
}

// sameFile reports whether the descriptors a and b are the same file.
func sameFile(a, b int) bool {
	var sa, sb unix.Stat_t
	if unix.Fstat(a, &sa) != nil || unix.Fstat(b, &sb) != nil {
		return true // unknown: assume the worst
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// StdioTransport is newline-delimited JSON-RPC over a pair of files, as the
// SDK's mcp.StdioTransport, with less work per message:
//
//   - Read reads a line, checks that it is one JSON value and decodes it
//     once, where the SDK's transport
//     decodes it three times (a streaming decoder, an attempt as a batch,
//     the message) on a goroutine of its own that hands each message over
//     a channel.
//   - Write writes a successful response's result as the SDK encoded it;
//     the SDK's transport re-encodes the whole message, which re-scans the
//     result (for a 18 KiB answer about 100 µs).
//
// It differs in four ways a client can see: a line that is not one JSON
// value gets a parse error and one that is not a JSON-RPC message an
// invalid-request error (id null), and the session goes on, where the SDK's
// transport ends the session; a request of id null gets an invalid-request
// error (id null) and is not run, where the SDK's transport takes it for a
// notification and never answers it; a batch (a JSON array, which protocol
// versions before 2025-06-18 allow) gets an invalid-request error, where
// the SDK's transport runs one before 2025-06-18; and at the end of the
// input it answers the requests it has read before the session ends (see
// awaitAnswers), where the SDK's transport drops them.
//
// In must be a file Go's poller takes (a pipe or socket in non-blocking
// mode, as ServeStdio opens one), so that Close can interrupt a Read; for
// any other In, Connect returns the SDK's transport instead.
type StdioTransport struct {
	In  *os.File
	Out io.Writer
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	if err := t.In.SetReadDeadline(time.Time{}); err != nil {
		return (&mcp.IOTransport{Reader: t.In, Writer: nopCloser{t.Out}}).Connect(ctx)
	}
	return &stdioConn{in: t.In, r: bufio.NewReaderSize(t.In, 64<<10), out: t.Out,
		pending: map[jsonrpc.ID]bool{}, answered: make(chan struct{}, 1), closed: make(chan struct{})}, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

type stdioConn struct {
	in  *os.File
	r   *bufio.Reader
	out io.Writer

	wmu sync.Mutex
	buf []byte

	// pending holds the ids of the requests read and not yet answered: at
	// the end of the input, Read waits for their answers before it reports
	// the end (which closes the session), so a client that writes its
	// requests and closes its end (a script piping into the server) gets
	// every answer. answered is signalled when one is answered or the
	// connection closes.
	pmu      sync.Mutex
	pending  map[jsonrpc.ID]bool
	answered chan struct{}

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *stdioConn) SessionID() string { return "" }

// Read returns the next message. It is called by one goroutine at a time.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := c.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.awaitAnswers()
			}
			select {
			case <-c.closed:
				return nil, io.EOF
			default:
			}
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		// One JSON value per line: DecodeMessage reads the first and would
		// drop what follows it (a second message, garbage).
		if !json.Valid(line) {
			if err := c.writeError(ctx, jsonrpc.CodeParseError, "a line that is not one JSON value: send one JSON-RPC message per line"); err != nil {
				return nil, err
			}
			continue
		}
		if line[0] == '[' {
			if err := c.writeError(ctx, jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported: send one message per line"); err != nil {
				return nil, err
			}
			continue
		}
		var msg jsonrpc.Message
		if r := decodeRequest(line); r != nil {
			msg = r
		} else if msg, err = jsonrpc.DecodeMessage(line); err != nil {
			if err := c.writeError(ctx, jsonrpc.CodeInvalidRequest, fmt.Sprintf("not a JSON-RPC message (%v): send one JSON-RPC object per line", err)); err != nil {
				return nil, err
			}
			continue
		}
		// The SDK decodes a request of id null as a notification, which
		// nothing answers (nullid.go).
		if r, ok := msg.(*jsonrpc.Request); ok && !r.IsCall() && hasNullID(line) {
			if err := c.writeError(ctx, jsonrpc.CodeInvalidRequest, nullIDMessage); err != nil {
				return nil, err
			}
			continue
		}
		// A subscription's listen call is answered only when the session
		// ends: the end of the input must not wait for it.
		if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() && !strings.HasPrefix(r.Method, "subscriptions/") {
			c.pmu.Lock()
			c.pending[r.ID] = true
			c.pmu.Unlock()
		}
		return msg, nil
	}
}

// drainQuiet bounds the wait for answers at the end of the input: a
// request answered only by something the client would have sent (a reply
// to a request of the server's) never is, and after this long without an
// answer the session ends anyway.
const drainQuiet = 10 * time.Second

// awaitAnswers waits until every request read has been answered, the
// connection closes, or drainQuiet passes without an answer.
func (c *stdioConn) awaitAnswers() {
	for {
		c.pmu.Lock()
		n := len(c.pending)
		c.pmu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.answered:
		case <-c.closed:
			return
		case <-time.After(drainQuiet):
			return
		}
	}
}

// answer records that the request id has been answered.
func (c *stdioConn) answer(id jsonrpc.ID) {
	c.pmu.Lock()
	delete(c.pending, id)
	c.pmu.Unlock()
	select {
	case c.answered <- struct{}{}:
	default:
	}
}

// readLine returns the next line, without its newline, in a slice of its
// own: a request may still be handled after the next line is read, and
// nothing then depends on whether the SDK's decoder copies what it keeps.
func (c *stdioConn) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := c.r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLineLength {
			return nil, fmt.Errorf("a message longer than %d bytes", MaxLineLength)
		}
		if err == nil && line == nil {
			return bytes.Clone(chunk[:len(chunk)-1]), nil
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) > 0:
			return line, nil // a last message without its newline
		default:
			return nil, err
		}
	}
}

// Write writes msg as one line. A successful response is written with its
// result as is: the SDK encoded the result as compact JSON (which has no
// newline outside strings, where it is escaped), and the bytes are checked
// for a newline anyway, which would break the framing.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r, ok := msg.(*jsonrpc.Response); ok {
		defer c.answer(r.ID)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b := c.buf[:0]
	if r, ok := msg.(*jsonrpc.Response); ok && r.Error == nil && len(r.Result) > 0 && bytes.IndexByte(r.Result, '\n') < 0 {
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b, ok = appendID(b, r.ID)
		if ok {
			b = append(b, `,"result":`...)
			b = append(b, r.Result...)
			b = append(b, "}\n"...)
			return c.write(b)
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	return c.write(append(append(b[:0], data...), '\n'))
}

func (c *stdioConn) write(b []byte) error {
	_, err := c.out.Write(b)
	if cap(b) <= 1<<20 {
		c.buf = b[:0] // keep the buffer, unless one answer made it huge
	}
	return err
}

// appendID appends id as JSON: an integer or a string; ok is false for any
// other (an invalid id, which EncodeMessage then reports).
func appendID(b []byte, id jsonrpc.ID) ([]byte, bool) {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(b, v, 10), true
	case string:
		s, err := json.Marshal(v)
		return append(b, s...), err == nil
	}
	return b, false
}

// writeError answers a message that could not be read with a JSON-RPC
// error of id null.
func (c *stdioConn) writeError(ctx context.Context, code int64, message string) error {
	data, err := errorOfNullID(code, message)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.out.Write(append(data, '\n'))
	return err
}

// Close ends the session: it closes In, which interrupts a Read.
func (c *stdioConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		err = c.in.Close()
	})
	return err
}
