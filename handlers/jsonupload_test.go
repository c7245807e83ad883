package handlers

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
)

// TestAJSONUploadDecodesAsEncodingJSONWouldWithTheContextStreamed runs
// decodeJSONUpload and encoding/json on the same bodies: the fields come
// out the same, and the streamed field's bytes are what encoding/json
// decodes into []byte.
func TestAJSONUploadDecodesAsEncodingJSONWouldWithTheContextStreamed(t *testing.T) {
	payload := []byte("\x1f\x8b\x08 binary \xff\x00 bytes")
	b64 := base64.StdEncoding.EncodeToString(payload)
	tests := map[string]struct {
		body    string
		refused string // part of the message; "" for a body encoding/json takes
	}{
		"the context between other fields":      {body: `{"config": "name: x\n", "contextTgz": "` + b64 + `", "overrides": ["a=1", "b={\"c\": [1]}"], "projectId": 3}`},
		"the context first, with spaces":        {body: " {\n \"contextTgz\" : \"" + b64 + "\" ,\"activate\":false } "},
		"escaped slashes and unicode in base64": {body: `{"contextTgz": "` + strings.ReplaceAll(strings.ReplaceAll(b64, "/", `\/`), "+", `\u002b`) + `"}`},
		"no context":                            {body: `{"config": "x", "parentId": 7, "activate": true}`},
		"a null context":                        {body: `{"contextTgz": null, "config": "x"}`},
		"strings holding brackets and escapes":  {body: `{"config": "}{][\"", "overrides": ["}", "{[\\"], "contextTgz": ""}`},
		"an empty object":                       {body: `{}`},
		"a context that is no base64":           {body: `{"contextTgz": "not base64!"}`, refused: "illegal base64"},
		"a context that is a number":            {body: `{"contextTgz": 12}`, refused: "contextTgz: expected []uint8"},
		"a context given twice":                 {body: `{"contextTgz": "", "contextTgz": ""}`, refused: "contextTgz: given twice"},
		"a body cut inside the context":         {body: `{"contextTgz": "` + b64[:8], refused: "unexpected end of body"},
		"a body cut after a key":                {body: `{"config"`, refused: "unexpected end of body"},
		"a missing comma":                       {body: `{"config": "x" "activate": true}`, refused: "expected , or }"},
		"not an object":                         {body: `["config"]`, refused: "expected a JSON object"},
		"an empty body":                         {body: ``, refused: "request body is empty"},
		"a field of the wrong type":             {body: `{"projectId": "three"}`, refused: "projectId: expected int64"},
		"the context's key in another case":     {body: `{"ContextTGZ": "` + b64 + `", "config": "x"}`},
		"a key given twice in two cases":        {body: `{"projectId": 1, "ProjectID": 2, "projectid": 3}`},
		"null, which decodes to nothing":        {body: ` null `},
		"a comma before the end":                {body: `{"config": "x",}`, refused: "expected a key after ,"},
		"a bad value given again":               {body: `{"config": A, "config": "x"}`, refused: `the value of "config" is not valid JSON`},
		"a value of the wrong type given again": {body: `{"projectId": "three", "projectId": 3}`, refused: "projectId: expected int64"},
		"a misspelled literal":                  {body: `{"activate": tru}`, refused: `the value of "activate" is not valid JSON`},
		"more after the object":                 {body: `{"config": "x"} {}`, refused: "expected nothing after the JSON value"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got resolute.CreateExperimentRequest
			var streamed []byte
			err := decodeJSONUpload(strings.NewReader(tc.body), &got, "contextTgz", 1<<20, func(r io.Reader) (err error) {
				streamed, err = io.ReadAll(r)
				if err != nil {
					return resolute.Errorf(resolute.EInvalid, "contextTgz: %v", err)
				}
				return nil
			})
			if tc.refused != "" {
				if resolute.ErrorCode(err) != resolute.EInvalid || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("error %v; want invalid saying %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want resolute.CreateExperimentRequest
			if err := json.Unmarshal([]byte(tc.body), &want); err != nil {
				t.Fatal(err)
			}
			got.ContextTgz = streamed
			if len(want.ContextTgz) == 0 {
				want.ContextTgz = streamed // nil and empty alike
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decoded (-encoding/json +streamed):\n%s", diff)
			}
		})
	}
}

func TestAJSONUploadBoundsTheOtherFields(t *testing.T) {
	body := `{"contextTgz": "` + strings.Repeat("A", 4096) + `", "config": "` + strings.Repeat("x", 200) + `"}`
	var req resolute.CreateExperimentRequest
	err := decodeJSONUpload(strings.NewReader(body), &req, "contextTgz", 100, func(r io.Reader) error {
		_, err := io.Copy(io.Discard, r)
		return err
	})
	if resolute.ErrorCode(err) != resolute.ETooLarge {
		t.Fatalf("error %v; want too_large: the context is streamed, the 200-byte config is over 100", err)
	}
}

// FuzzDecodeJSONUpload checks decodeJSONUpload against encoding/json: a
// body without the streamed field is accepted exactly when json.Unmarshal
// (and the check for NULs every body gets) accepts it, into the same
// request. Bodies that stream the field are only run, for panics.
func FuzzDecodeJSONUpload(f *testing.F) {
	for _, seed := range []string{
		`{"config": "name: x\n", "contextTgz": "AAAA", "overrides": ["a=1"], "projectId": 3}`,
		`{"a":1,}`, `{"":A,"":[]}`, `{"ContextTgz": "AAAA"}`, `{"contextTgz": null}`, `{"contextTgz": 12}`,
		`null`, `[]`, `"x"`, ``, ` {} `, `{} x`, `{"projectId": 1, "ProjectID": 2}`,
		`{"projectId": "x", "projectId": 3}`, `{"overrides": ["a"], "overrides": null}`,
		`{"entrypoint": ["sh", "-c", "}{\""], "experimentIds": [1, 2e0], "trialIds": null}`,
		`{"config": "\u0000"}`, `{"activate": true, "parentId": -0}`, `{"a": {"b": [1, {"c": tru}]}}`,
		`{"context_tgz": "AAAA", "project_id": 2, "validateOnly": true}`, `{"context_tgz": null, "contextTgz": 1}`,
		`{"parent_id": 1, "parentId": 2}`, `{"experiment_ids": [1], "template_name": "t", "templateName": "u"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkLikeEncodingJSON[resolute.CreateExperimentRequest](t, body)
		checkLikeEncodingJSON[resolute.CreateTaskRequest](t, body)
	})
}

// checkLikeEncodingJSON decodes body into a T with decodeJSONUpload and
// with decodeBody (the API's rule for field names, then json.Unmarshal),
// and compares them unless the context was streamed.
func checkLikeEncodingJSON[T any](t *testing.T, body string) {
	var got, want T
	streamed := false
	err := decodeJSONUpload(strings.NewReader(body), &got, "contextTgz", int64(len(body)), func(r io.Reader) error {
		streamed = true
		_, err := io.Copy(io.Discard, r)
		return err
	})
	if streamed {
		return
	}
	wantErr := decodeBody([]byte(body), &want)
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("%q into %T: decodeJSONUpload says %v, encoding/json %v", body, got, err, wantErr)
	case err == nil:
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q into %T (-encoding/json +decodeJSONUpload):\n%s", body, got, diff)
		}
	}
}
