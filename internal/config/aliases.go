package config

import "gopkg.in/yaml.v3"

// An anchor may be aliased, or merged, any number of times. One whose
// decoding produced problems is not decoded again: its problems were
// reported, at its own lines, where it was first decoded, and decoding a
// 1,000-key mapping for each of 1,000 aliases to it would walk a million
// keys and report a million problems from a 13 KB file (the shape of a
// "billion laughs"). An anchor that decodes cleanly is decoded again at
// each alias, as it must be to give each place its value: the config's
// types hold few values of each kind (seven policies, three fields a step),
// so that costs a small multiple of the file's size.

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
