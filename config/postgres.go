package config

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres/pgrules"
)

// WarehouseCredentialName is the systemd credential (LoadCredential=) that
// holds the PostgreSQL warehouse's password:
// $CREDENTIALS_DIRECTORY/warehouse-password.
const WarehouseCredentialName = "warehouse-password"

// PostgresSettings are the settings of a PostgreSQL warehouse and of the
// replicas sharing it.
type PostgresSettings struct {
	// WarehouseURL is [warehouse] url ("": the SQLite file DBPath). It
	// holds no password.
	WarehouseURL string
	// WarehousePassword is the PostgreSQL password ("" lets libpq's other
	// means, such as trust or a client certificate, apply).
	WarehousePassword extract.Secret
	// WarehouseSchema is [warehouse] schema: the PostgreSQL schema the
	// warehouse lives in, "" when not set (public, and an empty public
	// beside another schema's warehouse is refused rather than
	// initialised: see load/postgres Options.Schema).
	WarehouseSchema string
	// MaxConnections is [warehouse] max_connections (0: not set; see
	// PoolConns).
	MaxConnections int
	// LeaseTTL is [cluster] lease_ttl.
	LeaseTTL time.Duration
	// Holder is [cluster] holder; unset (HolderSet false), the host name,
	// which ReplicaHolder completes with the process's instance id.
	Holder string
	// HolderSet: [cluster] holder was set.
	HolderSet bool
}

// MaxMaxConnections is the largest [warehouse] max_connections.
const MaxMaxConnections = 10000

// DefaultMaxConnections is the most connections PoolConns gives a process
// by default: a fifth of PostgreSQL's default max_connections (100), so a
// few replicas, analysts and pg_dump fit beside it.
const DefaultMaxConnections = 20

// PoolConns is the bound of this process's PostgreSQL connections, all
// accounts together ([warehouse] max_connections): when not set,
// pgrules.LeaseConns for leases and heartbeats plus one writer per
// account and one for readers (status, metrics), at most
// DefaultMaxConnections. More would not help: an account holds a
// connection only while its commit runs, and the accounts' commits are
// bound by the server's WAL flushes, not by connections.
func (s PostgresSettings) PoolConns(accounts int) int32 {
	if s.MaxConnections > 0 {
		return int32(s.MaxConnections)
	}
	return int32(min(pgrules.LeaseConns+max(accounts, 1)+1, DefaultMaxConnections))
}

// ReplicaHolder is the holder this process takes leases under: [cluster]
// holder when set, else the host name and instance (a random id of the
// process: "db1-3f9a1c"), unique across hosts and PID namespaces.
func (s PostgresSettings) ReplicaHolder(instance string) string {
	if s.HolderSet || instance == "" {
		return s.Holder
	}
	return s.Holder + "-" + instance
}

