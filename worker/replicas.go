package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
)

// replicas is a daemon's part in a warehouse several serve processes share
// (PostgreSQL): its heartbeat in sync_replicas, and sticky leases. Between
// runs it renews the leases it holds (every TTL/3), so an account stays
// with one replica and its API token is reused; every poll (at most a
// second) it takes the accounts nobody holds, up to its share of them
// (ceil(accounts / live replicas)) while another live replica has room,
// and hands one back when it holds more than its share while another has
// room. A lease that lapsed (its holder died) is taken at the next poll
// and its account run at once; one released (a clean stop, a hand-over)
// is run at its next slot.
type replicas struct {
	// cluster is the accounts' leases' (every account's lease is in it).
	cluster  load.Cluster
	holder   string
	instance string
	ttl      time.Duration
	every    time.Duration
	d        *Daemon
	fail     context.CancelCauseFunc // stops the daemon with its cause

	mu   sync.Mutex // guards view and the reported states
	view clusterView
}

// clusterView is what the last poll saw.
type clusterView struct {
	leases map[string]load.Lease // by account
	live   int                   // live replicas, this one included
	total  int                   // accounts: this replica's and those leased by others
	share  int                   // ceil(total / live)
	mine   int                   // leases this replica holds
	room   bool                  // another live replica holds fewer than share
}

// newReplicas returns the replicas part of d, nil unless every account's
// run lock is a lease (Job.Lease) in a shared warehouse's cluster.
func newReplicas(d *Daemon) *replicas {
	var lock *LeaseLock
	for _, a := range d.accounts {
		if a.lease == nil {
			return nil
		}
		lock = a.lease
	}
	if lock == nil {
		return nil
	}
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return &replicas{cluster: lock.wh, holder: lock.Holder(), instance: hex.EncodeToString(b[:]),
		ttl: lock.TTL(), every: min(time.Second, lock.TTL()/6), d: d}
}

// startReplicas, on a shared warehouse, joins the replicas (a second live
// process with this holder is refused), takes this replica's share of the
// accounts and starts the lease watcher; the returned stop ends it and
// releases every lease held.
func (d *Daemon) startReplicas(ctx context.Context, fail context.CancelCauseFunc) (func(), error) {
	r := d.replicas
	if r == nil {
		return func() {}, nil
	}
	r.fail = fail
	if err := r.join(ctx); err != nil {
		d.logger().Error("cannot start: this replica cannot join the warehouse's replicas", "holder", r.holder, "err", err)
		return nil, &LoggedError{err}
	}
	d.logger().Info("joined the replicas sharing the warehouse", "holder", r.holder, "instance", r.instance,
		"lease_ttl", r.ttl, "poll", r.every)
	r.round(ctx)
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { r.watch(wctx) })
	return func() {
		cancel()
		wg.Wait()
		r.leave(ctx)
	}, nil
}

// heartbeatTTL is how long a replica counts as live without a heartbeat:
// shorter than a lease, so a dead replica stops counting before its
// leases lapse, and the survivors' shares already cover its accounts.
func (r *replicas) heartbeatTTL() time.Duration { return r.ttl * 2 / 3 }

// join registers this process in sync_replicas. A live row of its holder
// with another instance is waited on for a few heartbeats: renewed, it is
// a second live process with the same [cluster] holder, refused with a
// *load.HolderInUseError (exit 4); expired, a process that died, taken.
func (r *replicas) join(ctx context.Context) error {
	var first *load.HolderInUseError
	for {
		err := r.cluster.ReplicaHeartbeat(ctx, r.holder, r.instance, r.heartbeatTTL())
		var in *load.HolderInUseError
		if !errors.As(err, &in) {
			return err
		}
		if first == nil {
			first = in
			r.d.logger().Warn("another process has this replica's [cluster] holder; waiting a few heartbeats to see whether it is alive",
				"holder", r.holder, "other_instance", in.Other.Instance, "other_started_at", stamp(in.Other.StartedAt),
				"other_seen_at", stamp(in.Other.SeenAt), "instance", r.instance)
		} else if in.Other.Instance != first.Other.Instance || in.Other.SeenAt.After(first.Other.SeenAt) {
			return in
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (waiting to see whether it is alive: %w)", in, ctx.Err())
		case <-time.After(r.every):
		}
	}
}

// watch runs a round every poll until ctx ends.
func (r *replicas) watch(ctx context.Context) {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.round(ctx)
		}
	}
}

