package io.brokerstream.rules;

/**
 * What the order flow needs of an account (from ref.accounts): owner, status, deposited cash, short
 * permission.
 */
public record AccountEntry(
    String accountId, String memberId, String status, long cashMicros, boolean shortAllowed) {
  public boolean active() {
    return "ACTIVE".equals(status);
  }
}
