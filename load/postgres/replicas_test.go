package postgres

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestReplicaHeartbeatRefusesASecondInstance: a holder's heartbeat is
// renewed by its own instance, refused to another instance while live
// (naming both), taken over once expired or left, and only live replicas
// are listed.
func TestReplicaHeartbeatRefusesASecondInstance(t *testing.T) {
	a, url, _ := openPG(t, Options{RequireLease: true})
	b := openReplica(t, url)
	ctx := t.Context()
	if err := a.ReplicaHeartbeat(ctx, "db1", "inst-a", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := a.ReplicaHeartbeat(ctx, "db1", "inst-a", time.Minute); err != nil {
		t.Fatalf("renewal by the same instance: %v", err)
	}
	err := b.ReplicaHeartbeat(ctx, "db1", "inst-b", time.Minute)
	var in *load.HolderInUseError
	if !errors.As(err, &in) || !errors.Is(err, load.ErrLocked) || in.Other.Instance != "inst-a" || in.Instance != "inst-b" {
		t.Fatalf("second instance: %v, want a *HolderInUseError naming inst-a", err)
	}
	for _, want := range []string{`"db1"`, "inst-a", "inst-b", "started"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
	if err := b.ReplicaHeartbeat(ctx, "db2", "inst-b", time.Minute); err != nil {
		t.Fatal(err)
	}
	live, err := a.LiveReplicas(ctx)
	if err != nil || len(live) != 2 || live[0].Holder != "db1" || live[1].Holder != "db2" {
		t.Fatalf("live = %+v, %v", live, err)
	}
	if err := a.LeaveReplicas(ctx, "db1", "inst-a"); err != nil {
		t.Fatal(err)
	}
	if live, _ := a.LiveReplicas(ctx); len(live) != 1 {
		t.Errorf("after leave: live = %+v, want db2 only", live)
	}
	if err := b.ReplicaHeartbeat(ctx, "db1", "inst-b", time.Minute); err != nil {
		t.Errorf("taking over a left holder: %v", err)
	}
}

// TestReleasedLeaseToldFromLapsed: a lease released by its holder reads as
// released; one left to expire does not.
func TestReleasedLeaseToldFromLapsed(t *testing.T) {
	a, _, _ := openPG(t, Options{RequireLease: true})
	ctx := t.Context()
	for _, acct := range []string{"rel", "lap"} {
		if _, err := a.AcquireLease(ctx, acct, "db1", time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.ReleaseLease(ctx, "rel", "db1"); err != nil {
		t.Fatal(err)
	}
	expire(t, a, "lap")
	leases, err := a.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases {
		if !l.Expired || l.Released() != (l.Account == "rel") {
			t.Errorf("%s: expired %v released %v", l.Account, l.Expired, l.Released())
		}
	}
}
