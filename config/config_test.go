package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

func noEnv(string) string { return "" }

// TestExampleConfigDecodesStrictly keeps config.example.toml honest: it must
// decode with unknown keys refused, validate, and equal the defaults.
func TestExampleConfigDecodesStrictly(t *testing.T) {
	cfg, err := Load("../config.example.toml", nil)
	if err != nil {
		t.Fatalf("decode config.example.toml: %v", err)
	}
	want := Default()
	// The example fills in the keys that have no default.
	want.API.BaseURL = "https://api.example.com"
	want.API.Email = "admin@example.com"
	want.API.PasswordFile = "/run/credentials/cardsync.service/api-password"
	if cfg.Warehouse.RedactFields != nil && len(cfg.Warehouse.RedactFields) == 0 {
		cfg.Warehouse.RedactFields = nil
	}
	if !equalConfig(cfg.File, want) {
		t.Errorf("config.example.toml differs from Default:\n got %+v\nwant %+v", cfg, want)
	}
	if _, err := cfg.Settings(false, noEnv); err != nil {
		t.Errorf("validate example: %v", err)
	}
}

func equalConfig(a, b File) bool {
	return a.API == b.API && a.Schedule == b.Schedule && a.Log == b.Log &&
		a.Warehouse.Path == b.Warehouse.Path && a.Warehouse.FileMode == b.Warehouse.FileMode &&
		a.Warehouse.Synchronous == b.Warehouse.Synchronous &&
		a.Warehouse.PageAuditRetention == b.Warehouse.PageAuditRetention && a.Warehouse.FieldRetention == b.Warehouse.FieldRetention && len(a.Warehouse.RedactFields) == len(b.Warehouse.RedactFields) &&
		a.Warehouse.MaxRemovedFraction == b.Warehouse.MaxRemovedFraction &&
		a.Warehouse.CommitDelay == b.Warehouse.CommitDelay && a.Warehouse.WALCheckpoint == b.Warehouse.WALCheckpoint &&
		a.Backup == b.Backup && a.Metrics == b.Metrics && a.Report == b.Report
}

