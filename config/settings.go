package config

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/redact"
)

// Settings are the configuration values parsed into their types.
type Settings struct {
	// AccountSettings is the [api] table's account (Name is
	// load.DefaultAccount): its URL, credentials and rates.
	AccountSettings
	Timeout      time.Duration
	MaxWait      time.Duration
	MaxBodyBytes int64
	AmountScale  int
	MaxPages     int
	DBPath       string
	FileMode     os.FileMode
	Synchronous  string
	RedactFields []string
	// KeepFields are [cards] keep_fields (load.Options.KeepFields): nil
	// keeps every top-level card field.
	KeepFields []string
	// CardAmountScale is [cards] amount_scale (load.Options.AmountScale).
	CardAmountScale int
	// CurrencyField is [cards] currency_field (load.Options.CurrencyField).
	CurrencyField string
	// PageAuditRetention is 0 to keep run_pages forever.
	PageAuditRetention time.Duration
	// FieldRetention is how long a card_fields row stays unseen
	// (worker.Job.FieldRetention; default load.DefaultFieldRetention).
	FieldRetention     time.Duration
	MaxRemovedFraction float64
	// CommitDelay is [warehouse] commit_delay (load.Options.CommitDelay):
	// 0 commits a page that changes something at once.
	CommitDelay time.Duration
	Schedule    cron.Schedule
	CronSpec    string
	// ScheduleSet says the configuration names the schedule: a file was
	// read (serve and the backfill timer run on its [schedule] cron, its
	// default included) or a variable or flag set [schedule] cron.
	// Without it nothing is known to sync on Schedule: a demo warehouse,
	// or one named by -db alone.
	ScheduleSet bool
	Location    *time.Location
	RunOnStart  bool
	RunTimeout  time.Duration
	LogLevel    string
	LogFormat   string
	// WALCheckpoint is [warehouse] checkpoint (load.Options.WALCheckpoint):
	// who empties the WAL, "auto" or "external".
	WALCheckpoint string
	// BackupDir is where backups go ("" : backups/ beside the warehouse).
	BackupDir string
	// BackupKeep is how many backups stay after a prune.
	BackupKeep int
	// BackupSchedule is when serve takes a backup (nil: never); BackupCron
	// is its text.
	BackupSchedule cron.Schedule
	BackupCron     string
	// ReportPath is where serve writes the HTML report after each
	// successful run ("": none); ReportSince is the period it covers.
	ReportPath  string
	ReportSince time.Duration
	// MetricsListen is the address of /metrics and /healthz ("" none).
	MetricsListen string
	// HealthyWithin is how old the last success may be while /healthz
	// answers 200 (three schedule intervals unless set).
	HealthyWithin time.Duration
	// Accounts are the API accounts: the [[accounts]] tables, or the [api]
	// table's AccountSettings as the one account.
	Accounts []AccountSettings
	// PostgresSettings are [warehouse] url's and [cluster]'s.
	PostgresSettings
	// Secrets holds the password and, once the client has them, its
	// tokens: the client scrubs upstream text with it and the log handler
	// scrubs every line.
	Secrets *redact.Secrets
}

// ExtractConfig is the API client's configuration (extract.New) for the
// [api] account, with userAgent and the caller's logger and wait callback
// left to the caller.
func (s Settings) ExtractConfig() extract.Config { return s.ExtractConfigFor(s.AccountSettings) }

// LoadOptions are the warehouse's options (load.Open), the logger left to
// the caller.
func (s Settings) LoadOptions() load.Options {
	return load.Options{
		FileMode:           s.FileMode,
		Synchronous:        s.Synchronous,
		RedactFields:       s.RedactFields,
		KeepFields:         s.KeepFields,
		AmountScale:        &s.CardAmountScale,
		CurrencyField:      s.CurrencyField,
		Secrets:            s.Secrets,
		MaxRemovedFraction: s.MaxRemovedFraction,
		CommitDelay:        &s.CommitDelay,
		WALCheckpoint:      s.WALCheckpoint,
	}
}

