// Package layout holds no code: its tests hold the rules of the source
// tree that no single package can, so that later work keeps them. Which
// package may import which (see docs/architecture.md, "Packages"), and how
// long a Go file may grow.
package layout