func writeFile(t *testing.T, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigErrors(t *testing.T) {
	pw := writeFile(t, "pw", "s3cret\n", 0o600)
	loosePW := writeFile(t, "pw-loose", "s3cret\n", 0o644)
	base := "[api]\nbase_url = \"https://api.example.com\"\nemail = \"a@example.com\"\npassword_file = \"" + pw + "\"\n"
	tests := []struct {
		name     string
		file     string
		env      []string
		wantKey  string
		wantLine int
		wantMsg  string
	}{
		{name: "unknown key", file: base + "rate_limt = \"1/1s\"\n", wantKey: "api.rate_limt", wantLine: 5, wantMsg: "unknown key"},
		{name: "unknown table", file: base + "[warehous]\npath = \"x\"\n", wantKey: "warehous", wantLine: 5, wantMsg: "unknown key"},
		{name: "every unknown key", file: base + "rate_limt = \"1/1s\"\ntimout = \"1s\"\n", wantKey: "api.rate_limt", wantLine: 5, wantMsg: `also unknown: "api.timout" (line 6)`},
		{name: "wrong type", file: base + "max_body_bytes = \"big\"\n", wantKey: "api.max_body_bytes", wantLine: 5},
		{name: "syntax error", file: base + "timeout = \n", wantLine: 5},
		{name: "bad rate", file: base + "rate_limit = \"fast\"\n", wantKey: "api.rate_limit", wantLine: 5, wantMsg: "N/duration"},
		{name: "bad duration", file: base + "timeout = \"10\"\n", wantKey: "api.timeout", wantLine: 5, wantMsg: "duration"},
		{name: "http to a remote host", file: strings.Replace(base, "https://api.example.com", "http://api.example.com", 1), wantKey: "api.base_url", wantLine: 2, wantMsg: "loopback"},
		{name: "missing base url", file: "[api]\nemail = \"a@example.com\"\n", wantKey: "api.base_url", wantMsg: "required"},
		{name: "missing password", file: "[api]\nbase_url = \"https://x.example\"\nemail = \"a@example.com\"\n", wantKey: "api.password_file", wantMsg: "no password"},
		{name: "world-readable password file", file: strings.Replace(base, pw, loosePW, 1), wantKey: "api.password_file", wantLine: 4, wantMsg: "readable by group or others"},
		{name: "bad cron", file: base + "[schedule]\ncron = \"61 * * * *\"\n", wantKey: "schedule.cron", wantLine: 6, wantMsg: "invalid cron"},
		{name: "cron TZ prefix does not panic", file: base + "[schedule]\ncron = \"TZ=UTC\"\n", wantKey: "schedule.cron", wantLine: 6, wantMsg: "timezone"},
		{name: "bad timezone", file: base + "[schedule]\ntimezone = \"Mars/Base\"\n", wantKey: "schedule.timezone", wantLine: 6},
		{name: "world-writable file mode", file: base + "[warehouse]\nfile_mode = \"0666\"\n", wantKey: "warehouse.file_mode", wantLine: 6},
		{name: "world-readable file mode", file: base + "[warehouse]\nfile_mode = \"0644\"\n", wantKey: "warehouse.file_mode", wantLine: 6, wantMsg: "nothing for others"},
		{name: "others may only execute", file: base + "[warehouse]\nfile_mode = \"0641\"\n", wantKey: "warehouse.file_mode", wantLine: 6},
		{name: "group-writable file mode", file: base + "[warehouse]\nfile_mode = \"0660\"\n", wantKey: "warehouse.file_mode", wantLine: 6},
		{name: "file mode from the environment", env: []string{"CARDSYNC_WAREHOUSE_FILE_MODE=0604"}, file: base, wantKey: "warehouse.file_mode", wantMsg: "nothing for others"},
		{name: "max_removed_fraction above 1", file: base + "[warehouse]\nmax_removed_fraction = 1.5\n", wantKey: "warehouse.max_removed_fraction", wantLine: 6},
		{name: "max_removed_fraction zero", file: base + "[warehouse]\nmax_removed_fraction = 0.0\n", wantKey: "warehouse.max_removed_fraction", wantLine: 6},
		{name: "field_retention not a period", file: base + "[warehouse]\nfield_retention = \"90 days\"\n", wantKey: "warehouse.field_retention", wantLine: 6, wantMsg: "number of days"},
		{name: "field_retention zero", file: base + "[warehouse]\nfield_retention = \"0d\"\n", wantKey: "warehouse.field_retention", wantLine: 6, wantMsg: "positive"},
		{name: "field_retention negative", file: base + "[warehouse]\nfield_retention = \"-36h\"\n", wantKey: "warehouse.field_retention", wantLine: 6, wantMsg: "positive"},
		{name: "field_retention an integer", file: base + "[warehouse]\nfield_retention = 90\n", wantKey: "warehouse.field_retention", wantLine: 6, wantMsg: "quoted string"},
		{name: "field_retention from the environment", file: base, env: []string{"CARDSYNC_WAREHOUSE_FIELD_RETENTION=3 months"}, wantKey: "warehouse.field_retention", wantMsg: "env CARDSYNC_WAREHOUSE_FIELD_RETENTION"},
		{name: "keep_fields empty", file: base + "[cards]\nkeep_fields = []\n", wantKey: "cards.keep_fields", wantLine: 6, wantMsg: "leave the key out"},
		{name: "keep_fields empty name", file: base + "[cards]\nkeep_fields = [\"status\", \"\"]\n", wantKey: "cards.keep_fields", wantLine: 6, wantMsg: "name 2 is empty"},
		{name: "keep_fields named twice", file: base + "[cards]\nkeep_fields = [\"status\", \"status\"]\n", wantKey: "cards.keep_fields", wantLine: 6, wantMsg: "named twice"},
		{name: "keep_fields spaces", file: base + "[cards]\nkeep_fields = [\" status\"]\n", wantKey: "cards.keep_fields", wantLine: 6, wantMsg: "surrounding spaces"},
		{name: "keep_fields empty from the environment", file: base, env: []string{"CARDSYNC_CARDS_KEEP_FIELDS= , "}, wantKey: "cards.keep_fields", wantMsg: "env CARDSYNC_CARDS_KEEP_FIELDS"},
		{name: "amount_scale negative", file: base + "[cards]\namount_scale = -1\n", wantKey: "cards.amount_scale", wantLine: 6, wantMsg: "0 to 18"},
		{name: "amount_scale beyond 18", file: base + "[cards]\namount_scale = 19\n", wantKey: "cards.amount_scale", wantLine: 6, wantMsg: "0 to 18"},
		{name: "currency_field spaces", file: base + "[cards]\ncurrency_field = \" currency\"\n", wantKey: "cards.currency_field", wantLine: 6, wantMsg: "surrounding spaces"},
		{name: "max_pages zero", file: base + "max_pages = 0\n", wantKey: "api.max_pages", wantLine: 5},
		{name: "bad log level", file: base + "[log]\nlevel = \"loud\"\n", wantKey: "log.level", wantLine: 6},
		{name: "unknown env var", file: base, env: []string{"CARDSYNC_API_BASEURL=x"}, wantKey: "CARDSYNC_API_BASEURL", wantMsg: "unknown"},
		{name: "bad env value", file: base, env: []string{"CARDSYNC_SCHEDULE_RUN_ON_START=maybe"}, wantKey: "schedule.run_on_start", wantMsg: "bad value"},
		{name: "bad env value overriding the file", file: base + "rate_limit = \"10/1m\"\n", env: []string{"CARDSYNC_API_RATE_LIMIT=fast"}, wantKey: "api.rate_limit", wantMsg: "env CARDSYNC_API_RATE_LIMIT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "c.toml", tt.file, 0o600)
			cfg, err := Load(path, tt.env)
			if err == nil {
				_, err = cfg.Settings(true, noEnv)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *Error", err)
			}
			if tt.wantKey != "" && ce.Key != tt.wantKey {
				t.Errorf("key %q, want %q (%v)", ce.Key, tt.wantKey, err)
			}
			if tt.wantLine != 0 && ce.Source.Line != tt.wantLine {
				t.Errorf("line %d, want %d (%v)", ce.Source.Line, tt.wantLine, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q, want it to contain %q", err, tt.wantMsg)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error leaks the password: %v", err)
			}
		})
	}
}

