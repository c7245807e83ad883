package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestThePodsOfAnAllocationMeetAtTheRendezvous posts the second pod of
// three first: it waits until the others have posted, and every pod gets
// the addresses by rank. Bad input is refused naming the field, another
// allocation's token is refused, and a short timeout answers not ready.
func TestThePodsOfAnAllocationMeetAtTheRendezvous(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	ctx := context.Background()
	tokens := map[string]string{}
	for _, id := range []string{"rdv-1", "rdv-2"} {
		token, hash := auth.NewToken()
		if err := m.DB.CreateAllocation(ctx, id, "trial-"+id, nil, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := m.DB.StartAllocation(ctx, id, nil, hash); err != nil {
			t.Fatal(err)
		}
		tokens[id] = token
	}
	post := func(alloc, token, body, query string) (int, resolute.RendezvousResponse, string) {
		req, _ := http.NewRequest("POST", m.URL+"/api/v1/allocations/"+alloc+"/rendezvous"+query, strings.NewReader(body))
		req.Header.Set("Grpc-Metadata-x-allocation-token", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, resolute.RendezvousResponse{}, ""
		}
		defer resp.Body.Close()
		var raw json.RawMessage
		json.NewDecoder(resp.Body).Decode(&raw)
		var out resolute.RendezvousResponse
		json.Unmarshal(raw, &out)
		return resp.StatusCode, out, string(raw)
	}

	if code, out, _ := post("rdv-1", tokens["rdv-1"], `{"rank":1,"size":3,"addr":"10.0.0.2","slots":4}`, "?timeout_seconds=0"); code != 200 || out.Ready {
		t.Fatalf("alone at the rendezvous: %d %+v", code, out)
	}
	type answer struct {
		out  resolute.RendezvousResponse
		took time.Duration
	}
	waiting := make(chan answer)
	start := time.Now()
	go func() {
		_, out, _ := post("rdv-1", tokens["rdv-1"], `{"rank":1,"size":3,"addr":"10.0.0.2","slots":4}`, "?timeout_seconds=30")
		waiting <- answer{out, time.Since(start)}
	}()
	time.Sleep(500 * time.Millisecond)
	_, chief, _ := post("rdv-1", tokens["rdv-1"], `{"rank":0,"size":3,"addr":"10.0.0.1","slots":4}`, "?timeout_seconds=0")
	if chief.Ready {
		t.Fatalf("ready with two of three pods: %+v", chief)
	}
	_, last, _ := post("rdv-1", tokens["rdv-1"], `{"rank":2,"size":3,"addr":"10.0.0.3","slots":2}`, "")
	second := <-waiting
	want := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}
	for _, got := range []resolute.RendezvousResponse{last, second.out} {
		if !got.Ready || strings.Join(got.ContainerAddrs, ",") != strings.Join(want, ",") ||
			len(got.ContainerSlotCounts) != 3 || got.ContainerSlotCounts[2] != 2 {
			t.Errorf("rendezvous answer %+v, want ready with %v", got, want)
		}
	}
	if second.took < 400*time.Millisecond || second.took > 10*time.Second {
		t.Errorf("the waiting pod was answered after %v", second.took)
	}

	for body, field := range map[string]string{
		`{"rank":3,"size":3,"addr":"x"}`:            "rank:",
		`{"rank":0,"size":0,"addr":"x"}`:            "size:",
		`{"rank":0,"size":2,"addr":""}`:             "addr:",
		`{"rank":0,"size":2,"addr":"x","slots":-1}`: "slots:",
	} {
		if code, _, raw := post("rdv-2", tokens["rdv-2"], body, ""); code != 400 || !strings.Contains(raw, field) {
			t.Errorf("%s: %d %s, want 400 naming %s", body, code, raw, field)
		}
	}
	if code, _, _ := post("rdv-1", tokens["rdv-2"], `{"rank":0,"size":1,"addr":"x"}`, ""); code != 403 {
		t.Errorf("another allocation's token: %d, want 403", code)
	}
}
