//go:build !race

package ledger_test

const raceBuild = false
