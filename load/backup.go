package load

// DefaultBackupKeep is how many backups Backup keeps when keep is 0.
const DefaultBackupKeep = 7
