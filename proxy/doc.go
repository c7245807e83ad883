// Package proxy is the master's reverse proxy to task services: the Jupyter
// notebooks, TensorBoards and terminals that run inside tasks and are reached
// by users at /proxy/{task id}/....
//
// A Proxy owns three things:
//
//   - routing: the first path segment after /proxy/ names the task; a Lookup
//     supplied by the caller says where the task's service listens and in what
//     state the task is. The path goes to the service unchanged, because
//     Jupyter and TensorBoard are started with the base URL /proxy/{task id}/.
//   - forwarding: HTTP with streaming (no body is ever buffered whole) and
//     websocket upgrades (Jupyter kernels and terminals), both through
//     net/http/httputil.ReverseProxy.
//   - activity: the time of the last request or websocket traffic per task,
//     read by the idle-timeout watcher through LastActivity.
//
// It must not decide who may see a task: the caller's Authorize option does,
// and the caller's Lookup knows the tasks. It imports only the root package,
// never db, control or handlers. It renders only the few plain pages a proxy
// needs (waiting, ended, errors); the caller can take over error rendering
// with WithErrorHandler.
package proxy
