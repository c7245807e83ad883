package handlers

import (
	"log/slog"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/live"
	"github.com/resolute-ml/resolute/masterlog"
	"github.com/resolute-ml/resolute/monitoring"
	"github.com/resolute-ml/resolute/proxy"
	"github.com/resolute-ml/resolute/web"
)

// Config is what the handlers need to know of the master's configuration.
type Config struct {
	Master          resolute.MasterInfo
	SessionLifetime time.Duration
	// TasksURL is the task origin as browsers reach it (masterconf's
	// TaskOrigin), where TaskHandler serves: one origin for every task, or
	// one per task.
	TasksURL      resolute.TasksURL
	SecureCookies bool  // set under TLS
	MaxBodyBytes  int64 // larger request bodies get 413
	// TrustedProxies are the addresses of proxies (TLS-terminating load
	// balancers) whose X-Forwarded-Proto and X-Forwarded-For are believed;
	// none by default.
	TrustedProxies []netip.Prefix
	// CheckpointDir is where shared_fs checkpoints of the master's default
	// storage live, for downloads.
	CheckpointDir string
	// UploadDir holds the temporary files of uploads (the master's
	// <data_dir>/uploads); empty means the system's temporary directory.
	UploadDir string
	// MaxConcurrentUploads is how many requests may upload a context
	// directory at once; others wait their turn. 0 means
	// DefaultMaxConcurrentUploads.
	MaxConcurrentUploads int
	// UploadIdleTimeout ends an upload whose client sends nothing for this
	// long (408), freeing its slot; 0 means DefaultUploadIdleTimeout.
	UploadIdleTimeout time.Duration
	// UploadWaitTimeout is how long an upload waits for its turn before it
	// is refused (503, Retry-After); 0 means DefaultUploadWaitTimeout.
	UploadWaitTimeout time.Duration
	// Metrics says whether GET /metrics is served and to whom.
	Metrics MetricsAccess
	// MasterConfig is the master's configuration with its secrets masked,
	// as GET /api/v1/master/config shows it to administrators.
	MasterConfig map[string]any
}

// Deps are what the handlers call.
type Deps struct {
	DB *db.DB
	// Services make every change; handlers read through DB.
	Services *control.Services
	Configs  *control.Configs
	// Queue and Admission are read for what the runner knows that is not
	// in the database: the queue's last decision, pools, agents, and
	// whether an allocation is asked to preempt.
	Queue     *control.Queue
	Admission *control.Admission
	Logger    *slog.Logger
	Logs      *masterlog.Buffer
	// Terminals opens the terminals of shells; nil refuses them.
	Terminals Terminals
	// Changes tells GET /events what changed; nil refuses the stream, and
	// live pages fall back to polling slowly.
	Changes *live.Listener
	// DatabaseDown says why the embedded database is down while its
	// supervisor restarts it, "" while it runs (GET /health); nil with an
	// external database, which /health pings.
	DatabaseDown func() string
	// Monitoring is told of every request and serves GET /metrics; nil
	// counts nothing.
	Monitoring *monitoring.Metrics
}

// Server holds the dependencies of every handler.
type Server struct {
	cfg       Config
	db        *db.DB
	svc       *control.Services
	configs   *control.Configs
	queue     *control.Queue
	admission *control.Admission
	logger    *slog.Logger
	logs      *masterlog.Buffer
	assets    *web.Assets
	throttle  *auth.LoginThrottle
	proxy     *proxy.Proxy
	changes   *live.Listener
	uploads   *uploadSlots
	now       func() time.Time

	databaseDown func() string
	monitoring   *monitoring.Metrics
	sseClients   atomic.Int64 // event streams open now
	openAPIState              // the OpenAPI document, made on first use

	// terminals opens shells' terminals; activity, when set, is told of
	// their traffic (for idle timeouts).
	terminals Terminals
	activity  func(taskID string)
}

// New returns the handlers' server; Routes gives its http.Handler.
func New(cfg Config, d Deps) *Server {
	s := &Server{
		cfg: cfg, db: d.DB, svc: d.Services, configs: d.Configs, queue: d.Queue, admission: d.Admission, logger: d.Logger, logs: d.Logs, assets: web.New(),
		throttle: auth.NewLoginThrottle(time.Now), now: time.Now, terminals: d.Terminals, changes: d.Changes,
		databaseDown: d.DatabaseDown, monitoring: d.Monitoring,
		uploads: newUploadSlots(cfg, d.Logger),
	}
	s.proxy = s.newProxy()
	s.activity = s.proxy.Touch
	return s
}

// SSEClients counts the server-sent event streams open now.
func (s *Server) SSEClients() int { return int(s.sseClients.Load()) }

// Proxy is the task proxy of the task origin, whose activity the
// idle-timeout watcher reads.
func (s *Server) Proxy() *proxy.Proxy { return s.proxy }

// Handler returns the master's routes wrapped in the protections every
// request gets: the security headers (on refusals too), who the client is
// (behind a trusted proxy), and the refusal of changes sent from other
// origins.
func (s *Server) Handler() http.Handler {
	return securityHeaders(s.identifyClient(s.refuseCrossOrigin(s.Routes())))
}

// TaskHandler returns the task origin's routes (TaskRoutes), which the
// master serves on its second listener. Requests that change something
// must come from pages of the task origin itself, as on the master, and a
// trusted proxy is believed about the scheme (the task cookie's Secure) as
// there.
func (s *Server) TaskHandler() http.Handler {
	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxy.WriteError(w, r, resolute.Errorf(resolute.EForbidden, "cross-origin request refused"))
	}))
	return s.identifyClient(csrf.Handler(s.TaskRoutes()))
}
