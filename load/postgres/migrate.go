package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/schema"
)

// migrationLock is the key of the transaction-scoped advisory lock every
// migration transaction takes first: concurrent migrators (replicas
// starting together) apply each migration once, one after the other. A
// transaction-scoped lock ends with its transaction, so it is safe behind
// PgBouncer in transaction pooling mode.
const migrationLock = 0x43534E43 // "CSNC", sqlite.ApplicationID

// migrations lists the migrations this binary carries, in order.
func migrations() ([]schema.Migration, error) { return schema.List(schema.Postgres, "postgres") }

// SchemaVersion is the latest migration this binary carries.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// Migrate applies the migrations of schema.Postgres the database lacks, each
// in its own transaction together with its schema_migrations row and its Go
// step (migrationSteps, which redact with policy; nil: package redact's
// rule alone; and give stored cards' money the scale amounts says), and
// returns the versions it applied. It refuses a database
// migrated by a newer binary (*load.SchemaVersionError).
func Migrate(ctx context.Context, pool *pgxpool.Pool, policy *redact.Policy, amounts load.AmountRules) (applied []int, err error) {
	if policy == nil {
		policy = redact.NewPolicy(nil)
	}
	steps := migrationSteps(policy, amounts)
	defer classify(&err)
	ms, err := migrations()
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	latest := ms[len(ms)-1].Version
	for _, m := range ms {
		done := false
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			// A migration's Go steps work between statements: no idle
			// bound (the session's) for this transaction.
			if _, err := tx.Exec(ctx, `SELECT set_config('idle_in_transaction_session_timeout', '0', true)`); err != nil {
				return err
			}
			if err := advisoryLock(ctx, tx, migrationLock, migrationLockTimeout, "the migration lock (another replica is migrating the warehouse)"); err != nil {
				return err
			}
			// Created only when missing: CREATE TABLE IF NOT EXISTS needs
			// CREATE on the schema even when the table exists, and would
			// refuse a role that may write but not create (or a read-only
			// one) as if the database were empty.
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				if _, err := tx.Exec(ctx, `CREATE TABLE schema_migrations (
					version    integer     PRIMARY KEY,
					name       text        NOT NULL,
					applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
					return err
				}
			}
			var have int
			if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
				return err
			}
			if have > latest {
				return &load.SchemaVersionError{Database: have, Binary: latest}
			}
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`, m.Version).Scan(&done); err != nil || done {
				return err
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return waitedFor(err, "the tables "+m.Name+" changes, held by another session (an analyst's open transaction?)", LockTimeout)
			}
			if step := steps[m.Version]; step != nil {
				if err := step(ctx, tx); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, strings.TrimSuffix(m.Name, ".sql"))
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("migrate to %s: %w", m.Name, cannotMigrate(ctx, pool, err))
		}
		if !done {
			applied = append(applied, m.Version)
		}
	}
	return applied, nil
}

// cannotMigrate makes a migration refused for want of a privilege (SQLSTATE
// 42501) say which role cannot change the schema, wrapping
// load.ErrNotWritable; other errors are returned as they are.
func cannotMigrate(ctx context.Context, pool *pgxpool.Pool, err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		return err
	}
	role := "the role"
	var name string
	if pool.QueryRow(ctx, `SELECT current_user::text`).Scan(&name) == nil {
		role = "role " + name
	}
	return &notWritableError{msg: role + " cannot change the warehouse's schema (migrate as the role that owns cardsync's tables)", err: err}
}

// migrationSteps are Go steps that run after a migration's SQL, in its
// transaction: work SQL cannot do, such as applying the redaction policy to
// rows already stored.
func migrationSteps(policy *redact.Policy, amounts load.AmountRules) map[int]func(context.Context, pgx.Tx) error {
	return map[int]func(context.Context, pgx.Tx) error{
		5:  func(ctx context.Context, tx pgx.Tx) error { return rehashCards(ctx, tx, policy) },
		10: func(ctx context.Context, tx pgx.Tx) error { return typeFields(ctx, tx, amounts) },
		12: createIDKey,
		13: rulesVersion,
		14: func(ctx context.Context, tx pgx.Tx) error { return currencyScales(ctx, tx, amounts) },
		15: rehashValues,
	}
}