func TestConfigPrecedence(t *testing.T) {
	path := writeFile(t, "c.toml", "[api]\nbase_url = \"https://file.example\"\nemail = \"file@example.com\"\n[schedule]\ncron = \"@every 1h\"\n", 0o600)
	env := []string{"CARDSYNC_API_EMAIL=env@example.com", "CARDSYNC_API_PASSWORD=from-env", "HOME=/root"}
	cfg, err := Load(path, env)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.Settings(true, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if s.BaseURL != "https://file.example" || s.Email != "env@example.com" || s.Password.Reveal() != "from-env" {
		t.Errorf("got url %q email %q, want file URL and env e-mail and password", s.BaseURL, s.Email)
	}
	if s.CronSpec != "@every 1h" || s.RateLimit.N != 180 || s.RateLimit.Per != time.Minute {
		t.Errorf("got cron %q rate %v, want the file's cron and the default rate", s.CronSpec, s.RateLimit)
	}
}

func TestPasswordFromCredentialsDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "api-password"), []byte("cred-pw\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, "c.toml", "[api]\nbase_url = \"https://x.example\"\nemail = \"a@example.com\"\n", 0o600)
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.Settings(true, func(k string) string {
		if k == "CREDENTIALS_DIRECTORY" {
			return dir
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Password.Reveal() != "cred-pw" {
		t.Errorf("password not read from the credentials directory")
	}
}

// TestRelativePathsFollowTheFile: relative paths in a config file resolve
// against the file's directory whatever the working directory; paths from
// variables and flags stay relative to the working directory; nothing at
// all configured is an error naming -config and CARDSYNC_CONFIG.
func TestRelativePathsFollowTheFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "etc", "cardsync.toml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	body := `[api]
password_file = "secrets/api"
[warehouse]
path = "../data/warehouse.db"
password_file = "pg.pass"
[backup]
dir = "backups"
[report]
path = "/srv/www/report.html"
[[accounts]]
name = "a"
base_url = "https://a.example.com"
email = "a@example.com"
password_file = "a.pass"
`
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	c, err := Load(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	etc := filepath.Dir(file)
	for name, got := range map[string][2]string{
		"api.password_file":        {c.API.PasswordFile, filepath.Join(etc, "secrets", "api")},
		"warehouse.path":           {c.Warehouse.Path, filepath.Join(dir, "data", "warehouse.db")},
		"warehouse.password_file":  {c.Warehouse.PasswordFile, filepath.Join(etc, "pg.pass")},
		"backup.dir":               {c.Backup.Dir, filepath.Join(etc, "backups")},
		"report.path":              {c.Report.Path, "/srv/www/report.html"},
		"accounts.0.password_file": {c.Accounts[0].PasswordFile, filepath.Join(etc, "a.pass")},
	} {
		if got[0] != got[1] {
			t.Errorf("%s = %q, want %q", name, got[0], got[1])
		}
	}
	c, err = Load(file, []string{"CARDSYNC_WAREHOUSE_PATH=w.db"}, Override{Key: "backup.dir", Flag: "backup-dir", Value: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Warehouse.Path != "w.db" || c.Backup.Dir != "b" {
		t.Errorf("variable and flag paths: %q, %q; want them as given (relative to the working directory)", c.Warehouse.Path, c.Backup.Dir)
	}

	c, err = Load("", []string{"CARDSYNC_LOG_LEVEL=debug"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Configured(); !errors.Is(err, ErrNoConfig) || !strings.Contains(err.Error(), "pass -config FILE or set CARDSYNC_CONFIG") {
		t.Errorf("nothing configured: %v, want ErrNoConfig", err)
	}
	c, err = Load("", []string{"CARDSYNC_WAREHOUSE_PATH=w.db"})
	if err != nil || c.Configured() != nil {
		t.Errorf("a variable configures cardsync: %v, %v", err, c.Configured())
	}
}

// TestFieldRetention: warehouse.field_retention defaults to load's 90 days
// and takes days or a Go duration from the file or the environment.
func TestFieldRetention(t *testing.T) {
	tests := []struct {
		name string
		file string
		env  []string
		want time.Duration
	}{
		{name: "default", want: load.DefaultFieldRetention},
		{name: "days", file: "[warehouse]\nfield_retention = \"30d\"\n", want: 30 * 24 * time.Hour},
		{name: "duration", file: "[warehouse]\nfield_retention = \"36h\"\n", want: 36 * time.Hour},
		{name: "environment over the file", file: "[warehouse]\nfield_retention = \"30d\"\n", env: []string{"CARDSYNC_WAREHOUSE_FIELD_RETENTION=7d"}, want: 7 * 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(writeFile(t, "c.toml", tt.file, 0o600), tt.env)
			if err != nil {
				t.Fatal(err)
			}
			s, err := cfg.Settings(false, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			if s.FieldRetention != tt.want {
				t.Errorf("FieldRetention = %v, want %v", s.FieldRetention, tt.want)
			}
		})
	}
	if got, want := Default().Warehouse.FieldRetention, "90d"; got != want {
		t.Errorf("default field_retention %q, want %q", got, want)
	}
}

// TestPasswordVariableIsOneLine: CARDSYNC_API_PASSWORD follows the rule of
// a password file: one line, a trailing newline allowed; more is refused
// naming the variable, never the value.
func TestPasswordVariableIsOneLine(t *testing.T) {
	c, err := Load("", []string{PasswordEnv + "=demo\n", "CARDSYNC_WAREHOUSE_PATH=w.db"})
	if err != nil || c.password.Reveal() != "demo" {
		t.Errorf("a trailing newline: %v", err)
	}
	_, err = Load("", []string{PasswordEnv + "=demo\nsecond-line"})
	if err == nil || !strings.Contains(err.Error(), PasswordEnv) || strings.Contains(err.Error(), "second-line") {
		t.Errorf("two lines: %v, want an error naming the variable and not the value", err)
	}
}

// TestKeepFields: [cards] keep_fields reaches load.Options from the file or
// the variable (comma-separated, the variable winning); unset, every field
// is kept (nil).
func TestKeepFields(t *testing.T) {
	tests := []struct {
		name string
		file string
		env  []string
		want []string
	}{
		{name: "unset", want: nil},
		{name: "file", file: "[cards]\nkeep_fields = [\"status\", \"id\"]\n", want: []string{"status", "id"}},
		{name: "variable over the file", file: "[cards]\nkeep_fields = [\"status\"]\n", env: []string{"CARDSYNC_CARDS_KEEP_FIELDS=balance, currency"}, want: []string{"balance", "currency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(writeFile(t, "c.toml", tt.file, 0o600), tt.env)
			if err != nil {
				t.Fatal(err)
			}
			s, err := cfg.Settings(false, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			got := s.LoadOptions().KeepFields
			if !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("KeepFields = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCardAmounts: [cards] amount_scale and currency_field reach
// load.Options from the file or the variables (the variable winning);
// unset, the scale is load.DefaultCardAmountScale and the currency field
// is found by its name ("").
func TestCardAmounts(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		env      []string
		scale    int
		currency string
	}{
		{name: "unset", scale: load.DefaultCardAmountScale},
		{name: "file", file: "[cards]\namount_scale = 0\ncurrency_field = \"ccy_code\"\n", scale: 0, currency: "ccy_code"},
		{name: "variables over the file", file: "[cards]\namount_scale = 0\n",
			env: []string{"CARDSYNC_CARDS_AMOUNT_SCALE=3", "CARDSYNC_CARDS_CURRENCY_FIELD=money"}, scale: 3, currency: "money"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(writeFile(t, "c.toml", tt.file, 0o600), tt.env)
			if err != nil {
				t.Fatal(err)
			}
			s, err := cfg.Settings(false, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			o := s.LoadOptions()
			if o.AmountScale == nil || *o.AmountScale != tt.scale || o.CurrencyField != tt.currency {
				t.Errorf("AmountScale %v, CurrencyField %q; want %d, %q", o.AmountScale, o.CurrencyField, tt.scale, tt.currency)
			}
			if got := o.Settings().Amounts; got != (load.AmountRules{Scale: tt.scale, CurrencyField: tt.currency}) {
				t.Errorf("load's rules: %+v", got)
			}
		})
	}
}

// TestScheduleSet: the schedule is named by a file (its cron or the
// default), a variable or a flag; with none of them (only other keys from
// the environment or flags) it is not.
func TestScheduleSet(t *testing.T) {
	tests := []struct {
		name  string
		file  string // "": no file
		env   []string
		flags []Override
		want  bool
	}{
		{name: "nothing but a warehouse path", flags: []Override{{Key: "warehouse.path", Flag: "db", Value: "w.db"}}, want: false},
		{name: "variables without the schedule", env: []string{"CARDSYNC_WAREHOUSE_PATH=w.db", "CARDSYNC_LOG_LEVEL=info"}, want: false},
		{name: "a file without [schedule]", file: "[warehouse]\npath = \"w.db\"\n", want: true},
		{name: "a file with [schedule] cron", file: "[schedule]\ncron = \"@hourly\"\n", want: true},
		{name: "the cron variable", env: []string{"CARDSYNC_SCHEDULE_CRON=@hourly"}, want: true},
		{name: "the cron as a flag", flags: []Override{{Key: "schedule.cron", Flag: "cron", Value: "@hourly"}}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeFile(t, "c.toml", tt.file, 0o600)
			}
			cfg, err := Load(path, tt.env, tt.flags...)
			if err != nil {
				t.Fatal(err)
			}
			s, err := cfg.Settings(false, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			if s.ScheduleSet != tt.want {
				t.Errorf("ScheduleSet = %v, want %v", s.ScheduleSet, tt.want)
			}
		})
	}
}
