// Package config loads cardsync's configuration: defaults, then the TOML
// file, then CARDSYNC_* environment variables, then command-line flags. It
// records where every value came from (a default, file:line, a variable, a
// flag), so that every error names its source, and turns the text values
// into Settings. It owns the file's shape and the sources, nothing else:
// each value is checked by the package it configures (extract.CheckBaseURL,
// extract.CheckRate, load.CheckFileMode, ...), and the defaults are theirs.
// It must not open the warehouse or speak HTTP.
//
// An error names its value's source: file:line, env CARDSYNC_…, flag -….
// It also reads the password (a file, a variable or a systemd credential),
// says which keys a SIGHUP applies and which need a restart (reload.go:
// Settings.Changes), and whether accounts are named (NamedAccounts, the one
// rule of output wording).
package config

import (
	"fmt"
	"strings"
)

// File is the TOML file's shape. Unknown keys are an error. Each of its
// keys is declared, with its default and its words, in keytable.go.
type File struct {
	API       API       `toml:"api"`
	Warehouse Warehouse `toml:"warehouse"`
	Cards     Cards     `toml:"cards"`
	Schedule  Schedule  `toml:"schedule"`
	Log       Log       `toml:"log"`
	Metrics   Metrics   `toml:"metrics"`
	Backup    Backup    `toml:"backup"`
	Report    Report    `toml:"report"`
	Cluster   Cluster   `toml:"cluster"`
	// Accounts are the [[accounts]] tables; none means the [api] table is
	// the one account, named load.DefaultAccount.
	Accounts []Account `toml:"accounts"`
}

// Endpoint is what the [api] table and an [[accounts]] table both say of
// one API account: where it is, who signs in, how fast to go.
type Endpoint struct {
	BaseURL       string `toml:"base_url"`
	Email         string `toml:"email"`
	PasswordFile  string `toml:"password_file"`
	TokenField    string `toml:"token_field"`
	RateLimit     string `toml:"rate_limit"`
	AuthRateLimit string `toml:"auth_rate_limit"`
}

// API is the [api] table: the account named load.DefaultAccount (unless
// [[accounts]] tables exist) and the client's settings for every account.
type API struct {
	Endpoint
	Timeout      string `toml:"timeout"`
	MaxWait      string `toml:"max_wait"`
	MaxBodyBytes int64  `toml:"max_body_bytes"`
	AmountScale  int    `toml:"amount_scale"`
	MaxPages     int    `toml:"max_pages"`
}

// Warehouse is the [warehouse] table.
type Warehouse struct {
	Path string `toml:"path"`
	// URL, when set, is a PostgreSQL warehouse (postgres://…) used
	// instead of the file at Path; its password never goes in the URL.
	URL string `toml:"url"`
	// PasswordFile holds the PostgreSQL password (else the systemd
	// credential warehouse-password or CARDSYNC_WAREHOUSE_PASSWORD).
	PasswordFile string `toml:"password_file"`
	// Schema is the PostgreSQL schema the warehouse lives in ("":
	// public).
	Schema string `toml:"schema"`
	// MaxConnections bounds the PostgreSQL connections of one process,
	// all accounts together (0: PostgresSettings.PoolConns' default).
	MaxConnections int      `toml:"max_connections"`
	FileMode       string   `toml:"file_mode"`
	Synchronous    string   `toml:"synchronous"`
	RedactFields   []string `toml:"redact_fields"`
	// PageAuditRetention is how long run_pages rows are kept ("0": forever).
	PageAuditRetention string `toml:"page_audit_retention"`
	// FieldRetention is how long a card_fields row (and its cards_flat
	// column) stays after a commit last saw its field: days ("90d") or a
	// Go duration ("36h").
	FieldRetention string `toml:"field_retention"`
	// MaxRemovedFraction is the mass-removal guard's threshold.
	MaxRemovedFraction float64 `toml:"max_removed_fraction"`
	// CommitDelay is how long a page that changes something may wait for
	// more pages to share its transaction ("0": it commits at once).
	CommitDelay string `toml:"commit_delay"`
	// WALCheckpoint is [warehouse] checkpoint: who empties the WAL, "auto"
	// (cardsync's WAL checkpoints) or "external" (a replicator such as
	// Litestream).
	WALCheckpoint string `toml:"checkpoint"`
}

