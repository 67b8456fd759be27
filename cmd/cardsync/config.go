package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/robfig/cron/v3"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/redact"
)

// Config is the whole configuration of cardsync. It is built from
// DefaultConfig, then the TOML file, then CARDSYNC_* environment variables,
// then command-line flags, and checked by Validate.
type Config struct {
	API       APIConfig       `toml:"api"`
	Warehouse WarehouseConfig `toml:"warehouse"`
	Schedule  ScheduleConfig  `toml:"schedule"`
	Log       LogConfig       `toml:"log"`

	// password is read from password_file, $CREDENTIALS_DIRECTORY/api-password
	// or CARDSYNC_API_PASSWORD; never from the file or a flag.
	password extract.Secret
	// path is the file the configuration was read from, if any.
	path string
	// sources maps the keys set by the environment or a flag to where they
	// came from ("env CARDSYNC_LOG_LEVEL", "flag -log-level"), so a bad
	// value is blamed on its source, not on the file's line.
	sources map[string]string
}

// APIConfig is the [api] table.
type APIConfig struct {
	BaseURL       string `toml:"base_url"`
	Email         string `toml:"email"`
	PasswordFile  string `toml:"password_file"`
	TokenField    string `toml:"token_field"`
	RateLimit     string `toml:"rate_limit"`
	AuthRateLimit string `toml:"auth_rate_limit"`
	Timeout       string `toml:"timeout"`
	MaxWait       string `toml:"max_wait"`
	MaxBodyBytes  int64  `toml:"max_body_bytes"`
	AmountScale   int    `toml:"amount_scale"`
	MaxPages      int    `toml:"max_pages"`
}

// WarehouseConfig is the [warehouse] table.
type WarehouseConfig struct {
	Path         string   `toml:"path"`
	FileMode     string   `toml:"file_mode"`
	Synchronous  string   `toml:"synchronous"`
	RedactFields []string `toml:"redact_fields"`
	// PageAuditRetention is how long run_pages rows are kept ("0": forever).
	PageAuditRetention string `toml:"page_audit_retention"`
	// MaxRemovedFraction is the mass-removal guard's threshold.
	MaxRemovedFraction float64 `toml:"max_removed_fraction"`
	// CommitDelay is how long a page that changes something may wait for
	// more pages to share its transaction ("0": it commits at once).
	CommitDelay string `toml:"commit_delay"`
}

// ScheduleConfig is the [schedule] table.
type ScheduleConfig struct {
	Cron       string `toml:"cron"`
	Timezone   string `toml:"timezone"`
	RunOnStart bool   `toml:"run_on_start"`
	RunTimeout string `toml:"run_timeout"`
}

// LogConfig is the [log] table.
type LogConfig struct {
	Level  string `toml:"level"`
	Format string `toml:"format"`
}

// DefaultConfig returns the configuration used where nothing overrides it.
func DefaultConfig() Config {
	return Config{
		API: APIConfig{
			BaseURL:       "",
			RateLimit:     "180/1m",
			AuthRateLimit: "10/1m",
			Timeout:       "30s",
			MaxWait:       "5m",
			MaxBodyBytes:  4 << 20,
			AmountScale:   2,
			MaxPages:      100_000,
		},
		Warehouse: WarehouseConfig{
			Path:               "/var/lib/cardsync/warehouse.db",
			FileMode:           "0640",
			Synchronous:        "FULL",
			PageAuditRetention: "2160h",
			MaxRemovedFraction: 0.2,
			CommitDelay:        "1s",
		},
		Schedule: ScheduleConfig{
			Cron:       "*/15 * * * *",
			Timezone:   "UTC",
			RunOnStart: true,
			RunTimeout: "2h",
		},
		Log: LogConfig{Level: "info", Format: "auto"},
	}
}

