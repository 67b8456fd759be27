package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
	"github.com/cardsync/cardsync/worker"
)

// fixer turns an error into its fix: the one thing to change, naming the
// key, the path or the command. It is the one place that does, for check's
// FAIL lines and for the error of every command on stderr, and it decides
// by the errors' types and sentinels, never by their text.
type fixer struct {
	// command is the command that failed ("check", "backfill").
	command string
	// s are the settings (zero when they did not load); account is the
	// account the error is about (zero: the [api] table's, or none).
	s       config.Settings
	account config.AccountSettings
	// cl builds the command lines a fix prints.
	cl worker.CommandLine
	// deadline names the command's own time limit as the user sets it
	// ("-timeout 30s"); "" when it has none.
	deadline string
	// output names the flag (or key) that places the files the command
	// writes away from the warehouse ("-o" of report); "" when it writes
	// none.
	output string
}

// fix returns the fix of err, or "" when there is nothing to change (the
// error's own words say all there is).
func (f fixer) fix(err error) string {
	var ce *config.Error
	var ue *usageError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ce):
		return configFix(ce)
	case errors.As(err, &ue):
		return fmt.Sprintf("see `%s` for its flags and examples", worker.CommandLine{}.Command(f.command, "-h"))
	case errors.Is(err, worker.ErrInterrupted), errors.Is(err, context.Canceled):
		if f.command == "backfill" {
			return fmt.Sprintf("nothing to change: `%s` resumes from the checkpoint", f.accountLine().AccountCommand("backfill"))
		}
		return ""
	case errors.Is(err, load.ErrLocked), errors.Is(err, load.ErrLeaseHeld):
		return f.lockFix(err)
	case errors.Is(err, extract.ErrUnauthenticated):
		return f.credentialsFix()
	}
	if fix := f.apiFix(err); fix != "" {
		return fix
	}
	if fix := f.warehouseFix(err); fix != "" {
		return fix
	}
	return f.fileFix(err)
}

// accountLine is the command line about the fixer's account.
func (f fixer) accountLine() worker.CommandLine { return accountCommandLine(f.s, f.cl, f.account.Name) }

// configFix names what to correct of a configuration error, where.
func configFix(ce *config.Error) string {
	var mode *config.SecretModeError
	var path *fs.PathError
	switch {
	case errors.Is(ce, config.ErrNoConfig):
		return "pass -config FILE, or set " + config.ConfigEnv
	case errors.As(ce, &mode):
		return fmt.Sprintf("chmod 600 %s (or correct %s at %s)", worker.ShellQuote(mode.Path), ce.Key, ce.Source)
	case errors.As(ce, &path) && errors.Is(ce, fs.ErrPermission):
		return readableFix(path.Path)
	case ce.Key == "" && ce.Source.Kind == config.FromFile && errors.Is(ce, fs.ErrNotExist):
		return fmt.Sprintf("the config file %s does not exist: create it (from config.example.toml) or point -config (or %s) at the right file",
			absPath(ce.Source.Name), config.ConfigEnv)
	case errors.Is(ce, config.ErrUnknownKey) && ce.Source.Kind == config.FromEnv && ce.Suggest != "":
		return fmt.Sprintf("rename the variable %s to %s", ce.Source.Name, ce.Suggest)
	case errors.Is(ce, config.ErrUnknownKey) && ce.Source.Kind == config.FromEnv:
		return fmt.Sprintf("unset the variable %s, or correct its name (docs/configuration.md lists every variable)", ce.Source.Name)
	case errors.Is(ce, config.ErrUnknownKey) && ce.Suggest != "":
		return fmt.Sprintf("rename %s to %s at %s", ce.Key, ce.Suggest, ce.Source)
	case errors.Is(ce, config.ErrUnknownKey):
		return fmt.Sprintf("remove %s at %s, or correct its name (docs/configuration.md lists every key)", ce.Key, ce.Source)
	case ce.Key == "" && ce.Source.Kind == config.FromFile && ce.Source.Line > 0:
		return "correct the TOML syntax at " + ce.Source.String()
	case ce.Key == "":
		return ""
	}
	switch ce.Source.Kind {
	case config.FromFile:
		return fmt.Sprintf("correct %s at %s", ce.Key, ce.Source)
	case config.FromEnv:
		return fmt.Sprintf("correct %s in the variable %s (or unset it)", ce.Key, ce.Source.Name)
	case config.FromFlag:
		return fmt.Sprintf("correct the flag -%s", ce.Source.Name)
	}
	return fmt.Sprintf("set %s in the config file (or %s)", ce.Key, config.EnvName(ce.Key))
}

