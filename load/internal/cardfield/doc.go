// Package cardfield holds the rules of a card's fields both warehouses
// follow: which fields a page brings and their types (FieldSet, the
// sticky type rule: Kind, FieldType, ClassifyValue, DataValues, MinorJSON),
// which of them card_fields and the cards_flat view hold (PlanFields,
// FieldBudget, FlatLimits, StaleFields, ColumnName), a type's upgrade over
// the stored cards (TypeUpgrade, Recompute, GrowTypes) and the report's
// exact sums of card balances by currency (CardSumTally). Package load
// holds the types and limits it speaks in (AmountRules, CardSum,
// MaxNewFieldsPerWalk, ...); only the load tree imports it.
package cardfield
