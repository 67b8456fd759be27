// Package batch holds the batched page commit both warehouses run over
// their own statements: a page's preparation against the stored cards
// (PreparedPage, its CardWrites and the batch's BatchTally), the batching
// policy (Batcher: pages, delay, change delay) and the commit's steps in
// one transaction (CommitBatch over a dialect's BatchTx). Package load
// holds the types it speaks in (Page, Batch, PageResult, FieldSet, ...);
// only load/sqlite and load/postgres import it.
package batch
