package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestBackupSettings: [backup] and [warehouse] checkpoint parse with their
// defaults, and a bad value names its key and line (or variable).
func TestBackupSettings(t *testing.T) {
	pw := writeFile(t, "pw", "s3cret\n", 0o600)
	base := "[api]\nbase_url = \"https://api.example.com\"\nemail = \"a@example.com\"\npassword_file = \"" + pw + "\"\n"
	tests := []struct {
		name       string
		file       string
		env        []string
		wantDir    string
		wantKeep   int
		wantCron   bool
		wantMode   string
		wantErrKey string
		wantLine   int
		wantErr    string
	}{
		{name: "defaults: no schedule, keep 7, auto checkpoints", file: base, wantKeep: 7, wantMode: "auto"},
		{name: "set in the file", file: base + "[warehouse]\ncheckpoint = \"external\"\n[backup]\ndir = \"/srv/b\"\nkeep = 3\ncron = \"30 3 * * *\"\n",
			wantDir: "/srv/b", wantKeep: 3, wantCron: true, wantMode: "external"},
		{name: "from the environment", file: base, env: []string{"CARDSYNC_BACKUP_CRON=@daily", "CARDSYNC_BACKUP_KEEP=2", "CARDSYNC_WAREHOUSE_CHECKPOINT=EXTERNAL"},
			wantKeep: 2, wantCron: true, wantMode: "external"},
		{name: "keep 0", file: base + "[backup]\nkeep = 0\n", wantErrKey: "backup.keep", wantLine: 6, wantErr: "at least 1"},
		{name: "bad cron", file: base + "[backup]\ncron = \"every night\"\n", wantErrKey: "backup.cron", wantLine: 6, wantErr: "invalid cron"},
		{name: "bad checkpoint", file: base + "[warehouse]\ncheckpoint = \"manual\"\n", wantErrKey: "warehouse.checkpoint", wantLine: 6, wantErr: "manual"},
		{name: "bad keep from a variable", file: base, env: []string{"CARDSYNC_BACKUP_KEEP=-1"}, wantErrKey: "backup.keep", wantErr: "env CARDSYNC_BACKUP_KEEP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "c.toml", tt.file, 0o600)
			cfg, err := Load(path, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			s, err := cfg.Settings(false, noEnv)
			if tt.wantErrKey != "" {
				var ce *Error
				if !errors.As(err, &ce) || ce.Key != tt.wantErrKey || !strings.Contains(err.Error(), tt.wantErr) || ce.Source.Line != tt.wantLine {
					t.Fatalf("err = %v, want an error on %s, line %d, containing %q", err, tt.wantErrKey, tt.wantLine, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.BackupDir != tt.wantDir || s.BackupKeep != tt.wantKeep || (s.BackupSchedule != nil) != tt.wantCron || s.WALCheckpoint != tt.wantMode {
				t.Errorf("got dir %q keep %d schedule %v checkpoint %q", s.BackupDir, s.BackupKeep, s.BackupSchedule != nil, s.WALCheckpoint)
			}
			if s.LoadOptions().WALCheckpoint != tt.wantMode {
				t.Errorf("LoadOptions().WALCheckpoint = %q, want %q", s.LoadOptions().WALCheckpoint, tt.wantMode)
			}
			if tt.wantCron {
				from := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
				if next := s.BackupSchedule.Next(from); !next.After(from) {
					t.Errorf("backup schedule next %v, not after %v", next, from)
				}
			}
		})
	}
}

// TestDottedAndInlineKeysNameTheFile: a bad value set with a dotted key
// names the file and line; one in an inline table names at least the file.
func TestDottedAndInlineKeysNameTheFile(t *testing.T) {
	for _, tt := range []struct {
		name, file string
		wantLine   int
	}{
		{"dotted key", "schedule.cron = \"bogus\"\n", 1},
		{"dotted key in a table", "[schedule]\nrun_timeout = \"2h\"\n[log]\nlevel = \"info\"\n[api]\nrate_limit = \"1/1s\"\n\n[warehouse]\nfile_mode = \"0640\"\n[backup]\nx = 1\n", 0},
		{"inline table", "schedule = { cron = \"bogus\" }\n", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "c.toml", tt.file, 0o600)
			cfg, err := Load(path, nil)
			if err == nil {
				_, err = cfg.Settings(false, noEnv)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Source.Kind != FromFile || ce.Source.Name != path {
				t.Fatalf("err = %v, want an error naming %s", err, path)
			}
			if tt.wantLine != 0 && ce.Source.Line != tt.wantLine {
				t.Errorf("line %d, want %d (%v)", ce.Source.Line, tt.wantLine, err)
			}
		})
	}
}
