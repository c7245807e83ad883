package control

import (
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
)

func TestProxyPortsThatWouldOpenATaskToOthersAreRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		pps  []expconf.ProxyPort
		want string // "" accepts
	}{
		"none":                {nil, ""},
		"TCP ports are taken": {[]expconf.ProxyPort{{Port: 8080, ProxyTCP: true}, {Port: 6006, ProxyTCP: true}}, ""},
		"an HTTP port, for the task origin to serve, is taken": {[]expconf.ProxyPort{{Port: 8080, ProxyTCP: true}, {Port: 6006}}, ""},
		"an unauthenticated port is refused": {[]expconf.ProxyPort{{Port: 8080, ProxyTCP: true}, {Port: 9000, Unauthenticated: true}},
			"environment.proxy_ports[1].unauthenticated: true is not supported"},
		"a port as the task's own page is refused": {[]expconf.ProxyPort{{Port: 8080, ProxyTCP: true, DefaultServiceID: true}},
			"environment.proxy_ports[0].default_service_id: true is not supported"},
	} {
		t.Run(name, func(t *testing.T) {
			err := checkProxyPorts(tc.pps)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if resolute.ErrorCode(err) != resolute.EInvalid || !strings.Contains(resolute.ErrorMessage(err), tc.want) {
				t.Fatalf("%v, want invalid: %s", err, tc.want)
			}
		})
	}
}

func TestATaskWithoutAnAddressIsReachedOnLoopbackOnlyWhereTasksRunOnTheMastersMachine(t *testing.T) {
	for name, tc := range map[string]struct {
		listen, addr, want string
	}{
		"a pod's IP is used":                         {"0.0.0.0", "10.1.2.3", "10.1.2.3"},
		"the master's machine: loopback":             {"127.0.0.1", "", "127.0.0.1"},
		"pods: no address yet is no one's, not ours": {"0.0.0.0", "", ""},
	} {
		t.Run(name, func(t *testing.T) {
			c := &core{rm: listenOn{addr: tc.listen}}
			got, err := c.taskHost(tc.addr, "trial 7")
			if tc.want == "" {
				if resolute.ErrorCode(err) != resolute.EConflict {
					t.Fatalf("%q, %v: want a conflict", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%q, %v: want %s", got, err, tc.want)
			}
		})
	}
}

// listenOn is a resource manager whose tasks listen on addr; nothing else
// of it is asked.
type listenOn struct {
	ResourceManager
	addr string
}

func (l listenOn) ListenAddr() string { return l.addr }
