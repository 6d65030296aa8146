package config

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"
)

// Config is one immutable snapshot of every item. Each exported field holds the item whose
// ODP name is the field name in snake case (ClientMaxConnections is client_max_connections);
// the registry (Items) has the default, range and description of each. Durations are
// time.Duration, capacities are bytes, passwords are SHA1 hex ("" = no password).
//
// Readers get a snapshot from Store.Load and read fields directly; that is the whole cost on
// the hot path. A snapshot must never be modified once published: build changed copies with
// With, or through Store.Set.
type Config struct {
	// Listeners and identity.
	ListenPort             int64
	LocalBoundIP           string
	PrometheusListenPort   int64
	EnablePrometheus       bool
	PrometheusBoundIP      string
	EnablePprof            bool
	AppName                string
	ProxyID                int64
	ClientSessionIDVersion int64
	RootserviceList        string
	RootserviceClusterName string
	ClusterRootserviceList string
	ServerRoutingMode      string
	TestServerAddr         string

	// Client connections (obgate only: ClientIOMode, ClientHandshakeTimeout, EnableClientSSL,
	// ClientSSLCertFile, ClientSSLKeyFile, MaxPacketSize, ServerIdleTimeout).
	ClientIOMode             string
	ClientHandshakeTimeout   time.Duration
	EnableClientSSL          bool
	ClientSSLCertFile        string
	ClientSSLKeyFile         string
	ClientMaxHandshakes      int64
	ClientMaxHandshakesPerIP int64
	ClientIPTrustedList      string
	// TLS to servers (enable_server_ssl is ODP's; the others obgate's).
	EnableServerSSL                     bool
	ServerSSLVerify                     string
	ServerSSLCAFile                     string
	ServerSSLCertFile                   string
	ServerSSLKeyFile                    string
	MaxPacketSize                       int64
	ClientPSKeepCount                   int64
	ClientMaxMemorySize                 int64
	ClientMaxPreparedStmtCount          int64
	ServerIdleTimeout                   time.Duration
	ClientMaxConnections                int64
	EnableClientConnectionLRUDisconnect bool
	DefaultInactivityTimeout            time.Duration
	ConnectionDiagnosisOption           int64
	ClientTCPKeepIdle                   int64
	ClientTCPKeepIntvl                  int64
	ClientTCPKeepCnt                    int64
	ClientTCPUserTimeout                int64
	ServerTCPKeepIdle                   int64
	ServerTCPKeepIntvl                  int64
	ServerTCPKeepCnt                    int64
	ServerTCPUserTimeout                int64

	// Users and authentication.
	ObproxySysPassword       string
	InspectorPassword        string
	ObserverSysPassword      string
	ObserverSysPassword1     string
	SkipProxySysPrivateCheck bool
	SkipProxyroCheck         bool
	EnableProxyScramble      bool
	MySQLVersion             string
	UsernameSeparator        string
	ProxyTenantName          string
	EnableFullUsername       bool
	EnableCloudFullUsername  bool
	EnableClusterCheckout    bool
	EnableClientIPCheckout   bool

	// Timeouts and retries.
	ShortAsyncTaskTimeout     time.Duration
	LongAsyncTaskTimeout      time.Duration
	ObserverQueryTimeoutDelta time.Duration
	ConnectObserverMaxRetries int64
	HotUpgradeExitTimeout     time.Duration
	// Hot upgrade (cmd/obgate/upgrade.go).
	HotUpgradeFailureRetries     int64
	HotUpgradeRollbackTimeout    time.Duration
	ProxyHotUpgradeCheckInterval time.Duration

	// Server state, congestion and detection.
	ServerStateRefreshInterval       time.Duration
	MetadbServerStateRefreshInterval time.Duration
	EnableCongestion                 bool
	CongestionFailureThreshold       int64
	CongestionFailWindow             time.Duration
	CongestionRetryInterval          time.Duration
	MinKeepCongestionInterval        time.Duration
	MinCongestedConnectTimeout       time.Duration
	ServerDetectMode                 int64
	ServerDetectFailThreshold        int64
	ServerDetectRefreshInterval      time.Duration
	DetectServerTimeout              time.Duration
	RPCEnableCongestion              bool
	ServerBreakAction                string
	MySQLUserHashes                  string
	MySQLHashReaderUser              string
	MySQLHashReaderPassword          string

	// Routing.
	DelayUpdateEntryInterval         time.Duration
	TenantLocationValidTime          time.Duration
	LocationExpirePeriodTime         time.Duration
	EnableAsyncPullLocationCache     bool
	EnablePartitionTableRoute        bool
	EnablePLRoute                    bool
	EnableCachedServer               bool
	EnableSingleLeaderNodeRouting    bool
	EnablePrimaryZone                bool
	ProxyPrimaryZoneName             string
	ProxyIDCName                     string
	ProxyRoutePolicy                 string
	EnableReroute                    bool
	WeakReadUserList                 string
	EnableWeakReroute                bool
	EnableTransactionInternalRouting bool
	EnableBadRouteReject             bool
	InitSQL                          string

	// Protocol.
	EnableOBProtocolV2           bool
	EnableOBProtocolV2WithClient bool
	EnableCompressionProtocol    bool
	CompressionAlgorithm         string
	TunnelRequestSizeThreshold   int64
	RequestBufferLength          int64

	// Logging, metrics and admin.
	SyslogLevel                 string
	LogDir                      string
	MaxLogFileSize              int64
	PrometheusSyncInterval      time.Duration
	EnableExtraPrometheusMetric bool
	MonitorItemLimit            int64
	MonitorItemMaxIdlePeriod    time.Duration
	InternalCmdMemLimited       int64

	// Event loops, memory, and items accepted so that ODP start scripts keep working (their
	// docs say which change nothing).
	WorkThreadNum             int64
	AutomaticMatchWorkThread  bool
	GoMaxProcs                int64
	TimerSlack                time.Duration
	ProxyMemLimited           int64
	RoutingCacheMemLimited    int64
	EnableStrictKernelRelease bool
	EnableMetadbUsed          bool
	RPCListenPort             int64
	EnableOBProxyRPCService   bool
	LogDirSizeThreshold       int64
	ProxyCluster              string

	// text[i] is the value of registry[i] as the user wrote it ("180000s" stays "180000s").
	text []string
}

