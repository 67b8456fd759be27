package config

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres/pgrules"
	"github.com/cardsync/cardsync/money"
)

// tables declares every table and key of the file, in the file's order:
// the one place a key is declared (see key). A test checks that every
// key is here and that no other code of the package lists keys.
func tables() []table {
	return []table{apiKeys(), warehouseKeys(), cardsKeys(), scheduleKeys(), logKeys(), metricsKeys(), backupKeys(), reportKeys(), clusterKeys(), accountsKeys()}
}

// apiChanged: any key of an API account rebuilds every client (Settings.APIChanged).
func apiChanged(old, s Settings) bool { return s.APIChanged(old) }

// apiKeys declares the [api] table.
func apiKeys() table {
	return table{name: "api", array: false, doc: "The API account (unless `[[accounts]]` tables name several) and the client's settings for every account.", keys: []key{
		{name: "api.base_url", field: func(f *File) any { return &f.API.BaseURL }, reload: onReload(apiChanged).in("api"),
			form: "URL", doc: "Base URL of the Card Payment Service. `https://` only; plain `http://` only to a loopback " +
				"host (127.0.0.0/8, `localhost`, `[::1]`) such as the simulator; no user, query or fragment (extract.CheckBaseURL). " +
				"Required by `serve`, `backfill` and `check` unless `[[accounts]]` tables name the accounts (then it must not be set)."},
		{name: "api.email", field: func(f *File) any { return &f.API.Email }, reload: onReload(apiChanged).in("api"),
			doc: "Login e-mail of a user with the Administrator role. Required where `base_url` is."},
		{name: "api.password_file", field: func(f *File) any { return &f.API.PasswordFile }, reload: onReload(apiChanged).in("api"),
			form: "path", doc: "File holding the API password: a regular file (a symbolic link to one is fine), " +
				"one line, a trailing newline allowed, mode 0600 (readable by group or others is refused). The password is never a key " +
				"or a flag: `" + PasswordEnv + "` comes first, then systemd's `$CREDENTIALS_DIRECTORY/" + CredentialName + "`, then this file."},
		{name: "api.token_field", field: func(f *File) any { return &f.API.TokenField }, reload: onReload(apiChanged).in("api"),
			form: "dotted path", doc: "Path of the token in the token response, e.g. `data.token`. " +
				"`\"\"`: detect it at the usual paths ([upstream-api.md](upstream-api.md#authentication) lists them)."},
		{name: "api.rate_limit", field: func(f *File) any { return &f.API.RateLimit }, def: extract.DefaultRateLimit.String(), reload: onReload(apiChanged).in("api"),
			form: "rate N/duration", doc: "Client-side pace of data requests: `N/duration` " +
				"(`\"180/1m\"`, `\"10/60s\"`; a bare unit is one of it: `\"180/min\"`, `\"10/s\"`, `\"5/hour\"`), burst 1, so no " +
				"window of that length sees more than N requests. A positive count in a positive window (extract.ParseRate, extract.CheckRate)."},
		{name: "api.auth_rate_limit", field: func(f *File) any { return &f.API.AuthRateLimit }, def: extract.DefaultAuthRateLimit.String(), reload: onReload(apiChanged).in("api"),
			form: "rate N/duration", doc: "The same pace for the token endpoint."},
		{name: "api.timeout", field: func(f *File) any { return &f.API.Timeout }, def: extract.FormatDuration(extract.DefaultTimeout), reload: onReload(apiChanged).in("api"),
			form: "Go duration", doc: "Deadline of one HTTP attempt, body included. Positive."},
		{name: "api.max_wait", field: func(f *File) any { return &f.API.MaxWait }, def: extract.FormatDuration(extract.DefaultMaxWait), reload: onReload(apiChanged).in("api"),
			form: "Go duration", doc: "Longest total wait (backoff, `Retry-After`) spent retrying one request " +
				"before the run fails as \"upstream unavailable\" (exit 5). Positive."},
		{name: "api.max_body_bytes", field: func(f *File) any { return &f.API.MaxBodyBytes }, def: strconv.Itoa(extract.DefaultMaxBodyBytes), reload: onReload(apiChanged).in("api"),
			form: "bytes", doc: fmt.Sprintf("Largest response body accepted (a page is about 10 KiB); "+
				"%d to %d.", extract.MinMaxBodyBytes, extract.MaxMaxBodyBytes)},
		{name: "api.amount_scale", field: func(f *File) any { return &f.API.AmountScale }, def: strconv.Itoa(extract.DefaultAmountScale), reload: onReload(apiChanged).in("api"),
			doc: fmt.Sprintf("Decimals of the account's amounts, %d or %d (extract.CheckAmountScale). "+
				"An amount sent with more (PHP float noise) is rounded half to even into its `*_minor` column and "+
				"`account_snapshots.amounts_rounded` marks it; the raw JSON keeps the exact text.", extract.MinAmountScale, extract.MaxAmountScale)},
		{name: "api.max_pages", field: func(f *File) any { return &f.API.MaxPages }, def: strconv.Itoa(extract.DefaultMaxPages), reload: onReload(apiChanged).in("api"),
			doc: fmt.Sprintf("A walk is refused at a page that claims more pages than this, its `total` "+
				"bearing them out (on the first page, before anything is stored); a `total_pages` its `total` does not bear out "+
				"is phantom pages, never requested; 1 to %d.", extract.MaxMaxPages)},
	}}
}

