// Package walk closes a walk once for both warehouses, over a dialect's
// WalkTx: the ids listed with different content on several pages
// (FindConflicts, ResolveConflict over a ConflictTx), the removal of the
// cards the walk missed under the mass-removal guard (Removals,
// HoldRemovals) and the fold of a walk into the identical one before it
// (FoldsWalk, FoldWalkQuery, FoldWalkMerge): CloseWalk. Package load holds
// the types it speaks in (WalkEnd, WalkResult, IDConflict, ...); only
// load/sqlite and load/postgres import it.
package walk