// lockFix says who holds the warehouse or the account's lease and what to
// do about it.
func (f fixer) lockFix(err error) string {
	var held *load.LeaseHeldError
	var locked *load.LockedError
	status := f.accountLine().AccountCommand("status")
	switch {
	case errors.As(err, &held):
		return fmt.Sprintf("let the replica %s finish the account's sync, or stop it; its lease lapses [cluster] lease_ttl after its last renewal (`%s` shows it)", held.Holder, status)
	case errors.As(err, &locked) && locked.PID > 0:
		return fmt.Sprintf("wait for the sync of process %d to end, or stop it (systemctl stop cardsync); `%s` shows the run", locked.PID, status)
	}
	return fmt.Sprintf("wait for the other cardsync process writing this warehouse to end, or stop it (systemctl stop cardsync); `%s` shows the run", status)
}

// credentialsFix names the keys the refused credentials came from.
func (f fixer) credentialsFix() string {
	a := f.account
	email, pw := cmp.Or(a.From.Email, "api.email"), cmp.Or(a.From.Password, config.PasswordEnv+" or api.password_file")
	return fmt.Sprintf("the API refused %s with the password of %s: correct %s or that password; the user must have the Administrator role", a.Email, pw, email)
}

// baseKey names the account's base URL key and where it was set.
func (f fixer) baseKey() string { return cmp.Or(f.account.From.BaseURL, "api.base_url") }

// bound names what ended a request's retries: the command's own limit or
// api.max_wait.
func (f fixer) bound(we *extract.WaitError) string {
	if we.Deadline {
		return cmp.Or(f.deadline, "the command's deadline")
	}
	return fmt.Sprintf("api.max_wait (%s)", f.s.MaxWait)
}

