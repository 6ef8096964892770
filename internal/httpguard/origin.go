package httpguard

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// loopbackListen says whether the listener is bound to loopback only, as
// by default. Nothing outside the machine reaches it then, under any name;
// but a page in a browser on the machine can, under a name its site
// resolves to 127.0.0.1 (DNS rebinding), and read the answers as its own.
// The Host the browser sends then names that site, not this machine.
func loopbackListen(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	return loopbackName(host)
}

// loopbackHost says whether a request's Host names this machine's
// loopback: localhost or a loopback address, with any port or none.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return loopbackName(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
}

func loopbackName(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// OnlyLoopbackHosts answers 421 to a request whose Host does not name
// loopback, when the listener is on loopback; otherwise it is h. Probes
// and Prometheus reach a listener on a pod's address, where no check
// applies.
func OnlyLoopbackHosts(listen string, h http.Handler) http.Handler {
	if !loopbackListen(listen) {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("host %.100q is not this server: it listens on loopback and answers to localhost, 127.0.0.1 and [::1]", r.Host),
				http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// CrossSite says why a request came from a page of another site, or ""
// when it did not. A browser sends Sec-Fetch-Site, and Origin on a POST
// or PUT: the page's scheme, host and port, which must then be this
// server's host and port (its Host; the scheme is not compared, a proxy
// in front may end TLS). A config reloader, curl or wget sends neither.
// A form or fetch() with a text/plain body needs no CORS preflight, so
// without this any page a browser opens could make the daemon reload.
func CrossSite(r *http.Request) string {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return "Sec-Fetch-Site: cross-site"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	if u, err := url.Parse(origin); err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
		return fmt.Sprintf("Origin %.100q is not this server (%.100q)", origin, r.Host)
	}
	return ""
}
