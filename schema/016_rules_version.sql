-- cardsync warehouse schema, version 16: the rules version that wrote the
-- warehouse, and the checkpoint of a rescan.
--
-- rules_state holds one row. rules_version is the version of the redaction
-- rules (redact.RulesVersion) every stored row has been through: a
-- warehouse written before this version is at 1 (the older rules), a new
-- one starts at the binary's version (set by the migration's Go step when
-- the warehouse holds no run). A run never raises it (rows written by older
-- rules remain); a run of older rules lowers it; cardsync rescan raises it
-- once every row has been through the current rules.
--
-- rescan_version, rescan_phase, rescan_account, rescan_key and rescan_num
-- are the checkpoint of a rescan under way (NULL when none is): the rules
-- version it applies and the last row it finished, so a killed rescan
-- continues where it stopped.
CREATE TABLE rules_state (
    singleton         INTEGER NOT NULL PRIMARY KEY CHECK (singleton = 1),
    rules_version     INTEGER NOT NULL CHECK (rules_version >= 1),
    rescan_version    INTEGER,
    rescan_phase      TEXT,
    rescan_account    TEXT,
    rescan_key        TEXT,
    rescan_num        INTEGER,
    rescan_started_at TEXT,
    rescanned_at      TEXT
) STRICT;

INSERT INTO rules_state (singleton, rules_version) VALUES (1, 1);