// warehouseKeys declares the [warehouse] table.
func warehouseKeys() table {
	return table{name: "warehouse", array: false, doc: "Where the data goes: a SQLite file (`path`) or a PostgreSQL database (`url`), and how it is written.", keys: []key{
		{name: "warehouse.path", field: func(f *File) any { return &f.Warehouse.Path }, def: DefaultWarehousePath, reload: onRestart(func(a, b Settings) bool { return a.DBPath != b.DBPath }),
			form: "path", flag: "-db", doc: "The SQLite warehouse file. Its directory must exist; the file, " +
				"`-wal` and `-shm` are created with `file_mode`. No `?` or `#`. Set `path` or `url`, not both."},
		{name: "warehouse.url", field: func(f *File) any { return &f.Warehouse.URL }, reload: onRestart(func(a, b Settings) bool { return a.WarehouseURL != b.WarehouseURL }),
			form: "URL", doc: "A PostgreSQL warehouse instead of the file: `postgres://user@host:port/db` " +
				"(libpq URL; add `?sslmode=verify-full` as needed). A password in the URL is refused (URLs get logged), so is a " +
				"query that does not parse. Several `serve` replicas may share one database: see `[cluster]`."},
		{name: "warehouse.password_file", field: func(f *File) any { return &f.Warehouse.PasswordFile }, reload: onRestart(func(a, b Settings) bool { return a.WarehousePassword != b.WarehousePassword }).in("warehouse.url"),
			form: "path", doc: "File holding the PostgreSQL password (mode 0600). `" +
				WarehousePasswordEnv + "` comes first, then systemd's `$CREDENTIALS_DIRECTORY/" + WarehouseCredentialName +
				"`, then this file; with none, the server's other authentication (trust, certificates) applies."},
		{name: "warehouse.schema", field: func(f *File) any { return &f.Warehouse.Schema }, reload: onRestart(func(a, b Settings) bool { return a.WarehouseSchema != b.WarehouseSchema }).in("warehouse.url"),
			doc: "The PostgreSQL schema the warehouse lives in (`\"\"`: public); every connection's " +
				"`search_path` is pinned to it alone. It must exist: 1 to 63 bytes of UTF-8 (pgrules.CheckSchemaName). Unset, an " +
				"empty public beside another schema holding a warehouse is refused. Only with `url`."},
		{name: "warehouse.max_connections", field: func(f *File) any { return &f.Warehouse.MaxConnections }, reload: onRestart(func(a, b Settings) bool { return a.MaxConnections != b.MaxConnections }),
			doc: fmt.Sprintf("The most PostgreSQL connections one process holds, all its accounts "+
				"together; %d of them are kept for lease renewals and heartbeats. 0: %d + the number of accounts, at most %d; "+
				"else %d to %d. Only with `url`.", pgrules.LeaseConns, pgrules.LeaseConns+1, DefaultMaxConnections,
				pgrules.MinSharedConns, MaxMaxConnections)},
		{name: "warehouse.file_mode", field: func(f *File) any { return &f.Warehouse.FileMode }, def: fmt.Sprintf("%04o", load.DefaultFileMode), reload: onRestart(func(a, b Settings) bool { return a.FileMode != b.FileMode }),
			form: "octal mode", doc: "Permissions of new warehouse files: owner read/write required, the " +
				"group may read (`\"0640\"`) or not (`\"0600\"`), write for the group or anything for others is refused (load.CheckFileMode)."},
		{name: "warehouse.synchronous", field: func(f *File) any { return &f.Warehouse.Synchronous }, def: load.DefaultSynchronous, reload: onRestart(func(a, b Settings) bool { return a.Synchronous != b.Synchronous }),
			doc: "SQLite `synchronous`: `FULL` (survives power loss), `NORMAL` or `EXTRA`; `OFF` is " +
				"refused (load.CheckSynchronous)."},
		{name: "warehouse.redact_fields", field: func(f *File) any { return &f.Warehouse.RedactFields }, reload: onRestart(func(a, b Settings) bool { return !slices.Equal(a.RedactFields, b.RedactFields) }),
			doc: "Extra card field names to drop before storing (a variable holds them comma-separated). " +
				"These match whole keys, without regard to case, at any depth, whatever the value. Always dropped besides: keys that name " +
				"a card security code or PIN by the code vocabulary (docs/odd-data.md: cvv, cvc, cid with a card word, pin, pin block, " +
				"security code and their spellings in ten languages), with their value whatever its type but a boolean or null; card " +
				"numbers are always masked to their first 6 and last 4 digits, and track data dropped."},
		{name: "warehouse.page_audit_retention", field: func(f *File) any { return &f.Warehouse.PageAuditRetention }, def: DefaultPageAuditRetention, reload: onReload(func(a, b Settings) bool { return a.PageAuditRetention != b.PageAuditRetention }),
			form: "Go duration", doc: "How long the per-page audit rows (`run_pages`) are kept; " +
				"older ones are pruned after each run. `\"0\"` keeps them forever."},
		{name: "warehouse.field_retention", field: func(f *File) any { return &f.Warehouse.FieldRetention }, def: fmt.Sprintf("%dd", load.DefaultFieldRetention/(24*time.Hour)), reload: onReload(func(a, b Settings) bool { return a.FieldRetention != b.FieldRetention }),
			form: "period", doc: "How long a top-level card field stays in `card_fields` (and a " +
				"column of `cards_flat`) after the last run that saw it: days (`\"90d\"`) or a Go duration (`\"36h\"`); in days at most " +
				"36600d. Older fields are pruned after each run that completes a walk; their values stay in the cards' data."},
		{name: "warehouse.max_removed_fraction", field: func(f *File) any { return &f.Warehouse.MaxRemovedFraction }, def: strconv.FormatFloat(load.DefaultMaxRemovedFraction, 'g', -1, 64), reload: onRestart(func(a, b Settings) bool { return a.MaxRemovedFraction != b.MaxRemovedFraction }),
			doc: "Mass-removal guard: a complete walk that would mark more than this fraction " +
				"of the live cards removed (and more than 10 cards), or that lists no card at all, marks none removed and records " +
				"`sync_runs.removals_held`; `backfill -confirm-removals` applies them. Above 0, at most 1 (load.CheckMaxRemovedFraction)."},
		{name: "warehouse.commit_delay", field: func(f *File) any { return &f.Warehouse.CommitDelay }, def: extract.FormatDuration(load.DefaultCommitDelay), reload: onRestart(func(a, b Settings) bool { return a.CommitDelay != b.CommitDelay }),
			form: "Go duration", doc: "How long a page that changes something waits for more pages to " +
				"share its transaction (pages are committed 50 to a transaction, or 5 s after the first). `\"0\"` commits such a page at once."},
		{name: "warehouse.checkpoint", field: func(f *File) any { return &f.Warehouse.WALCheckpoint }, def: load.WALCheckpointAuto, reload: onRestart(func(a, b Settings) bool { return a.WALCheckpoint != b.WALCheckpoint }),
			doc: "Who empties the WAL: `\"" + load.WALCheckpointAuto + "\"` (cardsync, a TRUNCATE WAL checkpoint " +
				"after each run and on close) or `\"" + load.WALCheckpointExternal + "\"` (a replicator such as Litestream owns WAL checkpoints) (load.CheckWALCheckpoint)."},
	}}
}

