package client

import (
	"context"
	"strings"
	"sync"
)

// Peer sends signed inter-worker requests to other workers by URL, as the
// herder needs: a worker running a connector pushes task configurations
// to the leader, and asks it to fence zombies. Every request is signed
// with the current session key; clients are kept per URL.
type Peer struct {
	opts []Option

	mu      sync.Mutex
	clients map[string]*Client
}

// NewPeer returns a Peer signing with sessionKey. opts add TLS (use
// rest.TLSConfig.ClientConfig with WithTLSConfig) and retries.
func NewPeer(sessionKey func() ([]byte, bool), opts ...Option) *Peer {
	return &Peer{opts: append([]Option{WithSessionKey(sessionKey)}, opts...), clients: map[string]*Client{}}
}

func (p *Peer) client(workerURL string) (*Client, error) {
	key := strings.TrimRight(workerURL, "/")
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[key]; ok {
		return c, nil
	}
	c, err := New(key, p.opts...)
	if err != nil {
		return nil, err
	}
	p.clients[key] = c
	return c, nil
}

// PutTaskConfigs is the internal POST {workerURL}/connectors/{c}/tasks.
func (p *Peer) PutTaskConfigs(ctx context.Context, workerURL, connector string, configs []map[string]string) error {
	c, err := p.client(workerURL)
	if err != nil {
		return err
	}
	return c.PutTaskConfigs(ctx, connector, configs)
}

// FenceZombies is the internal PUT {workerURL}/connectors/{c}/fence.
func (p *Peer) FenceZombies(ctx context.Context, workerURL, connector string) error {
	c, err := p.client(workerURL)
	if err != nil {
		return err
	}
	return c.FenceZombies(ctx, connector)
}
