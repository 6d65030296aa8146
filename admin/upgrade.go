package admin

// ALTER PROXYCONFIG SET hot_upgrade_cmd = 'hot_upgrade' | 'commit' |
// 'rollback', ODP's hot-upgrade commands, and SHOW PROXYINFO UPGRADE:
// hot_upgrade_cmd is not a configuration item (nothing is stored), the
// value is handed to the process's Upgrader (cmd/obgate), which answers
// at once and carries the upgrade out in the background.

import (
	"strings"

	"obgate/mysqlproto"
	"obgate/reactor"
)

// hotUpgradeCmd is the pseudo-parameter that carries the commands.
const hotUpgradeCmd = "hot_upgrade_cmd"

// Upgrader runs hot upgrades. Any goroutine may call its methods.
type Upgrader interface {
	// Command starts (hot_upgrade), commits or rolls back an upgrade; the
	// error says why the command does not apply now.
	Command(cmd string) error
	// Info is SHOW PROXYINFO UPGRADE's info text.
	Info() string
}

// SetUpgrader installs the hot-upgrade runner; without one hot_upgrade_cmd
// is refused. Call it before serving.
func (a *Admin) SetUpgrader(u Upgrader) { a.upgrader = u }

// isUpgradeCommand reports whether an ALTER PROXYCONFIG names hot_upgrade_cmd.
func isUpgradeCommand(c command) bool { return strings.EqualFold(c.name, hotUpgradeCmd) }

// upgradeCommand hands an ALTER PROXYCONFIG SET hot_upgrade_cmd to the
// upgrader.
func (a *Admin) upgradeCommand(c command, reply *reactor.Reply) error {
	if a.upgrader == nil {
		return reply.Error(mysqlproto.NewSQLError(mysqlproto.ERWrongValueForVar, "hot upgrade is not available in this process"))
	}
	cmd := strings.ToLower(strings.TrimSpace(c.value))
	if err := a.upgrader.Command(cmd); err != nil {
		return reply.Error(mysqlproto.NewSQLError(mysqlproto.ERWrongValueForVar, "hot_upgrade_cmd '%s': %v", cmd, err))
	}
	a.log.Info("hot upgrade command", "cmd", cmd)
	return reply.OK(0, "")
}

// upgradeInfoText is SHOW PROXYINFO UPGRADE's text.
func (a *Admin) upgradeInfoText() string {
	if a.upgrader == nil {
		return `{hot_upgrade:"not available", state:"none", cmd:"none", upgrade_failures:0}`
	}
	return a.upgrader.Info()
}
