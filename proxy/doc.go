// Package proxy is the master's reverse proxy to task services: the Jupyter
// notebooks, TensorBoards and whatever else runs inside tasks and is reached
// by users at /proxy/{task id}/... on the task origin, an origin that is
// not the master's (masterconf's tasks_url, served by the master's second
// listener).
//
// A Proxy owns four things:
//
//   - routing: the first path segment after /proxy/ names the task; a Lookup
//     supplied by the caller says where the task's service listens and in what
//     state the task is. The path goes to the service unchanged, because
//     Jupyter and TensorBoard are started with the base URL /proxy/{task id}/.
//   - forwarding: HTTP with streaming (no body is ever buffered whole) and
//     websocket upgrades (Jupyter kernels and terminals), both through
//     net/http/httputil.ReverseProxy.
//   - the boundary with user code: the cookies named by WithStripCookies
//     never reach a service, and a service's Set-Cookie for the names of
//     WithDropSetCookies (or for no name at all) never reaches the browser.
//     A websocket upgrade, or a request that may change something, from a
//     page of another origin is refused (CheckOrigin), whatever the service
//     would say.
//   - activity: the time of the last request or websocket traffic per task,
//     read by the idle-timeout watcher through LastActivity.
//
// It must not decide who may see a task: the caller's Authorize option does,
// and the caller's Lookup knows the tasks. It knows no cookie, ticket or
// session of its own, and it imports only the root package, never db,
// control or handlers. It renders only the few plain pages a proxy needs
// (waiting, ended, errors); the caller can take over error rendering with
// WithErrorHandler.
package proxy
