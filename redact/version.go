package redact

// RulesVersion is the version of the rules of this release: what Policy
// finds and removes (card numbers, card codes, track data, secrets). A
// warehouse records the version of the rules that wrote it; one written
// under an older version may hold what the current rules would remove,
// until cardsync rescan applies them to every stored row.
//
// It must be bumped whenever a rule change would redact something the
// previous rules kept (a new detection, a new code word, a new decoding
// layer). A change that only keeps more, or that changes nothing stored,
// leaves it as it is.
//
// Version 1 is every warehouse written before warehouses recorded their
// rules version; version 2 is the rules of this release.
const RulesVersion = 2
