package resolute_test

import (
	"testing"

	"github.com/resolute-ml/resolute"
)

func TestATaskIsServedOnItsOwnHostOnlyWhereTasksHaveOne(t *testing.T) {
	tests := map[string]struct {
		url, id, host string
		origin        string
		serves        bool
	}{
		"one origin serves every task on its host": {
			url: "http://127.0.0.1:8081", id: "notebook-3", host: "127.0.0.1:8081",
			origin: "http://127.0.0.1:8081", serves: true,
		},
		"one origin serves whatever the Host": {
			url: "https://tasks.example.com", id: "notebook-3", host: "notebook-4.tasks.example.com",
			origin: "https://tasks.example.com", serves: true,
		},
		"a task on its own host": {
			url: "https://{task}.tasks.example.com", id: "notebook-3", host: "notebook-3.tasks.example.com",
			origin: "https://notebook-3.tasks.example.com", serves: true,
		},
		"a task on its own host, with the port and in capitals": {
			url: "http://{task}.localhost:8081", id: "tensorboard-12", host: "TensorBoard-12.LOCALHOST:8081",
			origin: "http://tensorboard-12.localhost:8081", serves: true,
		},
		"a task on its own host behind a proxy on another port": {
			url: "http://{task}.localhost:8081", id: "notebook-3", host: "notebook-3.localhost:443",
			origin: "http://notebook-3.localhost:8081", serves: true,
		},
		"an upper-case ID gets a lower-case host": {
			url: "https://nb-{task}.example.com", id: "Notebook-3", host: "nb-notebook-3.example.com",
			origin: "https://nb-notebook-3.example.com", serves: true,
		},
		"a task on another task's host": {
			url: "https://{task}.tasks.example.com", id: "notebook-3", host: "notebook-4.tasks.example.com",
			origin: "https://notebook-3.tasks.example.com",
		},
		"a task on the domain of the tasks": {
			url: "https://{task}.tasks.example.com", id: "notebook-3", host: "tasks.example.com",
			origin: "https://notebook-3.tasks.example.com",
		},
		"a task whose host would be longer": {
			url: "https://{task}-x.example.com", id: "notebook-3", host: "notebook-3.example.com",
			origin: "https://notebook-3-x.example.com",
		},
		"an ID with a dot that would make another task's host": {
			url: "https://{task}.tasks.example.com", id: "notebook-3.tasks", host: "notebook-3.tasks.tasks.example.com",
			origin: "https://notebook-3.tasks.tasks.example.com",
		},
		"no ID": {
			url: "https://{task}.tasks.example.com", id: "", host: ".tasks.example.com",
			origin: "https://.tasks.example.com",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			u := resolute.TasksURL(tc.url)
			if got := u.Origin(tc.id); got != tc.origin {
				t.Errorf("Origin(%q) = %q, want %q", tc.id, got, tc.origin)
			}
			if got := u.Serves(tc.host, tc.id); got != tc.serves {
				t.Errorf("Serves(%q, %q) = %v, want %v", tc.host, tc.id, got, tc.serves)
			}
		})
	}
}
