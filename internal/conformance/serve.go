package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// ServersEnv is the environment variable sizing the pool of long-lived Runner JVMs
// (Runner --serve) that JavaRunner.Run, Describe and List go through: "0" runs every call in a
// JVM of its own, as before the pool existed (to compare the two); N > 0 allows up to N servers
// per classpath in this process; unset or empty means DefaultServers.
//
// Why: starting a JVM and loading Kafka Streams costs about 0.5 s idle and several seconds on a
// loaded machine, and the conformance suites run the Runner hundreds of times; a server pays for
// that once. A run in a server is the same run (fresh driver and state directory, the same files
// written), so the outputs are the same bytes.
const ServersEnv = "KSTREAMS_CONFORMANCE_SERVERS"

// DefaultServers returns the pool size used when ServersEnv is unset: min(2, GOMAXPROCS). A
// second server only starts when two calls overlap (tests running in parallel).
func DefaultServers() int {
	return min(2, runtime.GOMAXPROCS(0))
}

// serverFlags are the JVM flags of a server: those of a run of its own (jvmFlags). Measured
// with all reference topologies in one server: C2 compilation costs about 70% more CPU time for
// the same wall time, so the client compiler alone still fits a server's life of a few hundred
// short runs.
var serverFlags = jvmFlags

// errServerGone reports that a server could not answer (it could not start, died, or was
// killed); the call then runs in a JVM of its own.
var errServerGone = errors.New("conformance: runner server gone")

// serverKey tells pools apart: one pool per java executable and classpath.
type serverKey struct{ java, classpath string }

var (
	poolsMu sync.Mutex
	pools   = map[serverKey]*serverPool{}
)

// serverPool holds up to size Runner servers of one java and classpath, started lazily: a call
// takes an idle server, else starts one while fewer than size run, else waits. Each server
// handles one request at a time. Servers live until the process exits (their stdin then ends,
// and they exit).
type serverPool struct {
	key  serverKey
	sem  chan struct{} // one token per call in progress: at most size
	mu   sync.Mutex
	idle []*server
	// started counts the servers started, for tests.
	started atomic.Int32
	// logf says why the pool turned off: on stderr, or in a test's log.
	logf func(format string, args ...any)
	// broken is set when a server died before answering its first request (the JVM or the
	// classpath is unusable): every later call runs in a JVM of its own, which reports why.
	broken atomic.Bool
}

// poolFor returns the pool for java and classpath, or nil when ServersEnv is "0".
func poolFor(java, classpath string) *serverPool {
	n := DefaultServers()
	if v := os.Getenv(ServersEnv); v != "" {
		if i, err := strconv.Atoi(v); err == nil && i >= 0 {
			n = i
		}
	}
	if n == 0 {
		return nil
	}
	k := serverKey{java, classpath}
	poolsMu.Lock()
	defer poolsMu.Unlock()
	p := pools[k]
	if p == nil {
		p = newServerPool(k, n)
		pools[k] = p
	}
	return p
}

func newServerPool(k serverKey, size int) *serverPool {
	return &serverPool{key: k, sem: make(chan struct{}, size), logf: func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
	}}
}

// markBroken turns the pool off for the rest of the process, saying why once on stderr (the
// suite still passes, only slower).
func (p *serverPool) markBroken(err error) {
	if !p.broken.Swap(true) {
		p.logf("%v\nconformance: running the Java Runner in a JVM of its own per call from now on", err)
	}
}

// call runs the Runner with args in a server and returns its exit status and what it printed
// (stdout and stderr together). Errors: errServerGone (wrapping the cause) when no server could
// answer, ctx.Err() when ctx ended first.
func (p *serverPool) call(ctx context.Context, args []string) (int, string, error) {
	if p.broken.Load() {
		return 0, "", fmt.Errorf("%w: an earlier server died before answering", errServerGone)
	}
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return 0, "", ctx.Err()
	}
	defer func() { <-p.sem }()
	p.mu.Lock()
	var s *server
	if n := len(p.idle); n > 0 {
		s, p.idle = p.idle[n-1], p.idle[:n-1]
	}
	p.mu.Unlock()
	if s == nil {
		var err error
		if s, err = startServer(p.key); err != nil {
			p.markBroken(err)
			return 0, "", err
		}
		p.started.Add(1)
	}
	status, out, err := s.roundTrip(ctx, args)
	if err != nil {
		s.kill()
		if s.answered == 0 && ctx.Err() == nil {
			p.markBroken(err)
		}
		return 0, "", err
	}
	p.mu.Lock()
	p.idle = append(p.idle, s)
	p.mu.Unlock()
	return status, out, nil
}

// server is one Runner --serve process.
type server struct {
	cmd      *exec.Cmd
	requests io.WriteCloser // the server's stdin
	answers  *bufio.Reader  // the server's stdout
	stderr   *tailWriter    // what it printed outside requests (JVM warnings, a fatal Error)
	answered int            // requests answered so far
}

func startServer(k serverKey) (*server, error) {
	cmd := exec.Command(k.java, append(serverFlags[:len(serverFlags):len(serverFlags)], "-cp", k.classpath, RunnerClass, "--serve")...)
	requests, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errServerGone, err)
	}
	// Our own pipe rather than StdoutPipe: Wait (in the background below) closes StdoutPipe's
	// read end, racing with a read of the last answer.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errServerGone, err)
	}
	cmd.Stdout = w
	s := &server{cmd: cmd, requests: requests, answers: bufio.NewReader(r), stderr: &tailWriter{max: 8 << 10}}
	cmd.Stderr = s.stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("%w: %v", errServerGone, err)
	}
	go func() {
		cmd.Wait() // reaps it; the error shows in the next round trip as the end of stdout
		r.Close()
	}()
	return s, nil
}

type request struct {
	Args []string `json:"args"`
}

type answer struct {
	Status *int    `json:"status"`
	Output *string `json:"output"`
}

// roundTrip sends one request and reads its answer. When ctx ends first, it returns ctx.Err()
// and the caller kills the server (the request cannot be withdrawn).
func (s *server) roundTrip(ctx context.Context, args []string) (int, string, error) {
	line, err := json.Marshal(request{Args: args})
	if err != nil {
		return 0, "", fmt.Errorf("%w: %v", errServerGone, err)
	}
	type read struct {
		line []byte
		err  error
	}
	done := make(chan read, 1)
	go func() {
		if _, err := s.requests.Write(append(line, '\n')); err != nil {
			done <- read{err: err}
			return
		}
		l, err := s.answers.ReadBytes('\n')
		done <- read{l, err}
	}()
	var r read
	select {
	case r = <-done:
	case <-ctx.Done():
		s.kill()
		<-done
		return 0, "", ctx.Err()
	}
	if r.err != nil {
		return 0, "", fmt.Errorf("%w: %v; its stderr:\n%s", errServerGone, r.err, s.stderr)
	}
	var a answer
	if err := json.Unmarshal(r.line, &a); err != nil || a.Status == nil || a.Output == nil {
		return 0, "", fmt.Errorf("%w: bad answer %q (%v)", errServerGone, r.line, err)
	}
	s.answered++
	return *a.Status, *a.Output, nil
}

func (s *server) kill() {
	s.requests.Close()
	s.cmd.Process.Kill()
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > w.max {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}