// cardsKeys declares the [cards] table.
func cardsKeys() table {
	return table{name: "cards", array: false, doc: "What is kept of each card.", keys: []key{
		{name: "cards.keep_fields", field: func(f *File) any { return &f.Cards.KeepFields }, reload: onRestart(func(a, b Settings) bool {
			return (a.KeepFields == nil) != (b.KeepFields == nil) || !slices.Equal(a.KeepFields, b.KeepFields)
		}),
			unset: true, doc: "Data minimisation: when set, only these top-level card fields are stored (names as in " +
				"`card_fields.name`, matched exactly; a variable holds them comma-separated); `id` is always kept, listed or not. " +
				"Every other field is dropped from each card after the redaction rules and before it is hashed or stored, and " +
				"counted in `sync_runs.fields_dropped`. Unset (the default): every field is stored, after the rules. An empty list " +
				"or name, a name with surrounding spaces or a control character, or a name given twice is refused (load.CheckKeepFields). " +
				"A narrower list changes each stored card once (one new version without the dropped fields), then never again; " +
				"versions stored before keep what they held."},
		{name: "cards.amount_scale", field: func(f *File) any { return &f.Cards.AmountScale }, def: strconv.Itoa(load.DefaultCardAmountScale), reload: onRestart(func(a, b Settings) bool { return a.CardAmountScale != b.CardAmountScale }),
			doc: fmt.Sprintf("Decimals of a card's decimal fields in their exact integer minor units "+
				"(`card_state.minor`, the `_minor` columns of `cards_flat`) on a card whose currency field names no code ISO 4217 knows; "+
				"a card whose currency field holds a known code takes that currency's minor unit instead (2 for USD and EUR, 0 for JPY, "+
				"3 for KWD). A value with more decimals is rounded half to even and marked (`card_fields.rounded`, `cards.amounts_rounded`); "+
				"one beyond 64-bit minor units is a conflict. The scale never grows with the data. %d to %d (load.CheckCardAmountScale). "+
				"Also `card_fields.scale` of a field typed decimal, and the scale the migration to schema 17 (PostgreSQL 14) gives every "+
				"stored card without a known currency.", 0, money.MaxScale)},
		{name: "cards.currency_field", field: func(f *File) any { return &f.Cards.CurrencyField }, reload: onRestart(func(a, b Settings) bool { return a.CurrencyField != b.CurrencyField }),
			doc: "The top-level card field whose value is the card's ISO 4217 alphabetic currency code " +
				"(three letters, any case). Empty (the default): the field found by its name, a name whose letters start with " +
				"`currency` (currency, currency_code, CurrencyISO) or are `ccy` or `cur`, else one that holds the word (billing_currency). " +
				"A code ISO 4217 does not know gives the card `amount_scale` (`cards.amount_currency` is then NULL). A name with " +
				"surrounding spaces or a control character is refused (load.CheckCurrencyField)."},
	}}
}

