package mysqlproto

import "strconv"

// Command is the first byte of a client request packet.
type Command byte

// Command bytes.
const (
	ComSleep            Command = 0x00
	ComQuit             Command = 0x01
	ComInitDB           Command = 0x02
	ComQuery            Command = 0x03
	ComFieldList        Command = 0x04
	ComCreateDB         Command = 0x05
	ComDropDB           Command = 0x06
	ComRefresh          Command = 0x07
	ComShutdown         Command = 0x08
	ComStatistics       Command = 0x09
	ComProcessInfo      Command = 0x0a
	ComConnect          Command = 0x0b
	ComProcessKill      Command = 0x0c
	ComDebug            Command = 0x0d
	ComPing             Command = 0x0e
	ComTime             Command = 0x0f
	ComDelayedInsert    Command = 0x10
	ComChangeUser       Command = 0x11
	ComBinlogDump       Command = 0x12
	ComTableDump        Command = 0x13
	ComConnectOut       Command = 0x14
	ComRegisterSlave    Command = 0x15
	ComStmtPrepare      Command = 0x16
	ComStmtExecute      Command = 0x17
	ComStmtSendLongData Command = 0x18
	ComStmtClose        Command = 0x19
	ComStmtReset        Command = 0x1a
	ComSetOption        Command = 0x1b
	ComStmtFetch        Command = 0x1c
	ComDaemon           Command = 0x1d
	ComBinlogDumpGTID   Command = 0x1e
	ComResetConnection  Command = 0x1f
	ComStmtBulkExecute  Command = 0xfa // MariaDB
)

var commandNames = [...]string{
	"COM_SLEEP", "COM_QUIT", "COM_INIT_DB", "COM_QUERY", "COM_FIELD_LIST",
	"COM_CREATE_DB", "COM_DROP_DB", "COM_REFRESH", "COM_SHUTDOWN",
	"COM_STATISTICS", "COM_PROCESS_INFO", "COM_CONNECT", "COM_PROCESS_KILL",
	"COM_DEBUG", "COM_PING", "COM_TIME", "COM_DELAYED_INSERT",
	"COM_CHANGE_USER", "COM_BINLOG_DUMP", "COM_TABLE_DUMP", "COM_CONNECT_OUT",
	"COM_REGISTER_SLAVE", "COM_STMT_PREPARE", "COM_STMT_EXECUTE",
	"COM_STMT_SEND_LONG_DATA", "COM_STMT_CLOSE", "COM_STMT_RESET",
	"COM_SET_OPTION", "COM_STMT_FETCH", "COM_DAEMON", "COM_BINLOG_DUMP_GTID",
	"COM_RESET_CONNECTION",
}

func (c Command) String() string {
	if int(c) < len(commandNames) {
		return commandNames[c]
	}
	if c == ComStmtBulkExecute {
		return "COM_STMT_BULK_EXECUTE"
	}
	return "COM_0x" + strconv.FormatUint(uint64(c), 16)
}

// HasResponse reports whether the server answers the command. COM_QUIT,
// COM_STMT_SEND_LONG_DATA and COM_STMT_CLOSE get no reply.
func (c Command) HasResponse() bool {
	switch c {
	case ComQuit, ComStmtSendLongData, ComStmtClose:
		return false
	}
	return true
}
