#!/usr/bin/env sysbench
-- One point select per event, sent the way Go's database/sql sends
-- db.QueryRowContext(ctx, query, id) through go-sql-driver (its default,
-- interpolateParams=false): a COM_STMT_PREPARE, a COM_STMT_EXECUTE and a
-- COM_STMT_CLOSE every time. sysbench's own point select prepares each
-- statement once per connection, so it never shows what a proxy costs
-- for the prepare and the close. Tables come from `sysbench
-- oltp_read_write prepare` (oltp_common's options apply).

require("oltp_common")

-- Nothing is prepared ahead: every event prepares its own statement.
function prepare_statements()
end

function event()
   local table = sysbench.rand.uniform(1, sysbench.opt.tables)
   local stmt = con:prepare(string.format("SELECT c FROM sbtest%d WHERE id=?", table))
   local id = stmt:bind_create(sysbench.sql.type.INT)
   id:set(sysbench.rand.default(1, sysbench.opt.table_size))
   stmt:bind_param(id)
   stmt:execute()
   stmt:close()
end