// ConfigError is a configuration problem: the key it concerns, and the file
// and line where it was set when known.
type ConfigError struct {
	Key    string // dotted key, e.g. "api.rate_limit"
	Source string // "file", "env CARDSYNC_...", "flag -..." or ""
	File   string
	Line   int
	Msg    string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	} else if e.Source != "" {
		b.WriteString(e.Source + ": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// configKey binds one dotted key to its environment variable and setter.
type configKey struct {
	name string
	set  func(c *Config, v string) error
}

func stringKey(name string, field func(c *Config) *string) configKey {
	return configKey{name: name, set: func(c *Config, v string) error { *field(c) = v; return nil }}
}

// configKeys lists every key that the environment may set, in file order.
func configKeys() []configKey {
	return []configKey{
		stringKey("api.base_url", func(c *Config) *string { return &c.API.BaseURL }),
		stringKey("api.email", func(c *Config) *string { return &c.API.Email }),
		stringKey("api.password_file", func(c *Config) *string { return &c.API.PasswordFile }),
		stringKey("api.token_field", func(c *Config) *string { return &c.API.TokenField }),
		stringKey("api.rate_limit", func(c *Config) *string { return &c.API.RateLimit }),
		stringKey("api.auth_rate_limit", func(c *Config) *string { return &c.API.AuthRateLimit }),
		stringKey("api.timeout", func(c *Config) *string { return &c.API.Timeout }),
		stringKey("api.max_wait", func(c *Config) *string { return &c.API.MaxWait }),
		{name: "api.max_body_bytes", set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			c.API.MaxBodyBytes = n
			return err
		}},
		{name: "api.amount_scale", set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			c.API.AmountScale = n
			return err
		}},
		{name: "api.max_pages", set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			c.API.MaxPages = n
			return err
		}},
		stringKey("warehouse.path", func(c *Config) *string { return &c.Warehouse.Path }),
		stringKey("warehouse.file_mode", func(c *Config) *string { return &c.Warehouse.FileMode }),
		stringKey("warehouse.synchronous", func(c *Config) *string { return &c.Warehouse.Synchronous }),
		{name: "warehouse.redact_fields", set: func(c *Config, v string) error {
			c.Warehouse.RedactFields = nil
			for _, f := range strings.Split(v, ",") {
				if f = strings.TrimSpace(f); f != "" {
					c.Warehouse.RedactFields = append(c.Warehouse.RedactFields, f)
				}
			}
			return nil
		}},
		stringKey("warehouse.page_audit_retention", func(c *Config) *string { return &c.Warehouse.PageAuditRetention }),
		{name: "warehouse.max_removed_fraction", set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			c.Warehouse.MaxRemovedFraction = f
			return err
		}},
		stringKey("warehouse.commit_delay", func(c *Config) *string { return &c.Warehouse.CommitDelay }),
		stringKey("schedule.cron", func(c *Config) *string { return &c.Schedule.Cron }),
		stringKey("schedule.timezone", func(c *Config) *string { return &c.Schedule.Timezone }),
		{name: "schedule.run_on_start", set: func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			c.Schedule.RunOnStart = b
			return err
		}},
		stringKey("schedule.run_timeout", func(c *Config) *string { return &c.Schedule.RunTimeout }),
		stringKey("log.level", func(c *Config) *string { return &c.Log.Level }),
		stringKey("log.format", func(c *Config) *string { return &c.Log.Format }),
	}
}

// envName maps a dotted key to its environment variable.
func envName(key string) string {
	return "CARDSYNC_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// passwordEnv is the one environment variable that is not a file key.
const passwordEnv = "CARDSYNC_API_PASSWORD"

// LoadConfig reads the configuration: defaults, then the file at path (if
// path is not empty), then the environment as seen through getenv and
// environ. It does not validate; call Validate after applying flags.
func LoadConfig(path string, environ []string) (Config, error) {
	cfg := DefaultConfig()
	if path != "" {
		if err := cfg.decodeFile(path); err != nil {
			return cfg, err
		}
	}
	if err := cfg.applyEnv(environ); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (c *Config) decodeFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return &ConfigError{File: path, Msg: err.Error()}
	}
	c.path = path
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) && len(strict.Errors) > 0 {
			first := strict.Errors[0]
			row, _ := first.Position()
			key := strings.Join(first.Key(), ".")
			return &ConfigError{File: path, Line: row, Key: key, Msg: fmt.Sprintf("unknown key %q", key)}
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			key := strings.Join(de.Key(), ".")
			return &ConfigError{File: path, Line: row, Key: key, Msg: typeMessage(de.Error())}
		}
		return &ConfigError{File: path, Msg: err.Error()}
	}
	return nil
}

