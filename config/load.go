package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/cardsync/cardsync/extract"
)

// Config is a loaded configuration: the values and where each came from.
type Config struct {
	File
	// Path is the file it was read from ("" when none).
	Path    string
	sources map[string]Source
	// password came from CARDSYNC_API_PASSWORD: never a file key or a flag.
	password extract.Secret
	// warehousePassword came from CARDSYNC_WAREHOUSE_PASSWORD.
	warehousePassword extract.Secret
}

// Source returns where the value of a dotted key came from.
func (c *Config) Source(key string) Source {
	if s, ok := c.sources[key]; ok {
		return s
	}
	return Source{Kind: FromDefault}
}

// fail builds the error for a bad value of key, naming its source.
func (c *Config) fail(key, format string, args ...any) *Error {
	return &Error{Key: key, Source: c.Source(key), Msg: fmt.Sprintf(format, args...)}
}

// Override is a value from a command-line flag.
type Override struct {
	Key   string // dotted key, e.g. "warehouse.path"
	Flag  string // flag name without the dash, e.g. "db"
	Value string
}

// PasswordEnv is the one environment variable that is not a file key.
const PasswordEnv = "CARDSYNC_API_PASSWORD"

// WarehousePasswordEnv holds the PostgreSQL warehouse's password; like
// PasswordEnv it is not a file key.
const WarehousePasswordEnv = "CARDSYNC_WAREHOUSE_PASSWORD"

// ConfigEnv names the config file when -config is not given.
const ConfigEnv = "CARDSYNC_CONFIG"

// Load reads the configuration: defaults, then the file at path (if not
// empty), then the CARDSYNC_* variables of environ, then the flags. It does
// not validate values; Settings does.
func Load(path string, environ []string, flags ...Override) (*Config, error) {
	c := &Config{File: Default(), sources: map[string]Source{}}
	if path != "" {
		if err := c.decodeFile(path); err != nil {
			return c, err
		}
	}
	if err := c.applyEnv(environ); err != nil {
		return c, err
	}
	for _, f := range flags {
		k, ok := keyByName(f.Key)
		if !ok {
			return c, &Error{Key: f.Key, Source: Source{Kind: FromFlag, Name: f.Flag}, Msg: "not a configuration key"}
		}
		c.sources[f.Key] = Source{Kind: FromFlag, Name: f.Flag}
		if err := k.set(&c.File, f.Value); err != nil {
			return c, c.fail(f.Key, "bad value %q: %v", f.Value, err)
		}
	}
	return c, nil
}

func (c *Config) decodeFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		// The cause is wrapped: a fix tells a missing file
		// (fs.ErrNotExist) from an unreadable one (fs.ErrPermission).
		return &Error{Source: Source{Kind: FromFile, Name: path}, Msg: err.Error(), err: err}
	}
	c.Path = path
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&c.File); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) && len(strict.Errors) > 0 {
			// Name every unknown key at once, not one per attempt.
			first := strict.Errors[0]
			row, _ := first.Position()
			key := strings.Join(first.Key(), ".")
			msg := fmt.Sprintf("unknown key %q", key)
			var more []string
			for _, e := range strict.Errors[1:] {
				r, _ := e.Position()
				more = append(more, fmt.Sprintf("%q (line %d)", strings.Join(e.Key(), "."), r))
			}
			if len(more) > 0 {
				msg += "; also unknown: " + strings.Join(more, ", ")
			}
			return &Error{Key: key, Source: Source{Kind: FromFile, Name: path, Line: row}, Msg: msg, Suggest: suggestKey(key), err: ErrUnknownKey}
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return &Error{Key: strings.Join(de.Key(), "."), Source: Source{Kind: FromFile, Name: path, Line: row}, Msg: typeMessage(de.Error())}
		}
		return &Error{Source: Source{Kind: FromFile, Name: path}, Msg: err.Error()}
	}
	// Every key the file set names the file; most also get their line.
	var raw map[string]any
	if toml.Unmarshal(data, &raw) == nil {
		for _, key := range flatKeys("", raw) {
			c.sources[key] = Source{Kind: FromFile, Name: path}
		}
	}
	for key, line := range keyLines(string(data)) {
		c.sources[key] = Source{Kind: FromFile, Name: path, Line: line}
	}
	c.resolvePaths(path)
	return nil
}

// resolvePaths makes the relative paths the file set relative to the
// file's own directory, as Prometheus does: a config file means the same
// whatever directory a command runs in. Paths from variables and flags
// (applied after this) stay relative to the working directory.
func (c *Config) resolvePaths(path string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	dir := filepath.Dir(abs)
	rel := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	rel(&c.File.Warehouse.Path)
	rel(&c.File.Warehouse.PasswordFile)
	rel(&c.File.API.PasswordFile)
	for i := range c.File.Accounts {
		rel(&c.File.Accounts[i].PasswordFile)
	}
	rel(&c.File.Backup.Dir)
	rel(&c.File.Report.Path)
}

