package fetch

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// route is the router goroutine: it finds the leader of each unrouted partition (new ones,
// and those whose leader moved or failed), refreshing the metadata first where asked, and
// hands the partition to that leader's loop. After a loop's request failed it also re-checks
// the leaders of that loop's partitions, so that a broker that stays down loses its
// partitions to their new leaders. Metadata calls block, which is why they are here and not in
// the stream thread's calls or the loops.
func (f *Fetcher) route() {
	kafka.LabelGoroutine("fetch-route")
	defer f.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return
		}
		now := time.Now()
		var todo, check []*part
		var next time.Time
		topics := map[string]bool{}
		for _, p := range f.unrouted {
			if p.retryAt.After(now) {
				if next.IsZero() || p.retryAt.Before(next) {
					next = p.retryAt
				}
				continue
			}
			todo = append(todo, p)
			if p.refresh {
				topics[p.tp.Topic] = true
			}
		}
		for l := range f.checks {
			for _, p := range l.parts {
				check = append(check, p)
				topics[p.tp.Topic] = true
			}
		}
		clear(f.checks)
		f.mu.Unlock()

		if len(todo) == 0 && len(check) == 0 {
			var tc <-chan time.Time
			if !next.IsZero() {
				timer.Reset(max(time.Until(next), time.Millisecond))
				tc = timer.C
			}
			select {
			case <-f.routeWake:
			case <-tc:
			case <-f.done:
			}
			timer.Stop()
			continue
		}
		if len(topics) > 0 {
			if err := f.cfg.Cluster.RefreshMetadata(slices.Sorted(maps.Keys(topics))...); err != nil {
				f.log.Debug("fetch: metadata refresh failed", "error", err)
			}
		}
		// A failed lookup refreshes the metadata, which takes a while when the broker is down:
		// the other partitions of that topic wait for the next round.
		failed := map[string]bool{}
		for _, p := range todo {
			if failed[p.tp.Topic] {
				f.mu.Lock()
				if f.parts[p.tp] == p && p.loop == nil {
					p.refresh = true
					f.backoffLocked(p)
				}
				f.mu.Unlock()
				continue
			}
			if !f.routeOne(p) {
				failed[p.tp.Topic] = true
			}
		}
		for _, p := range check {
			f.recheck(p)
		}
	}
}

// routeOne looks up p's leader and hands p to its loop, or backs off; false means the lookup
// failed. An authorization or authentication failure (kafka.AuthError) fails p.
func (f *Fetcher) routeOne(p *part) bool {
	n, epoch, err := f.cfg.Cluster.Leader(p.tp)
	notify := false
	defer func() {
		if notify {
			f.notify()
		}
	}()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.parts[p.tp] != p || p.loop != nil {
		return err == nil // unassigned or routed meanwhile
	}
	if err != nil && kafka.AuthError(err) {
		// The topic is not authorized (any more), or the metadata connections cannot
		// authenticate: no retry cures it.
		delete(f.unrouted, p.tp)
		f.failLocked(p, err)
		notify = true
		return true
	}
	if err != nil {
		p.refresh = true
		f.backoffLocked(p)
		level := slog.LevelDebug
		if p.attempts%20 == 0 { // about every 20 s at the 1 s backoff cap
			level = slog.LevelWarn
		}
		f.log.Log(context.Background(), level, "fetch: no leader for partition yet", "partition", p.tp.String(), "attempts", p.attempts, "error", err)
		return false
	}
	delete(f.unrouted, p.tp)
	p.refresh = false
	p.leaderEpoch = epoch
	l := f.loopLocked(n)
	p.loop = l
	l.parts[p.tp] = p
	signal(l.wake)
	return true
}

// recheck moves p to the loop of its leader if the (refreshed) metadata names another one,
// and takes a new leader epoch.
func (f *Fetcher) recheck(p *part) {
	n, epoch, err := f.cfg.Cluster.Leader(p.tp)
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.parts[p.tp] != p || p.loop == nil {
		return
	}
	p.leaderEpoch = epoch
	if p.loop.node == n {
		return
	}
	old := p.loop
	delete(old.parts, p.tp)
	l := f.loopLocked(n)
	p.loop = l
	l.parts[p.tp] = p
	signal(old.wake)
	signal(l.wake)
	f.log.Info("fetch: partition moved to a new leader", "partition", p.tp.String(), "from", old.node.ID, "to", n.ID)
}