// typeMismatch matches go-toml's message for a value of the wrong type,
// which names Go types ("struct field main.APIConfig.Timeout of type
// string"): not something to show a user.
var typeMismatch = regexp.MustCompile(`cannot decode TOML (\w+) into .* of type (\S+)`)

// typeMessage says in TOML terms what a key wants when the file gave it a
// value of another type.
func typeMessage(msg string) string {
	m := typeMismatch.FindStringSubmatch(msg)
	if m == nil {
		return strings.TrimPrefix(msg, "toml: ")
	}
	want := map[string]string{
		"string": `a quoted string (for example "30s")`, "int": "an integer", "int64": "an integer",
		"bool": "true or false", "float64": "a number", "[]string": `a list of strings (for example ["a", "b"])`,
	}[m[2]]
	if want == "" {
		want = "another type"
	}
	return fmt.Sprintf("got a TOML %s, want %s", m[1], want)
}

func (c *Config) applyEnv(environ []string) error {
	keys := map[string]configKey{}
	for _, k := range configKeys() {
		keys[envName(k.name)] = k
	}
	var names []string
	values := map[string]string{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "CARDSYNC_") {
			continue
		}
		names = append(names, name)
		values[name] = value
	}
	sort.Strings(names)
	for _, name := range names {
		if name == passwordEnv {
			c.password = extract.Secret(values[name])
			continue
		}
		k, ok := keys[name]
		if !ok {
			return &ConfigError{Source: "environment", Key: name, Msg: "unknown CARDSYNC_ variable"}
		}
		if err := k.set(c, values[name]); err != nil {
			return &ConfigError{Source: "env " + name, Key: k.name, Msg: fmt.Sprintf("bad value: %v", err)}
		}
		c.setSource(k.name, "env "+name)
	}
	return nil
}

// keyLine finds the line where a dotted key is set in the config file, so a
// bad value can be reported with its line. It returns 0 if not found.
func (c *Config) keyLine(key string) int {
	if c.path == "" {
		return 0
	}
	data, err := os.ReadFile(c.path)
	if err != nil {
		return 0
	}
	table, name, _ := strings.Cut(key, ".")
	current := ""
	keyRe := regexp.MustCompile(`^\s*"?` + regexp.QuoteMeta(name) + `"?\s*=`)
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "[") {
			current = strings.Trim(strings.SplitN(trimmed, "#", 2)[0], "[] \t")
			continue
		}
		if current == table && keyRe.MatchString(line) {
			return i + 1
		}
	}
	return 0
}

// setSource records that key was set by source (an environment variable
// or a flag), which overrides the file.
func (c *Config) setSource(key, source string) {
	if c.sources == nil {
		c.sources = map[string]string{}
	}
	c.sources[key] = source
}

func (c *Config) errorAt(key, format string, args ...any) error {
	e := &ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)}
	if src, ok := c.sources[key]; ok {
		e.Source = src
		return e
	}
	if line := c.keyLine(key); line > 0 {
		e.File, e.Line = c.path, line
	}
	return e
}

// Settings are the configuration values parsed into their types.
type Settings struct {
	BaseURL       string
	Email         string
	Password      extract.Secret
	TokenField    string
	RateLimit     extract.Rate
	AuthRateLimit extract.Rate
	Timeout       time.Duration
	MaxWait       time.Duration
	MaxBodyBytes  int64
	AmountScale   int
	MaxPages      int
	DBPath        string
	FileMode      os.FileMode
	Synchronous   string
	RedactFields  []string
	// PageAuditRetention is 0 to keep run_pages forever.
	PageAuditRetention time.Duration
	MaxRemovedFraction float64
	// CommitDelay is load.Options.ChangeDelay: negative for "0" (at once).
	CommitDelay time.Duration
	Schedule    cron.Schedule
	CronSpec    string
	Location    *time.Location
	RunOnStart  bool
	RunTimeout  time.Duration
	LogLevel    string
	LogFormat   string
	// Secrets holds the password and, once the client has them, its
	// tokens: the client scrubs upstream text with it and the log handler
	// scrubs every line.
	Secrets *redact.Secrets
}

