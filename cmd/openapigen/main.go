// Command openapigen writes handlers/openapi_gen.go (`make generate`): for
// every handler method of handlers.Server, the JSON body it reads and the
// JSON bodies it answers with, as its source says. It type-checks package
// handlers and looks, in each handler and in the functions of the package
// it calls (two calls deep), for decodeJSON(r, &x), idAndJSON(r, &x) and
// decodeJSONUpload(body, &x, ...) (the request is x's type),
// writeJSON(w, status, v) (a response of v's type with that status) and
// json.NewEncoder(w).Encode(v) (a stream of v, one JSON value a line).
//
// The paths and methods are not its business: handlers/openapi.go reads
// them from the router itself, so the document is never written by hand.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/constant"
	"go/format"
	"go/types"
	"log"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/types/typeutil"
)

// skipped are the package's functions not followed: they write errors, not
// a handler's answer.
var skipped = map[string]bool{"error": true, "render": true, "handleNotFound": true, "handleMethodNotAllowed": true}

// body is one JSON body found.
type body struct {
	status int // 0 for a request or a stream
	typ    string
}

// bodies is what one handler reads and writes.
type bodies struct {
	doc       string // the first sentence of the handler's doc comment
	request   *body
	responses []body
	stream    *body
}

func main() {
	log.SetFlags(0)
	out := filepath.Join("handlers", "openapi_gen.go")
	if len(os.Args) > 1 {
		out = os.Args[1]
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports}
	pkgs, err := packages.Load(cfg, "./handlers")
	if err != nil {
		log.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		os.Exit(1)
	}
	g := &gen{pkg: pkgs[0], decls: map[types.Object]*ast.FuncDecl{}, imports: map[string]string{}}
	for _, f := range g.pkg.Syntax {
		name := filepath.Base(g.pkg.Fset.File(f.Pos()).Name())
		if strings.HasSuffix(name, "_test.go") || name == "openapi_gen.go" {
			continue
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				g.decls[g.pkg.TypesInfo.Defs[fd.Name]] = fd
			}
		}
	}
	found := map[string]*bodies{}
	for obj, fd := range g.decls {
		if fd.Recv == nil || !strings.HasPrefix(fd.Name.Name, "handle") || !isServer(fd) {
			continue
		}
		b := &bodies{doc: firstSentence(fd.Doc.Text())}
		g.collect(fd, b, 0, map[types.Object]bool{obj: true})
		found[fd.Name.Name] = b
	}
	src, err := g.write(found)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

type gen struct {
	pkg     *packages.Package
	decls   map[types.Object]*ast.FuncDecl
	imports map[string]string // path → name used
}

// isServer says whether fd is a method of *Server.
func isServer(fd *ast.FuncDecl) bool {
	if len(fd.Recv.List) != 1 {
		return false
	}
	star, ok := fd.Recv.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "Server"
}

// collect records the bodies fd's source reads and writes, following the
// package's own functions depth calls deep.
func (g *gen) collect(fd *ast.FuncDecl, b *bodies, depth int, seen map[types.Object]bool) {
	info := g.pkg.TypesInfo
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		fn, _ := typeutil.Callee(info, call).(*types.Func)
		if fn == nil {
			return true
		}
		if fn.Pkg() != nil && fn.Pkg().Path() == "encoding/json" && fn.Name() == "Encode" && len(call.Args) == 1 && b.stream == nil {
			if t := info.TypeOf(call.Args[0]); t != nil {
				b.stream = &body{typ: g.typeExpr(t)}
			}
			return true
		}
		if fn.Pkg() != g.pkg.Types {
			return true
		}
		switch fn.Name() {
		case "decodeJSON", "decodeJSONUpload", "idAndJSON":
			if len(call.Args) >= 2 && b.request == nil {
				if t := info.TypeOf(call.Args[1]); t != nil {
					if p, ok := t.(*types.Pointer); ok {
						t = p.Elem()
					}
					b.request = &body{typ: g.typeExpr(t)}
				}
			}
			return true
		case "writeJSON":
			if len(call.Args) == 3 {
				status := 200
				if tv, ok := info.Types[call.Args[1]]; ok && tv.Value != nil {
					if v, ok := constant.Int64Val(tv.Value); ok {
						status = int(v)
					}
				}
				if t := info.TypeOf(call.Args[2]); t != nil {
					nb := body{status: status, typ: g.typeExpr(t)}
					if !slices.Contains(b.responses, nb) {
						b.responses = append(b.responses, nb)
					}
				}
			}
			return true
		}
		if skipped[fn.Name()] || seen[fn] || depth >= 2 {
			return true
		}
		if callee, ok := g.decls[fn]; ok {
			seen[fn] = true
			g.collect(callee, b, depth+1, seen)
		}
		return true
	})
}

