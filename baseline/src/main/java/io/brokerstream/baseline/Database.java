package io.brokerstream.baseline;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.stream.Collectors;

/** The connection pool, and the baseline's own tables, created at start if missing. */
public final class Database implements AutoCloseable {
  private final HikariDataSource pool;
  private final String schema;

  public Database(BaselineSettings settings) {
    this.schema = settings.identifier("db.schema");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(settings.get("db.url"));
    config.setUsername(settings.get("db.user"));
    config.setPassword(settings.get("db.password"));
    config.setMaximumPoolSize(settings.getInt("db.pool-size", 2));
    config.setMinimumIdle(settings.getInt("db.pool-size", 2));
    config.setPoolName("baseline");
    // Server-side prepared statements after the second use: every statement here runs per order.
    config.addDataSourceProperty("prepareThreshold", "2");
    config.addDataSourceProperty("reWriteBatchedInserts", "true");
    this.pool = new HikariDataSource(config);
  }

  public String schema() {
    return schema;
  }

  public Connection connection() throws SQLException {
    return pool.getConnection();
  }

  public void createTables() throws SQLException {
    String ddl;
    try (InputStream in = Database.class.getResourceAsStream("/baseline-schema.sql")) {
      ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("${schema}", schema);
    } catch (IOException | NullPointerException e) {
      throw new IllegalStateException("baseline-schema.sql is missing from the jar", e);
    }
    try (Connection c = connection();
        Statement s = c.createStatement()) {
      String code =
          ddl.lines().filter(l -> !l.strip().startsWith("--")).collect(Collectors.joining("\n"));
      for (String statement : code.split(";")) {
        String sql = statement.strip();
        if (!sql.isEmpty()) {
          s.execute(sql);
        }
      }
    }
  }

  @Override
  public void close() {
    pool.close();
  }
}
