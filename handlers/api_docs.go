package handlers

import (
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/resolute-ml/resolute/views"
)

// handleAPIDocs serves GET /docs/api, the document as a page: every
// operation by group, who may call it, its bodies' schemas.
func (s *Server) handleAPIDocs(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, views.APIDocsPage(apiDocsView(s.openAPIDoc(), s.assets.URL)))
}

// apiDocsView is the page's view of the document.
func apiDocsView(doc *openAPI, asset func(string) string) views.APIDocs {
	v := views.APIDocs{Asset: asset, Version: doc.Info.Version, Description: doc.Info.Description}
	groups := map[string]*views.APIGroup{}
	var names []string
	for path, methods := range doc.Paths {
		for method, op := range methods {
			g := groups[op.Tags[0]]
			if g == nil {
				g = &views.APIGroup{Name: op.Tags[0]}
				groups[op.Tags[0]] = g
				names = append(names, op.Tags[0])
			}
			o := views.APIOperation{ID: op.OperationID, Method: strings.ToUpper(method), Path: path, Summary: op.Summary, Auth: op.Auth}
			if op.RequestBody != nil {
				o.Request = schemaLabel(op.RequestBody.Content["application/json"].Schema)
			}
			for _, code := range slices.Sorted(maps.Keys(op.Responses)) {
				r := op.Responses[code]
				label := r.Description
				for mt, c := range r.Content {
					label = schemaLabel(c.Schema)
					if mt != "application/json" {
						label += " (" + mt + ")"
					}
				}
				o.Responses = append(o.Responses, views.APIResponse{Status: code, Body: label})
			}
			g.Operations = append(g.Operations, o)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		g := groups[n]
		sort.Slice(g.Operations, func(i, j int) bool {
			if g.Operations[i].Path != g.Operations[j].Path {
				return g.Operations[i].Path < g.Operations[j].Path
			}
			return g.Operations[i].Method < g.Operations[j].Method
		})
		v.Groups = append(v.Groups, *g)
	}
	for _, name := range slices.Sorted(maps.Keys(doc.Components.Schemas)) {
		sc := doc.Components.Schemas[name]
		vs := views.APISchema{Name: name}
		for _, f := range slices.Sorted(maps.Keys(sc.Properties)) {
			vs.Fields = append(vs.Fields, views.APIField{Name: f, Type: schemaLabel(sc.Properties[f]), Required: slices.Contains(sc.Required, f)})
		}
		v.Schemas = append(v.Schemas, vs)
	}
	return v
}

// schemaLabel says a schema in a few words: a component's name, array of
// X, map of X, or its type.
func schemaLabel(s *schema) string {
	switch {
	case s == nil:
		return ""
	case s.Ref != "":
		return strings.TrimPrefix(s.Ref, "#/components/schemas/")
	case len(s.OneOf) > 0:
		var parts []string
		for _, o := range s.OneOf {
			parts = append(parts, schemaLabel(o))
		}
		return strings.Join(parts, " | ")
	case s.Type == "array":
		return "[]" + schemaLabel(s.Items)
	case s.Type == "object" && s.AdditionalProperties != nil:
		return "map of " + schemaLabel(s.AdditionalProperties)
	case s.Type == "object" && len(s.Properties) == 0:
		return "{}"
	case s.Type == "object":
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			parts = append(parts, k+": "+schemaLabel(s.Properties[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case s.Format != "":
		return s.Type + " (" + s.Format + ")"
	case s.Type == "":
		return "any"
	}
	return s.Type
}
