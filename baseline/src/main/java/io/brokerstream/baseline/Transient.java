package io.brokerstream.baseline;

import java.sql.SQLException;

/** Postgres errors after which the same transaction may simply be run again. */
final class Transient {
  static final int ATTEMPTS = 5;

  private Transient() {}

  static boolean is(SQLException e) {
    String state = e.getSQLState();
    return "40P01".equals(state)
        || "40001".equals(state); // deadlock detected, serialization failure
  }
}
