package app

import (
	"net"
	"net/url"
	"strings"

	"go.uber.org/zap"

	"github.com/watchdogd/watchdogd/internal/config"
)

// cleartextKeys names the config keys whose URL would carry a configured
// token without TLS: slack.api_url over http:// (the bot token), and
// kandev.base_url over http:// (so ws://, with kandev's token). A loopback
// host is left out: the token never leaves the machine (or the pod, for a
// sidecar on localhost, kandev's default).
func cleartextKeys(cfg *config.Config, src Sources) []string {
	var keys []string
	if cfg.Slack != nil && src.Slack != "" && cleartext(cfg.Slack.APIURL) {
		keys = append(keys, "slack.api_url")
	}
	if src.Kandev != "" && cleartext(cfg.Kandev.BaseURL) {
		keys = append(keys, "kandev.base_url")
	}
	return keys
}

// cleartext reports whether raw is plain http:// to a host that is not
// loopback.
func cleartext(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "http") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// WarnCleartext logs, once at start, each key whose URL sends a token in
// clear: named by key, never with the token.
func WarnCleartext(log *zap.Logger, cfg *config.Config, src Sources) {
	for _, key := range cleartextKeys(cfg, src) {
		log.Warn("a token is sent without TLS: use https:// unless the network in between is trusted", zap.String("key", key))
	}
}
