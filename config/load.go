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
	for _, k := range allKeys() {
		if k.form != "path" {
			continue
		}
		if k.account == nil {
			rel(k.field(&c.File).(*string))
			continue
		}
		for i := range c.File.Accounts {
			rel(k.account(&c.File.Accounts[i]).(*string))
		}
	}
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
