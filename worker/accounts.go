package worker

// Account is the account the job syncs (its warehouse's
// load.Options.Account).
func (j *Job) Account() string { return j.Warehouse.Account() }
