package admin

import (
	"errors"

	"obgate/config"
	"obgate/mysqlproto"
	"obgate/reactor"
)

// showConfig answers SHOW PROXYCONFIG [DIFF [USER]] [LIKE 'pattern'] with
// ODP's columns: name, value, info, need_reboot, visible_level, range,
// config_level. Values are the saved ones, so a need_reboot change shows
// before the restart that applies it. Secrets (the password items,
// mysql_user_hashes) show as config.Masked when set: their hashes log in
// as well as the passwords do, and this view reaches whoever may run it.
func (a *Admin) showConfig(c command) *mysqlproto.ResultSet {
	store := a.srv.Config()
	saved := store.Saved()
	rs := &mysqlproto.ResultSet{Columns: []mysqlproto.Column{
		mysqlproto.VarcharColumn("name"), mysqlproto.VarcharColumn("value"),
		mysqlproto.VarcharColumn("info"), mysqlproto.VarcharColumn("need_reboot"),
		mysqlproto.VarcharColumn("visible_level"), mysqlproto.VarcharColumn("range"),
		mysqlproto.VarcharColumn("config_level"),
	}}
	for _, it := range config.Items() {
		if c.hasLike && !matchLike(c.like, it.Name()) {
			continue
		}
		if c.diff && it.IsDefault(saved) {
			continue
		}
		if c.user && it.Level() != config.LevelUser {
			continue
		}
		rs.Rows = append(rs.Rows, []any{
			it.Name(), it.Shown(saved), it.Doc(), boolWord(it.NeedReboot()),
			it.Level().String(), it.Range(), "LEVEL_GLOBAL",
		})
	}
	return rs
}

// alterConfig answers ALTER PROXYCONFIG SET name = value: validated,
// persisted, and live at once unless the item needs a restart.
func (a *Admin) alterConfig(c command, reply *reactor.Reply) error {
	if isUpgradeCommand(c) {
		return a.upgradeCommand(c, reply)
	}
	it, err := a.srv.Config().Set(c.name, c.value)
	if err != nil {
		code := mysqlproto.ERWrongValueForVar
		if errors.Is(err, config.ErrUnknownItem) {
			code = mysqlproto.ERUnknownSystemVariable
		}
		return reply.Error(mysqlproto.NewSQLError(code, "%v", err))
	}
	a.configChanges.Inc()
	a.log.Info("config changed", "name", it.Name(), "need_reboot", it.NeedReboot())
	return reply.OK(0, "")
}

func boolWord(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
