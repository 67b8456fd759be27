package sqlshare

// AccountSnapshotColumns are the columns of account_snapshots a snapshot
// fills, in the order of AccountRow.Args.
const AccountSnapshotColumns = `run_id, taken_at, name, email, timezone,
				transfer_amount_minor, reach_amount_minor, authorizations_minor, balance_minor, cards_balance_minor,
				available_recharge_balance_minor, available_to_apply_card_count, applied_card_count, raw, amounts_rounded, account`
