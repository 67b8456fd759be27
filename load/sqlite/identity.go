package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/boundary"
)

// ErrNoIdentity is wrapped when a database file has no warehouse identity:
// it was written by a cardsync before warehouse identities (and not opened
// for writing since), or it is not a warehouse at all.
var ErrNoIdentity = errors.New("the file has no warehouse identity")

// newIdentity returns a random 128-bit warehouse id as 32 lowercase hex
// digits.
func newIdentity() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// upgradeIdentity is the identity migration's Go step: the warehouse's identity,
// created once, with the warehouse's clock.
func (w *Warehouse) upgradeIdentity(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO warehouse_identity (singleton, warehouse_id, created_at) VALUES (1, ?, ?)`,
		newIdentity(), w.stamp()); err != nil {
		return fmt.Errorf("create the warehouse identity: %w", err)
	}
	return nil
}

// ID returns the warehouse's identity: 32 hex digits, the same in every
// backup of it.
func (w *Warehouse) ID(ctx context.Context) (string, error) {
	id, err := identityOf(ctx, w.db, "main")
	if err != nil {
		return "", boundary.WarehouseError(fmt.Errorf("%s: %w", w.path, err))
	}
	return id, nil
}

// ReadIdentity returns the identity of the warehouse or backup file at
// path, read through a read-only connection of its own; a file without one
// wraps ErrNoIdentity. Every error wraps ErrWarehouse.
func ReadIdentity(ctx context.Context, path string) (_ string, err error) {
	defer classify(&err)
	db, err := openPlain(path)
	if err != nil {
		return "", fmt.Errorf("read the identity of %s: %w", path, err)
	}
	defer db.Close()
	id, err := identityOf(ctx, db, "main")
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return id, nil
}

// identityOf reads warehouse_identity of the database schema (main, or an
// attached one) through q.
func identityOf(ctx context.Context, q queryer, schema string) (string, error) {
	var tables int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM `+schema+`.sqlite_schema WHERE type = 'table' AND name = 'warehouse_identity'`).Scan(&tables); err != nil {
		return "", fmt.Errorf("read the warehouse identity: %w", err)
	}
	if tables == 0 {
		return "", ErrNoIdentity
	}
	var id string
	err := q.QueryRowContext(ctx, `SELECT warehouse_id FROM `+schema+`.warehouse_identity WHERE singleton = 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNoIdentity
	}
	if err != nil {
		return "", fmt.Errorf("read the warehouse identity: %w", err)
	}
	return id, nil
}

// createIDKey is the card id key migration's Go step: 32 bytes from
// crypto/rand, created once, in the migration's transaction (which holds
// the file's write lock, so two processes opening a new file at once
// agree: the second finds the migration applied).
func (w *Warehouse) createIDKey(ctx context.Context, tx *sql.Tx) error {
	key := make([]byte, load.IDKeyBytes)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
	if _, err := tx.ExecContext(ctx, `INSERT INTO card_id_key (singleton, key, created_at) VALUES (1, ?, ?) ON CONFLICT (singleton) DO NOTHING`,
		key, w.stamp()); err != nil {
		return fmt.Errorf("create the card id key: %w", err)
	}
	return nil
}

// readIDKey reads the warehouse's card id key.
func readIDKey(ctx context.Context, q queryer) ([]byte, error) {
	var key []byte
	if err := q.QueryRowContext(ctx, `SELECT key FROM card_id_key WHERE singleton = 1`).Scan(&key); err != nil {
		return nil, fmt.Errorf("read the card id key: %w", err)
	}
	if err := load.CheckIDKey(key); err != nil {
		return nil, err
	}
	return key, nil
}
