package config

import "go.yaml.in/yaml/v3"

// pairs lists a mapping's keys and values with YAML merge keys (`<<: *base`,
// `<<: [*a, *b]`) expanded, as yaml.v3's own decoder does: a key written in
// the mapping wins over a merged one, and an earlier merged mapping over a
// later one. Only keys written in the mapping itself can be "set twice".
// Without this the strict decoder would refuse "<<" as an unknown field, and
// anchors shared between policy steps or routes are common YAML.
//
// Each mapping is expanded once (merged), so that anchors merging anchors
// cost what the file's size does, however often they are merged; a mapping
// that merges itself, directly or through others, is a problem.
func (d *decoder) pairs(n *yaml.Node, path string) [][2]*yaml.Node {
	if out, ok := d.merged[n]; ok {
		return out
	}
	if d.merged == nil {
		d.merged = map[*yaml.Node][][2]*yaml.Node{}
	}
	d.merged[n] = nil // being expanded
	own := [][2]*yaml.Node{}
	var merges []*yaml.Node // each "<<" key, its value next to it
	written := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merges = append(merges, k, val)
			continue
		}
		own = append(own, [2]*yaml.Node{k, val})
		written[k.Value] = true
	}
	for i := 0; i+1 < len(merges); i += 2 {
		for _, src := range d.mergeSources(merges[i], merges[i+1], path) {
			if out, ok := d.merged[src]; ok && out == nil {
				d.add(merges[i].Line, join(path, "<<"), "a merge key refers to a mapping that contains it")
				continue
			}
			if d.mergedFrom == nil {
				d.mergedFrom = map[*yaml.Node][]*yaml.Node{}
			}
			d.mergedFrom[n] = append(d.mergedFrom[n], src)
			if d.faulty[src] {
				continue // not expanded: mergedPairs skips n
			}
			for _, kv := range d.pairs(src, path) {
				d.visits++
				if !written[kv[0].Value] {
					written[kv[0].Value] = true
					own = append(own, kv)
				}
			}
		}
	}
	d.merged[n] = own
	return own
}

// mergeSources lists the mappings a merge key's value names.
func (d *decoder) mergeSources(k, val *yaml.Node, path string) []*yaml.Node {
	sources := []*yaml.Node{val}
	if val.Kind == yaml.SequenceNode {
		sources = val.Content
	}
	var out []*yaml.Node
	for _, src := range sources {
		if src.Kind == yaml.AliasNode {
			src = src.Alias
		}
		if src.Kind != yaml.MappingNode {
			d.add(k.Line, join(path, "<<"), "a merge key takes a mapping or a list of mappings, got %s", kindName(src))
			continue
		}
		out = append(out, src)
	}
	return out
}
