package config

import (
	"fmt"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres/pgrules"
	"github.com/cardsync/cardsync/money"
)

// keyDoc is what docs/configuration.md says of one file key beyond what
// the code already knows (its TOML type, default, variable and reload
// rule): the form of its text, the flag that overrides it, and its rule in
// words, the words of the package that checks it.
type keyDoc struct {
	// form narrows the TOML type: "Go duration", "path", ... ("" none).
	form string
	// flag is the command-line flag that overrides the key ("" none).
	flag string
	// rule says what the key does and what values it takes.
	rule string
	// unset: the default is the key left out, which no TOML value says.
	unset bool
}

// startOnlyKeys are the keys no reload rule covers because only start-up
// reads them: a SIGHUP changes nothing about them.
var startOnlyKeys = map[string]bool{"schedule.run_on_start": true}

// keyDocs documents every file key (dotted; [[accounts]] keys as
// accounts.KEY). A test checks that every key has an entry and every entry
// names a key; docs/configuration.md is written from it.
func keyDocs() map[string]keyDoc {
	return map[string]keyDoc{
		// [api]
		"api.base_url": {form: "URL", rule: "Base URL of the Card Payment Service. `https://` only; plain `http://` only to a loopback " +
			"host (127.0.0.0/8, `localhost`, `[::1]`) such as the simulator; no user, query or fragment (extract.CheckBaseURL). " +
			"Required by `serve`, `backfill` and `check` unless `[[accounts]]` tables name the accounts (then it must not be set)."},
		"api.email": {rule: "Login e-mail of a user with the Administrator role. Required where `base_url` is."},
		"api.password_file": {form: "path", rule: "File holding the API password: a regular file (a symbolic link to one is fine), " +
			"one line, a trailing newline allowed, mode 0600 (readable by group or others is refused). The password is never a key " +
			"or a flag: `" + PasswordEnv + "` comes first, then systemd's `$CREDENTIALS_DIRECTORY/" + CredentialName + "`, then this file."},
		"api.token_field": {form: "dotted path", rule: "Path of the token in the token response, e.g. `data.token`. " +
			"`\"\"`: detect it at the usual paths ([upstream-api.md](upstream-api.md#authentication) lists them)."},
		"api.rate_limit": {form: "rate N/duration", rule: "Client-side pace of data requests: `N/duration` " +
			"(`\"180/1m\"`, `\"10/60s\"`; a bare unit is one of it: `\"180/min\"`, `\"10/s\"`, `\"5/hour\"`), burst 1, so no " +
			"window of that length sees more than N requests. A positive count in a positive window (extract.ParseRate, extract.CheckRate)."},
		"api.auth_rate_limit": {form: "rate N/duration", rule: "The same pace for the token endpoint."},
		"api.timeout":         {form: "Go duration", rule: "Deadline of one HTTP attempt, body included. Positive."},
		"api.max_wait": {form: "Go duration", rule: "Longest total wait (backoff, `Retry-After`) spent retrying one request " +
			"before the run fails as \"upstream unavailable\" (exit 5). Positive."},
		"api.max_body_bytes": {form: "bytes", rule: fmt.Sprintf("Largest response body accepted (a page is about 10 KiB); "+
			"%d to %d.", extract.MinMaxBodyBytes, extract.MaxMaxBodyBytes)},
		"api.amount_scale": {rule: fmt.Sprintf("Decimals of the account's amounts, %d or %d (extract.CheckAmountScale). "+
			"An amount sent with more (PHP float noise) is rounded half to even into its `*_minor` column and "+
			"`account_snapshots.amounts_rounded` marks it; the raw JSON keeps the exact text.", extract.MinAmountScale, extract.MaxAmountScale)},
		"api.max_pages": {rule: fmt.Sprintf("A walk is refused at a page that claims more pages than this, its `total` "+
			"bearing them out (on the first page, before anything is stored); a `total_pages` its `total` does not bear out "+
			"is phantom pages, never requested; 1 to %d.", extract.MaxMaxPages)},

		// [[accounts]]
		"accounts.name": {rule: "The account's name in the warehouse's `account` column: unique, 1 to 64 characters of " +
			"a-z, 0-9, `_` and `-` (load.CheckAccountName). Required."},
		"accounts.base_url":        {form: "URL", rule: "As `[api] base_url`, for this account. Required by the commands that call the API."},
		"accounts.email":           {rule: "As `[api] email`, for this account. Required by the commands that call the API."},
		"accounts.password_file":   {form: "path", rule: "As `[api] password_file`; systemd's `$CREDENTIALS_DIRECTORY/" + AccountCredentialName("NAME") + "` comes first."},
		"accounts.token_field":     {form: "dotted path", rule: "As `[api] token_field`; `\"\"`: `[api]`'s."},
		"accounts.rate_limit":      {form: "rate N/duration", rule: "As `[api] rate_limit`; `\"\"`: `[api]`'s."},
		"accounts.auth_rate_limit": {form: "rate N/duration", rule: "As `[api] auth_rate_limit`; `\"\"`: `[api]`'s."},
		"accounts.rate_group": {rule: "Accounts of one group share one pacer (an upstream that limits per IP or per user) and " +
			"must have the same rates; named like an account. `\"\"`: a pacer of its own."},

		// [warehouse]
		"warehouse.path": {form: "path", flag: "-db", rule: "The SQLite warehouse file. Its directory must exist; the file, " +
			"`-wal` and `-shm` are created with `file_mode`. No `?` or `#`. Set `path` or `url`, not both."},
		"warehouse.url": {form: "URL", rule: "A PostgreSQL warehouse instead of the file: `postgres://user@host:port/db` " +
			"(libpq URL; add `?sslmode=verify-full` as needed). A password in the URL is refused (URLs get logged), so is a " +
			"query that does not parse. Several `serve` replicas may share one database: see `[cluster]`."},
		"warehouse.password_file": {form: "path", rule: "File holding the PostgreSQL password (mode 0600). `" +
			WarehousePasswordEnv + "` comes first, then systemd's `$CREDENTIALS_DIRECTORY/" + WarehouseCredentialName +
			"`, then this file; with none, the server's other authentication (trust, certificates) applies."},
		"warehouse.schema": {rule: "The PostgreSQL schema the warehouse lives in (`\"\"`: public); every connection's " +
			"`search_path` is pinned to it alone. It must exist: 1 to 63 bytes of UTF-8 (pgrules.CheckSchemaName). Unset, an " +
			"empty public beside another schema holding a warehouse is refused. Only with `url`."},
		"warehouse.max_connections": {rule: fmt.Sprintf("The most PostgreSQL connections one process holds, all its accounts "+
			"together; %d of them are kept for lease renewals and heartbeats. 0: %d + the number of accounts, at most %d; "+
			"else %d to %d. Only with `url`.", pgrules.LeaseConns, pgrules.LeaseConns+1, DefaultMaxConnections,
			pgrules.MinSharedConns, MaxMaxConnections)},
		"warehouse.file_mode": {form: "octal mode", rule: "Permissions of new warehouse files: owner read/write required, the " +
			"group may read (`\"0640\"`) or not (`\"0600\"`), write for the group or anything for others is refused (load.CheckFileMode)."},
		"warehouse.synchronous": {rule: "SQLite `synchronous`: `FULL` (survives power loss), `NORMAL` or `EXTRA`; `OFF` is " +
			"refused (load.CheckSynchronous)."},
		"warehouse.redact_fields": {rule: "Extra card field names to drop before storing (a variable holds them comma-separated). " +
			"These match whole keys, without regard to case, at any depth, whatever the value. Always dropped besides: keys that name " +
			"a card security code or PIN by the code vocabulary (docs/odd-data.md: cvv, cvc, cid with a card word, pin, pin block, " +
			"security code and their spellings in ten languages), with their value whatever its type but a boolean or null; card " +
			"numbers are always masked to their first 6 and last 4 digits, and track data dropped."},
		"cards.keep_fields": {unset: true, rule: "Data minimisation: when set, only these top-level card fields are stored (names as in " +
			"`card_fields.name`, matched exactly; a variable holds them comma-separated); `id` is always kept, listed or not. " +
			"Every other field is dropped from each card after the redaction rules and before it is hashed or stored, and " +
			"counted in `sync_runs.fields_dropped`. Unset (the default): every field is stored, after the rules. An empty list " +
			"or name, a name with surrounding spaces or a control character, or a name given twice is refused (load.CheckKeepFields). " +
			"A narrower list changes each stored card once (one new version without the dropped fields), then never again; " +
			"versions stored before keep what they held."},
		"cards.amount_scale": {rule: fmt.Sprintf("Decimals of a card's decimal fields in their exact integer minor units "+
			"(`card_state.minor`, the `_minor` columns of `cards_flat`) on a card whose currency field names no code ISO 4217 knows; "+
			"a card whose currency field holds a known code takes that currency's minor unit instead (2 for USD and EUR, 0 for JPY, "+
			"3 for KWD). A value with more decimals is rounded half to even and marked (`card_fields.rounded`, `cards.amounts_rounded`); "+
			"one beyond 64-bit minor units is a conflict. The scale never grows with the data. %d to %d (load.CheckCardAmountScale). "+
			"Also `card_fields.scale` of a field typed decimal, and the scale the migration to schema 17 (PostgreSQL 14) gives every "+
			"stored card without a known currency.", 0, money.MaxScale)},
		"cards.currency_field": {rule: "The top-level card field whose value is the card's ISO 4217 alphabetic currency code " +
			"(three letters, any case). Empty (the default): the field found by its name, a name whose letters start with " +
			"`currency` (currency, currency_code, CurrencyISO) or are `ccy` or `cur`, else one that holds the word (billing_currency). " +
			"A code ISO 4217 does not know gives the card `amount_scale` (`cards.amount_currency` is then NULL). A name with " +
			"surrounding spaces or a control character is refused (load.CheckCurrencyField)."},
		"warehouse.page_audit_retention": {form: "Go duration", rule: "How long the per-page audit rows (`run_pages`) are kept; " +
			"older ones are pruned after each run. `\"0\"` keeps them forever."},
		"warehouse.field_retention": {form: "period", rule: "How long a top-level card field stays in `card_fields` (and a " +
			"column of `cards_flat`) after the last run that saw it: days (`\"90d\"`) or a Go duration (`\"36h\"`); in days at most " +
			"36600d. Older fields are pruned after each run that completes a walk; their values stay in the cards' data."},
		"warehouse.max_removed_fraction": {rule: "Mass-removal guard: a complete walk that would mark more than this fraction " +
			"of the live cards removed (and more than 10 cards), or that lists no card at all, marks none removed and records " +
			"`sync_runs.removals_held`; `backfill -confirm-removals` applies them. Above 0, at most 1 (load.CheckMaxRemovedFraction)."},
		"warehouse.commit_delay": {form: "Go duration", rule: "How long a page that changes something waits for more pages to " +
			"share its transaction (pages are committed 50 to a transaction, or 5 s after the first). `\"0\"` commits such a page at once."},
		"warehouse.checkpoint": {rule: "Who empties the WAL: `\"" + load.CheckpointAuto + "\"` (cardsync, a TRUNCATE checkpoint " +
			"after each run and on close) or `\"" + load.CheckpointExternal + "\"` (a replicator such as Litestream owns checkpoints) (load.CheckCheckpoint)."},

		// [schedule]
		"schedule.cron": {form: "cron", rule: "When `serve` syncs: 5-field cron (`\"*/15 * * * *\"`) or a descriptor " +
			"(`\"@hourly\"`, `\"@every 15m\"`); no `TZ=` (set `timezone`). Each account's next run is reckoned when its " +
			"previous run ends (or its scheduled run is skipped), so an account's runs never overlap. A cron runs at its first " +
			"slot after that end: a run that overruns a slot skips it. `@every D` counts D from the end of the previous run, " +
			"not from its start, rounded down to the whole second: with `@every 15m`, a run from 10:00:00 to 10:04:30 is " +
			"followed by one at 10:19:30, so starts are D plus a run's duration apart. D is whole seconds (a fraction is " +
			"dropped; less than `1s` is `1s`) and ignores `timezone`. At start the first run is at once with `run_on_start`, " +
			"else D (or the first slot) after the start; after a reload that changes this key or `timezone`, D (or the first " +
			"slot) after the reload."},
		"schedule.timezone":     {rule: "Time zone the cron fields are read in (an IANA name such as `\"Europe/Paris\"`)."},
		"schedule.run_on_start": {rule: "`serve` also syncs once at start."},
		"schedule.run_timeout":  {form: "Go duration", rule: "A run that takes longer is cancelled (the next resumes from its checkpoint). Positive."},

		// [log]
		"log.level":  {flag: "-log-level", rule: "`debug`, `info`, `warn` or `error`."},
		"log.format": {flag: "-log-format", rule: "`auto` (tint on a terminal, JSON otherwise and under journald), `json`, `text` or `tint`."},

		// [metrics]
		"metrics.listen": {form: "host:port", rule: "Where `serve` answers `/metrics` and `/healthz`; `\"\"` serves nothing. " +
			"The host is an IP address or `localhost`: `\"127.0.0.1:9464\"` for loopback; a non-loopback address is allowed " +
			"when written out (`\"0.0.0.0:9464\"`), `\":9464\"` is refused."},
		"metrics.healthy_within": {form: "Go duration", rule: "How old the last successful run may be while `/healthz` answers " +
			"200. `\"\"`: three times the schedule's interval (the longest gap between runs of `[schedule] cron`)."},

		// [backup]
		"backup.dir": {form: "path", flag: "`backup -to`", rule: "Directory of the backups; `\"\"`: `backups/` beside the " +
			"warehouse. Several warehouses may share one directory."},
		"backup.keep": {flag: "`backup -keep`", rule: "How many backups of this warehouse stay after each backup prunes the " +
			"directory. At least 1."},
		"backup.cron": {form: "cron", rule: "When `serve` takes a backup, between runs: cron as `[schedule] cron`, in its " +
			"time zone. `\"\"`: never. Not with `[warehouse] url` (use pg_dump)."},

		// [report]
		"report.path": {form: "path", rule: "Where `serve` writes the HTML report after each successful run (a temp file " +
			"renamed over the last one); `\"\"`: none. `cardsync report -o FILE` writes one on demand."},
		"report.since": {form: "period", rule: "The period the report covers: days (`\"90d\"`) or a Go duration (`\"36h\"`); in days at most 36600d."},

		// [cluster]
		"cluster.lease_ttl": {form: "Go duration", rule: fmt.Sprintf("Read only with `[warehouse] url` (ignored with a SQLite file). How long an account's lease "+
			"lasts without renewal (renewed every third of it): a dead replica's accounts are taken within it and 2 s more. At least %s "+
			"(load.CheckLeaseTTL).", load.MinLeaseTTL)},
		"cluster.holder": {rule: "This replica's name in `sync_leases.holder` and `sync_runs.holder`, 1 to 200 bytes " +
			"without control characters (load.CheckHolder); `\"\"`: the host name and a random instance id. A second live " +
			"process with the same holder is refused at start (exit 4)."},
	}
}
