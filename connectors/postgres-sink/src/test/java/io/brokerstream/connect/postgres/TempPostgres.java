package io.brokerstream.connect.postgres;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway PostgreSQL cluster for the sink's tests: the machine's own Postgres binaries
 * (BS_POSTGRES_BIN, default Debian's 15), a cluster in a temporary folder owned by the postgres OS
 * user (Postgres will not run as root), trust authentication on 127.0.0.1 and a free port. The
 * project's real DDL (sql/postgres) makes the tables.
 */
final class TempPostgres implements AutoCloseable {
  static final Path BIN =
      Path.of(System.getenv().getOrDefault("BS_POSTGRES_BIN", "/usr/lib/postgresql/15/bin"));
  static final Path DDL = Path.of("../../sql/postgres");

  final Path dir;
  final int port;

  TempPostgres() throws IOException, InterruptedException {
    dir = Files.createTempDirectory("bs-sink-pg");
    run("chown", "postgres", dir.toString());
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    asPostgres(
        BIN.resolve("initdb").toString(),
        "-D",
        dir.resolve("data").toString(),
        "-U",
        "postgres",
        "--auth=trust",
        "-E",
        "UTF8",
        "--locale=C");
    asPostgres(
        BIN.resolve("pg_ctl").toString(),
        "-D",
        dir.resolve("data").toString(),
        "-l",
        dir.resolve("log").toString(),
        "-w",
        "-o",
        "-c listen_addresses=127.0.0.1 -c port=" + port + " -c unix_socket_directories=" + dir,
        "start");
  }

  static boolean available() {
    return Files.isExecutable(BIN.resolve("initdb")) && Files.isDirectory(DDL);
  }

  String url() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
  }

  Connection connect() throws SQLException {
    Connection c = DriverManager.getConnection(url(), "postgres", "");
    c.setAutoCommit(true);
    return c;
  }

  void sql(String... statements) throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.execute("SET default_transaction_read_only = off"); // the test's own session, always
      for (String sql : statements) {
        s.execute(sql);
      }
    }
  }

  /** The project's DDL files in order, as the launcher applies them. */
  void applyDdl() throws IOException, SQLException {
    List<Path> files = new ArrayList<>();
    try (var list = Files.list(DDL)) {
      list.filter(p -> p.toString().endsWith(".sql")).sorted().forEach(files::add);
    }
    for (Path f : files) {
      sql(Files.readString(f));
    }
  }

  /** Ends every other session: a failover's effect on the sink's connection. */
  void dropConnections() throws SQLException {
    sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
            + " AND backend_type = 'client backend'");
  }

  private void asPostgres(String... argv) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("runuser", "-u", "postgres", "--"));
    cmd.addAll(List.of(argv));
    run(cmd.toArray(String[]::new));
  }

  private static void run(String... argv) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException(String.join(" ", argv) + " failed: " + out);
    }
  }

  @Override
  public void close() throws Exception {
    asPostgres(
        BIN.resolve("pg_ctl").toString(),
        "-D",
        dir.resolve("data").toString(),
        "-m",
        "immediate",
        "stop");
    run("rm", "-rf", dir.toString());
  }
}
