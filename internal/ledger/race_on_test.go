//go:build race

package ledger_test

// raceBuild: under the race detector the pure-Go SQLite engine runs many
// times slower; the simulation that checks what decisions load (a
// semantic check, run in full by make test) then runs a few days, not
// weeks.
const raceBuild = true