// scheduleKeys declares the [schedule] table.
func scheduleKeys() table {
	return table{name: "schedule", array: false, doc: "When `serve` syncs.", keys: []key{
		{name: "schedule.cron", field: func(f *File) any { return &f.Schedule.Cron }, def: DefaultCron, reload: onReload(func(a, b Settings) bool { return a.CronSpec != b.CronSpec }),
			form: "cron", doc: "When `serve` syncs: 5-field cron (`\"*/15 * * * *\"`) or a descriptor " +
				"(`\"@hourly\"`, `\"@every 15m\"`); no `TZ=` (set `timezone`). Each account's next run is reckoned when its " +
				"previous run ends (or its scheduled run is skipped), so an account's runs never overlap. A cron runs at its first " +
				"slot after that end: a run that overruns a slot skips it. `@every D` counts D from the end of the previous run, " +
				"not from its start, rounded down to the whole second: with `@every 15m`, a run from 10:00:00 to 10:04:30 is " +
				"followed by one at 10:19:30, so starts are D plus a run's duration apart. D is whole seconds (a fraction is " +
				"dropped; less than `1s` is `1s`) and ignores `timezone`. At start the first run is at once with `run_on_start`, " +
				"else D (or the first slot) after the start; after a reload that changes this key or `timezone`, D (or the first " +
				"slot) after the reload."},
		{name: "schedule.timezone", field: func(f *File) any { return &f.Schedule.Timezone }, def: "UTC", reload: onReload(func(a, b Settings) bool { return a.Location.String() != b.Location.String() }),
			doc: "Time zone the cron fields are read in (an IANA name such as `\"Europe/Paris\"`)."},
		{name: "schedule.run_on_start", field: func(f *File) any { return &f.Schedule.RunOnStart }, def: "true", reload: atStart(),
			doc: "`serve` also syncs once at start."},
		{name: "schedule.run_timeout", field: func(f *File) any { return &f.Schedule.RunTimeout }, def: DefaultRunTimeout, reload: onReload(func(a, b Settings) bool { return a.RunTimeout != b.RunTimeout }),
			form: "Go duration", doc: "A run that takes longer is cancelled (the next resumes from its page checkpoint). Positive."},
	}}
}