// Settings checks every value and returns them parsed. needAPI says
// whether the command talks to the API (and so needs a URL and a
// password); getenv reads CREDENTIALS_DIRECTORY. Every error is an *Error
// naming the key and where its value came from.
func (c *Config) Settings(needAPI bool, getenv func(string) string) (Settings, error) {
	s := Settings{AccountSettings: AccountSettings{Name: load.DefaultAccount}, Secrets: &redact.Secrets{}}
	// With [[accounts]], the [api] table only holds what they share.
	if err := c.apiSettings(&s, needAPI && len(c.Accounts) == 0, getenv); err != nil {
		return s, err
	}
	if err := c.accountSettings(&s, needAPI, getenv); err != nil {
		return s, err
	}
	if err := c.warehouseSettings(&s); err != nil {
		return s, err
	}
	if err := c.cardsSettings(&s); err != nil {
		return s, err
	}
	var err error
	if s.Location, err = time.LoadLocation(c.Schedule.Timezone); err != nil {
		return s, c.fail("schedule.timezone", "%v", err)
	}
	s.CronSpec = c.Schedule.Cron
	s.ScheduleSet = c.Path != "" || c.Source("schedule.cron").Kind != FromDefault
	if s.Schedule, err = ParseCron(c.Schedule.Cron); err != nil {
		return s, c.fail("schedule.cron", "%v", err)
	}
	s.RunOnStart = c.Schedule.RunOnStart
	if s.RunTimeout, err = positiveDuration(c.Schedule.RunTimeout); err != nil {
		return s, c.fail("schedule.run_timeout", "%v", err)
	}
	switch s.LogLevel = strings.ToLower(c.Log.Level); s.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return s, c.fail("log.level", "%q: want debug, info, warn or error", c.Log.Level)
	}
	switch s.LogFormat = strings.ToLower(c.Log.Format); s.LogFormat {
	case "auto", "json", "text", "tint":
	default:
		return s, c.fail("log.format", "%q: want auto, json, text or tint", c.Log.Format)
	}
	s.ReportPath = c.Report.Path
	if s.ReportSince, err = ParseSince(c.Report.Since); err != nil {
		return s, c.fail("report.since", "%q: %v", c.Report.Since, err)
	}
	if err := c.backupSettings(&s); err != nil {
		return s, err
	}
	if err := c.metricsSettings(&s); err != nil {
		return s, err
	}
	if err := c.postgresSettings(&s, getenv); err != nil {
		return s, err
	}
	return s, nil
}

// apiSettings parses the [api] table; the rules are extract's.
func (c *Config) apiSettings(s *Settings, needAPI bool, getenv func(string) string) error {
	var err error
	s.BaseURL = strings.TrimRight(c.API.BaseURL, "/")
	s.Email = c.API.Email
	s.TokenField = c.API.TokenField
	if needAPI {
		if s.BaseURL == "" {
			return c.fail("api.base_url", "required (set it in the file or %s)", EnvName("api.base_url"))
		}
		if err := extract.CheckBaseURL(s.BaseURL); err != nil {
			return c.fail("api.base_url", "%v", err)
		}
		if strings.TrimSpace(s.Email) == "" {
			return c.fail("api.email", "required")
		}
		if s.Password, err = c.loadPassword(getenv); err != nil {
			return err
		}
		s.From = AccountSources{BaseURL: c.keyFrom("api.base_url"), Email: c.keyFrom("api.email"), Password: PasswordEnv}
		if c.password == "" {
			s.From.Password = c.secretFrom(getenv, CredentialName, "api.password_file", c.API.PasswordFile)
		}
		s.Secrets.Add(s.Password.Reveal())
	}
	if s.RateLimit, err = parseRate(c.API.RateLimit); err != nil {
		return c.fail("api.rate_limit", "%v", err)
	}
	if s.AuthRateLimit, err = parseRate(c.API.AuthRateLimit); err != nil {
		return c.fail("api.auth_rate_limit", "%v", err)
	}
	if s.Timeout, err = positiveDuration(c.API.Timeout); err != nil {
		return c.fail("api.timeout", "%v", err)
	}
	if s.MaxWait, err = positiveDuration(c.API.MaxWait); err != nil {
		return c.fail("api.max_wait", "%v", err)
	}
	if s.MaxBodyBytes = c.API.MaxBodyBytes; s.MaxBodyBytes < extract.MinMaxBodyBytes || s.MaxBodyBytes > extract.MaxMaxBodyBytes {
		return c.fail("api.max_body_bytes", "%d out of range %d..%d", s.MaxBodyBytes, extract.MinMaxBodyBytes, extract.MaxMaxBodyBytes)
	}
	s.AmountScale = c.API.AmountScale
	if err := extract.CheckAmountScale(s.AmountScale); err != nil {
		return c.fail("api.amount_scale", "%v", err)
	}
	if s.MaxPages = c.API.MaxPages; s.MaxPages < 1 || s.MaxPages > extract.MaxMaxPages {
		return c.fail("api.max_pages", "%d out of range 1..%d", s.MaxPages, extract.MaxMaxPages)
	}
	return nil
}