// ErrNoConfig is returned (wrapped in an *Error) by Configured when nothing
// configures cardsync: no file, no CARDSYNC_* variable and no flag set a
// key.
var ErrNoConfig = errors.New("no configuration: pass -config FILE or set CARDSYNC_CONFIG")

// Configured fails with ErrNoConfig when no file was read and no variable
// or flag set a key other than the log's: a command would otherwise act on
// the defaults (/var/lib/cardsync/warehouse.db) and say something
// misleading about them.
func (c *Config) Configured() error {
	if c.Path != "" {
		return nil
	}
	for key := range c.sources {
		if !strings.HasPrefix(key, "log.") {
			return nil
		}
	}
	return &Error{Msg: ErrNoConfig.Error(), err: ErrNoConfig}
}

// flatKeys lists the dotted keys of a decoded TOML document ("api.timeout"),
// inline tables and dotted keys included.
func flatKeys(prefix string, m map[string]any) []string {
	var out []string
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			out = append(out, flatKeys(prefix+k+".", sub)...)
			continue
		}
		out = append(out, prefix+k)
	}
	return out
}

// keyLines finds the line of every "key = value" in a TOML text, by table.
// The tables of an array ([[accounts]]) are numbered from 0: the keys of
// the second are accounts.1.name, ..., and accounts.1 is its header's line.
func keyLines(text string) map[string]int {
	out := map[string]int{}
	table := ""
	arrays := map[string]int{}
	assign := regexp.MustCompile(`^\s*"?([A-Za-z0-9_.-]+)"?\s*=`)
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "[") {
			table = strings.Trim(strings.SplitN(trimmed, "#", 2)[0], "[] \t")
			if strings.HasPrefix(trimmed, "[[") {
				n := arrays[table]
				arrays[table]++
				table += "." + strconv.Itoa(n)
				out[table] = i + 1
			}
			continue
		}
		if m := assign.FindStringSubmatch(line); m != nil {
			key := m[1]
			if table != "" {
				key = table + "." + key
			}
			if _, seen := out[key]; !seen {
				out[key] = i + 1
			}
		}
	}
	return out
}

// typeMismatch matches go-toml's message for a value of the wrong type,
// which names Go types ("struct field config.API.Timeout of type string").
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

// EnvName maps a dotted key to its environment variable.
func EnvName(key string) string {
	return "CARDSYNC_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

func (c *Config) applyEnv(environ []string) error {
	var names []string
	values := map[string]string{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "CARDSYNC_") || name == ConfigEnv {
			continue
		}
		names = append(names, name)
		values[name] = value
	}
	sort.Strings(names)
	byEnv := map[string]key{}
	for _, k := range keys() {
		byEnv[EnvName(k.name)] = k
	}
	for _, name := range names {
		if name == PasswordEnv || name == WarehousePasswordEnv {
			// The rule of a password file: one line, a trailing newline
			// allowed (never the value in the message).
			v := strings.TrimSuffix(strings.TrimSuffix(values[name], "\n"), "\r")
			if strings.ContainsAny(v, "\r\n") {
				return &Error{Source: Source{Kind: FromEnv, Name: name}, Msg: "holds more than one line; a password is one line"}
			}
			if name == PasswordEnv {
				c.password = extract.Secret(v)
			} else {
				c.warehousePassword = extract.Secret(v)
			}
			continue
		}
		k, ok := byEnv[name]
		if !ok {
			return &Error{Key: name, Source: Source{Kind: FromEnv, Name: name}, Msg: "unknown CARDSYNC_ variable (typo?)",
				Suggest: suggestEnv(name), err: ErrUnknownKey}
		}
		c.sources[k.name] = Source{Kind: FromEnv, Name: name}
		if err := k.set(&c.File, values[name]); err != nil {
			return c.fail(k.name, "bad value %q: %v", values[name], err)
		}
	}
	return nil
}

// key binds one dotted key to a setter from text (environment, flags).
type key struct {
	name string
	set  func(f *File, v string) error
}

func stringKey(name string, field func(f *File) *string) key {
	return key{name: name, set: func(f *File, v string) error { *field(f) = v; return nil }}
}

// parsedKey is a key whose text parse turns into the field's value; want
// names what a value must be when parse fails.
func parsedKey[T any](name, want string, parse func(string) (T, error), field func(f *File) *T) key {
	return key{name: name, set: func(f *File, v string) error {
		x, err := parse(strings.TrimSpace(v))
		if err != nil {
			return errors.New(want)
		}
		*field(f) = x
		return nil
	}}
}

func intKey[T int | int64](name string, field func(f *File) *T) key {
	return parsedKey(name, "want an integer", func(v string) (T, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		return T(n), err
	}, field)
}

