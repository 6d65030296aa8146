package backend

import (
	"encoding/binary"

	"obgate/mysqlproto"
	"obgate/reactor/sessvars"
)

// COM_SET_OPTION's options.
const (
	OptionMultiStatementsOn  uint16 = 0
	OptionMultiStatementsOff uint16 = 1
)

// SetOptionPayload is the COM_SET_OPTION that turns multi-statements on
// or off.
func SetOptionPayload(on bool) []byte {
	opt := OptionMultiStatementsOff
	if on {
		opt = OptionMultiStatementsOn
	}
	return binary.LittleEndian.AppendUint16([]byte{byte(mysqlproto.ComSetOption)}, opt)
}

// SyncTo brings the server session up to date with v, the client's
// session state, before a statement runs on it: the multi-statement
// option (COM_SET_OPTION), the database (COM_INIT_DB), and the variables
// that differ (one SET, sessvars.Vars.ResetSQL). Each step is one of
// obgate's own commands (Command, with opt); the first that fails ends
// it, with the server session only partly synced (it is not marked, so
// the next sync starts again). Nothing is sent when it is in step.
func (b *Conn) SyncTo(v *sessvars.Vars, opt CommandOptions) error {
	if v.InSync(&b.Sync) {
		return nil
	}
	if lacking, on := v.MultiStatementsLacking(&b.Sync); lacking {
		if err := b.RoundTrip(SetOptionPayload(on), opt); err != nil {
			return err
		}
	}
	if v.DBLacking(&b.Sync) && v.DB() != "" {
		if err := b.RoundTrip(append([]byte{byte(mysqlproto.ComInitDB)}, v.DB()...), opt); err != nil {
			return err
		}
	}
	if sql := v.ResetSQL(&b.Sync); sql != nil {
		if err := b.RoundTrip(append([]byte{byte(mysqlproto.ComQuery)}, sql...), opt); err != nil {
			return err
		}
	}
	v.MarkSynced(&b.Sync)
	return nil
}