// typeExpr writes t as a Go type expression valid in package handlers:
// named types by name where they can be named there, the others (local to
// a function, or unexported elsewhere) spelt out.
func (g *gen) typeExpr(t types.Type) string {
	switch t := t.(type) {
	case *types.Alias:
		return g.typeExpr(types.Unalias(t))
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() == nil { // error
			return obj.Name()
		}
		local := obj.Parent() != obj.Pkg().Scope()
		foreign := obj.Pkg() != g.pkg.Types
		if local || (foreign && !obj.Exported()) || t.TypeArgs().Len() > 0 {
			return g.typeExpr(t.Underlying())
		}
		if !foreign {
			return obj.Name()
		}
		return g.importName(obj.Pkg()) + "." + obj.Name()
	case *types.Pointer:
		return "*" + g.typeExpr(t.Elem())
	case *types.Slice:
		return "[]" + g.typeExpr(t.Elem())
	case *types.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), g.typeExpr(t.Elem()))
	case *types.Map:
		return "map[" + g.typeExpr(t.Key()) + "]" + g.typeExpr(t.Elem())
	case *types.Interface:
		return "any"
	case *types.Basic:
		return t.Name()
	case *types.Struct:
		var sb strings.Builder
		sb.WriteString("struct{")
		for i := range t.NumFields() {
			f := t.Field(i)
			if i > 0 {
				sb.WriteString("; ")
			}
			if !f.Embedded() {
				sb.WriteString(f.Name() + " ")
			}
			sb.WriteString(g.typeExpr(f.Type()))
			if tag := t.Tag(i); tag != "" {
				sb.WriteString(" " + strconv.Quote(tag))
			}
		}
		sb.WriteString("}")
		return sb.String()
	}
	return "any" // channels, funcs: never JSON
}

// importName is the name package p is imported as.
func (g *gen) importName(p *types.Package) string {
	if n, ok := g.imports[p.Path()]; ok {
		return n
	}
	name := p.Name()
	for i := 2; slices.Contains(mapValues(g.imports), name); i++ {
		name = p.Name() + strconv.Itoa(i)
	}
	g.imports[p.Path()] = name
	return name
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// write renders the generated file.
func (g *gen) write(found map[string]*bodies) ([]byte, error) {
	names := make([]string, 0, len(found))
	for n := range found {
		names = append(names, n)
	}
	sort.Strings(names)
	var entries bytes.Buffer
	typeOf := func(expr string) string { return "reflect.TypeFor[" + expr + "]()" }
	for _, n := range names {
		b := found[n]
		fmt.Fprintf(&entries, "\t%q: {", n)
		var parts []string
		if b.doc != "" {
			parts = append(parts, "Doc: "+strconv.Quote(b.doc))
		}
		if b.request != nil {
			parts = append(parts, "Request: "+typeOf(b.request.typ))
		}
		if len(b.responses) > 0 {
			var rs []string
			for _, r := range b.responses {
				rs = append(rs, fmt.Sprintf("{Status: %d, Type: %s}", r.status, typeOf(r.typ)))
			}
			parts = append(parts, "Responses: []apiBody{"+strings.Join(rs, ", ")+"}")
		}
		if b.stream != nil {
			parts = append(parts, "Stream: "+typeOf(b.stream.typ))
		}
		entries.WriteString(strings.Join(parts, ", "))
		entries.WriteString("},\n")
	}
	g.imports["reflect"] = "reflect"
	paths := make([]string, 0, len(g.imports))
	for p := range g.imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var src bytes.Buffer
	src.WriteString("// Code generated by cmd/openapigen from the handlers' source; DO NOT EDIT.\n\npackage handlers\n\nimport (\n")
	sort.SliceStable(paths, func(i, j int) bool { return !strings.Contains(paths[i], ".") && strings.Contains(paths[j], ".") })
	std := true
	for _, p := range paths {
		if std && strings.Contains(p, ".") {
			src.WriteString("\n")
			std = false
		}
		name := g.imports[p]
		if name == filepath.Base(p) {
			fmt.Fprintf(&src, "\t%q\n", p)
		} else {
			fmt.Fprintf(&src, "\t%s %q\n", name, p)
		}
	}
	src.WriteString(")\n\n// apiTypes are the JSON bodies each handler reads and writes, by the\n// handler's name, as its source says (handlers/openapi.go).\nvar apiTypes = map[string]apiBodies{\n")
	src.Write(entries.Bytes())
	src.WriteString("}\n")
	formatted, err := format.Source(src.Bytes())
	if err != nil {
		return src.Bytes(), fmt.Errorf("format the generated file: %w", err)
	}
	return formatted, nil
}

// firstSentence is a doc comment's first sentence, on one line.
func firstSentence(doc string) string {
	doc = strings.Join(strings.Fields(doc), " ")
	if i := strings.Index(doc, ". "); i >= 0 {
		doc = doc[:i+1]
	}
	return doc
}