// apiFix is the fix of a failure to reach or understand the API, "" for
// an error of another kind.
func (f fixer) apiFix(err error) string {
	var dns *net.DNSError
	var re *extract.RedirectError
	var se *extract.StatusError
	var we *extract.WaitError
	var te *checkTimeoutError
	base, key := f.account.BaseURL, f.baseKey()
	switch {
	case errors.Is(err, load.ErrWarehouse):
		// The warehouse's own network errors (a PostgreSQL server) are
		// warehouseFix's.
		return ""
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("nothing accepts connections at %s: correct the host or port of %s, or start the API there", hostPort(base), key)
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("the host %s does not exist: correct the host of %s", dns.Name, key)
	case errors.As(err, &dns):
		return fmt.Sprintf("the host %s could not be resolved: check the host of %s and this machine's DNS resolver", dns.Name, key)
	case errors.As(err, &we) && we.Unreachable != "":
		return fmt.Sprintf("no connection to %s could be made: check the host and port of %s and the network route to it", hostPort(base), key)
	case errors.Is(err, http.ErrSchemeMismatch):
		return fmt.Sprintf("%s speaks plain HTTP, not HTTPS: correct the port (or the scheme) of %s", hostPort(base), key)
	case errors.As(err, &re) && re.Foreign:
		return fmt.Sprintf("set %s to the API's own address: it redirected to %s, another origin, and cardsync follows no redirect", key, re.Location)
	case errors.As(err, &re):
		return fmt.Sprintf("correct the path of %s: the API redirected to %s, and cardsync follows no redirect", key, re.Location)
	case errors.As(err, &se) && (se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusMethodNotAllowed):
		return fmt.Sprintf("correct the path of %s: %s %s answered %d %s, so the API is not served under %s (the base URL is the one under which /auth/access-token and /cards answer)",
			key, se.Method, urlPath(se.URL), se.StatusCode, http.StatusText(se.StatusCode), base)
	case errors.As(err, &se) && se.StatusCode == http.StatusForbidden:
		return fmt.Sprintf("the API refuses the user of %s: give it the Administrator role", cmp.Or(f.account.From.Email, "api.email"))
	case errors.Is(err, extract.ErrRateLimited):
		asked := ""
		if errors.As(err, &we) {
			asked = fmt.Sprintf(" and asked to wait %s, past %s", we.Next.Round(time.Millisecond), f.bound(we))
		}
		return fmt.Sprintf("the API kept answering 429 Too Many Requests%s: another client shares its quota; run again later, or lower api.rate_limit and api.auth_rate_limit", asked)
	case exitCode(err) == exitUnavailable && upstreamStatus(err) >= 500:
		until := cmp.Or(f.deadline, "the deadline")
		if errors.As(err, &we) {
			until = f.bound(we)
		}
		return fmt.Sprintf("nothing to change here: the API at %s failed on its side (status %d) up to %s; run again later (`%s`), or raise %s to wait longer",
			hostPort(base), upstreamStatus(err), until, f.accountLine().AccountCommand(f.command), f.boundKey(we))
	case errors.As(err, &te):
		return fmt.Sprintf("the API did not answer within %s: check %s and the network path to %s, or raise -timeout", cmp.Or(f.deadline, "the deadline"), key, hostPort(base))
	case errors.As(err, &we) && exitCode(err) == exitUnavailable:
		return fmt.Sprintf("the API at %s stayed unavailable up to %s: run again later, or raise %s to wait longer", hostPort(base), f.bound(we), f.boundKey(we))
	case exitCode(err) == exitBadData:
		return fmt.Sprintf("check that %s is the Card Payment Service API itself, not a proxy or a login page; if it is, report the answer to the API's operator", key)
	}
	return ""
}

// upstreamStatus is the HTTP status of the API's last error answer in
// err (0: none).
func upstreamStatus(err error) int {
	var se *extract.StatusError
	var pe *extract.ProtocolError
	switch {
	case errors.As(err, &se):
		return se.StatusCode
	case errors.As(err, &pe):
		return pe.StatusCode
	}
	return 0
}

// boundKey is the setting that raises bound(we) (nil: the deadline's).
func (f fixer) boundKey(we *extract.WaitError) string {
	if (we == nil || we.Deadline) && f.deadline != "" {
		return "-timeout"
	}
	return "api.max_wait"
}

// warehouseFix is the fix of a warehouse error, "" for an error of
// another kind.
func (f fixer) warehouseFix(err error) string {
	var pe *load.PrivilegeError
	var fork *load.SchemaForkError
	var sv *load.SchemaVersionError
	var path *fs.PathError
	var nw *noWarehouseError
	switch {
	case !errors.Is(err, load.ErrWarehouse):
		return ""
	case errors.As(err, &pe):
		return fmt.Sprintf("as the schema's owner or a superuser, run: %s", pe.Grant)
	case errors.As(err, &fork):
		return fmt.Sprintf("set [warehouse] schema = %q (%s) to use the warehouse there", fork.Others[0], config.EnvName("warehouse.schema"))
	case errors.As(err, &sv) && errors.Is(err, load.ErrSchemaTooNew):
		return fmt.Sprintf("install a cardsync release that knows schema version %d (this one knows up to %d): a newer cardsync wrote this warehouse", sv.Database, sv.Binary)
	case errors.As(err, &sv):
		return fmt.Sprintf("run `%s` (or let the service's next run) upgrade it", f.cl.Command("backfill"))
	case errors.As(err, &nw):
		return f.noWarehouseFix(nw.path)
	case errors.Is(err, load.ErrNotMigrated):
		return fmt.Sprintf("run `%s` to create it", f.cl.Command("backfill"))
	case errors.Is(err, load.ErrBadData):
		return "nothing to change here: the API sent data cardsync refuses to store (the error says which); report it to the API's operator"
	case f.s.WarehouseURL != "" && errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("no PostgreSQL server accepts connections at %s: correct the host or port of warehouse.url, or start the server", load.RedactURL(f.s.WarehouseURL))
	case f.s.WarehouseURL != "":
		return f.pgLoginFix(err)
	case errors.Is(err, load.ErrCorrupt):
		return f.corruptFix()
	case errors.Is(err, load.ErrNotWritable) && !errors.As(err, &path):
		return permissionFix(f.s.DBPath, "warehouse.path")
	}
	return ""
}

