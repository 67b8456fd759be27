// Package sqlshare holds the SQL both warehouses run as it is (but for
// their parameters' spelling) and the reading of what it writes: a walk's
// inconsistent pages (AppendPagesSQL, ParsePages), the rules version a
// rescan lowers and a new warehouse records (LowerRulesVersionSQL,
// NewWarehouseRulesSQL), the columns of an account snapshot
// (AccountSnapshotColumns), whether card_fields has the typed fields'
// columns (TypedFields), and the one log line of an open's migrations
// (LogMigrated). Only load/sqlite and load/postgres import it.
package sqlshare
