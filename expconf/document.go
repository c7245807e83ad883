package expconf

import "gopkg.in/yaml.v3"

// parseDocument reads data as one YAML document. Empty input is an empty
// mapping.
func parseDocument(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, Errors{{Message: "invalid YAML: " + err.Error()}}
	}
	budget := maxNodes
	if !withinBudget(&doc, 0, &budget) {
		return nil, Errors{{Message: "document too large, too deeply nested or too heavily aliased"}}
	}
	return &doc, nil
}

// withinBudget walks n with aliases expanded and reports whether it has at
// most budget nodes and maxDepth levels, so recursive or exponential aliases
// are refused before any decoding.
func withinBudget(n *yaml.Node, depth int, budget *int) bool {
	*budget--
	if n == nil {
		return true
	}
	if *budget < 0 || depth > maxDepth {
		return false
	}
	if n.Kind == yaml.AliasNode {
		return withinBudget(n.Alias, depth+1, budget)
	}
	for _, c := range n.Content {
		if !withinBudget(c, depth+1, budget) {
			return false
		}
	}
	return true
}