// round is one poll: the heartbeat, the renewals due, then the accounts
// taken or handed back, and what changed told to the observers.
func (r *replicas) round(ctx context.Context) {
	log := r.d.logger()
	var in *load.HolderInUseError
	switch err := r.cluster.ReplicaHeartbeat(ctx, r.holder, r.instance, r.heartbeatTTL()); {
	case errors.As(err, &in):
		// This process was paused past its heartbeat and another one
		// started with its holder since: they would share leases.
		// Its leases are fenced off already (a lease belongs to the
		// process that took it); it stops rather than go on refused.
		log.Error("another live process took this replica's [cluster] holder while this one was not heard from; this process stops",
			"holder", r.holder, "err", err)
		if r.fail != nil {
			r.fail(in)
		}
		return
	case err != nil && ctx.Err() == nil:
		log.Warn("replica heartbeat failed; retrying at the next poll", "holder", r.holder, "err", err)
	}
	for _, a := range r.d.accounts {
		if a.lease.RenewDue() && a.busy.TryLock() {
			if err := a.lease.Renew(ctx); err != nil && !errors.Is(err, ErrLeaseLost) && ctx.Err() == nil {
				log.Warn("lease renewal failed; retrying at the next poll", "account", a.lease.wh.Account(), "err", err)
			}
			a.busy.Unlock()
		}
		r.report(a)
	}
	v, err := r.poll(ctx)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("cannot read the leases; retrying at the next poll", "err", err)
		}
		return
	}
	r.takeFree(ctx, v)
	r.handBack()
	for _, a := range r.d.accounts {
		r.report(a)
	}
}

// poll reads the leases and the live replicas and works out the shares.
func (r *replicas) poll(ctx context.Context) (clusterView, error) {
	leases, err := r.cluster.Leases(ctx)
	if err != nil {
		return clusterView{}, err
	}
	live, err := r.cluster.LiveReplicas(ctx)
	if err != nil {
		return clusterView{}, err
	}
	v := clusterView{leases: map[string]load.Lease{}}
	accounts := map[string]bool{}
	for _, a := range r.d.accounts {
		accounts[a.lease.wh.Account()] = true
	}
	held := map[string]int{} // live leases by holder
	for _, l := range leases {
		v.leases[l.Account] = l
		if !l.Expired {
			accounts[l.Account] = true
			held[l.Holder]++
		}
	}
	v.live = 1
	for _, p := range live {
		if p.Holder != r.holder {
			v.live++
		}
	}
	v.total = len(accounts)
	v.share = (v.total + v.live - 1) / v.live
	for _, p := range live {
		if p.Holder != r.holder && held[p.Holder] < v.share {
			v.room = true
		}
	}
	v.mine = held[r.holder]
	r.mu.Lock()
	r.view = v
	r.mu.Unlock()
	return v, nil
}

// snapshot is the last poll's view.
func (r *replicas) snapshot() clusterView {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.view
}

// takeFree takes the accounts of this replica that no live lease holds, up
// to its share while another live replica has room. An account left free
// for a whole lease_ttl is taken whatever the share (the replicas with
// room may not have it in their [[accounts]]), and then never handed back.
func (r *replicas) takeFree(ctx context.Context, v clusterView) {
	for _, a := range r.d.accounts {
		account := a.lease.wh.Account()
		l, ok := v.leases[account]
		if !a.lease.Held() {
			a.keep.Store(false)
		}
		if a.lease.Held() || ok && !l.Expired {
			a.freeSince = time.Time{}
			continue
		}
		if a.freeSince.IsZero() {
			a.freeSince = time.Now()
		}
		orphan := time.Since(a.freeSince) >= r.ttl
		if v.mine >= v.share && v.room && !orphan || !a.busy.TryLock() {
			continue
		}
		err := r.take(ctx, a, l, ok)
		a.busy.Unlock()
		if err != nil {
			continue
		}
		a.freeSince = time.Time{}
		keep := v.mine >= v.share && v.room
		a.keep.Store(keep)
		if keep {
			r.d.logger().Info("took account "+account+" beyond this replica's share: no replica with room took it within lease_ttl (do all replicas list it in [[accounts]]?)",
				"account", account, "held", v.mine+1, "share", v.share)
		}
		v.mine++
		r.mu.Lock()
		r.view.mine++
		r.mu.Unlock()
	}
}