// Cards is the [cards] table: what is kept of each card.
type Cards struct {
	// KeepFields, when set, are the only top-level card fields stored
	// (load.Options.KeepFields; "id" always kept). Unset (nil): every
	// field.
	KeepFields []string `toml:"keep_fields"`
	// AmountScale is the decimals of a card's decimal fields when the card
	// names no currency ISO 4217 knows (load.Options.AmountScale).
	AmountScale int `toml:"amount_scale"`
	// CurrencyField is the top-level field holding a card's currency
	// ("": found by its name; load.Options.CurrencyField).
	CurrencyField string `toml:"currency_field"`
}

// Backup is the [backup] table: where backups go, how many stay, and when
// serve takes them.
type Backup struct {
	// Dir is the backup directory ("": backups/ beside the warehouse).
	Dir string `toml:"dir"`
	// Keep is how many backups stay after a backup prunes the directory.
	Keep int `toml:"keep"`
	// Cron is when serve takes a backup, between runs ("": never).
	Cron string `toml:"cron"`
}

// Cluster is the [cluster] table: how replicas sharing a PostgreSQL
// warehouse split the accounts.
type Cluster struct {
	// LeaseTTL is how long an account's lease lasts without renewal: a
	// dead replica's accounts move to another within it.
	LeaseTTL string `toml:"lease_ttl"`
	// Holder names this replica in sync_leases ("": the host name and a
	// random instance id).
	Holder string `toml:"holder"`
}

// Schedule is the [schedule] table.
type Schedule struct {
	Cron       string `toml:"cron"`
	Timezone   string `toml:"timezone"`
	RunOnStart bool   `toml:"run_on_start"`
	RunTimeout string `toml:"run_timeout"`
}

// Metrics is the [metrics] table.
type Metrics struct {
	// Listen is the host:port serve answers /metrics and /healthz on; ""
	// (the default) serves nothing.
	Listen string `toml:"listen"`
	// HealthyWithin is how old the last successful run may be while
	// /healthz answers 200; "" is three schedule intervals.
	HealthyWithin string `toml:"healthy_within"`
}

// Report is the [report] table: the HTML report serve refreshes after each
// successful run.
type Report struct {
	// Path is where serve writes the report ("": serve writes none).
	Path string `toml:"path"`
	// Since is the period the report covers: days ("90d") or a Go
	// duration ("36h").
	Since string `toml:"since"`
}

// Log is the [log] table.
type Log struct {
	Level  string `toml:"level"`
	Format string `toml:"format"`
}

// SourceKind says where a value came from.
type SourceKind int

// Where values come from, in order of precedence (later wins).
const (
	FromDefault SourceKind = iota
	FromFile
	FromEnv
	FromFlag
)

// Source is where one value came from.
type Source struct {
	Kind SourceKind
	// Name is the file, the environment variable or the flag.
	Name string
	// Line is the file line, when known.
	Line int
}

// String names the source as an error shows it: "default",
// "cardsync.toml:7", "env CARDSYNC_LOG_LEVEL", "flag
// -log-level".
func (s Source) String() string {
	switch s.Kind {
	case FromFile:
		if s.Line > 0 {
			return fmt.Sprintf("%s:%d", s.Name, s.Line)
		}
		return s.Name
	case FromEnv:
		return "env " + s.Name
	case FromFlag:
		return "flag -" + s.Name
	}
	return "default"
}

// Error is a configuration problem: the key, where its value came from,
// and what is wrong.
type Error struct {
	Key    string // dotted key, e.g. "api.rate_limit"
	Source Source
	Msg    string
	// Suggest is the key an unknown one most likely misspells (""
	// none): the fix of an ErrUnknownKey.
	Suggest string
	// err, when set, is a sentinel the error wraps (ErrNoConfig,
	// ErrUnknownKey).
	err error
}

// Unwrap returns the sentinel the error wraps, if any.
func (e *Error) Unwrap() error { return e.err }

// Error implements error: "config: cardsync.toml:7: log.level: ...".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.Source.Kind != FromDefault || e.Source.Name != "" {
		b.WriteString(e.Source.String() + ": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}