// logKeys declares the [log] table.
func logKeys() table {
	return table{name: "log", array: false, doc: "The log's level and format.", keys: []key{
		{name: "log.level", field: func(f *File) any { return &f.Log.Level }, def: "info", reload: onReload(func(a, b Settings) bool { return a.LogLevel != b.LogLevel }).in("log"),
			flag: "-log-level", doc: "`debug`, `info`, `warn` or `error`."},
		{name: "log.format", field: func(f *File) any { return &f.Log.Format }, def: "auto", reload: onReload(func(a, b Settings) bool { return a.LogFormat != b.LogFormat }).in("log"),
			flag: "-log-format", doc: "`auto` (tint on a terminal, JSON otherwise and under journald), `json`, `text` or `tint`."},
	}}
}

// metricsKeys declares the [metrics] table.
func metricsKeys() table {
	return table{name: "metrics", array: false, doc: "`serve`'s `/metrics` (Prometheus) and `/healthz`.", keys: []key{
		{name: "metrics.listen", field: func(f *File) any { return &f.Metrics.Listen }, reload: onRestart(func(a, b Settings) bool { return a.MetricsListen != b.MetricsListen }),
			form: "host:port", doc: "Where `serve` answers `/metrics` and `/healthz`; `\"\"` serves nothing. " +
				"The host is an IP address or `localhost`: `\"127.0.0.1:9464\"` for loopback; a non-loopback address is allowed " +
				"when written out (`\"0.0.0.0:9464\"`), `\":9464\"` is refused."},
		{name: "metrics.healthy_within", field: func(f *File) any { return &f.Metrics.HealthyWithin }, reload: onReload(func(a, b Settings) bool { return a.HealthyWithin != b.HealthyWithin }),
			form: "Go duration", doc: "How old the last successful run may be while `/healthz` answers " +
				"200. `\"\"`: three times the schedule's interval (the longest gap between runs of `[schedule] cron`)."},
	}}
}

// backupKeys declares the [backup] table.
func backupKeys() table {
	return table{name: "backup", array: false, doc: "Backups taken by `serve`, and the defaults of `cardsync backup`.", keys: []key{
		{name: "backup.dir", field: func(f *File) any { return &f.Backup.Dir }, reload: onReload(func(a, b Settings) bool { return a.BackupDir != b.BackupDir }).in("backup"),
			form: "path", flag: "`backup -to`", doc: "Directory of the backups; `\"\"`: `backups/` beside the " +
				"warehouse. Several warehouses may share one directory."},
		{name: "backup.keep", field: func(f *File) any { return &f.Backup.Keep }, def: strconv.Itoa(load.DefaultBackupKeep), reload: onReload(func(a, b Settings) bool { return a.BackupKeep != b.BackupKeep }).in("backup"),
			flag: "`backup -keep`", doc: "How many backups of this warehouse stay after each backup prunes the " +
				"directory. At least 1."},
		{name: "backup.cron", field: func(f *File) any { return &f.Backup.Cron }, reload: onReload(func(a, b Settings) bool { return a.BackupCron != b.BackupCron }).in("backup"),
			form: "cron", doc: "When `serve` takes a backup, between runs: cron as `[schedule] cron`, in its " +
				"time zone. `\"\"`: never. Not with `[warehouse] url` (use pg_dump)."},
	}}
}

// reportKeys declares the [report] table.
func reportKeys() table {
	return table{name: "report", array: false, doc: "The HTML report `serve` refreshes after each successful run.", keys: []key{
		{name: "report.path", field: func(f *File) any { return &f.Report.Path }, reload: onReload(func(a, b Settings) bool { return a.ReportPath != b.ReportPath }).in("report"),
			form: "path", doc: "Where `serve` writes the HTML report after each successful run (a temp file " +
				"renamed over the last one); `\"\"`: none. `cardsync report -o FILE` writes one on demand."},
		{name: "report.since", field: func(f *File) any { return &f.Report.Since }, def: DefaultReportSince, reload: onReload(func(a, b Settings) bool { return a.ReportSince != b.ReportSince }).in("report"),
			form: "period", doc: "The period the report covers: days (`\"90d\"`) or a Go duration (`\"36h\"`); in days at most 36600d."},
	}}
}