// keys lists every key the environment and flags may set, in file order.
func keys() []key {
	return []key{
		stringKey("api.base_url", func(f *File) *string { return &f.API.BaseURL }),
		stringKey("api.email", func(f *File) *string { return &f.API.Email }),
		stringKey("api.password_file", func(f *File) *string { return &f.API.PasswordFile }),
		stringKey("api.token_field", func(f *File) *string { return &f.API.TokenField }),
		stringKey("api.rate_limit", func(f *File) *string { return &f.API.RateLimit }),
		stringKey("api.auth_rate_limit", func(f *File) *string { return &f.API.AuthRateLimit }),
		stringKey("api.timeout", func(f *File) *string { return &f.API.Timeout }),
		stringKey("api.max_wait", func(f *File) *string { return &f.API.MaxWait }),
		intKey("api.max_body_bytes", func(f *File) *int64 { return &f.API.MaxBodyBytes }),
		intKey("api.amount_scale", func(f *File) *int { return &f.API.AmountScale }),
		intKey("api.max_pages", func(f *File) *int { return &f.API.MaxPages }),
		stringKey("warehouse.path", func(f *File) *string { return &f.Warehouse.Path }),
		stringKey("warehouse.url", func(f *File) *string { return &f.Warehouse.URL }),
		stringKey("warehouse.password_file", func(f *File) *string { return &f.Warehouse.PasswordFile }),
		stringKey("warehouse.schema", func(f *File) *string { return &f.Warehouse.Schema }),
		intKey("warehouse.max_connections", func(f *File) *int { return &f.Warehouse.MaxConnections }),
		stringKey("warehouse.file_mode", func(f *File) *string { return &f.Warehouse.FileMode }),
		stringKey("warehouse.synchronous", func(f *File) *string { return &f.Warehouse.Synchronous }),
		{name: "warehouse.redact_fields", set: func(f *File, v string) error {
			f.Warehouse.RedactFields = nil
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					f.Warehouse.RedactFields = append(f.Warehouse.RedactFields, s)
				}
			}
			return nil
		}},
		{name: "cards.keep_fields", set: func(f *File, v string) error {
			// Set, the variable names at least one field: an empty one
			// is an error (CheckKeepFields), never "keep everything".
			f.Cards.KeepFields = []string{}
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					f.Cards.KeepFields = append(f.Cards.KeepFields, s)
				}
			}
			return nil
		}},
		intKey("cards.amount_scale", func(f *File) *int { return &f.Cards.AmountScale }),
		stringKey("cards.currency_field", func(f *File) *string { return &f.Cards.CurrencyField }),
		stringKey("warehouse.page_audit_retention", func(f *File) *string { return &f.Warehouse.PageAuditRetention }),
		stringKey("warehouse.field_retention", func(f *File) *string { return &f.Warehouse.FieldRetention }),
		parsedKey("warehouse.max_removed_fraction", "want a number", func(v string) (float64, error) { return strconv.ParseFloat(v, 64) },
			func(f *File) *float64 { return &f.Warehouse.MaxRemovedFraction }),
		stringKey("warehouse.commit_delay", func(f *File) *string { return &f.Warehouse.CommitDelay }),
		stringKey("schedule.cron", func(f *File) *string { return &f.Schedule.Cron }),
		stringKey("schedule.timezone", func(f *File) *string { return &f.Schedule.Timezone }),
		parsedKey("schedule.run_on_start", "want true or false", strconv.ParseBool, func(f *File) *bool { return &f.Schedule.RunOnStart }),
		stringKey("schedule.run_timeout", func(f *File) *string { return &f.Schedule.RunTimeout }),
		stringKey("log.level", func(f *File) *string { return &f.Log.Level }),
		stringKey("log.format", func(f *File) *string { return &f.Log.Format }),
		stringKey("warehouse.checkpoint", func(f *File) *string { return &f.Warehouse.Checkpoint }),
		stringKey("backup.dir", func(f *File) *string { return &f.Backup.Dir }),
		intKey("backup.keep", func(f *File) *int { return &f.Backup.Keep }),
		stringKey("backup.cron", func(f *File) *string { return &f.Backup.Cron }),
		stringKey("report.path", func(f *File) *string { return &f.Report.Path }),
		stringKey("report.since", func(f *File) *string { return &f.Report.Since }),
		stringKey("metrics.listen", func(f *File) *string { return &f.Metrics.Listen }),
		stringKey("metrics.healthy_within", func(f *File) *string { return &f.Metrics.HealthyWithin }),
		stringKey("cluster.lease_ttl", func(f *File) *string { return &f.Cluster.LeaseTTL }),
		stringKey("cluster.holder", func(f *File) *string { return &f.Cluster.Holder }),
	}
}

// Keys returns every dotted key, in file order.
func Keys() []string {
	var out []string
	for _, k := range keys() {
		out = append(out, k.name)
	}
	return out
}

func keyByName(name string) (key, bool) {
	for _, k := range keys() {
		if k.name == name {
			return k, true
		}
	}
	return key{}, false
}