// noWarehouseFix is the fix of a warehouse file that does not exist: a
// wrong path, or no sync yet. The backfill that creates it needs the
// config file that names the API: the one this command read, else one to
// pass.
func (f fixer) noWarehouseFix(path string) string {
	if f.cl.Config != "" {
		return fmt.Sprintf("check the path %s (it does not exist), or run `%s` to create it", absPath(path), f.cl.Command("backfill"))
	}
	return fmt.Sprintf("check the path %s (it does not exist), or create it with `%s`, FILE being the config file that sets [api] base_url and email",
		absPath(path), worker.CommandLine{Config: "FILE", DB: f.cl.DB}.Command("backfill"))
}

// corruptFix restores the newest backup or, without one, starts over.
func (f fixer) corruptFix() string {
	dir := cmp.Or(f.s.BackupDir, dialect.DefaultBackupDir(f.s.DBPath))
	if names, err := dialect.ListBackups(dir, f.s.DBPath); err == nil && len(names) > 0 {
		return fmt.Sprintf("restore the newest backup (the damaged file is kept beside it): `%s`", f.cl.Command("restore", "-force", names[0]))
	}
	return fmt.Sprintf("no backup in %s: move %s aside and run `%s` to sync a new warehouse from the API (its history is lost)", dir, f.s.DBPath, f.cl.Command("backfill"))
}

// hostPort is the host and port base connects to ("api.example:443").
func hostPort(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return base
	}
	if u.Port() != "" {
		return u.Host
	}
	port := "443"
	if u.Scheme == "http" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// urlPath is the path of raw, for a message.
func urlPath(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Path != "" {
		return u.Path
	}
	return raw
}

// noWarehouseError is a warehouse file that does not exist for a command
// that only reads it: no sync has run yet.
type noWarehouseError struct{ path string }

// Error implements error.
func (e *noWarehouseError) Error() string {
	return fmt.Sprintf("%v: %s does not exist (no sync has run yet)", worker.ErrWarehouse, e.path)
}

// Unwrap makes errors.Is(err, worker.ErrWarehouse) true (exit 6).
func (e *noWarehouseError) Unwrap() error { return worker.ErrWarehouse }

// fixedError is an error with its fix, found where the settings and the
// account are known; Run prints the fix under the error.
type fixedError struct {
	err error
	fix string
}

// Error implements error: the error alone.
func (e *fixedError) Error() string { return e.err.Error() }

// Unwrap returns the error.
func (e *fixedError) Unwrap() error { return e.err }

// withFix returns err with f's fix of it (err itself when there is none).
func (f fixer) withFix(err error) error {
	if err == nil {
		return nil
	}
	var fe *fixedError
	if errors.As(err, &fe) {
		return err
	}
	if fix := f.fix(err); fix != "" {
		return &fixedError{err: err, fix: fix}
	}
	return err
}

// fixOf is the fix Run prints under err: the one found where the error
// was (fixedError), else the fix of an error that needs no settings to
// name it (a config error, a bad flag).
func fixOf(command string, err error) string {
	var fe *fixedError
	var ce *config.Error
	var ue *usageError
	switch {
	case errors.As(err, &fe):
		return fe.fix
	case errors.As(err, &ce), errors.As(err, &ue):
		return fixer{command: command}.fix(err)
	}
	return ""
}