// clusterKeys declares the [cluster] table.
func clusterKeys() table {
	return table{name: "cluster", array: false, doc: "Only with `[warehouse] url`: how replicas sharing a PostgreSQL warehouse split the accounts through lease rows (`sync_leases`).", keys: []key{
		{name: "cluster.lease_ttl", field: func(f *File) any { return &f.Cluster.LeaseTTL }, def: extract.FormatDuration(load.DefaultLeaseTTL), reload: onRestart(func(a, b Settings) bool { return a.LeaseTTL != b.LeaseTTL }).in("cluster"),
			form: "Go duration", doc: fmt.Sprintf("Read only with `[warehouse] url` (ignored with a SQLite file). How long an account's lease "+
				"lasts without renewal (renewed every third of it): a dead replica's accounts are taken within it and 2 s more. At least %s "+
				"(load.CheckLeaseTTL).", load.MinLeaseTTL)},
		{name: "cluster.holder", field: func(f *File) any { return &f.Cluster.Holder }, reload: onRestart(func(a, b Settings) bool { return a.Holder != b.Holder || a.HolderSet != b.HolderSet }).in("cluster"),
			doc: "This replica's name in `sync_leases.holder` and `sync_runs.holder`, 1 to 200 bytes " +
				"without control characters (load.CheckHolder); `\"\"`: the host name and a random instance id. A second live " +
				"process with the same holder is refused at start (exit 4)."},
	}}
}

// accountsKeys declares the [[accounts]] table.
func accountsKeys() table {
	return table{name: "accounts", array: true, doc: "Several API accounts in one warehouse, synced concurrently by one `serve`, each with its own token, pacer, " +
		"page checkpoint, run lock and schedule loop (`backfill`, `status` and `report` take `-account NAME`). One table per " +
		"account instead of `[api]` `base_url`, `email` and `password_file`; `[api]` keeps the keys they share (`timeout`, " +
		"`max_wait`, ...). Without `[[accounts]]`, `[api]` is the one account, named `default` in the warehouse. " +
		"No variable sets these keys.", keys: []key{
		{name: "accounts.name", account: func(a *Account) any { return &a.Name }, reload: onRestart(func(a, b Settings) bool { return b.CheckAccounts(a) != nil }).in("accounts"),
			doc: "The account's name in the warehouse's `account` column: unique, 1 to 64 characters of " +
				"a-z, 0-9, `_` and `-` (load.CheckAccountName). Required."},
		{name: "accounts.base_url", account: func(a *Account) any { return &a.BaseURL }, reload: onReload(apiChanged).in("api"),
			form: "URL", doc: "As `[api] base_url`, for this account. Required by the commands that call the API."},
		{name: "accounts.email", account: func(a *Account) any { return &a.Email }, reload: onReload(apiChanged).in("api"),
			doc: "As `[api] email`, for this account. Required by the commands that call the API."},
		{name: "accounts.password_file", account: func(a *Account) any { return &a.PasswordFile }, reload: onReload(apiChanged).in("api"),
			form: "path", doc: "As `[api] password_file`; systemd's `$CREDENTIALS_DIRECTORY/" + AccountCredentialName("NAME") + "` comes first."},
		{name: "accounts.token_field", account: func(a *Account) any { return &a.TokenField }, reload: onReload(apiChanged).in("api"),
			form: "dotted path", doc: "As `[api] token_field`; `\"\"`: `[api]`'s."},
		{name: "accounts.rate_limit", account: func(a *Account) any { return &a.RateLimit }, reload: onReload(apiChanged).in("api"),
			form: "rate N/duration", doc: "As `[api] rate_limit`; `\"\"`: `[api]`'s."},
		{name: "accounts.auth_rate_limit", account: func(a *Account) any { return &a.AuthRateLimit }, reload: onReload(apiChanged).in("api"),
			form: "rate N/duration", doc: "As `[api] auth_rate_limit`; `\"\"`: `[api]`'s."},
		{name: "accounts.rate_group", account: func(a *Account) any { return &a.RateGroup }, reload: onReload(apiChanged).in("api"),
			doc: "Accounts of one group share one pacer (an upstream that limits per IP or per user) and " +
				"must have the same rates; named like an account. `\"\"`: a pacer of its own."},
	}}
}