// rehashCards is migration 5's Go step: card_state.data_hash is the hash of
// the card's canonical JSON, whose members are now sorted (the last of
// duplicate keys kept). Each stored card is made canonical again from its
// jsonb (which keeps one member per key, the last) and, where its hash
// differs, data_hash is written, with data when the policy changed it (a
// secret removed). Numbers jsonb writes in another form than the API sent
// (1e3 as 1000) hash differently from the API's text: such a card is
// written once more, as changed, by the next walk. A card the policy
// refuses keeps its hash.
func rehashCards(ctx context.Context, tx pgx.Tx, policy *redact.Policy) error {
	return rehashEach(ctx, tx, func(stored string) (string, bool) {
		out, _, err := policy.JSON([]byte(stored))
		return string(out), err == nil
	})
}

// rehashEach stores, for every card whose load.DataHash of form(its jsonb
// text) differs from its data_hash, that hash and that form as its data
// (a card form refuses keeps both).
func rehashEach(ctx context.Context, tx pgx.Tx, form func(stored string) (string, bool)) error {
	type card struct {
		account, id, data string
		hash              []byte
	}
	var changed []card
	rows, err := tx.Query(ctx, `SELECT account, card_id, data::text, data_hash FROM card_state`)
	if err != nil {
		return fmt.Errorf("rehash cards: %w", err)
	}
	for rows.Next() {
		var c card
		var stored string
		var old []byte
		if err := rows.Scan(&c.account, &c.id, &stored, &old); err != nil {
			rows.Close()
			return fmt.Errorf("rehash cards: %w", err)
		}
		data, ok := form(stored)
		if !ok {
			continue
		}
		c.data, c.hash = data, load.DataHash([]byte(data))
		if !bytes.Equal(c.hash, old) {
			changed = append(changed, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("rehash cards: %w", err)
	}
	for _, c := range changed {
		if _, err := tx.Exec(ctx, `UPDATE card_state SET data_hash = $3, data = $4::jsonb
			WHERE account = $1 AND card_id = $2`, c.account, c.id, c.hash, c.data); err != nil {
			return fmt.Errorf("rehash card %s: %w", c.id, err)
		}
	}
	return nil
}

// createIDKey is migration 12's Go step: the card id key, 32 bytes from
// crypto/rand, created once in the migration's transaction (under its
// advisory lock: two processes migrating at once agree, the second finds
// the migration applied).
func createIDKey(ctx context.Context, tx pgx.Tx) error {
	key := make([]byte, load.IDKeyBytes)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
	if _, err := tx.Exec(ctx, `INSERT INTO card_id_key (singleton, key, created_at) VALUES (1, $1, now()) ON CONFLICT (singleton) DO NOTHING`, key); err != nil {
		return fmt.Errorf("create the card id key: %w", err)
	}
	return nil
}

// readIDKey reads the warehouse's card id key.
func readIDKey(ctx context.Context, pool *pgxpool.Pool) ([]byte, error) {
	var key []byte
	if err := pool.QueryRow(ctx, `SELECT key FROM card_id_key WHERE singleton = 1`).Scan(&key); err != nil {
		return nil, fmt.Errorf("read the card id key: %w", err)
	}
	if err := load.CheckIDKey(key); err != nil {
		return nil, err
	}
	return key, nil
}

// rehashValues is migration 15's Go step: card_state.data_hash is computed
// again as load.DataHash of the card's jsonb text, the hash of its hash
// form (numbers by exact value, strings in NFC), which jsonb keeps, for
// every card whose hash that changes. data stays as it is and no version
// is added.
func rehashValues(ctx context.Context, tx pgx.Tx) error {
	// The jsonb text itself: jsonb keeps the hash form's values, so data is
	// written back unchanged.
	return rehashEach(ctx, tx, func(stored string) (string, bool) { return stored, true })
}
