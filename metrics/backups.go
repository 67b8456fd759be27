package metrics

import (
	"time"
)

// BackupSucceeded records a backup that finished at t: the backup code
// calls it after each successful backup.
func (m *Metrics) BackupSucceeded(t time.Time) {
	m.backups.WithLabelValues("succeeded").Inc()
	m.backup.Set(unixSeconds(t))
}

// BackupFailed counts a scheduled backup that failed, which started at t.
func (m *Metrics) BackupFailed(t time.Time) {
	m.backups.WithLabelValues("failed").Inc()
	m.backupFailure.Set(unixSeconds(t))
}

// SetBackupSchedule says how often serve takes scheduled backups: interval
// is the longest gap between two of them, and since is when serve began
// taking them on this schedule (the zero time keeps the one set before: a
// reload that leaves the schedule alone). An interval of 0 (or less) says
// it takes none, and then since, the last success and the last failure
// read 0 too, so no backup alert fires on backups turned off. serve calls
// it at start-up and at every reload.
func (m *Metrics) SetBackupSchedule(interval time.Duration, since time.Time) {
	if interval <= 0 {
		m.backupsOn.Set(0)
		m.backupInterval.Set(0)
		m.backupsSince.Set(0)
		m.backup.Set(0)
		m.backupFailure.Set(0)
		return
	}
	// since first: a scrape between the two never sees backups on with no
	// start to count from.
	if !since.IsZero() {
		m.backupsSince.Set(unixSeconds(since))
	}
	m.backupInterval.Set(interval.Seconds())
	m.backupsOn.Set(1)
}

// SetLastBackup sets the last backup's time without counting a backup: at
// start-up from the newest backup on disk, or the zero time (0) when
// backups are not configured.
func (m *Metrics) SetLastBackup(t time.Time) { m.backup.Set(unixSeconds(t)) }
