package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
)

// namesTest is a type with what the rule must handle besides the API's own
// bodies: a recursive type, a map of structs, an embedded pointer, a
// ",string" field, a hidden field and a type that decodes itself.
type namesTest struct {
	*NamesEmbedded
	TrialID   int64                     `json:"trial_id"`
	Children  []namesTest               `json:"childTrials,omitempty"`
	ByName    map[string]NamesEmbedded  `json:"by_name,omitempty"`
	Count     int                       `json:"itemCount,string,omitempty"`
	Hidden    string                    `json:"-"`
	Own       ownDecoding               `json:"own_decoding,omitempty"`
	Free      any                       `json:"free_form,omitempty"`
	Lists     [][]resolute.QueueControl `json:"queueLists,omitempty"`
	Untagged  string
	unexposed string
}

type NamesEmbedded struct {
	ProjectID int64 `json:"projectId"`
}

type ownDecoding struct{ Keys []string }

func (o *ownDecoding) UnmarshalJSON(data []byte) error {
	var m map[string]any
	err := json.Unmarshal(data, &m)
	for k := range m {
		o.Keys = append(o.Keys, k)
	}
	return err
}

// TestBodiesDecodeWithFieldsInEitherSpelling decodes bodies by the API's
// rule: keys in a field's other spelling reach the field, user data keeps
// its keys, and encoding/json's own behaviour stays as it was.
func TestBodiesDecodeWithFieldsInEitherSpelling(t *testing.T) {
	metrics := func(avg map[string]any, batch []any) metricsBody {
		var m metricsBody
		m.Metrics.TrialID, m.Metrics.TrialRunID, m.Metrics.StepsCompleted = 7, 2, 100
		m.Metrics.Metrics.AvgMetrics, m.Metrics.Metrics.BatchMetrics = avg, batch
		m.Group = "GROUP_TRAINING"
		return m
	}
	tests := map[string]struct {
		body string
		into any    // a pointer to a zero value of the type
		want any    // what it decodes to
		err  string // part of the 400's message; "" when it decodes
		// first decodes it as a request's body (decodeJSON), whose first
		// JSON value counts.
		first bool
	}{
		"a request's body: its first value, in either spelling": {
			body: ` {"metrics":{"trialRunId":2}} {"metrics":{"trial_run_id":3}} x`, into: new(metricsBody), first: true,
			want: func() metricsBody { var m metricsBody; m.Metrics.TrialRunID = 2; return m }(),
		},
		"a request's empty body":     {body: ``, into: new(metricsBody), first: true, err: "request body is empty"},
		"a request's body cut short": {body: `{"metrics":{"trialRunId":2`, into: new(metricsBody), first: true, err: "unexpected end"},
		"a request's malformed body": {body: `{"metrics":{"trialRunId" 2}}`, into: new(metricsBody), first: true, err: "malformed JSON at byte"},
		"a request's body in both spellings": {body: `{"metrics":{"trialRunId":2,"trial_run_id":2}}`, into: new(metricsBody), first: true,
			err: "metrics.trial_run_id: given twice"},
		"a metrics report as Determined's bindings send it, in camelCase": {
			body: `{"group":"GROUP_TRAINING","metrics":{"trialId":7,"trialRunId":2,"stepsCompleted":100,"reportTime":"2026-01-01T00:00:00Z",` +
				`"metrics":{"avgMetrics":{"loss":0.5},"batchMetrics":[{"loss":1}]}}}`,
			into: new(metricsBody), want: func() metricsBody {
				m := metrics(map[string]any{"loss": 0.5}, []any{map[string]any{"loss": 1.0}})
				at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				m.Metrics.ReportTime = &at // the system metrics' report time
				return m
			}(),
		},
		"a metrics report as the harness sends it, in snake_case": {
			body: `{"group":"GROUP_TRAINING","metrics":{"trial_id":7,"trial_run_id":2,"steps_completed":100,"metrics":{"avg_metrics":{"loss":0.5}}}}`,
			into: new(metricsBody), want: metrics(map[string]any{"loss": 0.5}, nil),
		},
		"metrics named like fields keep their names": {
			body: `{"group":"GROUP_TRAINING","metrics":{"trialId":7,"trialRunId":2,"stepsCompleted":100,` +
				`"metrics":{"avgMetrics":{"avg_metrics":1,"trialRunId":2,"avgMetrics":3,"steps_completed":4},"batchMetrics":[{"trialRunId":5}]}}}`,
			into: new(metricsBody),
			want: metrics(map[string]any{"avg_metrics": 1.0, "trialRunId": 2.0, "avgMetrics": 3.0, "steps_completed": 4.0},
				[]any{map[string]any{"trialRunId": 5.0}}),
		},
		"a field in both spellings is refused, naming it": {
			body: `{"metrics":{"trialRunId":1,"trial_run_id":2}}`, into: new(metricsBody),
			err: `metrics.trial_run_id: given twice, as "trial_run_id" and "trialRunId"`,
		},
		"both spellings deep down are named by their path": {
			body: `{"updates":[{"jobId":"a"},{"jobId":"b","behind_of":"a","behindOf":"c"}]}`, into: new(resolute.UpdateJobQueueRequest),
			err: `updates[1].behindOf: given twice, as "behindOf" and "behind_of"`,
		},
		"a key encoding/json matches ignoring case counts as the field's name": {
			body: `{"metrics":{"TRIAL_RUN_ID":1,"trialRunId":2}}`, into: new(metricsBody),
			err: `metrics.trial_run_id: given twice, as "TRIAL_RUN_ID" and "trialRunId"`,
		},
		"a key encoding/json matches ignoring case has its value read by the rule too": {
			body: `{"METRICS":{"trialRunId":2,"Metrics":{"avgMetrics":{"trial_Run_Id":1}}}}`, into: new(metricsBody),
			want: func() metricsBody {
				var m metricsBody
				m.Metrics.TrialRunID, m.Metrics.Metrics.AvgMetrics = 2, map[string]any{"trial_Run_Id": 1.0}
				return m
			}(),
		},
		"the same spelling twice is encoding/json's: the last wins": {
			body: `{"metrics":{"trialRunId":1,"trialRunId":2}}`, into: new(metricsBody),
			want: func() metricsBody { var m metricsBody; m.Metrics.TrialRunID = 2; return m }(),
		},
		"a field in its other spelling under an escaped key": {
			body: `{"metrics":{"trial\u0052unId":3}}`, into: new(metricsBody),
			want: func() metricsBody { var m metricsBody; m.Metrics.TrialRunID = 3; return m }(),
		},
		"unknown fields are ignored as before": {
			body: `{"destination_project_id":4,"reportTime":1,"destination_projectId":5}`, into: new(resolute.MoveRequest),
			want: resolute.MoveRequest{DestinationProjectID: 4},
		},
		"a patch in snake_case reaches camelCase fields and a nested snake_case one": {
			body: `{"agent_user_group":{"agent_uid":1000,"agentGid":1000,"agent_user":"ada","agent_group":"ada"},"display_name":"Ada"}`,
			into: new(resolute.PatchUserRequest),
			want: resolute.PatchUserRequest{DisplayName: new("Ada"),
				AgentUserGroup: &resolute.AgentUserGroup{UID: 1000, GID: 1000, User: "ada", Group: "ada"}},
		},
		"an experiment's resources in camelCase": {
			body: `{"resources":{"maxSlots":4,"weight":2}}`, into: new(resolute.PatchExperimentRequest),
			want: resolute.PatchExperimentRequest{Resources: &resolute.PatchResources{MaxSlots: new(4), Weight: new(2.0)}},
		},
		"an embedded struct's fields in snake_case; free-form metadata keeps its keys": {
			body: `{"validate_only":true,"project_id":3,"parent_id":9,"config":"name: x"}`, into: new(resolute.CreateExperimentRequest),
			want: resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: "name: x", ValidateOnly: true, ProjectID: 3}, ParentID: 9},
		},
		"model metadata and labels stay as sent": {
			body: `{"checkpoint_uuid":"u","metadata":{"checkpointUuid":1,"a_b":{"cD":2}},"labels":["x_y"]}`, into: new(resolute.ModelVersionRequest),
			want: resolute.ModelVersionRequest{CheckpointUUID: "u", Metadata: new(json.RawMessage(`{"checkpointUuid":1,"a_b":{"cD":2}}`)), Labels: new([]string{"x_y"})},
		},
		"recursive types, maps of structs, embedded pointers and lists of lists": {
			body: `{"project_id":1,"trialId":2,"child_trials":[{"trialId":3,"childTrials":[{"trialId":4,"by_name":{"project_id":{"project_id":5}}}]}],` +
				`"free_form":{"project_id":6},"queue_lists":[[{"job_id":"j","ahead_of":"k"}]],"untagged":"u"}`,
			into: new(namesTest),
			want: namesTest{NamesEmbedded: &NamesEmbedded{ProjectID: 1}, TrialID: 2, Untagged: "u",
				Children: []namesTest{{TrialID: 3, Children: []namesTest{{TrialID: 4, ByName: map[string]NamesEmbedded{"project_id": {ProjectID: 5}}}}}},
				Free:     map[string]any{"project_id": 6.0}, Lists: [][]resolute.QueueControl{{{JobID: "j", AheadOf: "k"}}}},
		},
		"a ,string field, a hidden one and a type that decodes itself": {
			body: `{"item_count":"5","Hidden":"h","own_decoding":{"a_b":1}}`, into: new(namesTest),
			want: namesTest{Count: 5, Own: ownDecoding{Keys: []string{"a_b"}}},
		},
		"values of the wrong type are encoding/json's errors": {
			body: `{"metrics":{"trialRunId":"x"}}`, into: new(metricsBody), err: "metrics.trial_run_id: expected int, got string",
		},
		"malformed JSON is encoding/json's error": {
			body: `{"metrics":{"trialRunId":1,}}`, into: new(metricsBody), err: "malformed JSON",
		},
		"a NUL in a renamed field is named by the field": {
			body: `{"checkpoint_uuid":"a\u0000"}`, into: new(resolute.ModelVersionRequest), err: "checkpointUuid: must not contain NUL",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := decodeBody([]byte(tc.body), tc.into)
			if tc.first {
				err = decodeJSON(httptest.NewRequest("POST", "/api/v1/x", strings.NewReader(tc.body)), tc.into)
			}
			switch {
			case tc.err != "":
				if err == nil || resolute.ErrorCode(err) != resolute.EInvalid || !strings.Contains(resolute.ErrorMessage(err), tc.err) {
					t.Fatalf("got %v, want a 400 saying %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				got := reflect.ValueOf(tc.into).Elem().Interface()
				if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(namesTest{})); diff != "" {
					t.Fatalf("(-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestTheRuleKnowsEachFieldsSpellings lists the keys the rule takes for a
// few of the API's types.
func TestTheRuleKnowsEachFieldsSpellings(t *testing.T) {
	tests := map[string]struct {
		into any
		want map[string]string // key → the field's JSON name
	}{
		"a login": {into: resolute.LoginRequest{}, want: map[string]string{"username": "username", "password": "password",
			"isHashed": "isHashed", "is_hashed": "isHashed"}},
		"a move, whose camelCase name has one other spelling": {into: resolute.MoveRequest{},
			want: map[string]string{"destinationProjectId": "destinationProjectId", "destination_project_id": "destinationProjectId"}},
		"the embedded config request's fields are the experiment's": {into: resolute.CreateExperimentRequest{}, want: map[string]string{
			"config": "config", "template": "template", "overrides": "overrides", "validateOnly": "validateOnly", "validate_only": "validateOnly",
			"projectId": "projectId", "project_id": "projectId", "contextTgz": "contextTgz", "context_tgz": "contextTgz",
			"activate": "activate", "parentId": "parentId", "parent_id": "parentId"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := namesOf(reflect.TypeOf(tc.into))
			got := map[string]string{}
			for k, f := range n.fields {
				got[k] = n.names[f.index]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
	if n := namesOf(reflect.TypeOf(resolute.RendezvousRequest{})); n.renames {
		t.Error("a body of one-word fields is looked through for keys to rename")
	}
	for _, v := range []any{new(any), new(json.RawMessage), new(map[string]any), new([]byte)} {
		if n := namesOf(reflect.TypeOf(v)); n != nil {
			t.Errorf("%T is not free-form to the rule", v)
		}
	}
}

// TestAnUploadsStreamedFieldTakesEitherSpelling streams context_tgz as
// it streams contextTgz, and refuses both in one body.
func TestAnUploadsStreamedFieldTakesEitherSpelling(t *testing.T) {
	tests := map[string]struct {
		body     string
		streamed string // what the sink read
		err      string
	}{
		"camelCase":                        {body: `{"contextTgz":"aGk=","project_id":2}`, streamed: "hi"},
		"snake_case":                       {body: `{"context_tgz":"aGk=","projectId":2}`, streamed: "hi"},
		"both":                             {body: `{"context_tgz":"aGk=","contextTgz":"aGk="}`, streamed: "hi", err: `contextTgz: given twice, as "contextTgz" and "context_tgz"`},
		"both, one of them null":           {body: `{"contextTgz":null,"context_tgz":"aGk="}`, err: `contextTgz: given twice`},
		"both, neither streamed":           {body: `{"contextTgz":null,"context_tgz":null}`, err: `contextTgz: given twice`},
		"the streamed one given twice":     {body: `{"context_tgz":"aGk=","context_tgz":"aGk="}`, streamed: "hi", err: `contextTgz: given twice`},
		"another field in both":            {body: `{"contextTgz":"aGk=","projectId":2,"project_id":2}`, streamed: "hi", err: `projectId: given twice`},
		"a case-folded name and camelCase": {body: `{"CONTEXTTGZ":"aGk=","context_tgz":null}`, streamed: "hi", err: `contextTgz: given twice`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var req resolute.CreateExperimentRequest
			var got []byte
			err := decodeJSONUpload(strings.NewReader(tc.body), &req, "contextTgz", 1<<20, func(r io.Reader) (err error) {
				got, err = io.ReadAll(r)
				return err
			})
			if tc.err != "" {
				if err == nil || !strings.Contains(resolute.ErrorMessage(err), tc.err) {
					t.Fatalf("got %v, want %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if req.ProjectID != 2 {
				t.Errorf("projectId: got %d", req.ProjectID)
			}
			if string(got) != tc.streamed {
				t.Errorf("streamed %q, want %q", got, tc.streamed)
			}
		})
	}
}

// FuzzDecodeBody checks the rule's reading of raw JSON against a slow one
// written plainly: the body read token by token into a tree that keeps
// every key in order, keys renamed by the same table, written out again
// and decoded by encoding/json. Both decode a body or both refuse it, and
// what they decode is the same.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []string{
		`{"group":"GROUP_TRAINING","metrics":{"trialId":7,"trialRunId":2,"stepsCompleted":100,"metrics":{"avgMetrics":{"loss":0.5,"trialRunId":1},"batchMetrics":[{}]}}}`,
		`{"metrics":{"trial_run_id":1,"trialRunId":2}}`, `{"metrics":{"TRIAL_RUN_ID":1,"trialRunId":2}}`,
		`{"updates":[{"jobId":"a","ahead_of":"b"},{"behind_of":"x","behindOf":"y"}]}`, `{"resources":{"maxSlots":1}}`,
		`{"project_id":1,"child_trials":[{"childTrials":[{"by_name":{"project_id":{"project_id":5}}}]}],"queue_lists":[[{"job_id":"j"}]]}`,
		`{"item_count":"5","own_decoding":{"a_b":1},"free_form":{"project_id":[1,{"a_b":2}]}}`,
		`{"metrics":{"trial\u0052unId":3}}`, `{"METRICS":{"trialRunId":1,"Metrics":{"avgMetrics":{"a_b":1}}}}`, `{"Metrics":{"TrialRunId":1,"trial_run_id":2}}`, `{"metrics":{"trialRunId":1,}}`, `{"metrics":[1,2]}`, `[{"jobId":1}]`, `null`,
		`{"a":"\"}{","trialRunId":1} x`, ` { "metrics" : { "trialRunId" : 1 } } `, `{"metrics":{"trialRunId":1}`, `{"metrics":"}"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkDecodeBody[metricsBody](t, body)
		checkDecodeBody[resolute.UpdateJobQueueRequest](t, body)
		checkDecodeBody[resolute.PatchExperimentRequest](t, body)
		checkDecodeBody[resolute.CreateExperimentRequest](t, body)
		checkDecodeBody[namesTest](t, body)
	})
}

// checkDecodeBody decodes body into a T with decodeBody and with the
// plain reading, and with decodeJSON and the plain reading of the body's
// first value (as encoding/json's Decoder reads it, the rest ignored).
func checkDecodeBody[T any](t *testing.T, body string) {
	var got, want T
	err := decodeBody([]byte(body), &got)
	wantErr := plainDecodeBody([]byte(body), &want)
	compare(t, "decodeBody", body, got, want, err, wantErr)
	var gotFirst, wantFirst T
	err = decodeJSON(httptest.NewRequest("POST", "/api/v1/x", strings.NewReader(body)), &gotFirst)
	var first json.RawMessage
	if wantErr = json.NewDecoder(strings.NewReader(body)).Decode(&first); wantErr == nil {
		wantErr = plainDecodeBody(first, &wantFirst)
	}
	compare(t, "decodeJSON", body, gotFirst, wantFirst, err, wantErr)
}

func compare[T any](t *testing.T, what, body string, got, want T, err, wantErr error) {
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("%q into %T: %s says %v, the plain reading %v", body, got, what, err, wantErr)
	case err == nil:
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(namesTest{})); diff != "" {
			t.Fatalf("%q into %T (-plain +%s):\n%s", body, got, what, diff)
		}
	}
}

// plainDecodeBody is the rule written plainly, for FuzzDecodeBody.
func plainDecodeBody(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tree, err := readTree(dec)
	if err != nil {
		return checkDecoded(v, json.Unmarshal(data, v))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return checkDecoded(v, json.Unmarshal(data, v)) // something after the value
	}
	if err := renameTree(tree, namesOf(reflect.TypeOf(v)), ""); err != nil {
		return err
	}
	out, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	return checkDecoded(v, json.Unmarshal(out, v))
}

// jsonTree is a JSON value read with its objects' keys in order.
type jsonTree struct {
	object []treeMember // an object's members, in order
	isObj  bool
	array  []*jsonTree
	isArr  bool
	scalar any
}

type treeMember struct {
	key   string
	value *jsonTree
}

func (j *jsonTree) MarshalJSON() ([]byte, error) {
	switch {
	case j.isObj:
		var b bytes.Buffer
		b.WriteByte('{')
		for i, m := range j.object {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(m.key)
			v, err := m.value.MarshalJSON()
			if err != nil {
				return nil, err
			}
			b.Write(k)
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteByte('}')
		return b.Bytes(), nil
	case j.isArr:
		return json.Marshal(append([]*jsonTree{}, j.array...)) // [] stays [], not null
	}
	return json.Marshal(j.scalar)
}

func readTree(dec *json.Decoder) (*jsonTree, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		j := &jsonTree{isObj: true}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := readTree(dec)
			if err != nil {
				return nil, err
			}
			j.object = append(j.object, treeMember{key: k.(string), value: v})
		}
		_, err := dec.Token()
		return j, err
	case json.Delim('['):
		j := &jsonTree{isArr: true}
		for dec.More() {
			v, err := readTree(dec)
			if err != nil {
				return nil, err
			}
			j.array = append(j.array, v)
		}
		_, err := dec.Token()
		return j, err
	}
	return &jsonTree{scalar: tok}, nil
}

// renameTree renames the keys of j as the table n says, refusing a field
// given under two keys of which one is its other spelling.
func renameTree(j *jsonTree, n *jsonNames, path string) error {
	if n == nil {
		return nil
	}
	switch {
	case n.kind == reflect.Slice && j.isArr:
		for i, e := range j.array {
			if err := renameTree(e, n.elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case n.kind == reflect.Map && j.isObj:
		for _, m := range j.object {
			if err := renameTree(m.value, n.elem, join(path, m.key)); err != nil {
				return err
			}
		}
	case n.kind == reflect.Struct && j.isObj:
		keysOf := map[int]map[string]bool{} // field → the keys that gave it
		aliased := map[int]bool{}
		for i, m := range j.object {
			f, ok := n.fields[m.key]
			for _, name := range n.names {
				if !ok && strings.EqualFold(m.key, name) { // as encoding/json matches it: the first
					f, ok = n.fields[name], true
				}
			}
			if !ok {
				continue
			}
			if keysOf[f.index] == nil {
				keysOf[f.index] = map[string]bool{}
			}
			keysOf[f.index][m.key] = true
			if f.alias {
				aliased[f.index] = true
				j.object[i].key = n.names[f.index]
			}
			if err := renameTree(m.value, f.names, join(path, n.names[f.index])); err != nil {
				return err
			}
		}
		for fi := range n.names {
			if aliased[fi] && len(keysOf[fi]) > 1 {
				return resolute.Errorf(resolute.EInvalid, "%s: given twice", join(path, n.names[fi]))
			}
		}
	}
	return nil
}