// postgresSettings parses [warehouse] url and password_file and the
// [cluster] table; the rules are load's. It runs after the other
// tables, since a URL rules out keys that only a file has.
func (c *Config) postgresSettings(s *Settings, getenv func(string) string) error {
	var err error
	if s.LeaseTTL, err = positiveDuration(c.Cluster.LeaseTTL); err != nil {
		return c.fail("cluster.lease_ttl", "%v", err)
	}
	if err := load.CheckLeaseTTL(s.LeaseTTL); err != nil {
		return c.fail("cluster.lease_ttl", "%v", err)
	}
	if s.Holder = c.Cluster.Holder; s.Holder != "" {
		s.HolderSet = true
	} else if s.Holder, _ = os.Hostname(); s.Holder == "" {
		s.Holder = "cardsync"
	}
	if err := load.CheckHolder(s.Holder); err != nil {
		return c.fail("cluster.holder", "%v", err)
	}
	raw := strings.TrimSpace(c.Warehouse.URL)
	if raw == "" {
		if strings.TrimSpace(c.Warehouse.Schema) != "" {
			return c.fail("warehouse.schema", "a schema is a PostgreSQL warehouse's ([warehouse] url); a SQLite file has none: remove it")
		}
		if c.Warehouse.MaxConnections != 0 {
			return c.fail("warehouse.max_connections", "a connection bound is a PostgreSQL warehouse's ([warehouse] url); a SQLite file has none: remove it")
		}
		return nil
	}
	if s.MaxConnections = c.Warehouse.MaxConnections; s.MaxConnections != 0 && (s.MaxConnections < pgrules.MinSharedConns || s.MaxConnections > MaxMaxConnections) {
		return c.fail("warehouse.max_connections", "%d out of range %d..%d", s.MaxConnections, pgrules.MinSharedConns, MaxMaxConnections)
	}
	if s.WarehouseSchema = strings.TrimSpace(c.Warehouse.Schema); s.WarehouseSchema != "" {
		if err := pgrules.CheckSchemaName(s.WarehouseSchema); err != nil {
			return c.fail("warehouse.schema", "%v", err)
		}
	}
	if src := c.Source("warehouse.path"); src.Kind != FromDefault {
		return c.fail("warehouse.url", "set together with warehouse.path (%s): the warehouse is either a PostgreSQL URL or a SQLite file; remove one of them", src)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" && u.Query().Get("host") == "" {
		return c.fail("warehouse.url", "%s: want postgres://user@host:port/database", load.RedactURL(raw))
	}
	if _, err := url.ParseQuery(u.RawQuery); err != nil {
		// Not quoted: a bad escape or a ';' may sit in a password.
		return c.fail("warehouse.url", "%s: its query does not parse (a '%%' not followed by two hex digits, or a ';' between parameters): want key=value pairs joined by '&', percent-encoded", load.RedactURL(raw))
	}
	if where := urlPassword(u); where != "" {
		return c.fail("warehouse.url", "%s holds a password (%s): URLs get logged; put it in warehouse.password_file, %s or the systemd credential %s",
			load.RedactURL(raw), where, WarehousePasswordEnv, WarehouseCredentialName)
	}
	s.WarehouseURL = raw
	if s.WarehousePassword, err = c.loadWarehousePassword(getenv); err != nil {
		return err
	}
	s.Secrets.Add(s.WarehousePassword.Reveal())
	if s.BackupSchedule != nil {
		return c.fail("backup.cron", "backups of a PostgreSQL warehouse are not cardsync's: use pg_dump (or your database's backups) and remove backup.cron")
	}
	return nil
}

// loadWarehousePassword finds the PostgreSQL password:
// CARDSYNC_WAREHOUSE_PASSWORD, then systemd's
// $CREDENTIALS_DIRECTORY/warehouse-password, then warehouse.password_file;
// none is no password.
func (c *Config) loadWarehousePassword(getenv func(string) string) (extract.Secret, error) {
	if c.warehousePassword != "" {
		return c.warehousePassword, nil
	}
	if dir := getenv("CREDENTIALS_DIRECTORY"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, WarehouseCredentialName)); err == nil {
			return credentialOrFile(getenv, WarehouseCredentialName, "warehouse.password_file", "", nil, "")
		}
	}
	if c.Warehouse.PasswordFile == "" {
		return "", nil
	}
	pw, err := readSecretFile(c.Warehouse.PasswordFile, true)
	if err != nil {
		e := c.fail("warehouse.password_file", "%v", err)
		e.err = err // a fix tells a mode refused from a file unreadable
		return "", e
	}
	return pw, nil
}

// urlPassword says where u holds a password ("user:password@", a user name
// with an encoded ':', or a query parameter whose name holds password in
// any case: ?PASSWORD=, an encoded ?password%3D…), or "". sslpassword (the
// client key's passphrase) is allowed: logs mask it (load.RedactURL).
func urlPassword(u *url.URL) string {
	if _, ok := u.User.Password(); ok {
		return "user:password@"
	}
	if strings.Contains(u.User.Username(), ":") {
		return "a user name holding an encoded ':' (%3A)"
	}
	for k := range u.Query() {
		if lk := strings.ToLower(k); strings.Contains(lk, "password") && lk != "sslpassword" {
			if i := strings.IndexByte(k, '='); i >= 0 {
				k = k[:i] + "=…"
			}
			return "query parameter " + k
		}
	}
	return ""
}
