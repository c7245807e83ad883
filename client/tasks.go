package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/resolute-ml/resolute"
)

// taskCollections are the API collections of the task types, as
// Determined names them: /api/v1/{commands,notebooks,shells,tensorboards}.
var taskCollections = map[string]string{resolute.TaskCommand: "commands", resolute.TaskNotebook: "notebooks",
	resolute.TaskShell: "shells", resolute.TaskTensorBoard: "tensorboards"}

// taskCollection is the path of a task type's collection; "" (any type)
// is /api/v1/tasks.
func taskCollection(typ string) (string, error) {
	if typ == "" {
		return "/api/v1/tasks", nil
	}
	c, ok := taskCollections[typ]
	if !ok {
		return "", fmt.Errorf("unknown task type %q", typ)
	}
	return "/api/v1/" + c, nil
}

func taskPath(typ, id, suffix string) (string, error) {
	base, err := taskCollection(typ)
	if err != nil {
		return "", err
	}
	return base + "/" + url.PathEscape(id) + suffix, nil
}

// CreateTask launches a command, notebook, shell or TensorBoard
// (POST /api/v1/{commands,notebooks,shells,tensorboards}). The request
// carries the context archive, if any, so it has no overall timeout.
func (c *Client) CreateTask(ctx context.Context, typ string, req resolute.CreateTaskRequest) (resolute.Task, error) {
	path, err := taskCollection(typ)
	if err != nil || typ == "" {
		return resolute.Task{}, fmt.Errorf("create task: unknown task type %q", typ)
	}
	resp, err := c.send(ctx, c.stream, http.MethodPost, path, nil, req)
	if err != nil {
		return resolute.Task{}, err
	}
	defer resp.Body.Close()
	var out resolute.TaskResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return resolute.Task{}, fmt.Errorf("POST %s: decode answer: %w", path, err)
	}
	return out.Task, nil
}

// Tasks lists the tasks of a type ("" for every type), newest first: the
// live ones, or with all those that ended too (GET /api/v1/{kind}[?all=true]).
func (c *Client) Tasks(ctx context.Context, typ string, all bool) ([]resolute.Task, error) {
	path, err := taskCollection(typ)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if all {
		q.Set("all", "true")
	}
	var out resolute.TasksResponse
	err = c.do(ctx, http.MethodGet, path, q, nil, &out)
	return out.Tasks, err
}

// Task gets one task (GET /api/v1/{kind}/{id}); with a type, a task of
// another type is not found.
func (c *Client) Task(ctx context.Context, typ, id string) (resolute.Task, error) {
	path, err := taskPath(typ, id, "")
	if err != nil {
		return resolute.Task{}, err
	}
	var out resolute.TaskResponse
	err = c.do(ctx, http.MethodGet, path, nil, nil, &out)
	return out.Task, err
}

// OpenTask asks for a link that opens a notebook's or TensorBoard's page in
// a browser (POST /api/v1/tasks/{id}/open): a ticket on the task origin
// that works once, for a minute.
func (c *Client) OpenTask(ctx context.Context, id string) (resolute.OpenTaskResponse, error) {
	var out resolute.OpenTaskResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/tasks/"+url.PathEscape(id)+"/open", nil, resolute.OpenTaskRequest{}, &out)
	return out, err
}

// KillTask ends a task (POST /api/v1/{kind}/{id}/kill). Without a type,
// the type is read from the id ("notebook-…").
func (c *Client) KillTask(ctx context.Context, typ, id string) error {
	path, err := taskPath(typeOr(typ, id), id, "/kill")
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, path, nil, struct{}{}, nil)
}

// SetTaskPriority changes a task's priority in its pool's queue
// (POST /api/v1/{kind}/{id}/set_priority).
func (c *Client) SetTaskPriority(ctx context.Context, typ, id string, priority int) error {
	path, err := taskPath(typeOr(typ, id), id, "/set_priority")
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, path, nil, map[string]int{"priority": priority}, nil)
}

// TaskLogs calls fn with each line of a task's logs
// (GET /api/v1/tasks/{id}/logs). With follow it waits for new lines until
// the task ends or ctx is canceled; a canceled follow is not an error.
func (c *Client) TaskLogs(ctx context.Context, id string, follow bool, fn func(resolute.TaskLog) error) error {
	q := url.Values{}
	if follow {
		q.Set("follow", "true")
	}
	resp, err := c.send(ctx, c.stream, http.MethodGet, "/api/v1/tasks/"+url.PathEscape(id)+"/logs", q, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	err = readResults(resp.Body, fn)
	if follow && ctx.Err() != nil {
		return nil
	}
	return err
}

// typeOr is typ, or else the type its id names: "command-…" is a command.
func typeOr(typ, id string) string {
	if typ != "" {
		return typ
	}
	prefix, _, _ := strings.Cut(id, "-")
	return strings.ToUpper(prefix)
}

// OpenTaskPort asks for a link that opens one of a task's HTTP proxy ports
// (environment.proxy_ports with proxy_tcp: false) in a browser: a ticket
// on the task origin for /proxy/<id>:<port>/, good once, for a minute.
func (c *Client) OpenTaskPort(ctx context.Context, id string, port int) (resolute.OpenTaskResponse, error) {
	var out resolute.OpenTaskResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/tasks/"+url.PathEscape(id)+"/open", nil, resolute.OpenTaskRequest{Port: port}, &out)
	return out, err
}
