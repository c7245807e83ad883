package handlers

import "reflect"

// apiBodies are the JSON bodies one handler reads and writes
// (openapi_gen.go, written by cmd/openapigen from the handler's source).
type apiBodies struct {
	Doc       string       // the first sentence of the handler's doc comment
	Request   reflect.Type // nil: no JSON body
	Responses []apiBody
	// Stream, when set, is the type of each line of a newline-delimited
	// JSON stream the handler writes.
	Stream reflect.Type
}

// apiBody is one JSON answer and its status.
type apiBody struct {
	Status int
	Type   reflect.Type
}
