package postgres

import (
	"context"
	"sync"

	"github.com/cardsync/cardsync/load/postgres/pgrules"
	"github.com/jackc/pgx/v5/pgxpool"
)

// LeaseConns is the size of a shared pool's lease pool (pgrules.LeaseConns).
const LeaseConns = pgrules.LeaseConns

// MinSharedConns is the least Pools accepts as its bound: LeaseConns plus
// one connection to write with (pgrules.MinSharedConns).
const MinSharedConns = pgrules.MinSharedConns

// Pools shares one connection pool among the Warehouses a process opens
// on one database (same URL, password and schema, Options.Pools): N
// accounts hold at most MaxConns server connections together, not N
// pools' worth. Each pool is created by the first Open and closed by the
// last Warehouse's Close; its migration, schema check, column_docs and
// write check run once, by the first Open that succeeds. A Pools is safe
// for concurrent use; make one per process (or per settings generation)
// with NewPools.
type Pools struct {
	maxConns int32
	mu       sync.Mutex
	open     map[poolKey]*sharedPool
}

// poolKey says which Warehouses may share a pool.
type poolKey struct {
	url, password, schema string
	readOnly              bool
}

// sharedPool is one database's pools and how many Warehouses use them.
type sharedPool struct {
	main  *pgxpool.Pool // the accounts' reads and writes
	lease *pgxpool.Pool // leases and replica heartbeats (LeaseConns)
	refs  int

	setup sync.Mutex // held by the Open that prepares the database
	ready bool       // the database was prepared (under setup)
}

// NewPools returns an empty Pools whose every pool holds at most maxConns
// server connections, LeaseConns of them for leases and heartbeats
// (maxConns below MinSharedConns counts as MinSharedConns).
func NewPools(maxConns int32) *Pools {
	return &Pools{maxConns: max(maxConns, MinSharedConns), open: map[poolKey]*sharedPool{}}
}

// MaxConns is the bound of each pool (NewPools).
func (p *Pools) MaxConns() int32 { return p.maxConns }

// acquire returns the pool of key, created from cfg when none is open,
// with one more reference.
func (p *Pools) acquire(ctx context.Context, key poolKey, cfg *pgxpool.Config) (*sharedPool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if sp := p.open[key]; sp != nil {
		sp.refs++
		return sp, nil
	}
	mainCfg, leaseCfg := cfg.Copy(), cfg.Copy()
	mainCfg.MaxConns = p.maxConns - LeaseConns
	leaseCfg.MaxConns, leaseCfg.MinConns = LeaseConns, 0
	main, err := pgxpool.NewWithConfig(ctx, mainCfg)
	if err != nil {
		return nil, err
	}
	lease, err := pgxpool.NewWithConfig(ctx, leaseCfg)
	if err != nil {
		main.Close()
		return nil, err
	}
	sp := &sharedPool{main: main, lease: lease, refs: 1}
	p.open[key] = sp
	return sp, nil
}

// release drops one reference to the pool of key, closing it with the
// last.
func (p *Pools) release(key poolKey) {
	p.mu.Lock()
	sp := p.open[key]
	if sp == nil {
		p.mu.Unlock()
		return
	}
	if sp.refs--; sp.refs > 0 {
		p.mu.Unlock()
		return
	}
	delete(p.open, key)
	p.mu.Unlock()
	sp.main.Close()
	sp.lease.Close()
}