// ref ties an item to its Config field. The constructors below fix the kind from the field's
// Go type, so an item and its field cannot disagree.
type ref struct {
	kind Kind
	ptr  func(*Config) any // *bool, *int64, *time.Duration or *string
}

func boolRef(f func(*Config) *bool) ref {
	return ref{KindBool, func(c *Config) any { return f(c) }}
}
func intRef(f func(*Config) *int64) ref {
	return ref{KindInt, func(c *Config) any { return f(c) }}
}
func capRef(f func(*Config) *int64) ref {
	return ref{KindCapacity, func(c *Config) any { return f(c) }}
}
func strRef(f func(*Config) *string) ref {
	return ref{KindString, func(c *Config) any { return f(c) }}
}
func pwdRef(f func(*Config) *string) ref {
	return ref{KindPassword, func(c *Config) any { return f(c) }}
}
func durRef(f func(*Config) *time.Duration) ref {
	return ref{KindDuration, func(c *Config) any { return f(c) }}
}

// get returns the item's typed value in c.
func (it *Item) get(c *Config) any {
	switch p := it.ref.ptr(c).(type) {
	case *bool:
		return *p
	case *int64:
		return *p
	case *time.Duration:
		return *p
	case *string:
		return *p
	}
	panic("config: item " + it.name + " has an unsupported field type")
}

// store writes a typed value produced by parse into c.
func (it *Item) store(c *Config, v any, text string) {
	switch p := it.ref.ptr(c).(type) {
	case *bool:
		*p = v.(bool)
	case *int64:
		*p = v.(int64)
	case *time.Duration:
		*p = v.(time.Duration)
	case *string:
		*p = v.(string)
	default:
		panic("config: item " + it.name + " has an unsupported field type")
	}
	if c.text == nil {
		c.text = make([]string, len(registry))
	}
	c.text[it.index] = text
}

// Value returns the item's value in c as SHOW PROXYCONFIG prints it: the text it was given
// in when that still matches the field, otherwise the field formatted canonically.
func (it *Item) Value(c *Config) string {
	v := it.get(c)
	if it.index < len(c.text) {
		t := c.text[it.index]
		if pv, _, err := it.parse(t, fromFile); err == nil && pv == v {
			return t
		}
	}
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case int64:
		if it.Kind() == KindCapacity {
			return formatCapacity(x)
		}
		return strconv.FormatInt(x, 10)
	case time.Duration:
		return formatDuration(x)
	}
	return v.(string)
}

// IsDefault reports whether the item has its default value in c (SHOW PROXYCONFIG DIFF lists
// the others). Equal values count as equal however they were written: "20000ms" is "20s".
func (it *Item) IsDefault(c *Config) bool {
	return it.get(c) == it.get(defaultConfig)
}

// Equal reports whether a and b hold the same value for the item.
func (it *Item) Equal(a, b *Config) bool { return it.get(a) == it.get(b) }

// Value returns the named item's value in c; false if there is no such item.
func (c *Config) Value(name string) (string, bool) {
	it, ok := Lookup(name)
	if !ok {
		return "", false
	}
	return it.Value(c), true
}

