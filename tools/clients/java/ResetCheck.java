// ResetCheck drives a JDBC driver (MariaDB Connector/J 2.x) through one
// connection the way a connection pool does when it hands a connection
// back: user variables, server-side prepared statements, a table, then the
// driver's connection reset, then the session read back with many
// statements, so that a proxy that spreads them over several server
// sessions shows every one of them.
//
// Run it with the JDK's source launcher:
//
//   java -cp mariadb-java-client.jar ResetCheck.java --host H --port P \
//     --user U --password PW --database DB --table kv --id 7 \
//     --marker m1 --reset protocol [--repeat 12]
//
// --reset says how the reset is asked for:
//
//   api       MariaDbConnection.reset() with useResetConnection=true, what
//             MariaDbPoolDataSource calls. The driver sends
//             COM_RESET_CONNECTION only to a server whose version says
//             MariaDB 10.2.22, 10.3.13 or later; to any other it only
//             restores autocommit, database and the like, and user
//             variables survive (and, outside its pool, which tells it the
//             default, it fails to restore a changed isolation level).
//   protocol  the driver's own COM_RESET_CONNECTION routine (its
//             Protocol.reset(), which MariaDbConnection.reset() calls for
//             such a server: it sends the command, reads the answer and
//             empties the driver's prepared-statement cache), for servers
//             whose version the driver does not take for MariaDB, such as
//             OceanBase's and ODP's.
//
// It prints one JSON object: {"driver", "version", "server_version",
// "ok", "checks": [...]}, each check {"name", "ok", "got", "want"} or
// {"name", "ok", "error"}, and exits 1 when a check failed, 2 when the run
// broke off. Every statement carries the comment /* <marker>-<step>-<n> */,
// so the caller can find where each one ran in the server's statement log.
// The table needs columns (id INT PRIMARY KEY, v VARCHAR); the row with
// the given id is written and left deleted.

import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

public class ResetCheck {
    private final Map<String, String> opt;
    private final int repeat;
    private final int rowID;
    private final List<String> checks = new ArrayList<>();
    private boolean failed;
    private int step;

    ResetCheck(Map<String, String> opt) {
        this.opt = opt;
        this.repeat = Integer.parseInt(opt.getOrDefault("repeat", "12"));
        this.rowID = Integer.parseInt(opt.getOrDefault("id", "1"));
    }

