package mysqlproto

// Capability is the set of CLIENT_* capability flags exchanged in the
// handshake. The low 32 bits are MySQL's; MariaDB puts its extended flags in
// bits 32..63 (sent in the handshake's reserved bytes) when the server clears
// ClientMySQL.
type Capability uint64

// MySQL capability flags.
const (
	ClientLongPassword              Capability = 1 << 0 // MariaDB: ClientMySQL
	ClientFoundRows                 Capability = 1 << 1
	ClientLongFlag                  Capability = 1 << 2
	ClientConnectWithDB             Capability = 1 << 3
	ClientNoSchema                  Capability = 1 << 4
	ClientCompress                  Capability = 1 << 5
	ClientODBC                      Capability = 1 << 6
	ClientLocalFiles                Capability = 1 << 7
	ClientIgnoreSpace               Capability = 1 << 8
	ClientProtocol41                Capability = 1 << 9
	ClientInteractive               Capability = 1 << 10
	ClientSSL                       Capability = 1 << 11
	ClientIgnoreSIGPIPE             Capability = 1 << 12
	ClientTransactions              Capability = 1 << 13
	ClientReserved                  Capability = 1 << 14
	ClientSecureConnection          Capability = 1 << 15
	ClientMultiStatements           Capability = 1 << 16
	ClientMultiResults              Capability = 1 << 17
	ClientPSMultiResults            Capability = 1 << 18
	ClientPluginAuth                Capability = 1 << 19
	ClientConnectAttrs              Capability = 1 << 20
	ClientPluginAuthLenEncData      Capability = 1 << 21
	ClientCanHandleExpiredPasswords Capability = 1 << 22
	ClientSessionTrack              Capability = 1 << 23
	ClientDeprecateEOF              Capability = 1 << 24
	ClientOptionalResultsetMetadata Capability = 1 << 25
	ClientZstdCompression           Capability = 1 << 26
	ClientQueryAttributes           Capability = 1 << 27
	ClientMultiFactorAuthentication Capability = 1 << 28
	ClientCapabilityExtension       Capability = 1 << 29
	ClientSSLVerifyServerCert       Capability = 1 << 30
	ClientRememberOptions           Capability = 1 << 31
	ClientMySQL                                = ClientLongPassword
	mariadbExtendedShift                       = 32
	MariaDBClientProgress           Capability = 1 << 32
	MariaDBClientComMulti           Capability = 1 << 33
	MariaDBClientStmtBulkOperations Capability = 1 << 34
	MariaDBClientExtendedTypeInfo   Capability = 1 << 35
	MariaDBClientCacheMetadata      Capability = 1 << 36
	MariaDBClientBulkUnitResults    Capability = 1 << 37
)

// ProxyCapabilities are the flags obgate can carry between a client and a
// server without changing what it parses. Flags outside this mask are
// removed from the greeting obgate shows clients: compression (obgate does
// not compress towards clients), query attributes and optional result-set
// metadata (they change the layout of packets obgate inspects), and MariaDB's
// metadata cache, bulk and COM_MULTI extensions for the same reason. TLS is
// added separately when obgate terminates it.
const ProxyCapabilities = ClientLongPassword | ClientFoundRows | ClientLongFlag |
	ClientConnectWithDB | ClientNoSchema | ClientODBC | ClientLocalFiles |
	ClientIgnoreSpace | ClientProtocol41 | ClientInteractive | ClientIgnoreSIGPIPE |
	ClientTransactions | ClientReserved | ClientSecureConnection |
	ClientMultiStatements | ClientMultiResults | ClientPSMultiResults |
	ClientPluginAuth | ClientConnectAttrs | ClientPluginAuthLenEncData |
	ClientCanHandleExpiredPasswords | ClientSessionTrack | ClientDeprecateEOF |
	ClientRememberOptions | MariaDBClientProgress | MariaDBClientExtendedTypeInfo

// Has reports whether every flag of f is set in c.
func (c Capability) Has(f Capability) bool { return c&f == f }

var capabilityNames = [...]string{
	"LONG_PASSWORD", "FOUND_ROWS", "LONG_FLAG", "CONNECT_WITH_DB", "NO_SCHEMA",
	"COMPRESS", "ODBC", "LOCAL_FILES", "IGNORE_SPACE", "PROTOCOL_41",
	"INTERACTIVE", "SSL", "IGNORE_SIGPIPE", "TRANSACTIONS", "RESERVED",
	"SECURE_CONNECTION", "MULTI_STATEMENTS", "MULTI_RESULTS", "PS_MULTI_RESULTS",
	"PLUGIN_AUTH", "CONNECT_ATTRS", "PLUGIN_AUTH_LENENC_CLIENT_DATA",
	"CAN_HANDLE_EXPIRED_PASSWORDS", "SESSION_TRACK", "DEPRECATE_EOF",
	"OPTIONAL_RESULTSET_METADATA", "ZSTD_COMPRESSION", "QUERY_ATTRIBUTES",
	"MULTI_FACTOR_AUTHENTICATION", "CAPABILITY_EXTENSION",
	"SSL_VERIFY_SERVER_CERT", "REMEMBER_OPTIONS",
	"MARIADB_PROGRESS", "MARIADB_COM_MULTI", "MARIADB_STMT_BULK_OPERATIONS",
	"MARIADB_EXTENDED_TYPE_INFO", "MARIADB_CACHE_METADATA", "MARIADB_BULK_UNIT_RESULTS",
}

// String lists the set flags, e.g. "PROTOCOL_41|SSL".
func (c Capability) String() string { return flagNames(uint64(c), capabilityNames[:]) }