// Validate checks every value and returns the parsed settings. needAPI says
// whether the command talks to the API (and so needs a URL and password).
func (c *Config) Validate(needAPI bool, getenv func(string) string) (Settings, error) {
	s := Settings{Secrets: &redact.Secrets{}}
	var err error
	s.BaseURL = strings.TrimRight(c.API.BaseURL, "/")
	s.Email = c.API.Email
	s.TokenField = c.API.TokenField
	if needAPI {
		if s.BaseURL == "" {
			return s, c.errorAt("api.base_url", "required (set it in the file or CARDSYNC_API_BASE_URL)")
		}
		if err := checkBaseURL(s.BaseURL); err != nil {
			return s, c.errorAt("api.base_url", "%v", err)
		}
		if s.Email == "" {
			return s, c.errorAt("api.email", "required")
		}
		if s.Password, err = c.loadPassword(getenv); err != nil {
			return s, err
		}
		s.Secrets.Add(s.Password.Reveal())
	}
	if s.RateLimit, err = extract.ParseRate(c.API.RateLimit); err != nil {
		return s, c.errorAt("api.rate_limit", "%v", err)
	}
	if s.AuthRateLimit, err = extract.ParseRate(c.API.AuthRateLimit); err != nil {
		return s, c.errorAt("api.auth_rate_limit", "%v", err)
	}
	if s.Timeout, err = positiveDuration(c.API.Timeout); err != nil {
		return s, c.errorAt("api.timeout", "%v", err)
	}
	if s.MaxWait, err = positiveDuration(c.API.MaxWait); err != nil {
		return s, c.errorAt("api.max_wait", "%v", err)
	}
	if s.MaxBodyBytes = c.API.MaxBodyBytes; s.MaxBodyBytes < 64<<10 || s.MaxBodyBytes > 1<<30 {
		return s, c.errorAt("api.max_body_bytes", "%d out of range 65536..1073741824", s.MaxBodyBytes)
	}
	if s.AmountScale = c.API.AmountScale; s.AmountScale < 1 || s.AmountScale > 2 {
		return s, c.errorAt("api.amount_scale", "%d out of range 1..2 (the warehouse stores amounts in cents)", s.AmountScale)
	}
	if s.MaxPages = c.API.MaxPages; s.MaxPages < 1 || s.MaxPages > 10_000_000 {
		return s, c.errorAt("api.max_pages", "%d out of range 1..10000000", s.MaxPages)
	}
	if s.DBPath = c.Warehouse.Path; s.DBPath == "" {
		return s, c.errorAt("warehouse.path", "required")
	}
	if strings.ContainsAny(s.DBPath, "?#") {
		return s, c.errorAt("warehouse.path", "must not contain '?' or '#'")
	}
	mode, err := strconv.ParseUint(c.Warehouse.FileMode, 8, 32)
	if err != nil || mode > 0o777 || mode&0o600 != 0o600 || mode&0o027 != 0 {
		return s, c.errorAt("warehouse.file_mode", "%q: want an octal mode with owner read/write, at most read for the group and nothing for others, e.g. \"0640\" or \"0600\"", c.Warehouse.FileMode)
	}
	s.FileMode = os.FileMode(mode)
	switch s.Synchronous = strings.ToUpper(c.Warehouse.Synchronous); s.Synchronous {
	case "FULL", "NORMAL", "EXTRA":
	default:
		return s, c.errorAt("warehouse.synchronous", "%q: want FULL, NORMAL or EXTRA", c.Warehouse.Synchronous)
	}
	s.RedactFields = c.Warehouse.RedactFields
	if s.MaxRemovedFraction = c.Warehouse.MaxRemovedFraction; !(s.MaxRemovedFraction > 0 && s.MaxRemovedFraction <= 1) {
		return s, c.errorAt("warehouse.max_removed_fraction", "%v out of range: want a fraction above 0 and at most 1, e.g. 0.2", c.Warehouse.MaxRemovedFraction)
	}
	if c.Warehouse.PageAuditRetention != "0" {
		if s.PageAuditRetention, err = positiveDuration(c.Warehouse.PageAuditRetention); err != nil {
			return s, c.errorAt("warehouse.page_audit_retention", "%v (or \"0\" to keep the audit forever)", err)
		}
	}
	s.CommitDelay = -1
	if c.Warehouse.CommitDelay != "0" {
		if s.CommitDelay, err = positiveDuration(c.Warehouse.CommitDelay); err != nil {
			return s, c.errorAt("warehouse.commit_delay", "%v (or \"0\" to commit every page that changes something at once)", err)
		}
	}
	if s.Location, err = time.LoadLocation(c.Schedule.Timezone); err != nil {
		return s, c.errorAt("schedule.timezone", "%v", err)
	}
	s.CronSpec = c.Schedule.Cron
	if s.Schedule, err = parseCron(c.Schedule.Cron); err != nil {
		return s, c.errorAt("schedule.cron", "%v", err)
	}
	s.RunOnStart = c.Schedule.RunOnStart
	if s.RunTimeout, err = positiveDuration(c.Schedule.RunTimeout); err != nil {
		return s, c.errorAt("schedule.run_timeout", "%v", err)
	}
	switch s.LogLevel = strings.ToLower(c.Log.Level); s.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return s, c.errorAt("log.level", "%q: want debug, info, warn or error", c.Log.Level)
	}
	switch s.LogFormat = strings.ToLower(c.Log.Format); s.LogFormat {
	case "auto", "json", "text", "tint":
	default:
		return s, c.errorAt("log.format", "%q: want auto, json, text or tint", c.Log.Format)
	}
	return s, nil
}

