-- 013_rules_version: the rules version that wrote the warehouse, and the
-- checkpoint of a rescan, as SQLite schema version 16.
--
-- rules_state holds one row. rules_version is the version of the redaction
-- rules (redact.RulesVersion) every stored row has been through: 1 for a
-- warehouse written before this migration, the binary's version for a new
-- one (the migration's Go step, when the warehouse holds no run). A run
-- never raises it; a run of older rules lowers it; cardsync rescan raises
-- it once every row has been through the current rules. The rescan_*
-- columns are the checkpoint of a rescan under way (NULL when none is).
CREATE TABLE rules_state (
    singleton         integer     NOT NULL PRIMARY KEY CHECK (singleton = 1),
    rules_version     integer     NOT NULL CHECK (rules_version >= 1),
    rescan_version    integer,
    rescan_phase      text,
    rescan_account    text,
    rescan_key        text,
    rescan_num        bigint,
    rescan_started_at timestamptz,
    rescanned_at      timestamptz
);

INSERT INTO rules_state (singleton, rules_version) VALUES (1, 1);
