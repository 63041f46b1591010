package io.brokerstream.connect.postgres;

import java.sql.SQLException;
import java.util.Map;

/**
 * Whose fault a Postgres error is. Only a record's own content can be refused for good: SQLSTATE
 * class 22 (data exception: a value out of range, a character the encoding cannot hold) and class
 * 23 (integrity constraint violation: a CHECK, NOT NULL or foreign key the row breaks). Everything
 * else is the world's: the connection (08, 57P01), a read-only standby (25006), a deadlock (40P01)
 * or serialization failure (40001), a full disk (53100), a statement or lock timeout (57014,
 * 55P03), a table or column missing while DDL runs (42P01, 42703), an error without a state. Those
 * are retried with the batch whole; dead-lettering them would skip rows that are fine.
 */
final class SqlFaults {
  private SqlFaults() {}

  /** Names of the states an operator is likely to meet while the sink waits. */
  private static final Map<String, String> NAMES =
      Map.ofEntries(
          Map.entry("08000", "connection_exception"),
          Map.entry("08001", "cannot_connect_now"),
          Map.entry("08003", "connection_does_not_exist"),
          Map.entry("08006", "connection_failure"),
          Map.entry("25006", "read_only_sql_transaction"),
          Map.entry("28000", "invalid_authorization"),
          Map.entry("28P01", "invalid_password"),
          Map.entry("3D000", "invalid_catalog_name"),
          Map.entry("40001", "serialization_failure"),
          Map.entry("40P01", "deadlock_detected"),
          Map.entry("42P01", "undefined_table"),
          Map.entry("42703", "undefined_column"),
          Map.entry("53100", "disk_full"),
          Map.entry("53200", "out_of_memory"),
          Map.entry("53300", "too_many_connections"),
          Map.entry("55P03", "lock_not_available"),
          Map.entry("57014", "query_canceled"),
          Map.entry("57P01", "admin_shutdown"),
          Map.entry("57P03", "cannot_connect_now"));

  /** The record's own content is refused: dead-letter it, with this error as its cause. */
  static boolean recordsOwn(SQLException e) {
    String state = e.getSQLState();
    return state != null && (state.startsWith("22") || state.startsWith("23"));
  }

  /**
   * Before the task ever wrote: a wrong user or password (28), no such database (3D), no such table
   * or column (42). Failing at once says so; once the task has written, the same states mean a
   * change in progress (a password rotation, a migration) and are waited out like any fault.
   */
  static boolean misconfigured(SQLException e) {
    String state = e.getSQLState();
    return state != null
        && (state.startsWith("28") || state.startsWith("3D") || state.startsWith("42"));
  }

  /** The SQLSTATE, or "none" for an error without one (an I/O failure inside the driver). */
  static String state(SQLException e) {
    return e.getSQLState() == null ? "none" : e.getSQLState();
  }

  /** "25006 read_only_sql_transaction: cannot execute INSERT in a read-only transaction". */
  static String describe(SQLException e) {
    String state = state(e);
    String name = NAMES.get(state);
    return state + (name == null ? "" : " " + name) + ": " + e.getMessage();
  }
}
