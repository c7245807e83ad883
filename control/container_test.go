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
		"none":                         {nil, ""},
		"HTTP and TCP ports are taken": {[]expconf.ProxyPort{{Port: 8080}, {Port: 6006, ProxyTCP: true}}, ""},
		"an unauthenticated port is refused": {[]expconf.ProxyPort{{Port: 8080}, {Port: 9000, Unauthenticated: true}},
			"environment.proxy_ports[1].unauthenticated: true is not supported"},
		"a port as the task's own page is refused": {[]expconf.ProxyPort{{Port: 8080, DefaultServiceID: true}},
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
