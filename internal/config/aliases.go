package config

import "go.yaml.in/yaml/v3"

// An anchor may be aliased, or merged, any number of times, and each alias
// is decoded again, as it must be to give each place its own value. That
// makes a small file able to cost a great deal: 1,500 aliases to a list of
// 400 steps are 600,000 steps from 28 KB (the shape of a "billion laughs"),
// and the daemon reads its file again on reload, while it runs. So the work
// is bounded by the file's size: decoding may visit each YAML node of the
// file budgetPerNode times, plus budgetFloor, which no config written by
// hand comes near (each policy aliasing one shared ladder costs seven
// times), and past that the file is refused with one problem.
//
// An anchor whose decoding produced problems is not decoded again at all:
// its problems were reported, at its own lines, where it was first decoded.
const (
	budgetPerNode = 20
	budgetFloor   = 10_000
)

// countNodes counts a YAML tree's nodes as written, an alias as one.
func countNodes(n *yaml.Node) int {
	c := 1
	for _, ch := range n.Content {
		c += countNodes(ch)
	}
	return c
}

// spent reports whether the work is past the budget, adding the one
// problem that says so the first time: at the alias being expanded, or
// else at n (a merge key's keys are not an alias).
func (d *decoder) spent(n *yaml.Node, path string) bool {
	budget := budgetPerNode*d.nodes + budgetFloor
	if d.nodes == 0 || d.visits <= budget {
		return false
	}
	if !d.overBudget {
		d.overBudget = true
		at := d.via
		if at.line == 0 {
			at = place{line: n.Line, path: path}
		}
		d.add(at.line, fieldName(at.path), "the file's aliases expand it too much: it would decode more than %d values from its %d YAML nodes; alias less, or write the repeated parts out",
			budget, d.nodes)
	}
	return true
}

// skip leaves path undecoded, as already reported: validation says nothing
// more about it (a zero value would draw "is required" problems).
func (d *decoder) skip(n *yaml.Node, path string) {
	d.lines[path] = n.Line
	if d.failed == nil {
		d.failed = map[string]bool{}
	}
	d.failed[path] = true
}

// noteFaults marks anchored n faulty when decoding it added problems to
// the before that were there.
func (d *decoder) noteFaults(n *yaml.Node, before int) {
	if len(d.problems) > before {
		if d.faulty == nil {
			d.faulty = map[*yaml.Node]bool{}
		}
		d.faulty[n] = true
	}
}

// noteMergeFaults marks the mappings n merges faulty when decoding n added
// problems: they may be the merged keys'.
func (d *decoder) noteMergeFaults(n *yaml.Node, before int) {
	for _, src := range d.mergedFrom[n] {
		d.noteFaults(src, before)
	}
}

// mergedPairs is pairs, unless n merges a faulty mapping: then n is
// skipped (and false returned).
func (d *decoder) mergedPairs(n *yaml.Node, path string) ([][2]*yaml.Node, bool) {
	kvs := d.pairs(n, path)
	for _, src := range d.mergedFrom[n] {
		if d.faulty[src] {
			d.skip(n, path)
			return nil, false
		}
	}
	return kvs, true
}