// take takes a's lease (prev, when known, is its row as last polled) and
// says so: a take-over of a lapsed lease at warn, and its account is run
// at once (its holder may have died mid-walk); a lease released or new at
// info, run at its next slot.
func (r *replicas) take(ctx context.Context, a *accountLoop, prev load.Lease, known bool) error {
	account := a.lease.wh.Account()
	log := r.d.logger()
	if err := a.lease.AcquireContext(ctx); err != nil {
		if !errors.Is(err, load.ErrLocked) && ctx.Err() == nil {
			log.Warn("cannot take an account's lease; retrying at the next poll", "account", account, "err", err)
		}
		return err
	}
	switch {
	case known && prev.Holder == r.holder && !prev.Expired:
		log.Info("took account "+account+" back: its lease still named this holder", "account", account, "holder", r.holder)
	case !known:
		log.Info("took account "+account+": its first lease", "account", account, "holder", r.holder)
	case prev.Released():
		log.Info(fmt.Sprintf("took account %s, released by holder %s at %s", account, prev.Holder, stamp(prev.ExpiresAt)),
			"account", account, "previous_holder", prev.Holder, "holder", r.holder)
	default:
		log.Warn(fmt.Sprintf("took over account %s from holder %s whose lease lapsed at %s; running it now", account, prev.Holder, stamp(prev.ExpiresAt)),
			"account", account, "previous_holder", prev.Holder, "holder", r.holder, "fencing_token", a.lease.Token())
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// handBack releases one account, between its runs, when this replica holds
// more than its share and another live replica has room: one per poll, and
// never down below the share, so the accounts settle instead of moving
// back and forth. A poll may never fall between two runs of a busy
// account (walks nearly as long as the schedule's interval leave gaps
// shorter than a poll, at a fixed phase), so settle hands back at the end
// of a run too.
func (r *replicas) handBack() {
	if v := r.snapshot(); v.mine <= v.share || !v.room {
		return // the usual case: nothing to hand back (release checks again)
	}
	for i := len(r.d.accounts) - 1; i >= 0; i-- {
		a := r.d.accounts[i]
		if !a.busy.TryLock() {
			continue
		}
		done := r.release(a)
		a.busy.Unlock()
		if done {
			return
		}
	}
}

// settle is called by a's loop right after a run, with a.busy held: it
// hands a's account back when this replica holds more than its share and
// another live replica has room.
func (r *replicas) settle(ctx context.Context, a *accountLoop) {
	if r != nil && ctx.Err() == nil {
		r.release(a)
	}
}

// release, with a.busy held, releases a's lease when this replica holds
// it (not as an orphan it keeps) and more than its share while another
// live replica has room; true when it tried (released, or failed and
// logged).
func (r *replicas) release(a *accountLoop) bool {
	r.mu.Lock()
	v := r.view
	if v.mine <= v.share || !v.room || !a.lease.Held() || a.keep.Load() {
		r.mu.Unlock()
		return false
	}
	r.view.mine-- // counted now, so runs ending together stop at the share
	r.mu.Unlock()
	account := a.lease.wh.Account()
	if err := a.lease.Release(); err != nil {
		r.mu.Lock()
		r.view.mine++
		r.mu.Unlock()
		r.d.logger().Warn("cannot hand an account back", "account", account, "err", err)
		return true
	}
	r.d.logger().Info(fmt.Sprintf("released account %s so another replica can take it: this replica held %s, its share is %d (%s, %s)",
		account, english.Count(v.mine, "account"), v.share, english.Count(v.total, "account"), english.Count(v.live, "live replica")),
		"account", account, "holder", r.holder)
	return true
}

// claim is called by a's loop at a scheduled run, with a.busy held: ok
// when this replica holds a's lease (taking it if free and within its
// share), else why the run is skipped (SkipLeaseHeld, SkipOverShare).
func (r *replicas) claim(ctx context.Context, a *accountLoop, job *Job) (bool, string) {
	if r == nil || a.lease.Held() {
		return true, ""
	}
	v := r.snapshot()
	account := a.lease.wh.Account()
	l, known := v.leases[account]
	if known && !l.Expired && l.Holder != r.holder {
		job.logger().Debug("run skipped: another replica holds the account's lease", "holder", l.Holder,
			"expires_at", stamp(l.ExpiresAt))
		return false, SkipLeaseHeld
	}
	if v.mine >= v.share && v.room {
		job.logger().Debug("run skipped: this replica holds its share of the accounts and another live replica has room",
			"held", v.mine, "share", v.share)
		return false, SkipOverShare
	}
	err := r.take(ctx, a, l, known)
	var held *load.LeaseHeldError
	switch {
	case err == nil:
		r.mu.Lock()
		r.view.mine++
		r.mu.Unlock()
		// The run follows now: a wake-up the take-over sent is spent.
		select {
		case <-a.wake:
		default:
		}
		return true, ""
	case errors.As(err, &held):
		job.logger().Debug("run skipped: another replica holds the account's lease", "holder", held.Holder,
			"expires_at", stamp(held.ExpiresAt))
		return false, SkipLeaseHeld
	}
	// Any other failure: the run tries the lease itself and says why.
	return true, ""
}

// report tells a's observer what changed of its lease since the last
// report, and logs a lease lost.
func (r *replicas) report(a *accountLoop) {
	job := a.job.Load()
	o, _ := job.Observer.(LeaseObserver)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := a.lease.TakeLost(); err != nil {
		r.d.logger().Warn(fmt.Sprintf("lease of %s lost: %v", a.lease.wh.Account(), err),
			"account", a.lease.wh.Account(), "holder", r.holder)
		if o != nil {
			o.LeaseLost()
		}
	}
	if held := a.lease.Held(); held != a.reported {
		a.reported = held
		if o != nil {
			o.LeaseHeld(held)
		}
	}
}

// leave releases every lease held and ends this replica's heartbeat, so
// the other replicas take its accounts at once (a clean stop).
func (r *replicas) leave(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseOpTimeout)
	defer cancel()
	log := r.d.logger()
	for _, a := range r.d.accounts {
		if a.lease.Held() {
			if err := a.lease.Release(); err != nil {
				log.Warn("cannot release a lease at stop; it lapses after lease_ttl", "account", a.lease.wh.Account(), "err", err)
			}
		}
		r.report(a)
	}
	if err := r.cluster.LeaveReplicas(ctx, r.holder, r.instance); err != nil {
		log.Warn("cannot end this replica's heartbeat at stop", "holder", r.holder, "err", err)
	}
}
