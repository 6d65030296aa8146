package reactor

// In mysql routing mode obgate greets clients before it dials a server
// (mysql_login.go), in the image of the servers' own greeting: version,
// capabilities, character set and default auth plugin, as the last
// server session obgate opened was greeted with. Until one is known,
// a login waits up to greetingVersionWait for the one look obgate takes
// at a server when its first client arrives (learnGreetingOnce): one
// handshake it does not finish, once per process, not one per client;
// and none at all while no client comes.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"obgate/mysqlproto"
)

// greetingImage is the server greeting client greetings are made in the
// image of, and the first look that learns one (learnGreetingOnce).
type greetingImage struct {
	image atomic.Pointer[mysqlproto.Handshake] // nil until a server greeted
	look  sync.Once                            // the first look, started once
	known chan struct{}                        // closed when the first look ended
}

// learn keeps h, a server's greeting, as the image of the next client
// greetings. Any goroutine.
func (g *greetingImage) learn(h *mysqlproto.Handshake) {
	if h == nil {
		return
	}
	c := *h
	c.AuthData = nil // never sent: every client gets its own scramble
	g.image.Store(&c)
}

// learnGreetingOnce looks at the first server that answers, in the
// background, the first time a client arrives in mysql routing mode. Any
// login goroutine; greetingImage.await waits for it.
func (srv *Server) learnGreetingOnce() {
	cfg := srv.cfg.Load()
	g := &srv.mysqlGreeting
	if !srv.mode.greetsAsServers() || g.image.Load() != nil {
		return
	}
	g.look.Do(func() {
		g.known = make(chan struct{})
		go func() {
			defer close(g.known)
			srv.panics.guarded(panicGreetingLook, 0, func() {
				ctx, cancel := context.WithTimeout(context.Background(), cfg.ShortAsyncTaskTimeout)
				defer cancel()
				be, h, _, err := srv.dialFirst(ctx, serverAddrs(cfg))
				if err != nil {
					srv.log.Info("no server greeted yet; clients are greeted as obgate until one does", "err", err)
					return
				}
				be.Close()
				g.learn(h)
			})
		}()
	})
}

// await waits, up to greetingVersionWait, for the first look at a server
// while no server's greeting is known.
func (g *greetingImage) await(ctx context.Context) {
	if g.image.Load() != nil {
		return
	}
	t := time.NewTimer(greetingVersionWait)
	defer t.Stop()
	select {
	case <-g.known:
	case <-t.C:
	case <-ctx.Done():
	}
}
