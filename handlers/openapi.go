package handlers

import (
	"encoding"
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
)

// The OpenAPI 3 document of /api/v1 is never written by hand: its paths and
// methods come from the router (chi.Walk over Routes), who may call each
// from the middleware of its group, and its bodies from apiTypes, which
// cmd/openapigen writes from the handlers' source (`make generate`); the
// schemas are the Go types', by reflection. TestTheOpenAPIDocumentIsTheRouter
// checks that every route is documented and every documented route exists.

// APIPrefix is where the documented API lives.
const APIPrefix = "/api/v1"

// openAPI is an OpenAPI 3.0 document, as much of it as Resolute fills.
type openAPI struct {
	OpenAPI    string                          `json:"openapi"`
	Info       openAPIInfo                     `json:"info"`
	Paths      map[string]map[string]operation `json:"paths"`
	Components components                      `json:"components"`
}

type openAPIInfo struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

type components struct {
	Schemas         map[string]*schema        `json:"schemas"`
	SecuritySchemes map[string]securityScheme `json:"securitySchemes"`
}

type securityScheme struct {
	Type        string `json:"type"`
	Scheme      string `json:"scheme,omitempty"`
	In          string `json:"in,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// operation is one method of one path.
type operation struct {
	OperationID string                `json:"operationId"`
	Summary     string                `json:"summary,omitempty"`
	Tags        []string              `json:"tags"`
	Parameters  []parameter           `json:"parameters,omitempty"`
	RequestBody *requestBody          `json:"requestBody,omitempty"`
	Responses   map[string]response   `json:"responses"`
	Security    []map[string][]string `json:"security"`
	// Auth says who may call it in words: anyone, a signed-in user, an
	// administrator, or a task's allocation token or a user.
	Auth string `json:"x-resolute-auth"`
	// Handler is the handler's name in package handlers.
	Handler string `json:"x-resolute-handler"`
}

type parameter struct {
	Name     string  `json:"name"`
	In       string  `json:"in"`
	Required bool    `json:"required"`
	Schema   *schema `json:"schema"`
}

type requestBody struct {
	Required bool                 `json:"required"`
	Content  map[string]mediaType `json:"content"`
}

type response struct {
	Description string               `json:"description"`
	Content     map[string]mediaType `json:"content,omitempty"`
}

type mediaType struct {
	Schema *schema `json:"schema"`
}

// schema is a JSON schema as OpenAPI 3.0 has it.
type schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Nullable             bool               `json:"nullable,omitempty"`
	Items                *schema            `json:"items,omitempty"`
	Properties           map[string]*schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *schema            `json:"additionalProperties,omitempty"`
	OneOf                []*schema          `json:"oneOf,omitempty"`
	Description          string             `json:"description,omitempty"`
}

// apiRoute is one route of the router under APIPrefix.
type apiRoute struct {
	Method, Pattern, Handler, Auth string
}

var (
	handlerName = regexp.MustCompile(`\(\*Server\)\.(\w+)`)
	pathParam   = regexp.MustCompile(`\{(\w+)(:[^}]*)?\}`)
)

// funcName is the name of the Server method behind a handler or
// middleware: the method itself, or the one that made a closure.
func funcName(v any) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Func {
		return rv.Type().String()
	}
	f := runtime.FuncForPC(rv.Pointer())
	if f == nil {
		return ""
	}
	// The last: a closure made by a method inlined into Routes is
	// named (*Server).Routes.(*Server).handleX.func1.
	if m := handlerName.FindAllStringSubmatch(f.Name(), -1); m != nil {
		return m[len(m)-1][1]
	}
	return f.Name()
}

// apiRoutes walks router and returns its routes under APIPrefix, sorted,
// with the handler's name and who may call it.
func apiRoutes(router chi.Routes) []apiRoute {
	var out []apiRoute
	chi.Walk(router, func(method, route string, h http.Handler, mws ...func(http.Handler) http.Handler) error {
		if !strings.HasPrefix(route, APIPrefix+"/") {
			return nil
		}
		for {
			ch, ok := h.(*chi.ChainHandler)
			if !ok {
				break
			}
			mws = append(mws, ch.Middlewares...)
			h = ch.Endpoint
		}
		var fn any = h
		if hf, ok := h.(http.HandlerFunc); ok {
			fn = hf
		}
		auth := "anyone"
		for _, mw := range mws {
			switch funcName(mw) {
			case "requireAdmin":
				auth = "administrator"
			case "requireAPIUser":
				if auth != "administrator" {
					auth = "user"
				}
			case "requireTaskOrUser":
				if auth == "anyone" {
					auth = "task or user"
				}
			}
		}
		out = append(out, apiRoute{Method: method, Pattern: strings.TrimSuffix(route, "/"), Handler: funcName(fn), Auth: auth})
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pattern != out[j].Pattern {
			return out[i].Pattern < out[j].Pattern
		}
		return out[i].Method < out[j].Method
	})
	return out
}

// buildOpenAPI makes the document of routes.
func buildOpenAPI(routes []apiRoute) *openAPI {
	b := &schemaBuilder{comps: map[string]*schema{}, names: map[reflect.Type]string{}}
	doc := &openAPI{
		OpenAPI: "3.0.3",
		Info: openAPIInfo{Title: "Resolute API", Version: resolute.Version,
			Description: "The REST API of the Resolute master, generated from its router and its Go types. " +
				"Errors are {\"error\": {\"code\", \"message\"}} with the matching HTTP status. " +
				"Query parameters are not listed; the handlers' doc comments (the summaries) name them."},
		Paths: map[string]map[string]operation{},
		Components: components{Schemas: b.comps, SecuritySchemes: map[string]securityScheme{
			"bearer": {Type: "http", Scheme: "bearer", Description: "a session token from POST /api/v1/auth/login (or the master's session cookie)"},
			"allocationToken": {Type: "apiKey", In: "header", Name: AllocationTokenHeader,
				Description: "a running task's allocation token (DET_ALLOCATION_SESSION_TOKEN), for its own trial's routes"},
		}},
	}
	errSchema := b.schema(reflect.TypeFor[resolute.ErrorResponse]())
	for _, rt := range routes {
		bodies := apiTypes[rt.Handler]
		op := operation{
			OperationID: operationID(rt.Method, rt.Pattern),
			Summary:     bodies.Doc,
			Tags:        []string{tagOf(rt.Pattern)},
			Responses:   map[string]response{},
			Auth:        rt.Auth,
			Handler:     rt.Handler,
			Security:    []map[string][]string{},
		}
		switch rt.Auth {
		case "user", "administrator":
			op.Security = []map[string][]string{{"bearer": {}}}
		case "task or user":
			op.Security = []map[string][]string{{"bearer": {}}, {"allocationToken": {}}}
		}
		for _, m := range pathParam.FindAllStringSubmatch(rt.Pattern, -1) {
			op.Parameters = append(op.Parameters, parameter{Name: m[1], In: "path", Required: true, Schema: &schema{Type: "string"}})
		}
		if bodies.Request != nil {
			op.RequestBody = &requestBody{Required: true, Content: map[string]mediaType{"application/json": {Schema: b.schema(bodies.Request)}}}
		}
		byStatus := map[int][]*schema{}
		for _, r := range bodies.Responses {
			byStatus[r.Status] = append(byStatus[r.Status], b.schema(r.Type))
		}
		for status, schemas := range byStatus {
			s := schemas[0]
			if len(schemas) > 1 {
				s = &schema{OneOf: schemas}
			}
			op.Responses[strconv.Itoa(status)] = response{Description: http.StatusText(status),
				Content: map[string]mediaType{"application/json": {Schema: s}}}
		}
		switch {
		case bodies.Stream != nil:
			op.Responses["200"] = response{Description: "a stream of JSON values, one a line",
				Content: map[string]mediaType{"application/x-ndjson": {Schema: b.schema(bodies.Stream)}}}
		case len(bodies.Responses) == 0:
			op.Responses["200"] = response{Description: "OK (not a JSON body: a file, an archive or a stream)"}
		}
		op.Responses["default"] = response{Description: "an error", Content: map[string]mediaType{"application/json": {Schema: errSchema}}}
		path := pathParam.ReplaceAllString(rt.Pattern, "{$1}")
		if doc.Paths[path] == nil {
			doc.Paths[path] = map[string]operation{}
		}
		doc.Paths[path][strings.ToLower(rt.Method)] = op
	}
	return doc
}

// operationID names an operation after its method and path, e.g.
// postExperimentsIdActivate.
func operationID(method, pattern string) string {
	var sb strings.Builder
	sb.WriteString(strings.ToLower(method))
	for _, word := range strings.FieldsFunc(strings.TrimPrefix(pattern, APIPrefix), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		sb.WriteString(strings.ToUpper(word[:1]) + word[1:])
	}
	return sb.String()
}

// tagOf groups a path by its first segment after APIPrefix.
func tagOf(pattern string) string {
	rest := strings.TrimPrefix(pattern, APIPrefix+"/")
	first, _, _ := strings.Cut(rest, "/")
	return first
}

// schemaBuilder turns Go types into schemas, named structs into
// components referred to by $ref.
type schemaBuilder struct {
	comps map[string]*schema
	names map[reflect.Type]string
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
)

// schema is t's schema.
func (b *schemaBuilder) schema(t reflect.Type) *schema {
	switch {
	case t == timeType:
		return &schema{Type: "string", Format: "date-time"}
	case t == rawType:
		return &schema{Description: "any JSON value"}
	case t.Kind() != reflect.Pointer && t.Implements(marshalerType):
		return &schema{Description: "JSON of " + t.String() + "'s own"}
	case t.Kind() != reflect.Pointer && t.Implements(textType):
		return &schema{Type: "string"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := b.schema(t.Elem())
		if s.Ref != "" {
			return s
		}
		c := *s
		c.Nullable = true
		return &c
	case reflect.Bool:
		return &schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return &schema{Type: "integer", Format: "int32"}
	case reflect.Int64, reflect.Uint64:
		return &schema{Type: "integer", Format: "int64"}
	case reflect.Float32, reflect.Float64:
		return &schema{Type: "number"}
	case reflect.String:
		return &schema{Type: "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return &schema{Type: "string", Format: "byte"}
		}
		return &schema{Type: "array", Items: b.schema(t.Elem())}
	case reflect.Map:
		return &schema{Type: "object", AdditionalProperties: b.schema(t.Elem())}
	case reflect.Struct:
		if t.Name() == "" {
			return b.object(t)
		}
		name, ok := b.names[t]
		if !ok {
			name = t.Name()
			for i := 2; b.comps[name] != nil; i++ {
				name = t.Name() + strconv.Itoa(i)
			}
			b.names[t] = name
			b.comps[name] = &schema{Type: "object"} // a placeholder while its fields refer back to it
			*b.comps[name] = *b.object(t)
		}
		return &schema{Ref: "#/components/schemas/" + name}
	}
	return &schema{Description: "any JSON value"}
}

// object is a struct's schema: its JSON fields, embedded structs' too.
func (b *schemaBuilder) object(t reflect.Type) *schema {
	s := &schema{Type: "object", Properties: map[string]*schema{}}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || len(f.Index) > 1 && !embeddedVisible(t, f) {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && structLike(f.Type) {
			continue // its fields are promoted: VisibleFields lists them
		}
		if name == "" {
			name = f.Name
		}
		fs := b.schema(f.Type)
		if slices.Contains(strings.Split(opts, ","), "string") {
			fs = &schema{Type: "string"}
		}
		s.Properties[name] = fs
		if !slices.Contains(strings.Split(opts, ","), "omitempty") && !slices.Contains(strings.Split(opts, ","), "omitzero") {
			s.Required = append(s.Required, name)
		}
	}
	sort.Strings(s.Required)
	return s
}

// embeddedVisible says whether a promoted field reaches JSON: every struct
// it is promoted through is embedded without a JSON name of its own.
func embeddedVisible(t reflect.Type, f reflect.StructField) bool {
	for i := range len(f.Index) - 1 {
		outer := t.FieldByIndex(f.Index[:i+1])
		if name, _, _ := strings.Cut(outer.Tag.Get("json"), ","); !outer.Anonymous || name != "" {
			return false
		}
	}
	return true
}

// structLike says whether an embedded field's fields are promoted into
// JSON: a struct, or a pointer to one.
func structLike(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

// openAPIDoc is the document of s's routes, made once.
func (s *Server) openAPIDoc() *openAPI {
	s.openAPIOnce.Do(func() { s.openAPI = buildOpenAPI(apiRoutes(s.Routes())) })
	return s.openAPI
}

// handleOpenAPI serves GET /api/v1/openapi.json, the OpenAPI 3 document of
// /api/v1 (anyone: it describes the API, never data).
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.openAPIDoc())
}

// openAPIState is the Server's cached document.
type openAPIState struct {
	openAPIOnce sync.Once
	openAPI     *openAPI
}
