package chaos

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/rest/client"
)

// worker is one `connectd worker` process slot: a name, a fixed REST port
// (a restarted worker comes back with the same identity) and the current
// process, if any.
type worker struct {
	Name    string
	URL     string
	ID      string // the worker_id statuses carry (host:port)
	props   string
	logPath string

	mu      sync.Mutex
	proc    *child
	stopped bool // SIGSTOPped
	gone    bool // removed from the cluster for good (an added worker taken away)
	starts  int
}

// cluster is the set of worker processes.
type cluster struct {
	connectd  string
	dir       string
	baseProps map[string]string
	hc        *http.Client

	mu      sync.Mutex
	workers []*worker
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func writeProps(path string, props map[string]string) error {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// add creates a worker slot and starts its process.
func (c *cluster) add(ctx context.Context, name string) (*worker, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	w := &worker{Name: name, URL: fmt.Sprintf("http://127.0.0.1:%d", port),
		props: filepath.Join(c.dir, name+".properties"), logPath: filepath.Join(c.dir, name+".log")}
	w.ID = herder.WorkerID(w.URL)
	props := map[string]string{}
	for k, v := range c.baseProps {
		props[k] = v
	}
	props["listeners"] = w.URL
	if err := writeProps(w.props, props); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.workers = append(c.workers, w)
	c.mu.Unlock()
	if err := c.start(ctx, w); err != nil {
		return nil, err
	}
	return w, nil
}

// start (re)starts w's process and waits until its REST API says healthy.
func (c *cluster) start(ctx context.Context, w *worker) error {
	p, err := startChild(w.logPath, nil, nil, c.connectd, "worker", w.props)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.proc, w.stopped, w.gone = p, false, false
	w.starts++
	w.mu.Unlock()
	cl := c.client(w)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		h, err := cl.Health(hctx)
		cancel()
		if err == nil && h.Status == "healthy" {
			return nil
		}
		if !p.alive() {
			return fmt.Errorf("%s exited while starting: %v\n%s", w.Name, p.exitErr(), p.logTail(30))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s not healthy within 2 min (%+v, %v)\n%s", w.Name, h, err, p.logTail(30))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (c *cluster) client(w *worker) *client.Client {
	cl, err := client.New(w.URL, client.WithHTTPClient(c.hc), client.WithRebalanceRetries(30, 200*time.Millisecond, 2*time.Second))
	if err != nil {
		panic(err) // the URL is ours
	}
	return cl
}

// up reports whether w's process runs and is not stopped.
func (w *worker) up() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.proc != nil && w.proc.alive() && !w.stopped && !w.gone
}

func (w *worker) process() *child {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.proc
}

func (w *worker) pid() int {
	if p := w.process(); p != nil && p.alive() {
		return p.pid()
	}
	return 0
}

func (w *worker) sigkill() error {
	p := w.process()
	if p == nil || !p.alive() {
		return fmt.Errorf("%s is not running", w.Name)
	}
	p.kill()
	return nil
}

func (w *worker) sigstop() error {
	p := w.process()
	if p == nil {
		return fmt.Errorf("%s is not running", w.Name)
	}
	if err := p.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	return nil
}

func (w *worker) sigcont() error {
	p := w.process()
	if p == nil {
		return fmt.Errorf("%s is not running", w.Name)
	}
	w.mu.Lock()
	w.stopped = false
	w.mu.Unlock()
	return p.signal(syscall.SIGCONT)
}

// remove stops w gracefully for good.
func (w *worker) remove(grace time.Duration) bool {
	w.mu.Lock()
	w.gone = true
	p := w.proc
	w.mu.Unlock()
	if p == nil {
		return true
	}
	return p.terminate(grace)
}

// list returns the worker slots.
func (c *cluster) list() []*worker {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*worker(nil), c.workers...)
}

// upWorkers returns the workers that run and are not stopped.
func (c *cluster) upWorkers() []*worker {
	var out []*worker
	for _, w := range c.list() {
		if w.up() {
			out = append(out, w)
		}
	}
	return out
}

// any returns a client of some up worker (rotating), or nil.
func (c *cluster) any(i int) *client.Client {
	ws := c.upWorkers()
	if len(ws) == 0 {
		return nil
	}
	return c.client(ws[i%len(ws)])
}

func (c *cluster) byID(id string) *worker {
	for _, w := range c.list() {
		if w.ID == id {
			return w
		}
	}
	return nil
}