// defaultConfig holds every default; it is shared and never handed out.
var defaultConfig = buildDefault()

func buildDefault() *Config {
	c := &Config{text: make([]string, len(registry))}
	for _, it := range registry {
		v, text, err := it.parse(it.def, fromFile)
		if err != nil {
			panic("config: default of " + it.name + ": " + err.Error())
		}
		it.store(c, v, text)
	}
	return c
}

// Default returns a new snapshot holding every default.
func Default() *Config { return defaultConfig.clone() }

func (c *Config) clone() *Config {
	n := *c
	n.text = slices.Clone(c.text)
	if n.text == nil {
		n.text = make([]string, len(registry))
	}
	return &n
}

// With returns a copy of c with one item changed, validated like a -o option (a password is
// hashed unless it is already 40 hex digits). c itself is not modified. Tests use it to build
// snapshots; any goroutine may call it.
func (c *Config) With(name, value string) (*Config, error) {
	it, err := lookup(name)
	if err != nil {
		return nil, err
	}
	n := c.clone()
	if err := n.set(it, value, fromCommandLine); err != nil {
		return nil, err
	}
	if err := n.validate(); err != nil {
		return nil, err
	}
	return n, nil
}

func (c *Config) set(it *Item, raw string, src source) error {
	v, text, err := it.parse(raw, src)
	if err != nil {
		return err
	}
	it.store(c, v, text)
	return nil
}

// validate checks rules that involve more than one item. Each rule only relates items that
// take effect at the same time (all dynamic or all need_reboot), so a running snapshot and
// its stored successor can be checked alike.
func (c *Config) validate() error {
	if c.ClientSessionIDVersion == 1 && c.ProxyID > 255 {
		return fmt.Errorf("%w: proxy_id %d needs client_session_id_version 2 (version 1 allows [0,255])",
			ErrInvalidValue, c.ProxyID)
	}
	if c.EnableClientSSL && (c.ClientSSLCertFile == "" || c.ClientSSLKeyFile == "") {
		return fmt.Errorf("%w: enable_client_ssl needs client_ssl_cert_file and client_ssl_key_file",
			ErrInvalidValue)
	}
	return nil
}

// ListenAddr is the SQL listener address, local_bound_ip:listen_port.
func (c *Config) ListenAddr() string {
	return net.JoinHostPort(c.LocalBoundIP, strconv.FormatInt(c.ListenPort, 10))
}

// PrometheusAddr is the metrics listener address,
// prometheus_bound_ip:prometheus_listen_port. ODP binds it on every
// interface, as obgate's default does.
func (c *Config) PrometheusAddr() string {
	if c.PrometheusBoundIP == "" || c.PrometheusBoundIP == "0.0.0.0" {
		return ":" + strconv.FormatInt(c.PrometheusListenPort, 10)
	}
	return net.JoinHostPort(c.PrometheusBoundIP, strconv.FormatInt(c.PrometheusListenPort, 10))
}

// ClientIPTrusted reports whether peer (a client connection's remote
// address) is in client_ip_trusted_list, so that the __client_ip it sends
// may be passed on as the client's address.
func (c *Config) ClientIPTrusted(peer netip.Addr) bool {
	peer = peer.Unmap()
	for _, e := range splitList(c.ClientIPTrustedList) {
		if p, err := parsePrefix(e); err == nil && p.Contains(peer) {
			return true
		}
	}
	return false
}

// RootserviceAddrs splits rootservice_list into host:port entries.
func (c *Config) RootserviceAddrs() []string { return splitList(c.RootserviceList) }

// TestServerAddrs splits test_server_addr into host:port entries.
func (c *Config) TestServerAddrs() []string { return splitList(c.TestServerAddr) }

// UsernameSeparators returns the separators of username_separator (":;-;." gives ":", "-", ".").
func (c *Config) UsernameSeparators() []string { return splitList(c.UsernameSeparator) }

// LogLevel maps syslog_level onto slog. ODP's diagnostic levels sit between TRACE and INFO,
// so the default WDIAG lets INFO and above through.
func (c *Config) LogLevel() slog.Level { return logLevels[c.SyslogLevel] }

var logLevels = map[string]slog.Level{
	"DEBUG":    slog.LevelDebug - 4,
	"TRACE":    slog.LevelDebug,
	"WDIAG":    slog.LevelInfo - 2,
	"EDIAG":    slog.LevelInfo - 1,
	"INFO":     slog.LevelInfo,
	"WARN":     slog.LevelWarn,
	"USER_ERR": slog.LevelWarn + 2,
	"ERROR":    slog.LevelError,
}