    public static void main(String[] args) {
        Map<String, String> opt = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                usage("unexpected argument " + args[i]);
            }
            opt.put(args[i].substring(2), args[i + 1]);
        }
        for (String k : new String[] {"port", "user", "database", "reset"}) {
            if (!opt.containsKey(k)) {
                usage("--" + k + " is required");
            }
        }
        if (!opt.get("reset").equals("api") && !opt.get("reset").equals("protocol")) {
            usage("--reset is api or protocol");
        }
        ResetCheck r = new ResetCheck(opt);
        int code;
        String driver = "", version = "", serverVersion = "";
        try (Connection c = r.connect()) {
            driver = c.getMetaData().getDriverName();
            version = c.getMetaData().getDriverVersion();
            serverVersion = c.getMetaData().getDatabaseProductVersion();
            r.run(c);
            code = r.failed || r.checks.isEmpty() ? 1 : 0;
        } catch (Exception e) {
            r.error("run", e);
            code = 2;
        }
        System.out.println("{\"driver\":" + json(driver) + ",\"version\":" + json(version)
                + ",\"server_version\":" + json(serverVersion) + ",\"ok\":" + (code == 0)
                + ",\"checks\":[" + String.join(",", r.checks) + "]}");
        System.exit(code);
    }

    static void usage(String msg) {
        System.err.println("ResetCheck: " + msg);
        System.exit(2);
    }

    Connection connect() throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", opt.get("user"));
        p.setProperty("password", opt.getOrDefault("password", ""));
        p.setProperty("useServerPrepStmts", "true");
        p.setProperty("cachePrepStmts", "true");
        p.setProperty("useResetConnection", "true");
        p.setProperty("connectTimeout", "10000");
        p.setProperty("socketTimeout", "60000");
        String url = "jdbc:mariadb://" + opt.getOrDefault("host", "127.0.0.1") + ":" + opt.get("port") + "/"
                + opt.get("database");
        return DriverManager.getConnection(url, p);
    }

    void run(Connection c) throws Exception {
        String user = opt.get("user").split("@")[0] + "@%";
        String db = opt.get("database");
        String t = "`" + opt.getOrDefault("table", "kv").replace("`", "``") + "`";

        step++;
        exec(c, "SET @v = 'before' " + tag(0));
        readBack(c, "login: user, database and @v", "SELECT CURRENT_USER(), DATABASE(), @v", row(user, db, "before"));
        prepared(c, "login: prepared statement");
        table(c, t, "login: table", "from-login");

        // Leave the session as a careless borrower would: a user variable,
        // session variables, autocommit off and a transaction open.
        step++;
        List<String> defaults = rows(c, SESSION_VARS + " " + tag(0)).get(0);
        check("login: autocommit", defaults.get(2), "1");
        exec(c, "SET @v = 'before-reset' " + tag(1));
        exec(c, "SET SESSION sql_mode = 'ANSI_QUOTES' " + tag(2));
        c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
        c.setAutoCommit(false);
        rows(c, "SELECT COUNT(*) FROM " + t + " " + tag(3));
        readBack(c, "before reset: session as left",
                "SELECT @v, FIND_IN_SET('ANSI_QUOTES', @@sql_mode), @@tx_isolation, @@autocommit",
                row("before-reset", "1", "SERIALIZABLE", "0"));
        // A reset that fails without breaking the connection is read back
        // too, to show what it left.
        if (!attempt("reset (" + opt.get("reset") + ")", () -> reset(c)) && c.isClosed()) {
            return;
        }
        readBack(c, "reset: user, database, @v gone", "SELECT CURRENT_USER(), DATABASE(), @v", row(user, db, null));
        readBack(c, "reset: session variables", SESSION_VARS, defaults);
        check("reset: getAutoCommit", String.valueOf(c.getAutoCommit()), "true");
        prepared(c, "reset: prepared statement");
        table(c, t, "reset: table", "after-reset");

        step++;
        c.setAutoCommit(false);
        exec(c, "INSERT INTO " + t + " (id, v) VALUES (" + rowID + ", 'rolled-back') " + tag("i"));
        c.rollback();
        c.setAutoCommit(true);
        check("reset: a rolled-back insert is gone",
                rows(c, "SELECT COUNT(*) FROM " + t + " WHERE id = " + rowID + " " + tag(0)), List.of(row("0")));
    }

    // SESSION_VARS are the session variables the run changes before the
    // reset and expects back at their defaults after. Of sql_mode only
    // ANSI_QUOTES is read: not every flag a login adds is restored by
    // COM_RESET_CONNECTION.
    static final String SESSION_VARS =
            "SELECT FIND_IN_SET('ANSI_QUOTES', @@sql_mode), @@tx_isolation, @@autocommit, @@collation_connection";

    interface Action {
        void run() throws Exception;
    }

    // reset asks the driver to reset the connection, as --reset says.
    void reset(Connection c) throws Exception {
        Class<?> mc = Class.forName("org.mariadb.jdbc.MariaDbConnection");
        Object conn = c.unwrap(mc);
        if (opt.get("reset").equals("api")) {
            mc.getMethod("reset").invoke(conn);
            return;
        }
        Method gp = mc.getDeclaredMethod("getProtocol");
        gp.setAccessible(true);
        Object protocol = gp.invoke(conn);
        Class.forName("org.mariadb.jdbc.internal.protocol.Protocol").getMethod("reset").invoke(protocol);
    }

    // readBack runs sql repeat times and checks every result.
    void readBack(Connection c, String name, String sql, List<String> want) throws SQLException {
        step++;
        for (int i = 0; i < repeat; i++) {
            List<List<String>> got = rows(c, sql + " " + tag(i));
            if (!got.equals(List.of(want))) {
                check(name + " (statement " + (i + 1) + " of " + repeat + ")", got, List.of(want));
                return;
            }
        }
        check(name, List.of(want), List.of(want));
    }

    // prepared prepares one statement on the server and executes it repeat
    // times.
    void prepared(Connection c, String name) throws SQLException {
        step++;
        try (PreparedStatement ps = c.prepareStatement("SELECT ? + 1 " + tag(0))) {
            for (int i = 0; i < repeat; i++) {
                ps.setInt(1, i);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    String got = rs.getString(1);
                    if (!got.equals(String.valueOf(i + 1))) {
                        check(name + " (execution " + (i + 1) + " of " + repeat + ")", got, String.valueOf(i + 1));
                        return;
                    }
                }
            }
        }
        check(name, repeat, repeat);
    }

    // table writes the row with prepared statements, reads it back repeat
    // times and deletes it.
    void table(Connection c, String t, String name, String value) throws SQLException {
        step++;
        try (PreparedStatement del = c.prepareStatement("DELETE FROM " + t + " WHERE id = ? " + tag("d"));
                PreparedStatement ins = c.prepareStatement("INSERT INTO " + t + " (id, v) VALUES (?, ?) " + tag("i"))) {
            del.setInt(1, rowID);
            del.executeUpdate();
            ins.setInt(1, rowID);
            ins.setString(2, value);
            ins.executeUpdate();
            boolean ok = true;
            for (int i = 0; i < repeat && ok; i++) {
                List<List<String>> got = rows(c, "SELECT v FROM " + t + " WHERE id = " + rowID + " " + tag(i));
                if (!got.equals(List.of(row(value)))) {
                    check(name + " (read " + (i + 1) + " of " + repeat + ")", got, List.of(row(value)));
                    ok = false;
                }
            }
            if (ok) {
                check(name, List.of(row(value)), List.of(row(value)));
            }
            del.executeUpdate();
        }
    }

    String tag(Object n) {
        return "/* " + opt.getOrDefault("marker", "jdbc") + "-" + step + "-" + n + " */";
    }

    static void exec(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    // rows runs a text-protocol query and returns its rows as strings
    // (null for NULL).
    static List<List<String>> rows(Connection c, String sql) throws SQLException {
        List<List<String>> out = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<String> r = new ArrayList<>();
                for (int i = 1; i <= n; i++) {
                    r.add(rs.getString(i));
                }
                out.add(r);
            }
        }
        return out;
    }

    static List<String> row(String... vals) {
        return java.util.Arrays.asList(vals);
    }

    boolean attempt(String name, Action a) {
        try {
            a.run();
            return true;
        } catch (Exception e) {
            error(name, e);
            return false;
        }
    }

    void check(String name, Object got, Object want) {
        boolean ok = Objects.equals(got, want);
        failed |= !ok;
        checks.add("{\"name\":" + json(name) + ",\"ok\":" + ok + ",\"got\":" + json(got) + ",\"want\":" + json(want) + "}");
    }

    void error(String name, Throwable e) {
        while (e instanceof java.lang.reflect.InvocationTargetException && e.getCause() != null) {
            e = e.getCause();
        }
        String msg = e.getClass().getSimpleName() + ": " + e.getMessage();
        if (e instanceof SQLException) {
            msg += " (errno " + ((SQLException) e).getErrorCode() + ", state " + ((SQLException) e).getSQLState() + ")";
        }
        failed = true;
        checks.add("{\"name\":" + json(name) + ",\"ok\":false,\"error\":" + json(msg) + "}");
    }

    // json writes null, strings and nested lists of them as JSON.
    static String json(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Integer) {
            return v.toString();
        }
        if (v instanceof List) {
            List<String> parts = new ArrayList<>();
            for (Object o : (List<?>) v) {
                parts.add(json(o));
            }
            return "[" + String.join(",", parts) + "]";
        }
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : v.toString().toCharArray()) {
            switch (ch) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                default -> {
                    if (ch < 0x20) {
                        sb.append(String.format("\\u%04x", (int) ch));
                    } else {
                        sb.append(ch);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }
}