// cronParser accepts standard 5-field specs and descriptors like "@every 15m".
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseCron validates a schedule with the scheduler's own parser. robfig/cron
// panics on some malformed specs ("TZ=UTC"), so the panic becomes an error.
func parseCron(spec string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid cron spec %q", spec)
		}
	}()
	if strings.Contains(spec, "TZ=") {
		return nil, fmt.Errorf("invalid cron spec %q: set [schedule] timezone instead of TZ=", spec)
	}
	s, err := cronParser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("invalid cron spec %q: %w", spec, err)
	}
	return s, nil
}

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

// checkBaseURL allows https everywhere and http only on loopback.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %v", err)
	}
	if u.User != nil {
		return errors.New("must not carry credentials")
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if host == "localhost" {
			return nil
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return nil
		}
		return fmt.Errorf("%q: http:// is allowed only for loopback hosts; use https://", raw)
	default:
		return fmt.Errorf("%q: scheme must be https", raw)
	}
}

// loadPassword finds the API password: CARDSYNC_API_PASSWORD, then systemd's
// $CREDENTIALS_DIRECTORY/api-password, then api.password_file.
func (c *Config) loadPassword(getenv func(string) string) (extract.Secret, error) {
	if c.password != "" {
		return c.password, nil
	}
	if dir := getenv("CREDENTIALS_DIRECTORY"); dir != "" {
		p := filepath.Join(dir, "api-password")
		if _, err := os.Stat(p); err == nil {
			return readSecretFile(p, false)
		}
	}
	if c.API.PasswordFile == "" {
		return "", c.errorAt("api.password_file", "no password: set api.password_file, CARDSYNC_API_PASSWORD, or a systemd credential api-password")
	}
	pw, err := readSecretFile(c.API.PasswordFile, true)
	if err != nil {
		return "", c.errorAt("api.password_file", "%v", err)
	}
	return pw, nil
}

// readSecretFile reads a one-line secret. With checkMode, a file that group
// or others may read is refused, as OpenSSH refuses a private key.
func readSecretFile(path string, checkMode bool) (extract.Secret, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open password file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("stat password file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("password file %s is not a regular file", path)
	}
	if checkMode && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("password file %s has permissions %04o: readable by group or others; chmod 600 it", path, fi.Mode().Perm())
	}
	buf, err := io.ReadAll(io.LimitReader(f, 4097))
	if err != nil {
		return "", fmt.Errorf("read password file: %w", err)
	}
	if len(buf) > 4096 {
		return "", fmt.Errorf("password file %s is larger than 4096 bytes", path)
	}
	pw := strings.TrimRight(string(buf), "\r\n")
	if pw == "" {
		return "", fmt.Errorf("password file %s is empty", path)
	}
	return extract.Secret(pw), nil
}