// warehouseSettings parses the [warehouse] table; the rules are load's.
func (c *Config) warehouseSettings(s *Settings) error {
	var err error
	if s.DBPath = c.Warehouse.Path; s.DBPath == "" {
		return c.fail("warehouse.path", "required")
	}
	if strings.ContainsAny(s.DBPath, "?#") {
		return c.fail("warehouse.path", "must not contain '?' or '#'")
	}
	mode, err := strconv.ParseUint(c.Warehouse.FileMode, 8, 32)
	if err != nil {
		return c.fail("warehouse.file_mode", "%q: want an octal mode such as \"0640\" (owner read/write, at most read for the group and nothing for others)", c.Warehouse.FileMode)
	}
	s.FileMode = os.FileMode(mode)
	if err := load.CheckFileMode(s.FileMode); err != nil {
		return c.fail("warehouse.file_mode", "%q: %v", c.Warehouse.FileMode, err)
	}
	s.Synchronous = strings.ToUpper(c.Warehouse.Synchronous)
	if err := load.CheckSynchronous(s.Synchronous); err != nil {
		return c.fail("warehouse.synchronous", "%v", err)
	}
	s.RedactFields = c.Warehouse.RedactFields
	s.MaxRemovedFraction = c.Warehouse.MaxRemovedFraction
	if err := load.CheckMaxRemovedFraction(s.MaxRemovedFraction); err != nil {
		return c.fail("warehouse.max_removed_fraction", "out of range: %v", err)
	}
	if c.Warehouse.PageAuditRetention != "0" {
		if s.PageAuditRetention, err = positiveDuration(c.Warehouse.PageAuditRetention); err != nil {
			return c.fail("warehouse.page_audit_retention", "%v (or \"0\" to keep the audit forever)", err)
		}
	}
	if s.FieldRetention, err = ParseSince(c.Warehouse.FieldRetention); err != nil {
		return c.fail("warehouse.field_retention", "%q: %v", c.Warehouse.FieldRetention, err)
	}
	s.WALCheckpoint = strings.ToLower(c.Warehouse.WALCheckpoint)
	if err := load.CheckWALCheckpoint(s.WALCheckpoint); err != nil {
		return c.fail("warehouse.checkpoint", "%v", err)
	}
	if c.Warehouse.CommitDelay != "0" {
		if s.CommitDelay, err = positiveDuration(c.Warehouse.CommitDelay); err != nil {
			return c.fail("warehouse.commit_delay", "%v (or \"0\" to commit every page that changes something at once)", err)
		}
	}
	return nil
}

// cardsSettings parses the [cards] table; the rule is load's.
func (c *Config) cardsSettings(s *Settings) error {
	if err := load.CheckCardAmountScale(c.Cards.AmountScale); err != nil {
		return c.fail("cards.amount_scale", "%v", err)
	}
	s.CardAmountScale = c.Cards.AmountScale
	if err := load.CheckCurrencyField(c.Cards.CurrencyField); err != nil {
		return c.fail("cards.currency_field", "%v", err)
	}
	s.CurrencyField = c.Cards.CurrencyField
	keep := c.Cards.KeepFields
	if keep == nil {
		return nil
	}
	if len(keep) == 0 {
		return c.fail("cards.keep_fields", "empty: name the top-level fields to keep (\"id\" is always kept), or leave the key out to keep every field")
	}
	if err := load.CheckKeepFields(keep); err != nil {
		return c.fail("cards.keep_fields", "%v", err)
	}
	s.KeepFields = slices.Clone(keep)
	return nil
}

// parseRate reads a rate with extract's parser and checks it with its rule.
func parseRate(text string) (extract.Rate, error) {
	r, err := extract.ParseRate(text)
	if err != nil {
		return r, err
	}
	return r, extract.CheckRate(r)
}

// cronParser accepts standard 5-field specs and descriptors like "@every 15m".
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron validates a schedule with the scheduler's own parser.
// robfig/cron panics on some malformed specs ("TZ=UTC"), so the panic
// becomes an error.
func ParseCron(spec string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid cron spec %q", spec)
		}
	}()
	if strings.Contains(spec, "TZ=") {
		return nil, fmt.Errorf("invalid cron spec %q: set [schedule] timezone instead of TZ=", spec)
	}
	// robfig/cron takes "@every -5m" as every second: a sign typo would
	// hammer the API's budget, so a period that is not positive is refused.
	if rest, ok := strings.CutPrefix(strings.TrimSpace(spec), "@every "); ok {
		if d, err := time.ParseDuration(strings.TrimSpace(rest)); err == nil && d <= 0 {
			return nil, fmt.Errorf("invalid cron spec %q: the period of @every must be positive, like \"@every 15m\"", spec)
		}
	}
	s, err := cronParser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("invalid cron spec %q: %w", spec, err)
	}
	return s, nil
}

// positiveDuration parses a Go duration that must be above zero.
func positiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration like \"30s\" or \"5m\"", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q must be positive", s)
	}
	return d, nil
}

// backupSettings parses the [backup] table.
func (c *Config) backupSettings(s *Settings) error {
	s.BackupDir = c.Backup.Dir
	if s.BackupKeep = c.Backup.Keep; s.BackupKeep < 1 {
		return c.fail("backup.keep", "%d: want at least 1", s.BackupKeep)
	}
	if s.BackupCron = c.Backup.Cron; s.BackupCron != "" {
		var err error
		if s.BackupSchedule, err = ParseCron(s.BackupCron); err != nil {
			return c.fail("backup.cron", "%v (or \"\" for no scheduled backups)", err)
		}
	}
	return nil
}

// ParseSince reads a period: a whole number of days ("90d") or a Go
// duration ("36h", "90m").
func ParseSince(s string) (time.Duration, error) {
	const want = "want a positive number of days (90d) or a Go duration (36h)"
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		const maxDays = 100 * 366
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 {
			return 0, errors.New(want)
		}
		if n > maxDays {
			return 0, fmt.Errorf("%d days is more than the cap of %d days (100 years)", n, maxDays)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, errors.New(want)
		}
	}
	if d <= 0 {
		return 0, errors.New("want a positive period")
	}
	return d, nil
}
